//! Network namespaces with a name (`ip netns add`: a bind mount under
//! /run/netns), which other processes can open by path, and running code
//! on a thread that entered one.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use super::{assert_ok, run};

/// A namespace made by `ip netns add NAME`, `lo` up. Dropping it deletes
/// it (`ip netns del`) unless [`NamedNetns::delete`] did.
pub struct NamedNetns {
    name: String,
    path: PathBuf,
    deleted: bool,
}

impl NamedNetns {
    pub fn add(name: &str) -> NamedNetns {
        // A namespace of that name left by an earlier run goes first.
        let _ = run("ip", &["netns", "del", name]);
        assert_ok("ip netns add", run("ip", &["netns", "add", name]));
        assert_ok(
            "ip link set lo up",
            run("ip", &["-n", name, "link", "set", "lo", "up"]),
        );
        NamedNetns {
            name: name.to_owned(),
            path: Path::new("/run/netns").join(name),
            deleted: false,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// `ip netns del NAME`: the bind mount goes and the file is removed;
    /// the namespace itself lives on while anything holds it.
    pub fn delete(&mut self) {
        assert_ok("ip netns del", run("ip", &["netns", "del", &self.name]));
        self.deleted = true;
    }
}

impl Drop for NamedNetns {
    fn drop(&mut self) {
        if !self.deleted {
            let _ = run("ip", &["netns", "del", &self.name]);
        }
    }
}

/// Runs `f` on a new thread that entered the namespace of `path` (so
/// `/proc/thread-self/net`, sockets and programs it spawns are that
/// namespace's) and returns what it returns; a panic in it is resumed.
pub fn in_netns<R: Send>(path: &Path, f: impl FnOnce() -> R + Send) -> R {
    let file = File::open(path).unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
    std::thread::scope(|s| {
        s.spawn(|| {
            // SAFETY: setns takes a namespace file we hold open and a flag;
            // it changes the calling thread only.
            let rc = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
            assert_eq!(
                rc,
                0,
                "setns {}: {}",
                path.display(),
                std::io::Error::last_os_error()
            );
            f()
        })
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
}

//! Where the doctor looks: the proc, sys and modules roots of a host (or of
//! a fixture tree laid out like one), and the running kernel's release.

use std::path::{Path, PathBuf};

/// Where the doctor looks. [`HostRoots::host`] is the real host; tests use
/// [`HostRoots::under`] with a fixture tree.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostRoots {
    /// The proc file system (`/proc`).
    pub proc_root: PathBuf,
    /// The sys file system (`/sys`).
    pub sys_root: PathBuf,
    /// The directory holding one modules tree per release (`/lib/modules`).
    pub modules_root: PathBuf,
    /// The running kernel's release; `None` reads it from
    /// `<proc>/sys/kernel/osrelease` (what `uname -r` prints).
    pub kernel_release: Option<String>,
}

impl Default for HostRoots {
    fn default() -> Self {
        HostRoots::host()
    }
}

impl HostRoots {
    /// The real host: `/proc`, `/sys`, `/lib/modules`.
    pub fn host() -> HostRoots {
        HostRoots {
            proc_root: PathBuf::from("/proc"),
            sys_root: PathBuf::from("/sys"),
            modules_root: PathBuf::from("/lib/modules"),
            kernel_release: None,
        }
    }

    /// A tree laid out like a host under `root`: `root/proc`, `root/sys`,
    /// `root/lib/modules`.
    pub fn under(root: impl AsRef<Path>) -> HostRoots {
        let root = root.as_ref();
        HostRoots {
            proc_root: root.join("proc"),
            sys_root: root.join("sys"),
            modules_root: root.join("lib/modules"),
            kernel_release: None,
        }
    }

    /// Uses this modules root instead.
    pub fn with_modules_root(mut self, modules_root: impl Into<PathBuf>) -> HostRoots {
        self.modules_root = modules_root.into();
        self
    }

    /// Uses this kernel release instead of reading it.
    pub fn with_kernel_release(mut self, release: impl Into<String>) -> HostRoots {
        self.kernel_release = Some(release.into());
        self
    }

    /// The running kernel's release: the override, else
    /// `<proc>/sys/kernel/osrelease`, else `uname(2)` when the proc root is the
    /// real one.
    pub fn release(&self) -> Option<String> {
        if let Some(release) = &self.kernel_release {
            return Some(release.clone());
        }
        if let Ok(text) = std::fs::read_to_string(self.proc_root.join("sys/kernel/osrelease")) {
            let release = text.trim();
            if !release.is_empty() {
                return Some(release.to_string());
            }
        }
        if self.proc_root == Path::new("/proc") {
            return uname_release();
        }
        None
    }
}

fn uname_release() -> Option<String> {
    // SAFETY: utsname is plain old data; uname fills it in.
    let mut uts: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: uts is a valid, writable utsname.
    if unsafe { libc::uname(&mut uts) } != 0 {
        return None;
    }
    let bytes: Vec<u8> = uts
        .release
        .iter()
        .take_while(|c| **c != 0)
        .map(|c| *c as u8)
        .collect();
    String::from_utf8(bytes).ok().filter(|s| !s.is_empty())
}

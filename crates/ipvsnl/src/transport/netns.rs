//! A client's handle on its network namespace, and its sockets opened
//! there. What netlink does not carry: `/proc/net` files follow the
//! *reading thread's* namespace, so a file of the client's namespace is
//! read from a short-lived thread that entered it (or directly, when the
//! caller is already there). A socket belongs to the namespace it was
//! created in, for its whole life: a client's are created by such a
//! thread too, and no thread of the caller ever moves.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::socket::{enter_netns, NlSocket};
use super::sockopt::SockoptSocket;
use crate::Error;

/// A client's sockets, made in one namespace: the netlink socket, the
/// netlink socket of its service dumps ([`crate::service_dumps`]), and the
/// socket-option one (or why it could not be made: the listings then do
/// without it, see [`crate::Client::table`]).
#[derive(Debug)]
pub(crate) struct Sockets {
    pub(crate) netlink: NlSocket,
    pub(crate) service_dumps: NlSocket,
    pub(crate) sockopt: io::Result<SockoptSocket>,
}

impl Sockets {
    /// Opens them in the calling thread's namespace.
    pub(crate) fn open() -> io::Result<Self> {
        Ok(Sockets {
            netlink: NlSocket::open()?,
            service_dumps: NlSocket::open()?,
            sockopt: SockoptSocket::open(),
        })
    }

    /// Opens them in the namespace of `path` (e.g. `/var/run/netns/NAME`
    /// or `/proc/PID/ns/net`), on a short-lived thread that entered it;
    /// with a handle on that namespace.
    pub(crate) fn open_in(path: &Path) -> Result<(Self, NetnsHandle), Error> {
        let netns = NetnsHandle::open(path).map_err(|source| Error::Namespace {
            path: path.to_path_buf(),
            source,
        })?;
        Sockets::open_there(netns, path)
    }

    /// Opens them in the namespace of the open file `netns` (a namespace
    /// file's descriptor, `named` in errors), as [`Sockets::open_in`].
    pub(crate) fn open_there(
        netns: NetnsHandle,
        named: &Path,
    ) -> Result<(Self, NetnsHandle), Error> {
        let sockets = netns
            .inside(Sockets::open)
            .map_err(|source| Error::Namespace {
                path: named.to_path_buf(),
                source,
            })?;
        Ok((sockets, netns))
    }
}

/// A handle on the namespace of the caller's open file `fd`, and the
/// path that names `fd` in errors (a duplicate that fails, out of
/// descriptors, is an [`Error::Namespace`] too).
pub(crate) fn duplicate_namespace(fd: BorrowedFd<'_>) -> Result<(NetnsHandle, PathBuf), Error> {
    let named = PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()));
    match fd.try_clone_to_owned() {
        Ok(own) => Ok((
            NetnsHandle {
                file: File::from(own),
            },
            named,
        )),
        Err(source) => Err(Error::Namespace {
            path: named,
            source,
        }),
    }
}

/// An open namespace file (`/proc/thread-self/ns/net`, `/run/netns/NAME`...).
#[derive(Debug)]
pub(crate) struct NetnsHandle {
    file: File,
}

impl NetnsHandle {
    /// The calling thread's namespace.
    pub(crate) fn current() -> io::Result<Self> {
        NetnsHandle::open(Path::new("/proc/thread-self/ns/net"))
    }

    /// The namespace of `path`.
    pub(crate) fn open(path: &Path) -> io::Result<Self> {
        Ok(NetnsHandle {
            file: File::open(path)?,
        })
    }

    /// A second handle on the same namespace (for a read on another
    /// thread).
    #[cfg(feature = "tokio")]
    pub(crate) fn try_clone(&self) -> io::Result<Self> {
        Ok(NetnsHandle {
            file: self.file.try_clone()?,
        })
    }

    /// Whether the calling thread is in this namespace already.
    fn is_current(&self) -> io::Result<bool> {
        let mine = std::fs::metadata("/proc/thread-self/ns/net")?;
        let this = self.file.metadata()?;
        Ok(mine.dev() == this.dev() && mine.ino() == this.ino())
    }

    /// Reads `/proc/thread-self/net/<name>` as seen from this namespace.
    pub(crate) fn read_proc_net(&self, name: &str) -> io::Result<String> {
        let path = Path::new("/proc/thread-self/net").join(name);
        if self.is_current()? {
            return std::fs::read_to_string(&path);
        }
        self.inside(|| std::fs::read_to_string(&path))
    }

    /// Runs `work` on a short-lived thread that entered this namespace.
    fn inside<R: Send>(&self, work: impl FnOnce() -> io::Result<R> + Send) -> io::Result<R> {
        std::thread::scope(|s| {
            s.spawn(|| {
                enter_netns(&self.file)?;
                work()
            })
            .join()
        })
        .unwrap_or_else(|_| Err(io::Error::other("namespace thread panicked")))
    }
}

/// A netlink socket opened in `netns` (the calling thread's namespace
/// without one): directly when the calling thread is there, on a
/// short-lived thread that entered it otherwise.
pub(crate) fn open_socket(netns: Option<&NetnsHandle>) -> io::Result<NlSocket> {
    match netns {
        Some(ns) if !ns.is_current()? => ns.inside(NlSocket::open),
        _ => NlSocket::open(),
    }
}

impl NetnsHandle {
    /// The namespace file's metadata (`fstat`): its device and inode name
    /// the namespace, whichever path opened it.
    pub(crate) fn metadata(&self) -> io::Result<std::fs::Metadata> {
        self.file.metadata()
    }
}

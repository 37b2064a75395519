//! Which network namespace a client talks to, as the sync engine tells
//! namespaces apart: a view of one namespace's table says nothing of
//! another's, and IPVS family ids are global, so the family check alone
//! cannot see a client of another namespace.

use std::os::unix::fs::MetadataExt;

use crate::client_core::ClientCore;

/// A network namespace, named by its namespace file (the nsfs inode a
/// client holds open: `/proc/PID/ns/net`, `/proc/thread-self/ns/net` and a
/// bind mount under `/run/netns` of one namespace are the same inode).
///
/// The inode number alone is not enough: the kernel gives a freed
/// namespace's number to the next namespace made. The inode's change time
/// tells them apart: the kernel stamps it when it makes the inode, and
/// keeps that inode while anything holds the namespace's file open (the
/// client does), so a namespace made later under a reused number has
/// another. The same namespace can get a new inode too, once every holder
/// of its file let go and a new client opens it: that reads as another
/// namespace, which costs one listed sync, never a wrong view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NetnsId {
    dev: u64,
    ino: u64,
    ctime: (i64, i64),
}

impl NetnsId {
    /// The namespace of `core`, if it can be told (`None`: the client's
    /// namespace file could not be opened, `/proc` missing, or not read).
    pub(crate) fn of<T>(core: &ClientCore<T>) -> Option<NetnsId> {
        // An emulated namespace: no file, a number of its own on a device
        // no file system has.
        #[cfg(any(test, feature = "emulator"))]
        if let Some(serial) = core.emulated_ns {
            return Some(NetnsId {
                dev: u64::MAX,
                ino: serial,
                ctime: (0, 0),
            });
        }
        let m = core.netns.as_ref()?.metadata().ok()?;
        Some(NetnsId {
            dev: m.dev(),
            ino: m.ino(),
            ctime: (m.ctime(), m.ctime_nsec()),
        })
    }
}

#[cfg(test)]
impl NetnsId {
    /// A made-up namespace, for the planner's tests.
    pub(crate) fn fake(n: u64) -> NetnsId {
        NetnsId {
            dev: 0,
            ino: n,
            ctime: (0, 0),
        }
    }
}

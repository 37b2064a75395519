//! The open-files limit: every check in flight holds a socket (a command
//! check its pipes), and thousands of servers checked at the same moment
//! need more descriptors than the usual soft limit of 1,024. Measured in
//! the VM (`scripts/measure/agent-reaction --cost 1000`: 4,000 servers checked every
//! second): under 1,024 only about a quarter of the checks reached their
//! servers, the rest failed at `socket()` with EMFILE.

use std::io;

use crate::daemon::http::MAX_CONNECTIONS;

/// Descriptors kept for all but the checks and the HTTP endpoint: the
/// netlink sockets, the poller, signals, logs, etcd's connections.
const RESERVED: u64 = 64;

/// The most checks in flight at once under the soft open-files limit
/// `soft` (`None`: unlimited or unknown): what is left after the HTTP
/// endpoint's connections and [`RESERVED`], at least 1. A check holds
/// one descriptor (a socket; a command check none once started).
pub(crate) fn checks_in_flight_cap(soft: Option<u64>) -> usize {
    let Some(soft) = soft else {
        return usize::MAX;
    };
    let room = soft.saturating_sub(RESERVED + MAX_CONNECTIONS as u64);
    usize::try_from(room).unwrap_or(usize::MAX).max(1)
}

/// Raises the soft limit on open files (`RLIMIT_NOFILE`) to the hard
/// limit, as keepalived and Go programs do; returns the limit before and
/// after. Changes nothing when the soft limit is the hard one already.
pub(crate) fn raise_open_files_limit() -> io::Result<(u64, u64)> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the limit into the rlimit we pass, which
    // lives for the whole call.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let before = lim.rlim_cur;
    if lim.rlim_cur < lim.rlim_max {
        lim.rlim_cur = lim.rlim_max;
        // SAFETY: setrlimit reads the rlimit we pass; a soft limit up to
        // the hard one needs no privilege.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok((before, lim.rlim_cur))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_of_checks_leaves_room_for_the_rest() {
        assert_eq!(checks_in_flight_cap(None), usize::MAX);
        assert_eq!(checks_in_flight_cap(Some(64)), 1);
        assert_eq!(checks_in_flight_cap(Some(1024)), 1024 - 64 - 64);
    }

    #[test]
    fn the_soft_limit_becomes_the_hard_one() {
        let (before, after) = raise_open_files_limit().unwrap();
        assert!(after >= before);
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: as above.
        assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) }, 0);
        assert_eq!(lim.rlim_cur, lim.rlim_max);
        assert_eq!(lim.rlim_cur, after);
        // A second call changes nothing.
        assert_eq!(raise_open_files_limit().unwrap(), (after, after));
    }
}

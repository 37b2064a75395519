//! The driver: runs a protocol machine over a client's transport until it
//! finishes. All protocol decisions are the machine's; this only sends,
//! receives and says what happened. It is written once, as an async
//! function over [`Transport`]: the blocking client runs it with
//! [`crate::block_on`] over a transport whose calls wait, the async client
//! awaits it over tokio's.
//!
//! Dropping the future between two of its awaits is safe: every datagram
//! the transport took is handed to the machine before the next await, and
//! a machine dropped unfinished leaves its session consistent (see
//! [`crate::proto`]).

use crate::proto::{Failure, Input, Machine, Poll};
use crate::transport::{Received, Transport};
use crate::{Error, Target};

/// The most datagrams one receive call takes (a short dump's data and its
/// `NLMSG_DONE`, or two parts of a long one, or two datagrams of a batch's
/// errors).
pub(crate) const DATAGRAMS: usize = 2;

/// Runs `machine` over `io` to its end, receiving into `rx` (room for
/// [`DATAGRAMS`] segments of `segment` bytes).
pub(crate) async fn drive<T: Transport, M: Machine>(
    io: &mut T,
    rx: &mut [u8],
    segment: usize,
    machine: &mut M,
) {
    let mut got = [Received::default(); DATAGRAMS];
    loop {
        let wait = match machine.poll() {
            Poll::Transmit(bytes) => {
                let input = match io.send(bytes).await {
                    Ok(()) => Input::Sent,
                    Err(e) => Input::SendFailed(e),
                };
                machine.handle(input);
                continue;
            }
            Poll::Receive(wait) => wait,
            _ => return,
        };
        match io.receive(rx, segment, &mut got, wait).await {
            Ok(n) => {
                for (slot, r) in got[..n].iter().enumerate() {
                    if r.truncated {
                        machine.handle(Input::Truncated { len: r.len });
                    } else {
                        let at = slot * segment;
                        machine.handle(Input::Datagram(&rx[at..at + r.len]));
                    }
                }
            }
            Err(e) => match e.raw_os_error() {
                Some(libc::EINTR) => {}
                Some(libc::ENOBUFS) => machine.handle(Input::Overrun),
                Some(libc::EAGAIN) => machine.handle(Input::TimedOut),
                _ => machine.handle(Input::ReceiveFailed(e)),
            },
        }
    }
}

/// The result of a machine the driver ran to its end, as the crate's
/// error about `target` (a machine that ended without one is a decode
/// error: it cannot happen, and is not a panic either).
pub(crate) fn outcome<T>(
    result: Option<Result<T, Failure>>,
    target: impl FnOnce() -> Target,
) -> Result<T, Error> {
    match result {
        Some(Ok(v)) => Ok(v),
        Some(Err(f)) => Err(Error::of_failure(target(), f)),
        None => Err(Error::decode(target(), "the call ended without a result")),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::block_on::block_on;
    use crate::proto::{Failure, Session, Wait};
    use crate::transport::blocking::Blocking;
    use crate::transport::socket::NlSocket;

    /// A machine that asks for the receives of a script, then finishes;
    /// it records what it was told.
    struct Script {
        waits: Vec<Wait>,
        told: Vec<String>,
    }

    impl Machine for Script {
        fn poll(&mut self) -> Poll<'_> {
            match self.waits.first() {
                Some(w) => Poll::Receive(*w),
                None => Poll::Finished,
            }
        }
        fn handle(&mut self, input: Input<'_>) {
            self.told.push(format!("{input:?}"));
            self.waits.remove(0);
        }
    }

    /// A generic-netlink socket exists on any Linux host, IPVS or not.
    fn socket() -> Blocking {
        Blocking {
            sock: NlSocket::open().expect("a generic netlink socket"),
        }
    }

    #[test]
    fn the_receive_timeout_is_the_machines_on_every_receive() {
        let mut sock = socket();
        let mut rx = vec![0; 4096 * DATAGRAMS];
        sock.sock.set_timeout(Duration::from_secs(30)).unwrap();
        // A read-out without waiting leaves the timeout alone; a wait sets
        // its own, and nothing is left over for the next call.
        let mut m = Script {
            waits: vec![
                Wait::Queued,
                Wait::Up(Duration::from_millis(5)),
                Wait::Queued,
            ],
            told: Vec::new(),
        };
        block_on(drive(&mut sock, &mut rx, 4096, &mut m));
        assert_eq!(m.told, ["TimedOut", "TimedOut", "TimedOut"]);
        assert_eq!(sock.sock.timeout(), Some(Duration::from_millis(5)));
        let mut m = Script {
            waits: vec![Wait::Up(Duration::from_millis(7))],
            told: Vec::new(),
        };
        block_on(drive(&mut sock, &mut rx, 4096, &mut m));
        assert_eq!(sock.sock.timeout(), Some(Duration::from_millis(7)));
    }

    #[test]
    fn a_family_lookup_runs_over_a_real_socket() {
        let mut sock = socket();
        let mut rx = vec![0; 4096 * DATAGRAMS];
        let mut session = Session::new(Duration::from_secs(5));
        let mut lookup = session.resolve_family();
        block_on(drive(&mut sock, &mut rx, 4096, &mut lookup));
        match lookup.result() {
            // A host with IPVS has an id; one without says so.
            Some(Ok(id)) => assert!(id >= 0x10),
            Some(Err(Failure::Unavailable)) => {}
            other => panic!("{other:?}"),
        }
        drop(lookup);
        assert_eq!(sock.sock.timeout(), Some(Duration::from_secs(5)));
    }
}

//! The blocking driver: runs a protocol machine over the client's socket
//! until it finishes. All protocol decisions are the machine's; this only
//! sends, receives and says what happened.

use crate::proto::{Input, Machine, Poll, Wait};
use crate::transport::socket::{NlSocket, Received};

/// The most datagrams one receive call takes (a short dump's data and its
/// `NLMSG_DONE`, or two parts of a long one, or two datagrams of a batch's
/// errors).
pub(crate) const DATAGRAMS: usize = 2;

/// Runs `machine` over `sock` to its end, receiving into `rx` (room for
/// [`DATAGRAMS`] segments of `segment` bytes).
pub(crate) fn drive(sock: &NlSocket, rx: &mut [u8], segment: usize, machine: &mut impl Machine) {
    let mut got = [Received::default(); DATAGRAMS];
    loop {
        let wait = match machine.poll() {
            Poll::Transmit(bytes) => {
                let input = match sock.send(bytes) {
                    Ok(()) => Input::Sent,
                    Err(e) => Input::SendFailed(e),
                };
                machine.handle(input);
                continue;
            }
            Poll::Receive(wait) => wait,
            _ => return,
        };
        let dont_wait = match wait {
            Wait::Up(timeout) => {
                if let Err(e) = sock.set_timeout(timeout) {
                    machine.handle(Input::ReceiveFailed(e));
                    continue;
                }
                false
            }
            _ => true,
        };
        match sock.recv_many(rx, segment, &mut got, dont_wait) {
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

//! The operating system's errors as check results: the server's failure,
//! or the director's own shortage.

use std::io;

use crate::check::{Failure, Outcome};

/// The errors that say the director is short of something (descriptors,
/// buffers, memory, local ports), not that the server failed: with 500
/// checks under an open-files limit of 64, counting them as the servers'
/// failures drained every server.
const SHORTAGES: [i32; 5] = [
    libc::EMFILE,
    libc::ENFILE,
    libc::ENOBUFS,
    libc::ENOMEM,
    libc::EADDRNOTAVAIL,
];

/// An I/O error of a check: the director's shortage is
/// [`Outcome::Inconclusive`]; a refused or reset connection is
/// [`Failure::Refused`]; anything else is [`Failure::Other`] with what was
/// being done and the operating system's message.
pub(crate) fn io_outcome(doing: &str, e: &io::Error) -> Outcome {
    if e.raw_os_error().is_some_and(|n| SHORTAGES.contains(&n)) {
        return Outcome::Inconclusive(format!("{doing}: {e}"));
    }
    Outcome::Fail(match e.kind() {
        io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionReset => Failure::Refused,
        _ => Failure::Other(format!("{doing}: {e}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_and_reset_are_refused_the_rest_keeps_its_message() {
        let refused = io::Error::from(io::ErrorKind::ConnectionRefused);
        assert_eq!(
            io_outcome("connect", &refused),
            Outcome::Fail(Failure::Refused)
        );
        let reset = io::Error::from(io::ErrorKind::ConnectionReset);
        assert_eq!(io_outcome("read", &reset), Outcome::Fail(Failure::Refused));
        let unreachable = io::Error::from_raw_os_error(libc::EHOSTUNREACH);
        match io_outcome("connect", &unreachable) {
            Outcome::Fail(Failure::Other(why)) => {
                assert!(why.starts_with("connect: "), "{why}");
                assert!(why.contains("os error 113"), "{why}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_directors_shortages_are_inconclusive() {
        for errno in SHORTAGES {
            let e = io::Error::from_raw_os_error(errno);
            match io_outcome("socket", &e) {
                Outcome::Inconclusive(why) => {
                    assert!(why.starts_with("socket: "), "{why}");
                    assert!(why.contains(&format!("os error {errno}")), "{why}");
                }
                other => panic!("errno {errno}: {other:?}"),
            }
        }
    }
}

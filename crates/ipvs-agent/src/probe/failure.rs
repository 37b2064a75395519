//! The operating system's errors as check failures.

use std::error::Error as StdError;
use std::io;

use crate::check::Failure;

/// An I/O error of a check: a refused or reset connection is
/// [`Failure::Refused`]; anything else is [`Failure::Other`] with what was
/// being done and the operating system's message.
pub(crate) fn io_failure(doing: &str, e: &io::Error) -> Failure {
    match e.kind() {
        io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionReset => Failure::Refused,
        _ => Failure::Other(format!("{doing}: {e}")),
    }
}

/// The first I/O error in an error's chain of sources, if any (hyper wraps
/// the socket's).
pub(crate) fn io_source<'a>(e: &'a (dyn StdError + 'static)) -> Option<&'a io::Error> {
    let mut next = Some(e);
    while let Some(err) = next {
        if let Some(io) = err.downcast_ref::<io::Error>() {
            return Some(io);
        }
        next = err.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_and_reset_are_refused_the_rest_keeps_its_message() {
        let refused = io::Error::from(io::ErrorKind::ConnectionRefused);
        assert_eq!(io_failure("connect", &refused), Failure::Refused);
        let reset = io::Error::from(io::ErrorKind::ConnectionReset);
        assert_eq!(io_failure("read", &reset), Failure::Refused);
        let unreachable = io::Error::from_raw_os_error(libc::EHOSTUNREACH);
        match io_failure("connect", &unreachable) {
            Failure::Other(why) => {
                assert!(why.starts_with("connect: "), "{why}");
                assert!(why.contains("os error 113"), "{why}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_io_error_is_found_under_a_wrapper() {
        #[derive(Debug)]
        struct Wrap(io::Error);
        impl std::fmt::Display for Wrap {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("wrapped")
            }
        }
        impl StdError for Wrap {
            fn source(&self) -> Option<&(dyn StdError + 'static)> {
                Some(&self.0)
            }
        }
        let w = Wrap(io::Error::from(io::ErrorKind::ConnectionReset));
        let found = io_source(&w).map(io::Error::kind);
        assert_eq!(found, Some(io::ErrorKind::ConnectionReset));
    }
}

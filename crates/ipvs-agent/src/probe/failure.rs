//! The operating system's errors as check failures.

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
}

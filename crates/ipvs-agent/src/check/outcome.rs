//! One check's result, as a checker reports it.

use std::fmt;

/// The result of one check.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// The server answered as expected.
    Pass,
    /// It did not, for this reason.
    Fail(Failure),
    /// The director could not run the check: its own shortage (out of
    /// file descriptors, socket buffers, memory or local ports), which
    /// says nothing of the server. It moves no server's health; the
    /// daemon counts it (`ipvs_agent_checks_inconclusive_total`) and logs
    /// it.
    Inconclusive(String),
}

impl From<Failure> for Outcome {
    fn from(f: Failure) -> Self {
        Outcome::Fail(f)
    }
}

/// Why a check failed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Failure {
    /// No answer within the check's timeout.
    Timeout,
    /// The connection was refused (or reset before an answer).
    Refused,
    /// An HTTP status other than the one expected.
    Status {
        /// The status expected.
        expected: u16,
        /// The status received.
        got: u16,
    },
    /// The body lacked the expected string.
    BodyMismatch,
    /// The TLS handshake or the certificate's verification failed.
    Tls(String),
    /// A DNS answer with another response code than the one expected.
    Rcode {
        /// The code expected.
        expected: u8,
        /// The code received.
        got: u8,
    },
    /// A command exited with a non-zero status (`None`: killed by a signal).
    Exit(Option<i32>),
    /// Any other error (the operating system's, a malformed answer).
    Other(String),
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Timeout => f.write_str("timeout"),
            Failure::Refused => f.write_str("connection refused"),
            Failure::Status { expected, got } => write!(f, "status {got} (expected {expected})"),
            Failure::BodyMismatch => f.write_str("body lacks the expected string"),
            Failure::Tls(why) => write!(f, "TLS: {why}"),
            Failure::Rcode { expected, got } => write!(f, "rcode {got} (expected {expected})"),
            Failure::Exit(Some(code)) => write!(f, "exit status {code}"),
            Failure::Exit(None) => f.write_str("killed by a signal"),
            Failure::Other(why) => f.write_str(why),
        }
    }
}

//! What a command line means: the parsed [`Command`] (with what `-L`
//! lists and how), or the [`ArgError`] ipvsadm gives for it.

use std::fmt;

use ipvsnl::{Request, ServiceKey};

/// A command line ipvsadm refuses: the message it prints on stderr (without
/// the newline) and its exit status (2 for a bad value or combination, 255
/// for an option it does not know).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ArgError {
    /// The message, exactly as ipvsadm prints it.
    pub message: String,
    /// ipvsadm's exit status.
    pub status: i32,
}

impl ArgError {
    pub(crate) fn fail(message: impl Into<String>) -> Self {
        ArgError {
            message: message.into(),
            status: 2,
        }
    }

    /// A refusal with status 255 (popt's errors).
    pub(crate) fn popt(message: impl Into<String>) -> Self {
        ArgError {
            message: message.into(),
            status: 255,
        }
    }

    /// The "Try `ipvsadm -h'..." error, for a line that does not start with
    /// a command.
    pub(crate) fn try_help(program: &str) -> Self {
        ArgError::popt(format!(
            "Try `{program} -h' or '{program} --help' for more information."
        ))
    }
}

impl fmt::Display for ArgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ArgError {}

/// What `-L` lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) enum ListWhat {
    /// Every service (`-L`).
    All,
    /// One service (`-L -t ...`).
    Service(ServiceKey),
    /// Connections from /proc (`-L -c`).
    Connections,
    /// Timeouts (`-L --timeout`).
    Timeouts,
    /// Sync daemons (`-L --daemon`).
    Daemons,
}

/// The listing options of `-L` (and `-S`'s `-n`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub(crate) struct ListFormat {
    /// `-n`: numeric addresses and ports.
    pub numeric: bool,
    /// `--stats`.
    pub stats: bool,
    /// `--rate`.
    pub rate: bool,
    /// `--thresholds`.
    pub thresholds: bool,
    /// `--persistent-conn`.
    pub persistent_conn: bool,
    /// `--tun-info`.
    pub tun_info: bool,
    /// `--nosort`: keep the kernel's order.
    pub nosort: bool,
    /// `--exact`: unabbreviated numbers.
    pub exact: bool,
}

/// One parsed ipvsadm command line.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) enum Command {
    /// A change to the kernel's state (-A -E -D -C -a -e -d -Z --set
    /// --start-daemon --stop-daemon).
    Apply(Request),
    /// `-L`/`-l`.
    List(ListWhat, ListFormat),
    /// `-S`.
    Save(ListFormat),
    /// `-R`.
    Restore,
    /// `-h`.
    Help,
    /// `-v`.
    Version,
}

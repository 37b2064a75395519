//! What can be wrong with a rules text: one line's problem
//! ([`LineError`]), a problem with its line number ([`BadLine`]), and
//! every bad line of a text ([`RulesError`]).

use std::fmt;
use std::net::IpAddr;

use crate::ServiceKey;

/// What is wrong with one line of a rules text, in plain words.
///
/// The `Display` form names the option, value or service at fault:
///
/// ```
/// use ipvsnl::rules::{parse_line, LineError, Numeric};
/// let e = parse_line("-a -t 10.0.0.1:80 -r 10.0.1.1 -w abc", &Numeric).unwrap_err();
/// assert_eq!(e.to_string(), "weight \"abc\" is not a number from 0 to 2147483647");
/// assert!(matches!(e, LineError::BadValue { what: "weight", .. }));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LineError {
    /// The line holds no token at all (only [`parse_line`](super::parse_line)
    /// reports it; a whole text skips blank lines).
    Empty,
    /// The first token is not a command.
    NoCommand {
        /// The token the line starts with.
        first: String,
    },
    /// A command a rules text does not hold (a listing, `-S`, `-R`, `-h`,
    /// `-v`): such a text only holds changes.
    NotARulesCommand {
        /// The command as written.
        command: String,
    },
    /// A second command on the line.
    SecondCommand {
        /// The line's command.
        first: String,
        /// The later one.
        second: String,
    },
    /// An option this format does not know.
    NoSuchOption {
        /// The option as written.
        option: String,
    },
    /// A word that is no option's value.
    UnexpectedArgument {
        /// The word.
        argument: String,
    },
    /// An option that needs a value ends the line.
    MissingValue {
        /// The option as written.
        option: String,
        /// What value it takes.
        expects: &'static str,
    },
    /// A value given (`--opt=value`) to an option that takes none.
    UnwantedValue {
        /// The option as written.
        option: String,
    },
    /// The same option twice.
    Repeated {
        /// The option as written the second time.
        option: String,
    },
    /// Two options of which a line takes only one (two services, two
    /// forwarding methods, two checksum options).
    Conflict {
        /// The later option as written.
        option: String,
        /// The earlier one.
        earlier: String,
    },
    /// An option that makes no sense for the line's command.
    NotAllowed {
        /// The option as written.
        option: String,
        /// The command as written.
        command: String,
    },
    /// Something the command needs is not on the line.
    Missing {
        /// The command as written.
        command: String,
        /// What it needs.
        what: &'static str,
    },
    /// A value that does not parse or is out of range.
    BadValue {
        /// What the value is for (`"weight"`, `"scheduler"`, ...).
        what: &'static str,
        /// The value as written.
        value: String,
        /// What it should be.
        expected: String,
    },
    /// Values that parse but do not make sense together (or that the
    /// kernel would refuse).
    Invalid {
        /// Why.
        why: String,
    },
    /// A command about a service that is not in the table at that line
    /// (reported by [`Rules::to_table`](super::Rules::to_table)).
    NoSuchService {
        /// The command (`-E`, `-a`, ...).
        command: &'static str,
        /// The service it names.
        key: ServiceKey,
    },
    /// `-A` of a service already in the table.
    ServiceExists {
        /// The service.
        key: ServiceKey,
        /// The line that added it.
        added_on: usize,
    },
    /// A command about a real server its service does not have.
    NoSuchDestination {
        /// The command (`-e` or `-d`).
        command: &'static str,
        /// The service.
        key: ServiceKey,
        /// The real server's address.
        addr: IpAddr,
        /// The real server's port.
        port: u16,
    },
    /// `-a` of a real server the service already has.
    DestinationExists {
        /// The service.
        key: ServiceKey,
        /// The real server's address.
        addr: IpAddr,
        /// The real server's port.
        port: u16,
        /// The line that added it.
        added_on: usize,
    },
    /// A command that does not change the service table (`--set`,
    /// `--start-daemon`, `--stop-daemon`), given to
    /// [`Rules::to_table`](super::Rules::to_table).
    NotATableCommand {
        /// The command.
        command: &'static str,
    },
}

/// An address and port as the rules format writes them.
pub(super) fn endpoint(addr: &IpAddr, port: u16) -> String {
    match addr {
        IpAddr::V4(a) => format!("{a}:{port}"),
        IpAddr::V6(a) => format!("[{a}]:{port}"),
    }
}

const COMMANDS: &str = "-A -E -D -a -e -d -C -Z --set --start-daemon --stop-daemon";

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use LineError::*;
        match self {
            Empty => f.write_str("the line holds no command"),
            NoCommand { first } => write!(
                f,
                "\"{first}\" is not a command; a rules line starts with one of {COMMANDS}"
            ),
            NotARulesCommand { command } => write!(
                f,
                "{command} is not a command a rules text holds (only {COMMANDS})"
            ),
            SecondCommand { first, second } => {
                write!(f, "one command per line: {second} follows {first}")
            }
            NoSuchOption { option } => write!(f, "unknown option \"{option}\""),
            UnexpectedArgument { argument } => write!(f, "unexpected argument \"{argument}\""),
            MissingValue { option, expects } => write!(f, "{option} needs a value ({expects})"),
            UnwantedValue { option } => write!(f, "{option} takes no value"),
            Repeated { option } => write!(f, "{option} is given twice"),
            Conflict { option, earlier } => write!(
                f,
                "{option} conflicts with {earlier}: a line takes only one of them"
            ),
            NotAllowed { option, command } => write!(f, "{option} does not apply to {command}"),
            Missing { command, what } => write!(f, "{command} needs {what}"),
            BadValue {
                what,
                value,
                expected,
            } => write!(f, "{what} \"{value}\" is not {expected}"),
            Invalid { why } => f.write_str(why),
            NoSuchService { command, key } => {
                write!(f, "{command} names {key}, which no earlier line adds")
            }
            ServiceExists { key, added_on } => {
                write!(f, "-A adds {key}, which line {added_on} already adds")
            }
            NoSuchDestination {
                command,
                key,
                addr,
                port,
            } => write!(
                f,
                "{command} names real server {} of {key}, which no earlier line adds",
                endpoint(addr, *port)
            ),
            DestinationExists {
                key,
                addr,
                port,
                added_on,
            } => write!(
                f,
                "-a adds real server {} to {key}, which line {added_on} already adds",
                endpoint(addr, *port)
            ),
            NotATableCommand { command } => write!(
                f,
                "{command} does not change the service table (a table is built from -A -E -D -a -e -d -C -Z only)"
            ),
        }
    }
}

impl std::error::Error for LineError {}

/// A bad line of a rules text: its 1-based number and what is wrong.
///
/// ```
/// use ipvsnl::rules::{parse, Numeric};
/// let e = parse("-C\n-A -t 10.0.0.1:80 --foo\n", &Numeric).unwrap_err();
/// let bad = &e.lines()[0];
/// assert_eq!(bad.line(), 2);
/// assert_eq!(bad.to_string(), "line 2: unknown option \"--foo\"");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct BadLine {
    line: usize,
    error: LineError,
}

impl BadLine {
    /// A bad line from its number and problem.
    pub fn new(line: usize, error: LineError) -> Self {
        BadLine { line, error }
    }

    /// The line number (1-based).
    pub fn line(&self) -> usize {
        self.line
    }

    /// What is wrong with it.
    pub fn error(&self) -> &LineError {
        &self.error
    }
}

impl fmt::Display for BadLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.error)
    }
}

impl std::error::Error for BadLine {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// Every bad line of a rules text (never none), in line order.
///
/// `Display` prints one bad line per output line.
///
/// ```
/// use ipvsnl::rules::{parse, Numeric};
/// let e = parse("-A -t 10.0.0.1:80 -w 1\n-a -t 10.0.0.1:80\n", &Numeric).unwrap_err();
/// assert_eq!(
///     e.to_string(),
///     "line 1: -w does not apply to -A\nline 2: -a needs a real server (-r ADDRESS[:PORT])"
/// );
/// let numbers: Vec<usize> = e.lines().iter().map(|b| b.line()).collect();
/// assert_eq!(numbers, [1, 2]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RulesError {
    lines: Vec<BadLine>,
}

impl RulesError {
    /// The error of some bad lines; `None` when there are none.
    pub(super) fn from_lines(lines: Vec<BadLine>) -> Option<Self> {
        (!lines.is_empty()).then_some(RulesError { lines })
    }

    /// The bad lines, in line order.
    pub fn lines(&self) -> &[BadLine] {
        &self.lines
    }

    /// The bad lines, owned.
    pub fn into_lines(self) -> Vec<BadLine> {
        self.lines
    }
}

impl fmt::Display for RulesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, bad) in self.lines.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{bad}")?;
        }
        Ok(())
    }
}

impl std::error::Error for RulesError {}

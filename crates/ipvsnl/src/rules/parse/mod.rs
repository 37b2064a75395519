//! Reading the rules format: the text `ipvsadm -S` prints and
//! `ipvsadm -R` reads, one command per line, into [`Request`]s and, if
//! wanted, into the [`Table`] the commands build.
//!
//! See [`parse`] for how lines are read.

use std::str::FromStr;

use super::Names;
use crate::sync::Table;
use crate::Request;

mod error;
mod line;
mod options;
mod table;
mod value;

pub use error::{BadLine, LineError, RulesError};
pub use line::{DEFAULT_PERSISTENCE_TIMEOUT, DEFAULT_SYNC_INTERFACE};

/// The commands of a rules text, each with its 1-based line number, in
/// text order.
///
/// ```
/// use ipvsnl::rules::{parse, Numeric};
/// use ipvsnl::Request;
/// let rules = parse("\n-C\nipvsadm -Z\n", &Numeric).unwrap();
/// let lines: Vec<(usize, &Request)> = rules.iter().collect();
/// assert_eq!(lines, [(2, &Request::Flush), (3, &Request::Zero(None))]);
/// assert_eq!(rules.requests(), [Request::Flush, Request::Zero(None)]);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Rules {
    lines: Vec<(usize, Request)>,
}

impl Rules {
    /// Every command with its line number.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (usize, &Request)> + '_ {
        self.lines.iter().map(|(n, r)| (*n, r))
    }

    /// The commands, in order, without their line numbers.
    pub fn requests(&self) -> Vec<Request> {
        self.lines.iter().map(|(_, r)| r.clone()).collect()
    }

    /// The commands, owned, without their line numbers.
    pub fn into_requests(self) -> Vec<Request> {
        self.lines.into_iter().map(|(_, r)| r).collect()
    }

    /// How many commands.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// True when the text held no command.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// The table the commands build, replayed in order on an empty table:
    /// `-A` adds a service, `-E` replaces its settings, `-D` deletes it;
    /// `-a`, `-e`, `-d` do the same for real servers; `-C` empties the
    /// table; `-Z` changes nothing (its service must exist).
    ///
    /// What the kernel would refuse is an error naming its line: a command
    /// about a service or real server no earlier line adds (or a later line
    /// deleted), or adding one twice. `--set`, `--start-daemon` and
    /// `--stop-daemon` are errors too: they are not about the table. Every
    /// such line is reported.
    ///
    /// ```
    /// use ipvsnl::rules::{parse, Numeric};
    /// use ipvsnl::ServiceKey;
    /// let text = "-A -t 10.0.0.1:80 -s rr\n-a -t 10.0.0.1:80 -r 10.0.1.1:80 -m\n";
    /// let table = parse(text, &Numeric).unwrap().to_table().unwrap();
    /// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
    /// assert_eq!(table.get(&key).unwrap().destinations.len(), 1);
    ///
    /// let e = parse("-E -t 10.0.0.1:80 -s rr\n", &Numeric).unwrap().to_table().unwrap_err();
    /// assert_eq!(e.to_string(), "line 1: -E names TCP 10.0.0.1:80, which no earlier line adds");
    /// ```
    pub fn to_table(&self) -> Result<Table, RulesError> {
        table::to_table(self)
    }
}

/// Reads a rules text of numeric addresses and ports
/// ([`Numeric`](super::Numeric)); see [`parse`].
///
/// ```
/// use ipvsnl::rules::Rules;
/// let rules: Rules = "-A -t 10.0.0.1:80 -s rr\n-C\n".parse().unwrap();
/// assert_eq!(rules.len(), 2);
/// assert!("-A -t localhost:80".parse::<Rules>().is_err());
/// ```
impl FromStr for Rules {
    type Err = RulesError;
    fn from_str(text: &str) -> Result<Self, RulesError> {
        parse(text, &super::Numeric)
    }
}

impl IntoIterator for Rules {
    type Item = (usize, Request);
    type IntoIter = std::vec::IntoIter<(usize, Request)>;
    fn into_iter(self) -> Self::IntoIter {
        self.lines.into_iter()
    }
}

/// A line's tokens: split at white space, a leading `ipvsadm` dropped.
fn tokens(line: &str) -> Vec<&str> {
    let mut tokens: Vec<&str> = line.split_whitespace().collect();
    if tokens.first() == Some(&"ipvsadm") {
        tokens.remove(0);
    }
    tokens
}

/// Reads one rules line (a command without the program name, or with a
/// leading `ipvsadm`) into its request.
///
/// Host and port names are resolved through `names`;
/// [`Numeric`](super::Numeric) takes numeric ones only.
///
/// ```
/// use ipvsnl::rules::{parse_line, Numeric};
/// use ipvsnl::{Destination, Forward, Request, ServiceKey};
/// let r = parse_line("-a -t 10.0.0.1:80 -r 10.0.1.1:8080 -m -w 3", &Numeric).unwrap();
/// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
/// let d = Destination::new("10.0.1.1".parse().unwrap(), 8080)
///     .with_forward(Forward::Masquerade)
///     .with_weight(3);
/// assert_eq!(r, Request::AddDestination(key, d));
/// let e = parse_line("-L -n", &Numeric).unwrap_err();
/// assert!(e.to_string().starts_with("-L is not a command a rules text holds"));
/// ```
pub fn parse_line(line: &str, names: &dyn Names) -> Result<Request, LineError> {
    let tokens = tokens(line);
    let scanned = options::scan(&tokens)?;
    line::request(&scanned, names)
}

/// Reads a whole rules text: every non-blank line is one command.
///
/// Returns the commands with their line numbers, or every bad line with
/// its number and what is wrong (not just the first).
///
/// A line is a command (`-A -E -D -a -e -d -C -Z --set --start-daemon
/// --stop-daemon`, short or long), then its options, as `--opt value`,
/// `--opt=value` or `-o value`; a leading `ipvsadm` is dropped. Hosts and
/// ports are numeric (dotted IPv4, `[IPv6]:port`, a bare IPv6 address
/// without port) or names resolved through `names`. Fwmarks are decimal,
/// `0x` hex, or negative (as `ipvsadm -S` prints marks above 2^31).
///
/// This is the library's reader of the format, not ipvsadm's argument
/// parser: it reads every line the library's printer
/// ([`service_rule`](super::service_rule),
/// [`destination_rule`](super::destination_rule),
/// [`request_rule`](super::request_rule)) and `ipvsadm -S` write, and
/// refuses whatever makes no sense with a plain message: an option the
/// command does not take (`-w` on `-A`), a listing command (`-L`, `-S`,
/// `-R`, `-h`), a value out of the model's range ([`WEIGHT_MAX`](crate::WEIGHT_MAX),
/// [`SCHED_NAME_MAX`](crate::SCHED_NAME_MAX), ...), and what the model's
/// `validate` refuses. As with ipvsadm, a real server with no forwarding
/// option is directly routed (`-g`), a service without `-s` uses `wlc`,
/// `-p` without a value is [`DEFAULT_PERSISTENCE_TIMEOUT`] seconds, and
/// `-E`/`-e` carry the whole new settings (what a line leaves out takes
/// its default). Where it differs from ipvsadm, it is on purpose:
///
/// - options may come in any order (`-M 64 -t [2001:db8::1]:80 -p` means
///   what it says);
/// - an IPv4 netmask is dotted (`-M 255.255.255.0`); a bare number is
///   refused rather than read as `0.0.0.24`;
/// - `-M` needs `-p`: the netmask is the granularity of persistence, and
///   `ipvsadm -S` prints it only for a persistent service;
/// - a real server's port is the one written, whatever the forwarding
///   method; only a server written without a port takes the service's;
/// - `-6` goes with `-f` only; `--syncid` on `--stop-daemon` is checked
///   and has no effect (a [`Request::StopDaemon`] names only the role);
/// - options are not bundled (`-Ln`), and `#` is not a comment.
///
/// ```
/// use ipvsnl::rules::{parse, Numeric};
/// let text = "-A -t 10.0.0.1:80 -s rr -p 300\n\
///             -a -t 10.0.0.1:80 -r 10.0.1.1:8080 -m -w 1 -x 0 -y 0\n\
///             -A -f 5 -6 -s sh -b sh-port\n\
///             -a -f 5 -6 -r [2001:db8::1]:80 -i --tun-type gue --tun-port 6080 --tun-nocsum\n";
/// let rules = parse(text, &Numeric).unwrap();
/// assert_eq!(rules.len(), 4);
///
/// let e = parse("-A -t 10.0.0.1:80\n-a -t 10.0.0.1:80 -r 10.0.1.1 -w abc\n-a -t 10.0.0.1:80 --foo\n", &Numeric)
///     .unwrap_err();
/// assert_eq!(e.lines().len(), 2);
/// assert_eq!(e.lines()[0].to_string(), "line 2: weight \"abc\" is not a number from 0 to 2147483647");
/// assert_eq!(e.lines()[1].to_string(), "line 3: unknown option \"--foo\"");
/// ```
pub fn parse(text: &str, names: &dyn Names) -> Result<Rules, RulesError> {
    let mut lines = Vec::new();
    let mut bad = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let tokens = tokens(line);
        if tokens.is_empty() {
            continue;
        }
        let parsed = options::scan(&tokens).and_then(|s| line::request(&s, names));
        match parsed {
            Ok(request) => lines.push((i + 1, request)),
            Err(e) => bad.push(BadLine::new(i + 1, e)),
        }
    }
    match RulesError::from_lines(bad) {
        Some(e) => Err(e),
        None => Ok(Rules { lines }),
    }
}

#[cfg(test)]
mod roundtrip;
#[cfg(test)]
mod saved_texts;
#[cfg(test)]
mod tests;

//! The ipvsadm rules format (`ipvsadm -S` output, `ipvsadm -R` input):
//! parse and print.
//!
//! A rules text is a sequence of lines, each one ipvsadm command line
//! without the program name (`-A -t 10.0.0.1:80 -s rr`,
//! `-a -t 10.0.0.1:80 -r 10.0.1.1:80 -m -w 1`). This module reads it with
//! ipvsadm 1.31's grammar, option for option and message for message
//! ([`parse_args`] for one command line, [`parse_rules`] for a whole text,
//! which reports every bad line with its number), and prints services and
//! destinations back as lines ([`service_rule`], [`destination_rule`]),
//! and any [`Request`](crate::Request) that has a rule form
//! ([`request_rule`], which the sync dry run prints with).
//!
//! Host and service names are resolved through a [`Names`] implementation;
//! [`Numeric`] resolves nothing (numeric addresses and ports only), which
//! keeps this module pure.
//!
//! For library users, [`parse`] reads a rules text in this library's own
//! plain terms: every line becomes a [`Request`](crate::Request) with its
//! line number, every bad line is reported ([`RulesError`]), and
//! [`Rules::to_table`] replays the commands into a
//! [`sync::Table`](crate::sync::Table). [`parse_line`] reads one line.
//!
//! ```
//! use ipvsnl::rules::{parse, Numeric};
//! let text = "-A -t 10.0.0.1:80 -s rr -p 300\n-a -t 10.0.0.1:80 -r 10.0.1.1:8080 -m -w 2\n";
//! let table = parse(text, &Numeric).unwrap().to_table().unwrap();
//! assert_eq!(table.destination_count(), 1);
//! let e = parse("-A -t 10.0.0.1:80 -w 1\n", &Numeric).unwrap_err();
//! assert_eq!(e.to_string(), "line 1: -w does not apply to -A");
//! ```
//!
//! ```
//! use ipvsnl::rules::{parse_rules, Numeric};
//! let text = "-A -t 10.0.0.1:80 -s rr\n-a -t 10.0.0.1:80 -r 10.0.1.1 -m\n";
//! let rules = parse_rules(text, "ipvsadm", &Numeric).unwrap();
//! assert_eq!(rules.len(), 2);
//! assert_eq!(rules[1].line, 2);
//! let bad = parse_rules("-A -t 10.0.0.1\n-a -t 10.0.0.1:80\n", "ipvsadm", &Numeric).unwrap_err();
//! assert_eq!(bad[0].to_string(), "line 1: Zero port specified for non-persistent service");
//! assert_eq!(bad[1].line, 2);
//! ```

use std::fmt;
use std::net::{IpAddr, Ipv4Addr};

mod grammar;
mod parse;
mod requests;
mod save;
pub mod text;

pub use grammar::{parse_args, ArgError, Command, ListFormat, ListWhat};
pub use parse::{
    parse, parse_line, BadLine, LineError, Rules, RulesError, DEFAULT_PERSISTENCE_TIMEOUT,
    DEFAULT_SYNC_INTERFACE,
};
pub use requests::request_rule;
pub use save::{
    addr_port, destination_rule, lookup_protocol, sched_flag_names, service_rule,
    service_rule_label,
};

/// Name resolution for the rules format: host and service names to
/// addresses and ports when parsing, and back when printing.
///
/// Every method has a default that resolves nothing, so an implementation
/// only overrides what it supports.
pub trait Names {
    /// The first IPv4 address of a host name (`gethostbyname`), tried only
    /// when the text is not an `inet_aton` address.
    fn host_v4(&self, _name: &str) -> Option<Ipv4Addr> {
        None
    }
    /// The port of a service name for a protocol (`"tcp"`, `"udp"` or
    /// `"sctp"`), tried only when the text is not a number.
    fn port(&self, _name: &str, _protocol: &str) -> Option<u16> {
        None
    }
    /// The host name of an address, for printing without `-n`.
    fn host_name(&self, _addr: &IpAddr) -> Option<String> {
        None
    }
    /// The service name of a port for a protocol, for printing without `-n`.
    fn port_name(&self, _port: u16, _protocol: &str) -> Option<String> {
        None
    }
}

/// Resolves nothing: numeric addresses and ports only (ipvsadm's `-n`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Numeric;

impl Names for Numeric {}

/// One command of a rules text, with its 1-based line number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// Line number in the text (1-based).
    pub line: usize,
    /// The command on that line.
    pub command: Command,
}

/// A bad line of a rules text: its number and ipvsadm's message for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleError {
    /// Line number in the text (1-based).
    pub line: usize,
    /// ipvsadm's message and exit status for the line.
    pub error: ArgError,
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.error.message)
    }
}

impl std::error::Error for RuleError {}

/// Splits a rules text into lines of tokens the way `ipvsadm -R` does
/// (`config_stream.c`): tokens are separated by spaces, tabs and carriage
/// returns; a token that is exactly `ipvsadm` is dropped; lines without
/// tokens are skipped; a last line without a newline counts (even if it
/// ends in white space). Returns (line number, tokens).
///
/// ```
/// use ipvsnl::rules::tokenize;
/// let t = tokenize("ipvsadm -A -t 1.2.3.4:80\r\n\n-C\t\n-Z ");
/// assert_eq!(t, vec![(1, vec!["-A", "-t", "1.2.3.4:80"]), (3, vec!["-C"]), (4, vec!["-Z"])]);
/// ```
pub fn tokenize(text: &str) -> Vec<(usize, Vec<&str>)> {
    let mut out = Vec::new();
    let mut lines = text.split('\n').enumerate().peekable();
    while let Some((n, line)) = lines.next() {
        if lines.peek().is_none() && line.is_empty() {
            break;
        }
        let tokens: Vec<&str> = line
            .split([' ', '\t', '\r'])
            .filter(|t| !t.is_empty() && *t != "ipvsadm")
            .collect();
        if !tokens.is_empty() {
            out.push((n + 1, tokens));
        }
    }
    out
}

/// Parses a whole rules text (what `ipvsadm -R` reads) with ipvsadm's
/// grammar. `program` stands for argv\[0\] in messages that name it.
///
/// Returns every command with its line number, or, if any line is bad,
/// every bad line with its number and ipvsadm's message. A restore inside
/// a restore (`-R` on a line) is a bad line, as it is for ipvsadm.
pub fn parse_rules(
    text: &str,
    program: &str,
    names: &dyn Names,
) -> Result<Vec<Rule>, Vec<RuleError>> {
    let mut rules = Vec::new();
    let mut errors = Vec::new();
    for (line, tokens) in tokenize(text) {
        let mut argv: Vec<&str> = Vec::with_capacity(tokens.len() + 1);
        argv.push(program);
        argv.extend(tokens);
        match parse_args(&argv, names) {
            Ok(Command::Restore) => errors.push(RuleError {
                line,
                error: ArgError::try_help(program),
            }),
            Ok(command) => rules.push(Rule { line, command }),
            Err(error) => errors.push(RuleError { line, error }),
        }
    }
    if errors.is_empty() {
        Ok(rules)
    } else {
        Err(errors)
    }
}

#[cfg(test)]
mod tests;

//! The ipvsadm rules format (`ipvsadm -S` output, `ipvsadm -R` input):
//! printing.
//!
//! A rules text is a sequence of lines, each one ipvsadm command line
//! without the program name (`-A -t 10.0.0.1:80 -s rr`,
//! `-a -t 10.0.0.1:80 -r 10.0.1.1:80 -m -w 1`). This module prints
//! services and destinations as such lines, exactly as `ipvsadm -S` does
//! ([`service_rule`], [`destination_rule`]), and any
//! [`Request`](crate::Request) that has a rule form ([`request_rule`],
//! which the sync dry run prints with); addresses are printed the way the C
//! library's `inet_ntop` prints them. The pieces these printers are made
//! of, for a tool that prints in ipvsadm's style, are in [`style`].
//!
//! Host and service names are named through a [`Names`] implementation;
//! [`Numeric`] names nothing (numeric addresses and ports only, ipvsadm's
//! `-n`), which keeps this module pure.
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
//! use ipvsnl::rules::{destination_rule, service_rule, Numeric};
//! use ipvsnl::{Destination, Scheduler, Service, ServiceKey};
//! let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
//! let svc = Service::new(key).with_scheduler(Scheduler::RoundRobin);
//! let dest = Destination::new("10.0.1.1".parse().unwrap(), 80);
//! let text = format!("{}\n{}\n", service_rule(&svc, &Numeric), destination_rule(&key, &dest, &Numeric));
//! assert_eq!(text, "-A -t 10.0.0.1:80 -s rr\n-a -t 10.0.0.1:80 -r 10.0.1.1:80 -m -w 1\n");
//! ```
//!
//! The ipvsadm command line itself (its argv grammar, `-R`'s reading of a
//! rules text with ipvsadm's messages and exit statuses) is not part of the
//! library: it lives in the `ipvsnl-ipvsadm` crate, the drop-in `ipvsadm`
//! binary.

use std::net::{IpAddr, Ipv4Addr};

mod ntop;
mod parse;
mod plan;
#[cfg(test)]
mod plan_tests;
mod push;
mod requests;
mod save;
#[cfg(test)]
mod save_tests;
pub mod style;

pub use parse::{
    parse, parse_line, BadLine, LineError, Rules, RulesError, DEFAULT_PERSISTENCE_TIMEOUT,
    DEFAULT_SYNC_INTERFACE,
};
pub use requests::request_rule;
pub use save::{
    destination_rule, push_service_rules, service_rule, table_rules, write_service_rules,
};

/// Name resolution for the rules format: host and service names to
/// addresses and ports (for a parser of rules text), and addresses and
/// ports back to names (for the printers here, without `-n`).
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
    /// Whether [`host_name`](Self::host_name) and
    /// [`port_name`](Self::port_name) never name anything (as
    /// [`Numeric`]'s), so that a printer of many lines need not ask them
    /// for each. False by default.
    ///
    /// ```
    /// use ipvsnl::rules::{Names, Numeric};
    /// assert!(Numeric.names_nothing());
    /// ```
    fn names_nothing(&self) -> bool {
        false
    }
}

/// Resolves nothing: numeric addresses and ports only (ipvsadm's `-n`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Numeric;

impl Names for Numeric {
    fn names_nothing(&self) -> bool {
        true
    }
}

//! Service keys from text: the form their `Display` prints.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

use crate::{AddressFamily, Protocol, ServiceKey};

/// Why a text is not a service key. Each names the part at fault.
///
/// The text form is what [`ServiceKey`]'s `Display` prints:
/// `TCP 10.0.0.1:80`, `UDP [2001:db8::1]:53`, `SCTP 10.0.0.1:3868`,
/// `protocol 47 10.0.0.1:0` (a protocol this crate does not name),
/// `fwmark 5 (IPv4)`, `fwmark 5 (IPv6)`.
///
/// ```
/// use ipvsnl::{ParseKeyError, ServiceKey};
/// let e = "TCP 10.0.0.1:99999".parse::<ServiceKey>().unwrap_err();
/// assert_eq!(e, ParseKeyError::Port("99999".into()));
/// assert_eq!(e.to_string(), "port \"99999\" is not a number from 0 to 65535");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseKeyError {
    /// The text is empty (or only white space).
    #[error(
        "a service key cannot be empty (write e.g. \"TCP 10.0.0.1:80\" or \"fwmark 5 (IPv4)\")"
    )]
    Empty,
    /// The first word is not a protocol or `fwmark`.
    #[error(
        "{0:?} is not a protocol: expected TCP, UDP, SCTP, \"protocol <number>\" or \"fwmark\""
    )]
    Protocol(String),
    /// `protocol <number>` with a number that is not a protocol number, or
    /// that is the number of a named protocol (which has one spelling).
    #[error("protocol number {0:?}: {1}")]
    ProtocolNumber(String, &'static str),
    /// The protocol has no address after it.
    #[error("no address after {0} (write e.g. \"{0} 10.0.0.1:80\" or \"{0} [2001:db8::1]:80\")")]
    MissingAddress(Protocol),
    /// The address is not an IPv4 address, or an IPv6 address in
    /// brackets, followed by `:port`.
    #[error("{0:?} is not an address and port (write 10.0.0.1:80 or [2001:db8::1]:80)")]
    Address(String),
    /// The port is not a number from 0 to 65535.
    #[error("port {0:?} is not a number from 0 to 65535")]
    Port(String),
    /// The mark is not a number from 0 to 4294967295.
    #[error("fwmark {0:?} is not a number from 0 to 4294967295")]
    Mark(String),
    /// The mark's family is not `(IPv4)` or `(IPv6)`.
    #[error("{0:?} is not an address family: write \"(IPv4)\" or \"(IPv6)\" after the mark")]
    Family(String),
    /// Something follows a complete key.
    #[error("unexpected {0:?} after the key")]
    Trailing(String),
}

impl FromStr for ServiceKey {
    type Err = ParseKeyError;

    /// Reads the form `Display` prints (see [`ParseKeyError`]): words as
    /// printed, addresses in any spelling the standard library reads (an
    /// IPv6 one in brackets), numbers in decimal digits. Printing the key
    /// again gives the canonical text.
    ///
    /// ```
    /// use ipvsnl::{AddressFamily, ServiceKey};
    /// let web: ServiceKey = "TCP 192.0.2.1:80".parse().unwrap();
    /// assert_eq!(web, ServiceKey::tcp("192.0.2.1".parse().unwrap(), 80));
    /// let dns: ServiceKey = "UDP [2001:db8::1]:53".parse().unwrap();
    /// assert_eq!(dns.to_string(), "UDP [2001:db8::1]:53");
    /// let mark: ServiceKey = "fwmark 7 (IPv6)".parse().unwrap();
    /// assert_eq!(mark, ServiceKey::fwmark(7, AddressFamily::Inet6));
    /// assert!("tcp:192.0.2.1:80".parse::<ServiceKey>().is_err());
    /// ```
    fn from_str(text: &str) -> Result<Self, ParseKeyError> {
        let mut words = text.split_whitespace();
        let first = words.next().ok_or(ParseKeyError::Empty)?;
        let key = match first {
            "fwmark" => {
                let mark = words.next().unwrap_or_default();
                let mark = decimal(mark).ok_or_else(|| ParseKeyError::Mark(mark.to_owned()))?;
                let family = match words.next().unwrap_or_default() {
                    "(IPv4)" => AddressFamily::Inet,
                    "(IPv6)" => AddressFamily::Inet6,
                    other => return Err(ParseKeyError::Family(other.to_owned())),
                };
                ServiceKey::fwmark(mark, family)
            }
            word => {
                let protocol = match word {
                    "TCP" => Protocol::Tcp,
                    "UDP" => Protocol::Udp,
                    "SCTP" => Protocol::Sctp,
                    "protocol" => protocol_number(words.next().unwrap_or_default())?,
                    other => return Err(ParseKeyError::Protocol(other.to_owned())),
                };
                let addr = words
                    .next()
                    .ok_or(ParseKeyError::MissingAddress(protocol))?;
                let (addr, port) = address_and_port(addr)?;
                ServiceKey::Inet {
                    protocol,
                    addr,
                    port,
                }
            }
        };
        match words.next() {
            None => Ok(key),
            Some(extra) => Err(ParseKeyError::Trailing(extra.to_owned())),
        }
    }
}

/// A number in decimal digits only (no sign, no space), as `Display`
/// prints it.
fn decimal<T: FromStr>(text: &str) -> Option<T> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// The protocol of `protocol <number>`: only a number no named protocol
/// has (the others are spelled by name).
fn protocol_number(text: &str) -> Result<Protocol, ParseKeyError> {
    let fault = |why| ParseKeyError::ProtocolNumber(text.to_owned(), why);
    let number: u16 = decimal(text).ok_or_else(|| fault("not a number from 0 to 65535"))?;
    match Protocol::from_raw(number) {
        p @ Protocol::Other(_) => Ok(p),
        Protocol::Tcp => Err(fault("this is TCP: write TCP")),
        Protocol::Udp => Err(fault("this is UDP: write UDP")),
        Protocol::Sctp => Err(fault("this is SCTP: write SCTP")),
    }
}

/// `10.0.0.1:80` or `[2001:db8::1]:80`.
fn address_and_port(text: &str) -> Result<(IpAddr, u16), ParseKeyError> {
    let bad = || ParseKeyError::Address(text.to_owned());
    let (addr, port) = if let Some(rest) = text.strip_prefix('[') {
        let (v6, port) = rest.split_once("]:").ok_or_else(bad)?;
        (IpAddr::V6(v6.parse::<Ipv6Addr>().map_err(|_| bad())?), port)
    } else {
        let (v4, port) = text.rsplit_once(':').ok_or_else(bad)?;
        (IpAddr::V4(v4.parse::<Ipv4Addr>().map_err(|_| bad())?), port)
    };
    let port = decimal(port).ok_or_else(|| ParseKeyError::Port(port.to_owned()))?;
    Ok((addr, port))
}

#[cfg(test)]
#[path = "key_text_tests.rs"]
mod tests;

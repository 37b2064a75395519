//! The kernel's connection table as `/proc/net/ip_vs_conn` shows it.
//!
//! Each row is one connection (or persistence template): protocol, client,
//! virtual and destination address and port, state, seconds left, and the
//! persistence engine's name and data if it has some. [`parse`] reads the
//! text; [`read`] reads the file of the caller's network namespace.
//!
//! ```
//! use ipvsnl::connections::parse;
//! let text = "Pro FromIP   FPrt ToIP     TPrt DestIP   DPrt State       Expires PEName PEData\n\
//!             TCP C0A80A01 D431 0A000001 0050 C0A80102 0050 ESTABLISHED     899\n";
//! let conns = parse(text).unwrap();
//! assert_eq!(conns[0].client_addr.to_string(), "192.168.10.1");
//! assert_eq!(conns[0].client_port, 54321);
//! assert_eq!(conns[0].state, "ESTABLISHED");
//! assert_eq!(conns[0].expires, 899);
//! ```

use std::fmt;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::Path;

/// Where the kernel shows the connections of the caller's namespace.
pub const PROC_PATH: &str = "/proc/net/ip_vs_conn";

/// One row of the connection table.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Connection {
    /// Protocol name as the kernel prints it: `TCP`, `UDP`, `SCTP`, `IP`
    /// (fwmark persistence templates), `ICMP`, ...
    pub protocol: String,
    /// Client address.
    pub client_addr: IpAddr,
    /// Client port (0 for templates).
    pub client_port: u16,
    /// Virtual (service) address.
    pub virtual_addr: IpAddr,
    /// Virtual port.
    pub virtual_port: u16,
    /// Destination (real server) address; its family may differ from the
    /// client's for a mixed-family tunnel.
    pub dest_addr: IpAddr,
    /// Destination port.
    pub dest_port: u16,
    /// Protocol state name (`ESTABLISHED`, `SYN_RECV`, `UDP`, `NONE`, ...).
    pub state: String,
    /// Seconds until the entry expires.
    pub expires: u32,
    /// Persistence engine name and data (e.g. `sip` and a Call-ID), if any.
    pub persistence: Option<(String, String)>,
    /// Where the entry came from, in `/proc/net/ip_vs_conn_sync` only:
    /// `Local` (made here) or `Sync` (received from a master's sync
    /// daemon); `None` in `/proc/net/ip_vs_conn`, which has no such column.
    pub origin: Option<String>,
}

impl Connection {
    /// A connection of `protocol` (`TCP`, `UDP`, ...) from `client` to the
    /// virtual service at `virtual_addr`, forwarded to `dest`, in `state`
    /// (`ESTABLISHED`, `UDP`, ...), expiring in `expires` seconds; no
    /// persistence data, no origin.
    ///
    /// ```
    /// use ipvsnl::connections::Connection;
    /// let c = Connection::new(
    ///     "TCP",
    ///     "192.168.10.1:54321".parse().unwrap(),
    ///     "10.0.0.1:80".parse().unwrap(),
    ///     "192.168.1.2:80".parse().unwrap(),
    ///     "ESTABLISHED",
    ///     899,
    /// );
    /// assert_eq!((c.client_port, c.virtual_port, c.dest_port), (54321, 80, 80));
    /// ```
    pub fn new(
        protocol: impl Into<String>,
        client: SocketAddr,
        virtual_addr: SocketAddr,
        dest: SocketAddr,
        state: impl Into<String>,
        expires: u32,
    ) -> Self {
        Connection {
            protocol: protocol.into(),
            client_addr: client.ip(),
            client_port: client.port(),
            virtual_addr: virtual_addr.ip(),
            virtual_port: virtual_addr.port(),
            dest_addr: dest.ip(),
            dest_port: dest.port(),
            state: state.into(),
            expires,
            persistence: None,
            origin: None,
        }
    }

    /// With the persistence engine `engine` (`sip`) and its `data` (a
    /// Call-ID).
    #[must_use]
    pub fn with_persistence(mut self, engine: impl Into<String>, data: impl Into<String>) -> Self {
        self.persistence = Some((engine.into(), data.into()));
        self
    }
}

/// Why a text is not a connection table.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseError {
    /// The header line is missing (empty text).
    MissingHeader,
    /// A row does not have the columns of a connection; `line` is 1-based.
    BadRow {
        /// Line number.
        line: usize,
        /// The row.
        text: String,
    },
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::MissingHeader => f.write_str("no header line in the connection table"),
            ParseError::BadRow { line, text } => {
                write!(f, "line {line} is not a connection row: {text:?}")
            }
        }
    }
}

impl std::error::Error for ParseError {}

/// C's `strtoul(s, NULL, 16)` truncated to 32 bits: leading white space, a
/// sign, an optional 0x, then hex digits up to the first other character.
fn hex_u32(s: &str) -> u32 {
    let t = s.trim_start();
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let t = t
        .strip_prefix("0x")
        .or_else(|| t.strip_prefix("0X"))
        .filter(|r| r.starts_with(|c: char| c.is_ascii_hexdigit()))
        .unwrap_or(t);
    let mut v: u64 = 0;
    for c in t.chars() {
        match c.to_digit(16) {
            Some(d) => {
                v = v
                    .checked_mul(16)
                    .and_then(|v| v.checked_add(u64::from(d)))
                    .unwrap_or(u64::MAX)
            }
            None => break,
        }
    }
    let v = if neg { v.wrapping_neg() } else { v };
    v as u32
}

/// An address column: IPv6 text, IPv4 text, or (what the kernel prints for
/// IPv4) eight host-order hex digits.
fn address(s: &str) -> IpAddr {
    if let Ok(a) = s.parse::<std::net::Ipv6Addr>() {
        return IpAddr::V6(a);
    }
    if let Ok(a) = s.parse::<Ipv4Addr>() {
        return IpAddr::V4(a);
    }
    IpAddr::V4(Ipv4Addr::from(hex_u32(s)))
}

/// A port column: hex, as `%hX` reads it (truncated to 16 bits).
fn port(s: &str) -> Option<u16> {
    if !s
        .trim_start_matches(['+', '-'])
        .starts_with(|c: char| c.is_ascii_hexdigit())
    {
        return None;
    }
    Some(hex_u32(s) as u16)
}

/// Parses one row of `/proc/net/ip_vs_conn` (without the header). `None`
/// if it lacks the nine columns of a connection.
pub fn parse_row(row: &str) -> Option<Connection> {
    parse_columns(row, false)
}

/// Parses one row, of `ip_vs_conn_sync` (an Origin column before Expires)
/// when `with_origin`.
fn parse_columns(row: &str, with_origin: bool) -> Option<Connection> {
    let mut f: Vec<&str> = row.split_ascii_whitespace().collect();
    let origin = if with_origin {
        if f.len() < 10 {
            return None;
        }
        Some(f.remove(8).to_owned())
    } else {
        None
    };
    if f.len() < 9 {
        return None;
    }
    let client_addr = address(f[1]);
    // The virtual address is read in the client's family.
    let virtual_addr = match client_addr {
        IpAddr::V6(_) => IpAddr::V6(f[3].parse().unwrap_or(std::net::Ipv6Addr::UNSPECIFIED)),
        IpAddr::V4(_) => match f[3].parse::<Ipv4Addr>() {
            Ok(a) if f[1].parse::<Ipv4Addr>().is_ok() => IpAddr::V4(a),
            _ => IpAddr::V4(Ipv4Addr::from(hex_u32(f[3]))),
        },
    };
    // A whole signed decimal (fields are split on white space, so none is
    // left around it); anything else reads as 0.
    let expires = f[8].parse::<i64>().unwrap_or(0) as u32;
    Some(Connection {
        protocol: f[0].to_owned(),
        client_addr,
        client_port: port(f[2])?,
        virtual_addr,
        virtual_port: port(f[4])?,
        dest_addr: address(f[5]),
        dest_port: port(f[6])?,
        state: f[7].to_owned(),
        expires,
        persistence: (f.len() >= 11).then(|| (f[9].to_owned(), f[10].to_owned())),
        origin,
    })
}

/// Parses the whole text of `/proc/net/ip_vs_conn` or
/// `/proc/net/ip_vs_conn_sync` (told apart by the header's `Origin`
/// column, kept in [`Connection::origin`]): the header line, then one row
/// per connection.
pub fn parse(text: &str) -> Result<Vec<Connection>, ParseError> {
    let mut lines = text.lines().enumerate();
    let Some((_, header)) = lines.next() else {
        return Err(ParseError::MissingHeader);
    };
    let with_origin = header.split_ascii_whitespace().any(|w| w == "Origin");
    let mut out = Vec::new();
    for (i, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        match parse_columns(line, with_origin) {
            Some(c) => out.push(c),
            None => {
                return Err(ParseError::BadRow {
                    line: i + 1,
                    text: line.to_owned(),
                })
            }
        }
    }
    Ok(out)
}

/// Reads and parses a connection table file.
pub fn read_from(path: impl AsRef<Path>) -> io::Result<Vec<Connection>> {
    let text = std::fs::read_to_string(path)?;
    parse(&text).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// Reads the connections of the calling process's network namespace
/// (`/proc/net/ip_vs_conn`).
pub fn read() -> io::Result<Vec<Connection>> {
    read_from(PROC_PATH)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str =
        "Pro FromIP   FPrt ToIP     TPrt DestIP   DPrt State       Expires PEName PEData\n";

    #[test]
    fn the_sync_table_keeps_its_origin_and_its_expiry() {
        // /proc/net/ip_vs_conn_sync: Origin between State and Expires.
        let text = "Pro FromIP   FPrt ToIP     TPrt DestIP   DPrt State       Origin Expires PEName PEData\n\
TCP 0A1E0002 A1B2 0A0A0A0A 0050 0A280002 1F90 ESTABLISHED Sync       899\n\
UDP 0A1E0002 13C4 0A0A0A0A 13C4 0A280002 13C4 UDP         Local      170 sip 3a01bc@example.com\n";
        let c = parse(text).unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].origin.as_deref(), Some("Sync"));
        assert_eq!(c[0].expires, 899);
        assert_eq!(c[0].state, "ESTABLISHED");
        assert_eq!(c[1].origin.as_deref(), Some("Local"));
        assert_eq!(c[1].expires, 170);
        assert_eq!(
            c[1].persistence,
            Some(("sip".into(), "3a01bc@example.com".into()))
        );
        // The plain table has no origin.
        let plain =
            format!("{HEADER}TCP C0A80A01 D431 0A000001 0050 C0A80102 0050 ESTABLISHED 899\n");
        assert_eq!(parse(&plain).unwrap()[0].origin, None);
    }

    #[test]
    fn rows_of_every_form() {
        let text = format!(
            "{HEADER}\
TCP C0A80A01 D431 0A000001 0050 C0A80102 0050 ESTABLISHED     899\n\
IP  0A000002 0000 0A000001 0050 C0A80101 0050 NONE           6000\n\
TCP 2001:0db8:0000:0000:0000:0000:0000:0099 C350 2001:0db8:0000:0000:0000:0000:0000:0001 01BB 2001:0db8:0000:0000:0000:0000:0000:a0a0 01BB SYN_RECV         59\n\
UDP C0A80A05 13C4 0A000001 13C4 C0A80104 13C4 UDP             170 sip 3a01bc@example.com\n\
TCP 0A000002 0400 0A000001 0050 2001:0db8:0000:0000:0000:0000:0000:0005 0050 ESTABLISHED      10\n"
        );
        let c = parse(&text).unwrap();
        assert_eq!(c.len(), 5);
        assert_eq!(c[1].protocol, "IP");
        assert_eq!(c[1].expires, 6000);
        assert_eq!(c[2].client_addr.to_string(), "2001:db8::99");
        assert_eq!(c[2].virtual_port, 443);
        assert_eq!(
            c[3].persistence,
            Some(("sip".into(), "3a01bc@example.com".into()))
        );
        assert_eq!(c[4].dest_addr.to_string(), "2001:db8::5");
        assert_eq!(c[4].client_addr.to_string(), "10.0.0.2");
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        assert_eq!(parse(""), Err(ParseError::MissingHeader));
        assert!(matches!(
            parse(&format!("{HEADER}TCP 1 2\n")),
            Err(ParseError::BadRow { line: 2, .. })
        ));
        assert!(parse_row("TCP zz zz zz zz zz zz X 1").is_none());
        assert_eq!(hex_u32("ffffffffffffffffff"), u32::MAX);
    }
}

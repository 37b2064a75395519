//! The connection table a test sets, and `/proc/net/ip_vs_conn` as the
//! kernel prints it (`ip_vs_conn_seq_show`, Linux 6.1 and 6.12): a header,
//! then a row per connection: protocol, then client, virtual and
//! destination address and port (IPv4 as eight host-order hex digits,
//! IPv6 as eight groups of four lowercase ones; ports as four uppercase
//! hex digits), state, seconds left, and the persistence engine's name and
//! data if it has some.

use std::fmt::Write;
use std::net::IpAddr;

use super::kernel::Netns;
use crate::connections::Connection;
use crate::InvalidValue;

/// The file's header line.
const HEADER: &str =
    "Pro FromIP   FPrt ToIP     TPrt DestIP   DPrt State       Expires PEName PEData\n";

/// An address as the kernel prints it.
fn address(a: IpAddr) -> String {
    match a {
        IpAddr::V4(v4) => format!("{:08X}", u32::from(v4)),
        IpAddr::V6(v6) => {
            let groups: Vec<String> = v6.segments().iter().map(|g| format!("{g:04x}")).collect();
            groups.join(":")
        }
    }
}

/// Appends the row of `c`.
fn row(c: &Connection, out: &mut String) {
    let pe = match &c.persistence {
        Some((engine, data)) => format!(" {engine} {data}"),
        None => String::new(),
    };
    let _ = writeln!(
        out,
        "{:<3} {} {:04X} {} {:04X} {} {:04X} {:<11} {:>7}{pe}",
        c.protocol,
        address(c.client_addr),
        c.client_port,
        address(c.virtual_addr),
        c.virtual_port,
        address(c.dest_addr),
        c.dest_port,
        c.state,
        c.expires,
    );
}

/// Why the kernel could not hold `c`, if it could not.
fn check(c: &Connection) -> Result<(), InvalidValue> {
    if c.client_addr.is_ipv4() != c.virtual_addr.is_ipv4() {
        return Err(InvalidValue::new(
            "connection",
            format!(
                "client {} and virtual address {} are of different families (one connection has one)",
                c.client_addr, c.virtual_addr
            ),
        ));
    }
    let word = |w: &str| !w.is_empty() && !w.contains(char::is_whitespace);
    if !word(&c.protocol) || !word(&c.state) {
        return Err(InvalidValue::new(
            "connection",
            format!(
                "protocol {:?} and state {:?} must each be one word",
                c.protocol, c.state
            ),
        ));
    }
    Ok(())
}

impl Netns {
    /// Sets its connection table (what traffic would have made): each
    /// connection's client and virtual address of one family (its
    /// destination's may differ, as a mixed-family tunnel's), protocol and
    /// state one word each. Refused whole, naming the first that is not,
    /// and the table left as it was. What `/proc/net/ip_vs_conn` shows
    /// ([`proc_ip_vs_conn`](Self::proc_ip_vs_conn)); the counters and the
    /// destinations' connection counts stay as they are.
    pub fn set_connections(&self, connections: &[Connection]) -> Result<(), InvalidValue> {
        for c in connections {
            check(c)?;
        }
        self.kernel.lock().ns(&self.name).connections = connections.to_vec();
        Ok(())
    }

    /// The text of `/proc/net/ip_vs_conn` in this namespace, as the kernel
    /// prints it: the header, then a row per connection set, in the order
    /// set (the kernel's is its hash table's). Read it with
    /// [`connections::parse`](crate::connections::parse).
    ///
    /// ```
    /// use ipvsnl::connections::{self, Connection};
    /// use ipvsnl::emulator::Kernel;
    ///
    /// let kernel = Kernel::new();
    /// let ns = kernel.init_netns();
    /// let c = Connection::new(
    ///     "UDP",
    ///     "192.168.10.5:5060".parse().unwrap(),
    ///     "10.0.0.1:5060".parse().unwrap(),
    ///     "192.168.1.4:5060".parse().unwrap(),
    ///     "UDP",
    ///     170,
    /// )
    /// .with_persistence("sip", "3a01bc@example.com");
    /// ns.set_connections(&[c.clone()])?;
    /// let text = ns.proc_ip_vs_conn();
    /// assert!(text.ends_with(
    ///     "UDP C0A80A05 13C4 0A000001 13C4 C0A80104 13C4 UDP             170 sip 3a01bc@example.com\n"
    /// ));
    /// assert_eq!(connections::parse(&text).unwrap(), [c]);
    /// # Ok::<(), ipvsnl::InvalidValue>(())
    /// ```
    pub fn proc_ip_vs_conn(&self) -> String {
        let mut s = self.kernel.lock();
        let mut out = String::from(HEADER);
        for c in &s.ns(&self.name).connections {
            row(c, &mut out);
        }
        out
    }
}

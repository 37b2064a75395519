//! `ipvsadm -L -c`: the connection table from /proc/net/ip_vs_conn.

use std::fmt::Write as _;

use ipvsnl::connections::{parse_row, PROC_PATH};
use ipvsnl::rules::style::addr_port;
use ipvsnl::rules::Names;

use crate::grammar::ListFormat;

/// Prints the connection listing, or returns ipvsadm's message and status.
pub(crate) fn list(
    out: &mut String,
    f: &ListFormat,
    names: &dyn Names,
) -> Result<(), (String, i32)> {
    let text =
        std::fs::read(PROC_PATH).map_err(|_| (format!("cannot open file {PROC_PATH}"), 1))?;
    let text = String::from_utf8_lossy(&text);
    let mut lines = text.split_inclusive('\n');
    if lines.next().is_none() {
        return Err((format!("unexpected input from {PROC_PATH}"), 1));
    }
    out.push_str("IPVS connection entries\n");
    if f.persistent_conn {
        let _ = writeln!(
            out,
            "pro expire {:<11} {:<18} {:<18} {:<18} {:<16} pe_data",
            "state", "source", "virtual", "destination", "pe name"
        );
    } else {
        let _ = writeln!(
            out,
            "pro expire {:<11} {:<18} {:<18} destination",
            "state", "source", "virtual"
        );
    }
    for line in lines {
        let Some(c) = parse_row(line) else { continue };
        let proto = match c.protocol.as_str() {
            "TCP" => Some("tcp"),
            "UDP" => Some("udp"),
            "SCTP" => Some("sctp"),
            _ => None,
        };
        let cname = addr_port(&c.client_addr, c.client_port, proto, names);
        let vname = addr_port(&c.virtual_addr, c.virtual_port, proto, names);
        let dname = addr_port(&c.dest_addr, c.dest_port, proto, names);
        let expire = format!("{:02}:{:02}", c.expires / 60, c.expires % 60);
        match (&c.persistence, f.persistent_conn) {
            (Some((pe, data)), true) => {
                let _ = writeln!(
                    out,
                    "{:<3} {expire:<6} {:<11} {cname:<18} {vname:<18} {dname:<16} {pe:<18} {data}",
                    c.protocol, c.state
                );
            }
            _ => {
                let _ = writeln!(
                    out,
                    "{:<3} {expire:<6} {:<11} {cname:<18} {vname:<18} {dname}",
                    c.protocol, c.state
                );
            }
        }
    }
    Ok(())
}

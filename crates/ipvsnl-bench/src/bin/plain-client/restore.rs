//! `plain-client restore`: the rules of the bench's tables, parsed and
//! encoded by hand.

use std::io;
use std::net::SocketAddrV4;

use ipvsnl::wire::netlink_packet_core::NLM_F_REQUEST;
use ipvsnl::wire::{
    IpvsCommand, IPVS_CMD_ATTR_DEST, IPVS_CMD_ATTR_SERVICE, IPVS_DEST_ATTR_ADDR,
    IPVS_DEST_ATTR_ADDR_FAMILY, IPVS_DEST_ATTR_FWD_METHOD, IPVS_DEST_ATTR_L_THRESH,
    IPVS_DEST_ATTR_PORT, IPVS_DEST_ATTR_U_THRESH, IPVS_DEST_ATTR_WEIGHT, IPVS_GENL_VERSION,
    IPVS_SVC_ATTR_ADDR, IPVS_SVC_ATTR_AF, IPVS_SVC_ATTR_FLAGS, IPVS_SVC_ATTR_NETMASK,
    IPVS_SVC_ATTR_PORT, IPVS_SVC_ATTR_PROTOCOL, IPVS_SVC_ATTR_SCHED_NAME, IPVS_SVC_ATTR_TIMEOUT,
};
use ipvsnl_bench::plain::attrs::{begin_message, begin_nest, end_message, end_nest, put_attr};
use ipvsnl_bench::plain::batches::BatchBuilder;

/// `AF_INET`.
const AF_INET: u16 = 2;

/// A virtual service: protocol number and address.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Key {
    protocol: u16,
    addr: SocketAddrV4,
}

/// One rule line.
#[derive(Debug)]
pub(crate) enum Rule<'a> {
    /// `-A`: a service with its scheduler.
    Service { key: Key, scheduler: &'a str },
    /// `-a`: a destination of a service.
    Destination {
        key: Key,
        addr: SocketAddrV4,
        forward: u32,
        weight: u32,
    },
}

/// Parses the lines `ipvsadm -S -n` prints for the bench's tables.
pub(crate) fn parse(text: &str) -> Result<Vec<Rule<'_>>, String> {
    let mut rules = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.bytes().all(|b| b.is_ascii_whitespace()) {
            continue;
        }
        rules.push(parse_line(line).map_err(|e| format!("line {}: {e}: {line}", n + 1))?);
    }
    Ok(rules)
}

fn parse_line(line: &str) -> Result<Rule<'_>, String> {
    let mut words = line.split_ascii_whitespace();
    let command = words.next().unwrap_or_default();
    let (mut key, mut scheduler, mut dest, mut forward, mut weight) = (None, None, None, 0, 1);
    while let Some(w) = words.next() {
        let mut value = || words.next().ok_or_else(|| format!("{w} without a value"));
        match w {
            "-t" => key = Some((6, value()?)),
            "-u" => key = Some((17, value()?)),
            "-s" => scheduler = Some(value()?),
            "-r" => dest = Some(addr(value()?)?),
            "-w" => weight = value()?.parse().map_err(|_| "bad weight".to_owned())?,
            "-m" => forward = 0,
            "-g" => forward = 3,
            "-i" => forward = 2,
            other => return Err(format!("unsupported switch {other}")),
        }
    }
    let (protocol, text) = key.ok_or("no service")?;
    let key = Key {
        protocol,
        addr: addr(text)?,
    };
    match command {
        "-A" => Ok(Rule::Service {
            key,
            scheduler: scheduler.unwrap_or("wlc"),
        }),
        "-a" => Ok(Rule::Destination {
            key,
            addr: dest.ok_or("no -r")?,
            forward,
            weight,
        }),
        other => Err(format!("unsupported command {other}")),
    }
}

fn addr(text: &str) -> Result<SocketAddrV4, String> {
    text.parse()
        .map_err(|_| format!("not an IPv4 address and port: {text}"))
}

/// The service key attributes (address family, protocol, address, port).
fn put_key(out: &mut Vec<u8>, key: &Key) {
    let mut addr = [0u8; 16];
    addr[..4].copy_from_slice(&key.addr.ip().octets());
    put_attr(out, IPVS_SVC_ATTR_AF, &AF_INET.to_ne_bytes());
    put_attr(out, IPVS_SVC_ATTR_PROTOCOL, &key.protocol.to_ne_bytes());
    put_attr(out, IPVS_SVC_ATTR_ADDR, &addr);
    put_attr(out, IPVS_SVC_ATTR_PORT, &key.addr.port().to_be_bytes());
}

/// Appends the request of `rule`.
fn encode(out: &mut Vec<u8>, family: u16, seq: u32, rule: &Rule) {
    let (command, key) = match rule {
        Rule::Service { key, .. } => (IpvsCommand::NewService, key),
        Rule::Destination { key, .. } => (IpvsCommand::NewDest, key),
    };
    let m = begin_message(
        out,
        family,
        NLM_F_REQUEST,
        seq,
        command.into(),
        IPVS_GENL_VERSION,
    );
    let svc = begin_nest(out, IPVS_CMD_ATTR_SERVICE);
    put_key(out, key);
    if let Rule::Service { scheduler, .. } = rule {
        let mut name = [0u8; 17];
        let n = scheduler.len().min(16);
        name[..n].copy_from_slice(&scheduler.as_bytes()[..n]);
        put_attr(out, IPVS_SVC_ATTR_SCHED_NAME, &name[..=n]);
        let mut flags = [0u8; 8];
        flags[4..].copy_from_slice(&u32::MAX.to_ne_bytes());
        put_attr(out, IPVS_SVC_ATTR_FLAGS, &flags);
        put_attr(out, IPVS_SVC_ATTR_TIMEOUT, &0u32.to_ne_bytes());
        put_attr(out, IPVS_SVC_ATTR_NETMASK, &u32::MAX.to_ne_bytes());
    }
    end_nest(out, svc);
    if let Rule::Destination {
        addr,
        forward,
        weight,
        ..
    } = rule
    {
        let dest = begin_nest(out, IPVS_CMD_ATTR_DEST);
        let mut a = [0u8; 16];
        a[..4].copy_from_slice(&addr.ip().octets());
        put_attr(out, IPVS_DEST_ATTR_ADDR, &a);
        put_attr(out, IPVS_DEST_ATTR_PORT, &addr.port().to_be_bytes());
        put_attr(out, IPVS_DEST_ATTR_FWD_METHOD, &forward.to_ne_bytes());
        put_attr(out, IPVS_DEST_ATTR_WEIGHT, &weight.to_ne_bytes());
        put_attr(out, IPVS_DEST_ATTR_U_THRESH, &0u32.to_ne_bytes());
        put_attr(out, IPVS_DEST_ATTR_L_THRESH, &0u32.to_ne_bytes());
        put_attr(out, IPVS_DEST_ATTR_ADDR_FAMILY, &AF_INET.to_ne_bytes());
        end_nest(out, dest);
    }
    end_message(out, m);
}

/// Encodes every rule and sends them in 64 KiB datagrams; returns how
/// many were refused.
pub(crate) fn send(sock: &netlink_sys::Socket, family: u16, rules: &[Rule]) -> io::Result<usize> {
    let mut b = BatchBuilder::default();
    for r in rules {
        b.push(|out, seq| encode(out, family, seq, r));
    }
    b.finish().send(sock)
}

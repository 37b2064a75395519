//! Option values: service addresses (`host:port`, `[v6]:port`, names),
//! timeouts, scheduler flags, and C's fixed-size string copies.

use std::net::IpAddr;

use ipvsnl::rules::Names;
use ipvsnl::ServiceFlags;

use super::command::ArgError;
use crate::c_text::{inet_aton, inet_pton6, number_in};

/// Copies at most `max` bytes of `s` (C's strncpy into a fixed buffer),
/// never splitting a character.
pub(super) fn truncate(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Parsed address of `parse_service`: address, family, and the port if the
/// text had one.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Parsed {
    pub(super) addr: IpAddr,
    pub(super) port: Option<u16>,
}

pub(super) fn protocol_name(protocol: u16) -> Option<&'static str> {
    match protocol {
        6 => Some("tcp"),
        17 => Some("udp"),
        132 => Some("sctp"),
        _ => None,
    }
}

/// ipvsadm's `parse_service`: `host[:port]`, `[ipv6]:port`, or a bare IPv6
/// literal (which never carries a port).
pub(super) fn parse_service(text: &str, protocol: u16, names: &dyn Names) -> Option<Parsed> {
    dotted_quad_port(text.as_bytes()).or_else(|| parse_service_any(text, protocol, names))
}

/// [`parse_service`]'s reading of every form.
fn parse_service_any(text: &str, protocol: u16, names: &dyn Names) -> Option<Parsed> {
    let (mut colons, mut last_colon, mut digits_only) = (0, 0, true);
    for (i, b) in text.bytes().enumerate() {
        if b == b':' {
            colons += 1;
            last_colon = i;
        }
        digits_only &= b.is_ascii_digit();
    }
    if digits_only {
        return None;
    }
    // The one address parse of the usual case, `a.b.c.d:port` (no
    // brackets, at most one colon: no IPv6 text can parse, since every
    // IPv6 form has at least two colons). Measured on the host with
    // `scripts/measure/ipvsadm-text-cost`: the IPv6 attempt cost 290 instructions an
    // address.
    if colons < 2 && !text.starts_with('[') {
        let (host, port_text) = if colons == 1 {
            (&text[..last_colon], Some(&text[last_colon + 1..]))
        } else {
            (text, None)
        };
        let a4 = inet_aton(host).or_else(|| names.host_v4(host))?;
        return Some(Parsed {
            addr: IpAddr::V4(a4),
            port: parse_port(port_text, protocol, names)?,
        });
    }
    let mut host = text;
    let mut port_text: Option<&str> = None;
    if let Some(inner) = text.strip_prefix('[') {
        let close = inner.find(']')?;
        let after = &inner[close + 1..];
        let p = after.strip_prefix(':')?;
        host = &inner[..close];
        port_text = Some(p);
    }
    let addr = if let Some(a6) = inet_pton6(host) {
        IpAddr::V6(a6)
    } else {
        // A bracketed non-IPv6 text loses its port here, as in ipvsadm.
        port_text = None;
        if let Some(i) = host.rfind(':') {
            port_text = Some(&host[i + 1..]);
            host = &host[..i];
        }
        let a4 = inet_aton(host).or_else(|| names.host_v4(host))?;
        IpAddr::V4(a4)
    };
    let port = parse_port(port_text, protocol, names)?;
    Some(Parsed { addr, port })
}

/// The common form alone, in one pass: `a.b.c.d` or `a.b.c.d:port`, four
/// decimal parts of 1 to 3 digits, each at most 255 and without a leading
/// zero, a port of 1 to 5 digits up to 65535. `None` for anything else,
/// which [`parse_service`]'s general reading takes (and reads this form
/// the same: the unit test `the_common_form_reads_as_the_general_one`).
/// Measured on the host (`scripts/measure/ipvsadm-text-cost`): the general reading of
/// this form cost about 540 instructions an address of a restore.
pub(super) fn dotted_quad_port(b: &[u8]) -> Option<Parsed> {
    let mut octets = [0u8; 4];
    let mut i = 0;
    let mut n = 0;
    loop {
        let start = i;
        let mut v: u32 = 0;
        while i < b.len() && i - start < 3 {
            let d = b[i].wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            v = v * 10 + u32::from(d);
            i += 1;
        }
        if i == start || v > 255 || (b[start] == b'0' && i - start > 1) {
            return None;
        }
        octets[n] = v as u8;
        n += 1;
        if n == 4 {
            break;
        }
        if i >= b.len() || b[i] != b'.' {
            return None;
        }
        i += 1;
    }
    let addr = IpAddr::V4(octets.into());
    if i == b.len() {
        return Some(Parsed { addr, port: None });
    }
    if b[i] != b':' || b.len() - i < 2 || b.len() - i > 6 {
        return None;
    }
    let mut port: u32 = 0;
    for &c in &b[i + 1..] {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        port = port * 10 + u32::from(d);
    }
    Some(Parsed {
        addr,
        port: Some(u16::try_from(port).ok()?),
    })
}

/// The port of a service text: none, a number, or a service name.
/// `None` if it is neither (the whole text is then bad).
fn parse_port(text: Option<&str>, protocol: u16, names: &dyn Names) -> Option<Option<u16>> {
    match text {
        None => Some(None),
        Some(p) => {
            if let Some(n) = number_in(p, 0, 65535) {
                Some(Some(n as u16))
            } else {
                let proto = protocol_name(protocol)?;
                Some(Some(names.port(p, proto)?))
            }
        }
    }
}

pub(super) fn parse_timeout(text: Option<&str>, min: i64) -> Result<u32, ArgError> {
    match text {
        None => Ok(360),
        Some(t) => number_in(t, min, 2_678_400)
            .map(|v| v as u32)
            .ok_or_else(|| ArgError::fail(format!("invalid timeout value `{t}' specified"))),
    }
}

pub(super) fn parse_sched_flags(sched: &str, arg: &str) -> Result<u32, ArgError> {
    let mut flags = 0u32;
    for flag in arg.split(',').filter(|f| !f.is_empty()) {
        let Some((bit, needs)) = ServiceFlags::scheduler_flag(flag) else {
            return Err(ArgError::fail(format!("invalid scheduler flag `{flag}'")));
        };
        flags |= bit.bits();
        if let Some(s) = needs {
            if sched != s {
                return Err(ArgError::fail(format!(
                    "incompatible scheduler flag `{flag}'"
                )));
            }
        }
    }
    Ok(flags)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ipvsnl::rules::Numeric;

    #[test]
    fn the_common_form_reads_as_the_general_one() {
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let alphabet = b"0123456789.:[]a";
        for _ in 0..300_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let len = (seed % 22) as usize;
            let text: String = (0..len)
                .map(|k| {
                    let r = (seed >> (3 * k % 60)) as usize;
                    let pick = if r % 5 == 0 {
                        r / 5 % alphabet.len()
                    } else {
                        r / 5 % 11
                    };
                    char::from(alphabet[pick])
                })
                .collect();
            assert_eq!(
                parse_service(&text, 6, &Numeric),
                parse_service_any(&text, 6, &Numeric),
                "{text:?}"
            );
        }
        for text in [
            "10.0.0.1:80",
            "255.255.255.255:65535",
            "1.2.3.4:65536",
            "1.2.3.4:080",
            "0.0.0.0:0",
            "1.2.3.4",
            "1.2.3.4:",
            "01.2.3.4:80",
            "1.2.3.4:123456",
        ] {
            assert_eq!(
                parse_service(text, 6, &Numeric),
                parse_service_any(text, 6, &Numeric),
                "{text:?}"
            );
        }
        assert!(dotted_quad_port(b"10.0.0.1:80").is_some());
    }
}

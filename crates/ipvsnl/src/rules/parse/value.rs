//! Reading option values: numbers in a range, firewall marks, addresses
//! with ports, netmasks, schedulers and their flags, names of bounded
//! length.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::error::LineError;
use crate::rules::Names;
use crate::{AddressFamily, Netmask, Scheduler, ServiceFlags};

fn bad(what: &'static str, value: &str, expected: impl Into<String>) -> LineError {
    LineError::BadValue {
        what,
        value: value.to_owned(),
        expected: expected.into(),
    }
}

/// A decimal number from `min` to `max`.
pub(super) fn number(what: &'static str, text: &str, min: u64, max: u64) -> Result<u64, LineError> {
    match text.parse::<u64>() {
        Ok(n) if (min..=max).contains(&n) && !text.starts_with('+') => Ok(n),
        _ => Err(bad(what, text, format!("a number from {min} to {max}"))),
    }
}

/// [`number`] for a `u32` range.
pub(super) fn number_u32(
    what: &'static str,
    text: &str,
    min: u32,
    max: u32,
) -> Result<u32, LineError> {
    number(what, text, min.into(), max.into()).map(|n| n as u32)
}

/// A firewall mark: 1 to 4294967295, decimal or `0x` hex; a negative
/// decimal (as `ipvsadm -S` prints marks above 2^31) is read as the
/// 32-bit two's complement.
pub(super) fn fwmark(text: &str) -> Result<u32, LineError> {
    let parsed = if let Some(hex) = text.strip_prefix("0x").or(text.strip_prefix("0X")) {
        u32::from_str_radix(hex, 16).ok()
    } else if text.starts_with('-') {
        text.parse::<i32>()
            .ok()
            .filter(|n| *n < 0)
            .map(|n| n as u32)
    } else if text.starts_with('+') {
        None
    } else {
        text.parse::<u32>().ok()
    };
    match parsed {
        Some(mark) if mark != 0 => Ok(mark),
        _ => Err(bad(
            "firewall mark",
            text,
            "a number from 1 to 4294967295 (decimal, 0x hex, or negative as printed for marks above 2147483647)",
        )),
    }
}

/// A port: a number, or a service name for `protocol` through `names`.
fn port(text: &str, protocol: &str, names: &dyn Names) -> Option<u16> {
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return text.parse().ok();
    }
    if text.is_empty() {
        return None;
    }
    names.port(text, protocol)
}

/// An IPv4 host: dotted quad, or a name through `names`.
fn host_v4(text: &str, names: &dyn Names) -> Option<Ipv4Addr> {
    match text.parse::<Ipv4Addr>() {
        Ok(a) => Some(a),
        Err(_) if text.is_empty() || text.bytes().all(|b| b.is_ascii_digit() || b == b'.') => None,
        Err(_) => names.host_v4(text),
    }
}

/// An address with an optional port: `10.0.0.1:80`, `10.0.0.1`,
/// `host:http`, `[2001:db8::1]:80`, `[2001:db8::1]`, `2001:db8::1`.
/// Ports are named for `protocol` (`"tcp"`, `"udp"`, `"sctp"`).
pub(super) fn endpoint(
    what: &'static str,
    text: &str,
    protocol: &str,
    names: &dyn Names,
) -> Result<(IpAddr, Option<u16>), LineError> {
    let err = || {
        bad(
            what,
            text,
            "an address with an optional port (10.0.0.1:80, [2001:db8::1]:80 or a host name)",
        )
    };
    if let Some(rest) = text.strip_prefix('[') {
        let (addr, after) = rest.split_once(']').ok_or_else(err)?;
        let addr: Ipv6Addr = addr.parse().map_err(|_| err())?;
        let port = match after {
            "" => None,
            _ => {
                let p = after.strip_prefix(':').ok_or_else(err)?;
                Some(port(p, protocol, names).ok_or_else(err)?)
            }
        };
        return Ok((IpAddr::V6(addr), port));
    }
    if let Ok(v6) = text.parse::<Ipv6Addr>() {
        return Ok((IpAddr::V6(v6), None));
    }
    let (host, port_text) = match text.rsplit_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (text, None),
    };
    let addr = host_v4(host, names).ok_or_else(err)?;
    let port = match port_text {
        Some(p) => Some(port(p, protocol, names).ok_or_else(err)?),
        None => None,
    };
    Ok((IpAddr::V4(addr), port))
}

/// A persistence netmask for a service of `family`: a dotted mask for
/// IPv4, a prefix length from 1 to 128 for IPv6.
pub(super) fn netmask(text: &str, family: AddressFamily) -> Result<Netmask, LineError> {
    match family {
        AddressFamily::Inet => text
            .parse::<Ipv4Addr>()
            .map(Netmask::V4)
            .map_err(|_| bad("IPv4 netmask", text, "a dotted mask such as 255.255.255.0")),
        AddressFamily::Inet6 => number("IPv6 netmask", text, 1, 128).map(|p| Netmask::V6(p as u8)),
    }
}

/// A scheduler name the kernel would take.
pub(super) fn scheduler(text: &str) -> Result<Scheduler, LineError> {
    Scheduler::new(text).map_err(|_| bad("scheduler", text, name_rule(crate::SCHED_NAME_MAX, true)))
}

/// What a name of at most `max` bytes must be (see [`bounded_name`]).
fn name_rule(max: usize, module: bool) -> String {
    if module {
        format!("a name of 1 to {max} bytes of printable ASCII")
    } else {
        format!("a name of 1 to {max} bytes without NUL or white space")
    }
}

/// A comma-separated list of scheduler flags for `scheduler`:
/// `flag-1`..`flag-3` for any, `sh-fallback`/`sh-port` for sh,
/// `mh-fallback`/`mh-port` for mh. The empty list is no flag.
pub(super) fn sched_flags(text: &str, scheduler: &Scheduler) -> Result<ServiceFlags, LineError> {
    let mut flags = ServiceFlags::empty();
    if text.is_empty() {
        return Ok(flags);
    }
    for name in text.split(',') {
        let Some((flag, needs)) = ServiceFlags::scheduler_flag(name) else {
            return Err(bad(
                "scheduler flag",
                name,
                "one of flag-1, flag-2, flag-3, sh-fallback, sh-port, mh-fallback, mh-port",
            ));
        };
        if let Some(needs) = needs {
            if scheduler.name() != needs {
                return Err(LineError::Invalid {
                    why: format!(
                        "scheduler flag \"{name}\" is for the {needs} scheduler, not {}",
                        scheduler.name()
                    ),
                });
            }
        }
        flags |= flag;
    }
    Ok(flags)
}

/// A name of 1 to `max` bytes without NUL or white space, and printable
/// ASCII if it names a kernel module (`module`), as the model checks it.
pub(super) fn bounded_name(
    what: &'static str,
    text: &str,
    max: usize,
    module: bool,
) -> Result<String, LineError> {
    match crate::model::scheduler::check_name(what, text, max, module) {
        Ok(()) => Ok(text.to_owned()),
        Err(_) => Err(bad(what, text, name_rule(max, module))),
    }
}

/// A multicast address, IPv4 or IPv6.
pub(super) fn multicast(text: &str) -> Result<IpAddr, LineError> {
    match text.parse::<IpAddr>() {
        Ok(a) if a.is_multicast() => Ok(a),
        _ => Err(bad(
            "multicast group",
            text,
            "an IPv4 or IPv6 multicast address",
        )),
    }
}

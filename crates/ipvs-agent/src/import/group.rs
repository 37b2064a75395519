//! `virtual_server_group NAME { ... }`: its members (`IP PORT`, a range
//! `IP-LAST PORT` of the address's last part, `fwmark N`), each a service
//! of its own in the agent's file (which has no groups).

use std::collections::BTreeMap;
use std::net::IpAddr;

use crate::import::numbers::uint;
use crate::import::report::{Place, Report};
use crate::import::tree::Node;

/// The most addresses one range may give.
const RANGE_MAX: u64 = 256;

/// A service's key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Key {
    /// An address and a port.
    Addr(IpAddr, u16),
    /// A firewall mark.
    Mark(u32),
}

/// The groups by name: each member's key and line.
pub(crate) type Groups = BTreeMap<String, Vec<(Key, Place)>>;

/// Reads a `virtual_server_group` into `groups`.
pub(crate) fn group(node: &Node, groups: &mut Groups, report: &mut Report) {
    let Some(name) = node.arg(0) else {
        report.error(node.at(), "`virtual_server_group` needs a name");
        return;
    };
    if node.block.is_none() {
        report.error(node.at(), "`virtual_server_group` needs a `{ }` block");
        return;
    }
    let mut members = Vec::new();
    for m in node.children() {
        let at = m.at().clone();
        if m.name() == "fwmark" {
            if let Some(n) = uint(m, 0, 1, u64::from(u32::MAX), report) {
                members.push((Key::Mark(u32::try_from(n).unwrap_or(u32::MAX)), at));
            }
            continue;
        }
        let port = match m.arg(0) {
            Some(_) => match uint(m, 0, 0, 65535, report) {
                Some(p) => u16::try_from(p).unwrap_or(0),
                None => continue,
            },
            None => {
                report.error(
                    &at,
                    format!(
                        "a group member needs an address and a port, found `{}`",
                        m.name()
                    ),
                );
                continue;
            }
        };
        match range(m.name()) {
            Some(addrs) => {
                members.extend(addrs.into_iter().map(|a| (Key::Addr(a, port), at.clone())))
            }
            None => report.error(
                &at,
                format!(
                    "`{}` is not an address, nor a range such as 10.0.0.1-9 (at most {RANGE_MAX})",
                    m.name()
                ),
            ),
        }
    }
    if groups.insert(name.to_string(), members).is_some() {
        report.error(node.at(), format!("the group {name} is defined twice"));
    }
}

/// The addresses of `a.b.c.d`, `a.b.c.d-e` or `x::y-z` (hexadecimal, the
/// last group).
fn range(s: &str) -> Option<Vec<IpAddr>> {
    let (first, last) = match s.rsplit_once('-') {
        Some((f, l)) => (f, Some(l)),
        None => (s, None),
    };
    let start: IpAddr = first.parse().ok()?;
    let Some(last) = last else {
        return Some(vec![start]);
    };
    match start {
        IpAddr::V4(v4) => {
            let [a, b, c, d] = v4.octets();
            let end: u8 = last.parse().ok()?;
            (end >= d).then(|| (d..=end).map(|x| IpAddr::from([a, b, c, x])).collect())
        }
        IpAddr::V6(v6) => {
            let mut seg = v6.segments();
            let d = seg[7];
            let end = u16::from_str_radix(last, 16).ok()?;
            if end < d || u64::from(end - d) >= RANGE_MAX {
                return None;
            }
            Some(
                (d..=end)
                    .map(|x| {
                        seg[7] = x;
                        IpAddr::from(seg)
                    })
                    .collect(),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::range;

    #[test]
    fn ranges() {
        assert_eq!(range("192.168.200.3-10").unwrap().len(), 8);
        assert_eq!(range("ae00::2-9").unwrap().len(), 8);
        assert_eq!(range("ae00::1").unwrap().len(), 1);
        assert!(range("10.0.0.9-3").is_none());
        assert!(range("nonsense").is_none());
    }
}

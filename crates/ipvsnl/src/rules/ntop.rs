//! Addresses as the C library's `inet_ntop` prints them, which is how
//! ipvsadm prints them in rules: IPv6 with glibc's choice of the zero run
//! to shorten and its dotted-quad tail for IPv4-compatible and
//! IPv4-mapped addresses.

use std::net::{IpAddr, Ipv6Addr};

/// glibc's `inet_ntop(AF_INET6, ...)`: the longest run (first on a tie) of
/// two or more zero groups becomes "::"; an IPv4-compatible or IPv4-mapped
/// address ends in a dotted quad.
fn inet_ntop6(a: &Ipv6Addr) -> String {
    let w = a.segments();
    let (mut best_base, mut best_len) = (usize::MAX, 0);
    let mut i = 0;
    while i < 8 {
        if w[i] == 0 {
            let start = i;
            while i < 8 && w[i] == 0 {
                i += 1;
            }
            let len = i - start;
            if len > best_len {
                best_base = start;
                best_len = len;
            }
        } else {
            i += 1;
        }
    }
    if best_len < 2 {
        best_base = usize::MAX;
    }
    let mut out = String::with_capacity(40);
    let mut i = 0;
    while i < 8 {
        if best_base != usize::MAX && i >= best_base && i < best_base + best_len {
            if i == best_base {
                out.push(':');
            }
            i += 1;
            continue;
        }
        if i != 0 {
            out.push(':');
        }
        if i == 6 && best_base == 0 && (best_len == 6 || (best_len == 5 && w[5] == 0xffff)) {
            let o = a.octets();
            out.push_str(&format!("{}.{}.{}.{}", o[12], o[13], o[14], o[15]));
            return out;
        }
        out.push_str(&format!("{:x}", w[i]));
        i += 1;
    }
    if best_base != usize::MAX && best_base + best_len == 8 {
        out.push(':');
    }
    out
}

/// An address as `inet_ntop` prints it, and so as ipvsadm prints it in
/// rules and listings: IPv4 dotted, IPv6 shortened the way glibc does.
///
/// ```
/// use ipvsnl::rules::style::ntop;
/// assert_eq!(ntop(&"10.0.0.1".parse().unwrap()), "10.0.0.1");
/// assert_eq!(ntop(&"1:0:0:1:0:0:0:1".parse().unwrap()), "1:0:0:1::1");
/// assert_eq!(ntop(&"::ffff:1.2.3.4".parse().unwrap()), "::ffff:1.2.3.4");
/// ```
pub fn ntop(addr: &IpAddr) -> String {
    match addr {
        IpAddr::V4(a) => a.to_string(),
        IpAddr::V6(a) => inet_ntop6(a),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ntop_like_glibc() {
        let t = |s: &str| inet_ntop6(&s.parse().unwrap());
        assert_eq!(t("2001:db8::1"), "2001:db8::1");
        assert_eq!(t("::"), "::");
        assert_eq!(t("::1"), "::1");
        assert_eq!(t("::1.2.3.4"), "::1.2.3.4");
        assert_eq!(t("::ffff:1.2.3.4"), "::ffff:1.2.3.4");
        assert_eq!(t("1:0:0:1:0:0:0:1"), "1:0:0:1::1");
        assert_eq!(t("1:0:1:1:1:1:1:1"), "1:0:1:1:1:1:1:1");
        assert_eq!(t("1::"), "1::");
        assert_eq!(t("fe80::1"), "fe80::1");
    }
}

//! Addresses as the C library's `inet_ntop` prints them, which is how
//! ipvsadm prints them in rules: IPv6 with glibc's choice of the zero run
//! to shorten and its dotted-quad tail for IPv4-compatible and
//! IPv4-mapped addresses.

use std::net::IpAddr;

use super::push::push_ntop;

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
    let mut out = String::with_capacity(40);
    push_ntop(&mut out, addr);
    out
}

#[cfg(test)]
mod tests {
    use std::net::Ipv6Addr;

    use super::super::push::push_ipv6;

    fn inet_ntop6(a: &Ipv6Addr) -> String {
        let mut out = String::new();
        push_ipv6(&mut out, a);
        out
    }

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

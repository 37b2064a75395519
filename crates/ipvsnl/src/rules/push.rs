//! Numbers and addresses appended to a text in place, the way the C
//! library prints them (`%u`, `%d`, `inet_ntop`), without the formatting
//! machinery: the rules printers print tens of thousands of lines.
//!
//! Measured on the host (`.ci/ipvsadm-text-cost`, callgrind, 10,000
//! services x 5 destinations printed as `-S -n`, release): the printers
//! went from 9,000 to about 300 instructions a destination line when they
//! took these in place of `format!` and `Ipv4Addr`'s `Display` (see
//! `save.rs`).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Appends `n` in decimal (`%u`).
pub(crate) fn push_u64(out: &mut String, mut n: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &d in &buf[i..] {
        out.push(char::from(d));
    }
}

/// Appends `n` in decimal (`%d`).
pub(crate) fn push_i64(out: &mut String, n: i64) {
    if n < 0 {
        out.push('-');
    }
    push_u64(out, n.unsigned_abs());
}

/// Appends an IPv4 address dotted (`inet_ntop`).
pub(crate) fn push_ipv4(out: &mut String, a: &Ipv4Addr) {
    out.reserve(15);
    for (n, o) in a.octets().into_iter().enumerate() {
        if n > 0 {
            out.push('.');
        }
        if o >= 100 {
            out.push(char::from(b'0' + o / 100));
        }
        if o >= 10 {
            out.push(char::from(b'0' + o / 10 % 10));
        }
        out.push(char::from(b'0' + o % 10));
    }
}

/// Appends a 16-bit group in lower-case hex without leading zeros.
fn push_hex16(out: &mut String, g: u16) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut started = false;
    for shift in [12, 8, 4, 0] {
        let d = (g >> shift) & 0xf;
        if d != 0 || started || shift == 0 {
            started = true;
            out.push(char::from(HEX[usize::from(d)]));
        }
    }
}

/// Appends an IPv6 address as glibc's `inet_ntop(AF_INET6, ...)` prints
/// it: the longest run (first on a tie) of two or more zero groups becomes
/// "::"; an IPv4-compatible or IPv4-mapped address ends in a dotted quad.
pub(crate) fn push_ipv6(out: &mut String, a: &Ipv6Addr) {
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
            push_ipv4(out, &Ipv4Addr::new(o[12], o[13], o[14], o[15]));
            return;
        }
        push_hex16(out, w[i]);
        i += 1;
    }
    if best_base != usize::MAX && best_base + best_len == 8 {
        out.push(':');
    }
}

/// Appends an address as `inet_ntop` prints it.
pub(crate) fn push_ntop(out: &mut String, addr: &IpAddr) {
    match addr {
        IpAddr::V4(a) => push_ipv4(out, a),
        IpAddr::V6(a) => push_ipv6(out, a),
    }
}

/// Cuts `out` back to at most `max` bytes after `start`, never inside a
/// character (C's fixed buffers, which ipvsadm's names are printed into).
pub(crate) fn cut_after(out: &mut String, start: usize, max: usize) {
    if out.len() > start + max {
        let mut end = start + max;
        while !out.is_char_boundary(end) {
            end -= 1;
        }
        out.truncate(end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_like_printf() {
        let p = |n: i64| {
            let mut s = String::from("x");
            push_i64(&mut s, n);
            s
        };
        assert_eq!(p(0), "x0");
        assert_eq!(p(7), "x7");
        assert_eq!(p(4_294_967_295), "x4294967295");
        assert_eq!(p(-1_294_967_296), "x-1294967296");
        assert_eq!(p(i64::MIN), "x-9223372036854775808");
        let mut s = String::new();
        push_u64(&mut s, u64::MAX);
        assert_eq!(s, u64::MAX.to_string());
    }

    #[test]
    fn ipv4_like_display() {
        for a in [
            [0, 0, 0, 0],
            [10, 0, 0, 1],
            [172, 16, 9, 99],
            [255, 255, 255, 255],
            [1, 10, 100, 200],
        ] {
            let a = Ipv4Addr::from(a);
            let mut s = String::new();
            push_ipv4(&mut s, &a);
            assert_eq!(s, a.to_string());
        }
    }

    #[test]
    fn cut_keeps_characters_whole() {
        let mut s = String::from("ab\u{e9}cd");
        cut_after(&mut s, 1, 2);
        assert_eq!(s, "ab");
        let mut s = String::from("abc");
        cut_after(&mut s, 0, 5);
        assert_eq!(s, "abc");
    }
}

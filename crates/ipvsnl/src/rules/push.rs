//! Numbers and addresses appended to a text in place, the way the C
//! library prints them (`%u`, `%d`, `inet_ntop`), without the formatting
//! machinery: the rules printers print tens of thousands of lines.
//!
//! Measured on the host (`scripts/measure/ipvsadm-text-cost`, callgrind, release,
//! `-S -n` of 10,000 services x 5 destinations): printing took 512,759,134
//! instructions with `format!` and `Ipv4Addr`'s `Display` (8,984 a
//! destination line), 32.3 million with these (538 a line).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// A text being appended to: a `String`, or bytes (`Vec<u8>`) that hold
/// UTF-8 (what the printers append is `str`s and ASCII bytes), which a
/// caller printing a large text writes out as it is: a byte is appended
/// with one capacity check, where a `String` checks the character's length
/// as well. (Measured on the host with `scripts/measure/ipvsadm-text-cost`: `-S -n` of
/// 10,000 x 5, sorting included, 52,962,412 instructions into a `String`,
/// 47,922,104 into bytes.)
pub(crate) trait Text {
    /// Appends an ASCII byte.
    fn ascii(&mut self, b: u8);
    /// Appends a string.
    fn text(&mut self, s: &str);
    /// Appends bytes that are all ASCII.
    fn ascii_bytes(&mut self, b: &[u8]);
    /// Its length in bytes.
    fn len_bytes(&self) -> usize;
    /// Cuts back to at most `max` bytes after `start`, never inside a
    /// character.
    fn cut_after(&mut self, start: usize, max: usize);
    /// Appends a copy of its own bytes `start..end` (whole characters):
    /// a service's label, printed once, repeated on each destination line.
    fn repeat_range(&mut self, start: usize, end: usize);
    /// Its bytes `start..end`.
    fn bytes_of(&self, start: usize, end: usize) -> &[u8];
    /// Appends the first `len` bytes of `line` (UTF-8 there), a line
    /// composed whole on the stack.
    fn line(&mut self, line: &[u8; LINE], len: usize);
}

/// The room of a line composed on the stack ([`Text::line`]).
pub(crate) const LINE: usize = 96;

impl Text for String {
    #[inline]
    fn ascii(&mut self, b: u8) {
        self.push(char::from(b));
    }
    #[inline]
    fn text(&mut self, s: &str) {
        self.push_str(s);
    }
    #[inline]
    fn ascii_bytes(&mut self, b: &[u8]) {
        for &c in b {
            self.push(char::from(c));
        }
    }
    #[inline]
    fn len_bytes(&self) -> usize {
        self.len()
    }
    fn cut_after(&mut self, start: usize, max: usize) {
        if self.len() > start + max {
            let mut end = start + max;
            while !self.is_char_boundary(end) {
                end -= 1;
            }
            self.truncate(end);
        }
    }
    fn repeat_range(&mut self, start: usize, end: usize) {
        // Not the printers' hot path (they print bytes): a copy will do.
        let piece = self[start..end].to_owned();
        self.push_str(&piece);
    }
    fn bytes_of(&self, start: usize, end: usize) -> &[u8] {
        &self.as_bytes()[start..end]
    }
    fn line(&mut self, line: &[u8; LINE], len: usize) {
        // UTF-8 by construction: nothing is replaced.
        self.push_str(&String::from_utf8_lossy(&line[..len]));
    }
}

impl Text for Vec<u8> {
    #[inline]
    fn ascii(&mut self, b: u8) {
        self.push(b);
    }
    #[inline]
    fn text(&mut self, s: &str) {
        // The printers' pieces are short: byte by byte costs less than a
        // call to `memcpy`.
        if s.len() <= 16 {
            self.reserve(s.len());
            for &b in s.as_bytes() {
                self.push(b);
            }
        } else {
            self.extend_from_slice(s.as_bytes());
        }
    }
    #[inline]
    fn ascii_bytes(&mut self, b: &[u8]) {
        self.extend_from_slice(b);
    }
    #[inline]
    fn len_bytes(&self) -> usize {
        self.len()
    }
    fn cut_after(&mut self, start: usize, max: usize) {
        if self.len() > start + max {
            let mut end = start + max;
            // Back over UTF-8 continuation bytes (0b10xx_xxxx).
            while end > start && self[end] & 0xc0 == 0x80 {
                end -= 1;
            }
            self.truncate(end);
        }
    }
    #[inline]
    fn repeat_range(&mut self, start: usize, end: usize) {
        self.extend_from_within(start..end);
    }
    #[inline]
    fn bytes_of(&self, start: usize, end: usize) -> &[u8] {
        &self[start..end]
    }
    #[inline]
    fn line(&mut self, line: &[u8; LINE], len: usize) {
        // All of it (a copy of a known size, no call), then cut back.
        let end = self.len() + len.min(LINE);
        self.extend_from_slice(line);
        self.truncate(end);
    }
}

/// The decimal digits of 0 to 999: the count, then the digits.
const DIGITS: [[u8; 4]; 1000] = {
    let mut t = [[0u8; 4]; 1000];
    let mut n = 0;
    while n < 1000 {
        let d = [(n / 100) as u8, (n / 10 % 10) as u8, (n % 10) as u8];
        t[n] = if n >= 100 {
            [3, b'0' + d[0], b'0' + d[1], b'0' + d[2]]
        } else if n >= 10 {
            [2, b'0' + d[1], b'0' + d[2], 0]
        } else {
            [1, b'0' + d[2], 0, 0]
        };
        n += 1;
    }
    t
};

/// Appends `n` (below 1000) in decimal, from [`DIGITS`]. (Measured on the
/// host with `scripts/measure/ipvsadm-text-cost`: an IPv4 address printed digit by
/// digit, dividing, cost 185 instructions; from the table, 134.)
fn push_small(out: &mut impl Text, n: usize) {
    let [len, a, b, c] = DIGITS[n];
    out.ascii(a);
    if len > 1 {
        out.ascii(b);
    }
    if len > 2 {
        out.ascii(c);
    }
}

/// Writes `n` (below 1000) at `at` of `buf` (three bytes written, its
/// digits kept); returns where it ends.
#[inline]
fn put_small(buf: &mut [u8], at: usize, n: usize) -> usize {
    let [len, a, b, c] = DIGITS[n];
    buf[at] = a;
    buf[at + 1] = b;
    buf[at + 2] = c;
    at + usize::from(len)
}

/// Appends `a.b.c.d:port`, composed on the stack and appended at once.
/// (Measured on the host with `scripts/measure/ipvsadm-text-cost`: appended piece by
/// piece into bytes, a destination's address and port cost 277
/// instructions; composed, 193.)
pub(crate) fn push_ipv4_port(out: &mut impl Text, a: &Ipv4Addr, port: u16) {
    let mut buf = [0u8; IPV4_PORT_ROOM];
    let n = put_ipv4_port(&mut buf, 0, a, port);
    out.ascii_bytes(&buf[..n]);
}

/// The room [`put_ipv4_port`] needs: 15 for the address, 6 for the port,
/// 2 of slack for `put_small`.
pub(crate) const IPV4_PORT_ROOM: usize = 23;

/// Writes `a.b.c.d:port` at `at` of `buf` (which has
/// [`IPV4_PORT_ROOM`] bytes from there); returns where it ends. Each octet
/// is its four bytes of [`OCTETS`], the digits and a dot, written at once.
/// (Measured on the host with `scripts/measure/ipvsadm-text-cost`: 116 instructions
/// an address and port with the digits of [`DIGITS`] written one by one,
/// 73 so.)
#[inline]
pub(crate) fn put_ipv4_port(buf: &mut [u8], at: usize, a: &Ipv4Addr, port: u16) -> usize {
    let buf = &mut buf[at..at + IPV4_PORT_ROOM];
    let mut i = 0;
    for o in a.octets() {
        let (bytes, len) = OCTETS[usize::from(o)];
        buf[i..i + 4].copy_from_slice(&bytes);
        i += usize::from(len);
    }
    // The last octet's dot.
    buf[i - 1] = b':';
    at + put_u16(buf, i, port)
}

/// Each octet's decimal digits followed by a dot, padded to four bytes,
/// and how many of them count (digits and dot).
const OCTETS: [([u8; 4], u8); 256] = {
    let mut t = [([0u8; 4], 0u8); 256];
    let mut n = 0;
    while n < 256 {
        let [len, a, b, c] = DIGITS[n];
        t[n] = match len {
            1 => ([a, b'.', 0, 0], 2),
            2 => ([a, b, b'.', 0], 3),
            _ => ([a, b, c, b'.'], 4),
        };
        n += 1;
    }
    t
};

/// Writes `n` in decimal at `at` of `buf` (7 bytes of room: 5 digits and
/// `put_small`'s slack); returns where it ends.
#[inline]
fn put_u16(buf: &mut [u8], at: usize, n: u16) -> usize {
    if n < 1000 {
        return put_small(buf, at, usize::from(n));
    }
    put_digits(buf, at, u32::from(n))
}

/// Writes `n` (not 0) in decimal at `at` of `buf`; returns where it ends.
fn put_digits(buf: &mut [u8], at: usize, mut n: u32) -> usize {
    let mut digits = [0u8; 10];
    let mut k = digits.len();
    while n > 0 {
        k -= 1;
        digits[k] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    let len = digits.len() - k;
    buf[at..at + len].copy_from_slice(&digits[k..]);
    at + len
}

/// The room [`put_i32`] needs: a sign, 10 digits, 2 of slack.
pub(crate) const I32_ROOM: usize = 13;

/// Writes `n` in decimal (`%d`) at `at` of `buf` (which has [`I32_ROOM`]
/// bytes from there); returns where it ends.
#[inline]
pub(crate) fn put_i32(buf: &mut [u8], at: usize, n: i32) -> usize {
    if (0..1000).contains(&n) {
        return put_small(buf, at, n as usize);
    }
    let mut i = at;
    if n < 0 {
        buf[i] = b'-';
        i += 1;
    }
    put_digits(buf, i, n.unsigned_abs())
}

/// Appends `n` in decimal (`%u`).
pub(crate) fn push_u64(out: &mut impl Text, mut n: u64) {
    if n < 1000 {
        push_small(out, n as usize);
        return;
    }
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
        out.ascii(d);
    }
}

/// Appends `n` in decimal (`%d`).
pub(crate) fn push_i64(out: &mut impl Text, n: i64) {
    if n < 0 {
        out.ascii(b'-');
    }
    push_u64(out, n.unsigned_abs());
}

/// Appends an IPv4 address dotted (`inet_ntop`).
pub(crate) fn push_ipv4(out: &mut impl Text, a: &Ipv4Addr) {
    let [a, b, c, d] = a.octets();
    push_small(out, usize::from(a));
    out.ascii(b'.');
    push_small(out, usize::from(b));
    out.ascii(b'.');
    push_small(out, usize::from(c));
    out.ascii(b'.');
    push_small(out, usize::from(d));
}

/// Appends a 16-bit group in lower-case hex without leading zeros.
fn push_hex16(out: &mut impl Text, g: u16) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut started = false;
    for shift in [12, 8, 4, 0] {
        let d = (g >> shift) & 0xf;
        if d != 0 || started || shift == 0 {
            started = true;
            out.ascii(HEX[usize::from(d)]);
        }
    }
}

/// Appends an IPv6 address as glibc's `inet_ntop(AF_INET6, ...)` prints
/// it: the longest run (first on a tie) of two or more zero groups becomes
/// "::"; an IPv4-compatible or IPv4-mapped address ends in a dotted quad.
pub(crate) fn push_ipv6(out: &mut impl Text, a: &Ipv6Addr) {
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
                out.ascii(b':');
            }
            i += 1;
            continue;
        }
        if i != 0 {
            out.ascii(b':');
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
        out.ascii(b':');
    }
}

/// Appends an address as `inet_ntop` prints it.
pub(crate) fn push_ntop(out: &mut impl Text, addr: &IpAddr) {
    match addr {
        IpAddr::V4(a) => push_ipv4(out, a),
        IpAddr::V6(a) => push_ipv6(out, a),
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
        for n in 0..2000u64 {
            let mut s = String::new();
            push_u64(&mut s, n);
            assert_eq!(s, n.to_string());
        }
    }

    #[test]
    fn i32_like_printf() {
        for n in [
            0,
            7,
            999,
            1000,
            -1,
            -999,
            65535,
            i32::MAX,
            i32::MIN,
            -1_000_000,
        ] {
            let mut buf = [b'x'; I32_ROOM + 1];
            let end = put_i32(&mut buf, 1, n);
            assert_eq!(&buf[1..end], n.to_string().as_bytes(), "{n}");
            assert_eq!(buf[0], b'x');
        }
    }

    #[test]
    fn repeat_copies_a_range_to_the_end() {
        let mut s = String::from("-A -t \u{e9}:1 x\n");
        s.repeat_range(3, 10);
        assert_eq!(s, "-A -t \u{e9}:1 x\n-t \u{e9}:1");
        let mut v = b"-A -t a:1 x\n".to_vec();
        v.repeat_range(3, 9);
        assert_eq!(v, b"-A -t a:1 x\n-t a:1");
    }

    #[test]
    fn ipv4_and_port_like_display() {
        for (a, p) in [
            ([0, 0, 0, 0], 0),
            ([255, 255, 255, 255], 65535),
            ([10, 0, 0, 1], 80),
            ([172, 16, 9, 99], 1000),
            ([1, 10, 100, 200], 999),
        ] {
            let a = Ipv4Addr::from(a);
            let mut s = String::new();
            push_ipv4_port(&mut s, &a, p);
            assert_eq!(s, format!("{a}:{p}"));
            let mut v = Vec::new();
            push_ipv4_port(&mut v, &a, p);
            assert_eq!(v, s.as_bytes());
        }
        // Every octet in every place, ports at every length.
        let ports = [0, 9, 10, 99, 100, 999, 1000, 9999, 10000, 65535];
        for o in 0..=255u8 {
            let a = Ipv4Addr::new(o, 255 - o, o / 2, o.wrapping_mul(7));
            let p = ports[usize::from(o) % ports.len()];
            let mut buf = [b'x'; IPV4_PORT_ROOM + 2];
            let end = put_ipv4_port(&mut buf, 1, &a, p);
            assert_eq!(&buf[1..end], format!("{a}:{p}").as_bytes());
            assert_eq!(buf[0], b'x');
        }
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
        for (text, start, max) in [
            ("ab\u{e9}cd", 1, 2),
            ("abc", 0, 5),
            ("\u{e9}\u{e9}", 0, 3),
            ("x\u{10348}y", 1, 3),
        ] {
            let mut s = String::from(text);
            s.cut_after(start, max);
            let mut v = text.as_bytes().to_vec();
            v.cut_after(start, max);
            assert_eq!(v, s.as_bytes(), "{text:?} {start} {max}");
            assert!(s.len() <= start + max);
        }
        let mut s = String::from("ab\u{e9}cd");
        s.cut_after(1, 2);
        assert_eq!(s, "ab");
    }

    #[test]
    fn bytes_and_strings_get_the_same_text() {
        let mut s = String::new();
        let mut v = Vec::new();
        for a in ["10.0.0.1", "2001:db8::1", "::ffff:1.2.3.4", "::"] {
            let a: IpAddr = a.parse().unwrap();
            push_ntop(&mut s, &a);
            push_ntop(&mut v, &a);
        }
        push_i64(&mut s, -42);
        push_i64(&mut v, -42);
        assert_eq!(v, s.as_bytes());
    }
}

//! The C-library text conventions ipvsadm's parsing relies on,
//! re-implemented in pure Rust so that the drop-in accepts what ipvsadm
//! accepts: `strtol`-style integers, `atoi`, `inet_aton`'s legacy IPv4
//! forms and `inet_pton`'s IPv6 form. (Printing addresses the way
//! `inet_ntop` does is the library's `ipvsnl::rules::style::ntop`.)

use std::net::{Ipv4Addr, Ipv6Addr};

/// White space as C's `isspace` sees it in the "C" locale.
pub(crate) fn c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// `strtol(s, &end, 10)` that must consume the whole string: leading white
/// space and one sign are allowed, at least one digit is required, and an
/// out-of-range value (for a 64-bit `long`) is an error.
pub(crate) fn strtol_full(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    // Up to 18 plain digits: no sign, no space, no overflow to check.
    if !b.is_empty() && b.len() <= 18 && b.iter().all(u8::is_ascii_digit) {
        return Some(b.iter().fold(0i64, |v, &d| v * 10 + i64::from(d - b'0')));
    }
    let mut i = 0;
    while i < b.len() && c_space(b[i]) {
        i += 1;
    }
    let mut neg = false;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        neg = b[i] == b'-';
        i += 1;
    }
    let start = i;
    let mut v: i128 = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        v = v * 10 + i128::from(b[i] - b'0');
        if v > i128::from(i64::MAX) + 1 {
            v = i128::from(i64::MAX) + 2; // saturate: ERANGE
        }
        i += 1;
    }
    if i == start || i != b.len() {
        return None;
    }
    let v = if neg { -v } else { v };
    i64::try_from(v).ok()
}

/// C's `atoi`: optional white space and sign, then leading digits.
pub(crate) fn atoi(s: &str) -> i64 {
    let t = s.trim_start_matches(|c: char| c.is_ascii() && c_space(c as u8));
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let end = digits
        .bytes()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(digits.len());
    let v = strtol_full(&digits[..end]).unwrap_or(0);
    if neg {
        -v
    } else {
        v
    }
}

/// ipvsadm's `string_to_number`: a whole-string decimal in `[min, max]`.
pub(crate) fn number_in(s: &str, min: i64, max: i64) -> Option<i64> {
    strtol_full(s).filter(|v| (min..=max).contains(v))
}

/// `strtoul(s, &end, 0)` on a string that starts with a digit: returns the
/// value (None on overflow) and the number of bytes used.
fn strtoul0(b: &[u8]) -> (Option<u64>, usize) {
    let (radix, mut i) = if b.len() >= 2 && b[0] == b'0' && (b[1] == b'x' || b[1] == b'X') {
        if b.len() > 2 && b[2].is_ascii_hexdigit() {
            (16, 2)
        } else {
            // "0x" without hex digits: strtoul reads just the "0".
            return (Some(0), 1);
        }
    } else if b[0] == b'0' {
        (8, 0)
    } else {
        (10, 0)
    };
    let mut v: Option<u64> = Some(0);
    if radix == 10 {
        // Up to 19 decimal digits cannot overflow: no checks for them.
        let mut n: u64 = 0;
        while i < b.len() && i < 19 && b[i].is_ascii_digit() {
            n = n * 10 + u64::from(b[i] - b'0');
            i += 1;
        }
        v = Some(n);
    }
    while i < b.len() {
        let d = match (b[i] as char).to_digit(radix) {
            Some(d) => d,
            None => break,
        };
        v = v
            .and_then(|v| v.checked_mul(u64::from(radix)))
            .and_then(|v| v.checked_add(u64::from(d)));
        i += 1;
    }
    (v, i)
}

/// glibc's `inet_aton`: `a.b.c.d`, `a.b.c`, `a.b` or `a`, each part
/// decimal, octal (leading 0) or hex (0x); anything after white space is
/// ignored.
pub(crate) fn inet_aton(s: &str) -> Option<Ipv4Addr> {
    dotted_quad(s.as_bytes()).or_else(|| inet_aton_any(s))
}

/// [`inet_aton`]'s reading of every form.
fn inet_aton_any(s: &str) -> Option<Ipv4Addr> {
    let b = s.as_bytes();
    // The parts before the last, at most three (no heap: this runs for
    // every address of a restore).
    let mut parts = [0u64; 3];
    let mut count = 0;
    let mut i = 0;
    let last;
    loop {
        if i >= b.len() || !b[i].is_ascii_digit() {
            return None;
        }
        let (v, used) = strtoul0(&b[i..]);
        let v = v?;
        i += used;
        if i < b.len() && b[i] == b'.' {
            if count > 2 || v > 0xff {
                return None;
            }
            parts[count] = v;
            count += 1;
            i += 1;
        } else {
            last = v;
            break;
        }
    }
    if i < b.len() && !c_space(b[i]) {
        return None;
    }
    let max: u64 = match count {
        0 => 0xffff_ffff,
        1 => 0xff_ffff,
        2 => 0xffff,
        _ => 0xff,
    };
    if last > max {
        return None;
    }
    let mut v = last;
    for (n, p) in parts[..count].iter().enumerate() {
        v |= p << (24 - 8 * n);
    }
    Some(Ipv4Addr::from(u32::try_from(v).ok()?))
}

/// The common form alone: exactly four decimal parts of 1 to 3 digits,
/// each at most 255 and without a leading zero (which would make it
/// octal), nothing after. `None` for anything else, which
/// [`inet_aton`]'s general reading then takes. (Measured on the host with
/// `scripts/measure/ipvsadm-text-cost`: the general reading cost 350 instructions an
/// address of a restore.)
fn dotted_quad(b: &[u8]) -> Option<Ipv4Addr> {
    let mut octets = [0u8; 4];
    let mut i = 0;
    for (n, octet) in octets.iter_mut().enumerate() {
        if n > 0 {
            if b.get(i) != Some(&b'.') {
                return None;
            }
            i += 1;
        }
        let start = i;
        let mut v: u32 = 0;
        while i < b.len() && i - start < 3 && b[i].is_ascii_digit() {
            v = v * 10 + u32::from(b[i] - b'0');
            i += 1;
        }
        if i == start || v > 255 || (b[start] == b'0' && i - start > 1) {
            return None;
        }
        *octet = v as u8;
    }
    (i == b.len()).then_some(Ipv4Addr::from(octets))
}

/// glibc's `inet_pton(AF_INET6, ...)`.
pub(crate) fn inet_pton6(s: &str) -> Option<Ipv6Addr> {
    // Rust's parser accepts the same forms as glibc for what matters here
    // (hex groups of up to four digits, one "::", a trailing dotted quad).
    // It rejects a scope suffix, as glibc does.
    s.parse::<Ipv6Addr>().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strtol_like_c() {
        assert_eq!(strtol_full(" +12"), Some(12));
        assert_eq!(strtol_full("-1"), Some(-1));
        assert_eq!(strtol_full("12 "), None);
        assert_eq!(strtol_full(""), None);
        assert_eq!(strtol_full("-"), None);
        assert_eq!(strtol_full("99999999999999999999"), None);
        assert_eq!(number_in("4294967295", 1, 4294967295), Some(4294967295));
        assert_eq!(number_in("0", 1, 5), None);
    }

    #[test]
    fn inet_aton_legacy_forms() {
        assert_eq!(inet_aton("10.1"), Some(Ipv4Addr::new(10, 0, 0, 1)));
        assert_eq!(inet_aton("0x0a000001"), Some(Ipv4Addr::new(10, 0, 0, 1)));
        assert_eq!(inet_aton("24"), Some(Ipv4Addr::new(0, 0, 0, 24)));
        assert_eq!(inet_aton("010.0.0.1"), Some(Ipv4Addr::new(8, 0, 0, 1)));
        assert_eq!(inet_aton("1.2.3.4 junk"), Some(Ipv4Addr::new(1, 2, 3, 4)));
        assert_eq!(inet_aton("300.1.1.1"), None);
        assert_eq!(inet_aton("1.2.3.4.5"), None);
        assert_eq!(inet_aton("08"), None);
        assert_eq!(inet_aton("0x"), None);
        assert_eq!(inet_aton(""), None);
        assert_eq!(inet_aton("a.b"), None);
        assert_eq!(inet_aton("1.2.65535"), Some(Ipv4Addr::new(1, 2, 255, 255)));
    }

    #[test]
    fn the_fast_paths_read_as_the_general_ones() {
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let alphabet = b"0123456789.x +-:";
        for _ in 0..200_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let len = (seed % 17) as usize;
            let text: String = (0..len)
                .map(|k| {
                    let r = (seed >> (3 * k % 60)) as usize;
                    // Mostly digits and dots, as addresses are.
                    let pick = if r % 4 == 0 {
                        r / 4 % alphabet.len()
                    } else {
                        r / 4 % 11
                    };
                    char::from(alphabet[pick])
                })
                .collect();
            assert_eq!(inet_aton(&text), inet_aton_any(&text), "{text:?}");
            let general = {
                // strtol_full without its fast path: through a leading
                // space, which C's strtol skips.
                strtol_full(&format!(" {text}"))
            };
            assert_eq!(strtol_full(&text), general, "{text:?}");
        }
        for text in [
            "255.255.255.255",
            "0.0.0.0",
            "10.0.0.1",
            "1.22.133.4",
            "999999999999999999",
        ] {
            assert_eq!(inet_aton(text), inet_aton_any(text), "{text:?}");
        }
    }
}

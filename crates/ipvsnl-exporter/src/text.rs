//! The pieces of the Prometheus text exposition format (0.0.4) the
//! renderer is made of: headers, escaped label values, exact integers.
//! The headers and the label values are public ([`push_header`],
//! [`push_label`], [`push_escaped`]): a program that serves its own
//! metrics beside the exporter's (the agent) writes them with these.
//!
//! Everything appends bytes (ASCII, or the UTF-8 of a label value) to a
//! `Vec<u8>`; nothing here allocates except by growing it. The hot path,
//! one sample line, copies the family's name and the value's digits as
//! fixed-size blocks (inlined moves, no `memcpy` call) and cuts the
//! padding off after.

use std::io::Write as _;
use std::net::IpAddr;

/// The `Content-Type` of the text exposition format this crate writes.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The type of a metric family, as its `# TYPE` line names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum MetricKind {
    /// Only goes up (resets when its source zeroes it).
    Counter,
    /// Goes up and down.
    Gauge,
    /// Buckets, a sum and a count (`_bucket`, `_sum`, `_count`).
    Histogram,
}

impl MetricKind {
    /// The word of the `# TYPE` line.
    pub fn word(self) -> &'static str {
        match self {
            MetricKind::Counter => "counter",
            MetricKind::Gauge => "gauge",
            MetricKind::Histogram => "histogram",
        }
    }
}

/// A family's name, kept padded to a fixed block for the sample lines.
pub(crate) struct FamilyName {
    /// The name, then zeros up to [`FamilyName::BLOCK`].
    padded: [u8; FamilyName::BLOCK],
    /// The whole name (also when longer than the block).
    full: String,
}

impl FamilyName {
    /// Names up to this long are copied as one fixed block.
    const BLOCK: usize = 64;

    pub(crate) fn new(full: String) -> Self {
        let mut padded = [0; Self::BLOCK];
        if let Some(dst) = padded.get_mut(..full.len()) {
            dst.copy_from_slice(full.as_bytes());
        }
        FamilyName { padded, full }
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.full
    }

    #[inline]
    fn push(&self, out: &mut Vec<u8>) {
        let len = self.full.len();
        if len <= Self::BLOCK {
            let at = out.len();
            out.extend_from_slice(&self.padded);
            out.truncate(at + len);
        } else {
            out.extend_from_slice(self.full.as_bytes());
        }
    }
}

/// Appends the `# HELP` and `# TYPE` lines of the family `name`. `help` is
/// written as it is: a program's own text, with no backslash and no
/// newline.
///
/// ```
/// use ipvsnl_exporter::{push_header, MetricKind};
/// let mut out = Vec::new();
/// push_header(&mut out, "ipvs_agent_ready", MetricKind::Gauge, "1 once ready.");
/// assert_eq!(out, b"# HELP ipvs_agent_ready 1 once ready.\n# TYPE ipvs_agent_ready gauge\n");
/// ```
pub fn push_header(out: &mut Vec<u8>, name: &str, kind: MetricKind, help: &str) {
    for part in [
        "# HELP ",
        name,
        " ",
        help,
        "\n# TYPE ",
        name,
        " ",
        kind.word(),
        "\n",
    ] {
        out.extend_from_slice(part.as_bytes());
    }
}

/// The two-digit pairs `00` to `99`, for writing integers two digits at a
/// time.
const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// 10^0 to 10^19, for counting digits.
const POW10: [u64; 20] = {
    let mut p = [1u64; 20];
    let mut i = 1;
    while i < 20 {
        p[i] = p[i - 1] * 10;
        i += 1;
    }
    p
};

/// How many decimal digits `v` has (1 to 20), from its bit length: no
/// division, no loop.
#[inline]
fn digit_count(v: u64) -> usize {
    let bits = 64 - v.leading_zeros() as usize;
    // floor(bits * log10(2)), then one more if v reaches the next power.
    let guess = (bits * 1233) >> 12;
    guess + usize::from(guess < 20 && v >= POW10[guess]) + usize::from(v == 0)
}

/// Writes `v` in decimal into `buf`, ending just before `end`, and
/// returns where the digits start (`u64::MAX` takes 20). Above 10^8 the
/// low eight digits go first as a `u32` (cheaper division), four at a
/// step.
#[inline(always)]
fn digits_before(buf: &mut [u8; 24], end: usize, v: u64) -> usize {
    let mut at = end;
    let mut pair = |at: &mut usize, two: u32| {
        let two = two as usize * 2;
        *at -= 2;
        buf[*at..*at + 2].copy_from_slice(&PAIRS[two..two + 2]);
    };
    let mut rest = v;
    while rest >= 100_000_000 {
        let mut low = (rest % 100_000_000) as u32;
        rest /= 100_000_000;
        for _ in 0..2 {
            let four = low % 10_000;
            low /= 10_000;
            pair(&mut at, four % 100);
            pair(&mut at, four / 100);
        }
    }
    let mut v = rest as u32;
    while v >= 100 {
        pair(&mut at, v % 100);
        v /= 100;
    }
    if v >= 10 {
        pair(&mut at, v);
    } else {
        at -= 1;
        buf[at] = b'0' + v as u8;
    }
    at
}

/// Appends `v` in decimal, exactly (never through `f64`).
pub(crate) fn push_u64(out: &mut Vec<u8>, v: u64) {
    let mut buf = [0; 24];
    let at = digits_before(&mut buf, 24, v);
    out.extend_from_slice(&buf[at..]);
}

/// Appends `value` escaped as a label value: backslash, double quote and
/// newline become `\\`, `\"` and `\n`.
///
/// ```
/// let mut out = Vec::new();
/// ipvsnl_exporter::push_escaped(&mut out, "a \"b\"\n");
/// assert_eq!(out, br#"a \"b\"\n"#);
/// ```
pub fn push_escaped(out: &mut Vec<u8>, value: &str) {
    if !value.bytes().any(|b| matches!(b, b'\\' | b'"' | b'\n')) {
        return out.extend_from_slice(value.as_bytes());
    }
    let mut rest = value;
    while let Some(i) = rest.find(['\\', '"', '\n']) {
        out.extend_from_slice(&rest.as_bytes()[..i]);
        out.extend_from_slice(match rest.as_bytes()[i] {
            b'\\' => b"\\\\",
            b'"' => b"\\\"",
            _ => b"\\n",
        });
        rest = &rest[i + 1..];
    }
    out.extend_from_slice(rest.as_bytes());
}

/// Appends `,name="` (no comma when `first`).
#[inline]
fn open_label(out: &mut Vec<u8>, first: bool, name: &str) {
    if !first {
        out.push(b',');
    }
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"=\"");
}

/// Appends `label="value"` (with a leading `,` unless `first`), the value
/// escaped ([`push_escaped`]).
///
/// ```
/// use ipvsnl_exporter::push_label;
/// let mut out = b"{".to_vec();
/// push_label(&mut out, true, "name", "web \"a\"");
/// push_label(&mut out, false, "kind", "tcp");
/// out.push(b'}');
/// assert_eq!(out, br#"{name="web \"a\"",kind="tcp"}"#);
/// ```
pub fn push_label(out: &mut Vec<u8>, first: bool, name: &str, value: &str) {
    open_label(out, first, name);
    push_escaped(out, value);
    out.push(b'"');
}

/// Appends `label="value"` for one of this crate's words (no backslash,
/// quote or newline): no escaping pass.
pub(crate) fn push_label_word(out: &mut Vec<u8>, first: bool, name: &str, word: &'static str) {
    open_label(out, first, name);
    out.extend_from_slice(word.as_bytes());
    out.push(b'"');
}

/// Appends `label="` + the value's `Display` form + `"` (with a leading
/// `,` unless `first`), unescaped: for values whose text has no backslash,
/// quote or newline (addresses, numbers, this crate's words).
pub(crate) fn push_label_plain(
    out: &mut Vec<u8>,
    first: bool,
    name: &str,
    value: impl std::fmt::Display,
) {
    open_label(out, first, name);
    // Writing into a Vec cannot fail.
    let _ = write!(out, "{value}");
    out.push(b'"');
}

/// Appends `label="ADDR"`; IPv4 by hand (`core::fmt`'s costs ten times
/// more), IPv6 in its shortest form through `Display`.
pub(crate) fn push_label_addr(out: &mut Vec<u8>, first: bool, name: &str, addr: IpAddr) {
    let IpAddr::V4(v4) = addr else {
        return push_label_plain(out, first, name, addr);
    };
    open_label(out, first, name);
    // Up to 15 characters and the closing quote, then one copy.
    let mut buf = [0u8; 16];
    let mut at = 0;
    for (i, octet) in v4.octets().into_iter().enumerate() {
        if i > 0 {
            buf[at] = b'.';
            at += 1;
        }
        if octet >= 100 {
            buf[at] = b'0' + octet / 100;
            at += 1;
        }
        if octet >= 10 {
            buf[at] = b'0' + octet / 10 % 10;
            at += 1;
        }
        buf[at] = b'0' + octet % 10;
        at += 1;
    }
    buf[at] = b'"';
    out.extend_from_slice(&buf[..=at]);
}

/// Appends `label="N"`.
pub(crate) fn push_label_u64(out: &mut Vec<u8>, first: bool, name: &str, v: u64) {
    open_label(out, first, name);
    push_u64(out, v);
    out.push(b'"');
}

/// Appends one sample line: the family's name, the label set (`{...}` or
/// empty), a space, the value and a newline.
#[inline(always)]
pub(crate) fn sample_u64(out: &mut Vec<u8>, name: &FamilyName, labels: &[u8], v: u64) {
    name.push(out);
    out.extend_from_slice(labels);
    // " " + digits + "\n" at the front of one fixed block, copied whole
    // and the rest cut off.
    let len = digit_count(v);
    let mut buf = [0; 24];
    buf[0] = b' ';
    digits_before(&mut buf, 1 + len, v);
    buf[1 + len] = b'\n';
    let at = out.len();
    out.extend_from_slice(&buf);
    out.truncate(at + len + 2);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(bytes: Vec<u8>) -> String {
        String::from_utf8(bytes).unwrap()
    }

    #[test]
    fn escapes_backslash_quote_and_newline_only() {
        let mut s = Vec::new();
        push_escaped(&mut s, "a\\b\"c\nd\te");
        assert_eq!(text(s), "a\\\\b\\\"c\\nd\te");
        let mut s = Vec::new();
        push_escaped(&mut s, "plain");
        assert_eq!(text(s), "plain");
    }

    #[test]
    fn integers_are_exact_at_the_top_of_u64() {
        let edges = [0, 1, 9, 10, 99, 100, 101, 999, 1000, (1 << 53) + 1];
        let powers = (0..20).map(|p| 10u64.pow(p));
        let values = edges
            .into_iter()
            .chain(powers.clone())
            .chain(powers.map(|p| p - 1))
            .chain([u64::MAX - 1, u64::MAX]);
        for v in values {
            let mut s = Vec::new();
            push_u64(&mut s, v);
            assert_eq!(text(s), v.to_string());
            let mut s = Vec::new();
            let name = FamilyName::new("m".into());
            sample_u64(&mut s, &name, b"{a=\"b\"}", v);
            assert_eq!(text(s), format!("m{{a=\"b\"}} {v}\n"));
        }
    }

    #[test]
    fn digit_counts_at_every_power_of_ten() {
        assert_eq!(digit_count(0), 1);
        assert_eq!(digit_count(u64::MAX), 20);
        for (p, &pow) in POW10.iter().enumerate() {
            assert_eq!(digit_count(pow), p + 1, "{pow}");
            if pow > 1 {
                assert_eq!(digit_count(pow - 1), p, "{}", pow - 1);
            }
        }
    }

    #[test]
    fn long_names_are_written_whole() {
        let long = "x".repeat(FamilyName::BLOCK + 7);
        let name = FamilyName::new(long.clone());
        let mut s = Vec::new();
        sample_u64(&mut s, &name, b"", 7);
        assert_eq!(text(s), format!("{long} 7\n"));
        assert_eq!(name.as_str(), long);
    }

    #[test]
    fn headers_and_labels() {
        let mut s = Vec::new();
        push_header(&mut s, "ipvs_up", MetricKind::Gauge, "Whether it worked.");
        assert_eq!(
            text(s),
            "# HELP ipvs_up Whether it worked.\n# TYPE ipvs_up gauge\n"
        );
        let mut l = b"{".to_vec();
        push_label(&mut l, true, "a", "x\"y");
        push_label(&mut l, false, "b", "");
        push_label_addr(&mut l, false, "c", "192.168.0.10".parse().unwrap());
        push_label_addr(&mut l, false, "d", "2001:db8::1".parse().unwrap());
        push_label_u64(&mut l, false, "e", 0);
        l.push(b'}');
        assert_eq!(
            text(l),
            "{a=\"x\\\"y\",b=\"\",c=\"192.168.0.10\",d=\"2001:db8::1\",e=\"0\"}"
        );
    }
}

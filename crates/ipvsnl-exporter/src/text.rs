//! The pieces of the Prometheus text exposition format (0.0.4) the
//! renderer is made of: headers, escaped label values, exact integers.
//!
//! Everything appends to a `String`; nothing here allocates except by
//! growing it.

use std::fmt::Write as _;
use std::net::IpAddr;

/// The `Content-Type` of the text exposition format this crate writes.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The type of a metric family, as its `# TYPE` line names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Only goes up (resets when the kernel zeroes its counters).
    Counter,
    /// Goes up and down.
    Gauge,
}

impl Kind {
    fn word(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
        }
    }
}

/// Writes the `# HELP` and `# TYPE` lines of the family `name`. `help` is
/// one of this crate's texts: no backslash, no newline, nothing to escape.
pub(crate) fn header(out: &mut String, name: &str, kind: Kind, help: &str) {
    for part in ["# HELP ", name, " ", help, "\n# TYPE ", name, " "] {
        out.push_str(part);
    }
    out.push_str(kind.word());
    out.push('\n');
}

/// Appends `v` in decimal, exactly (never through `f64`).
#[inline]
pub(crate) fn push_u64(out: &mut String, v: u64) {
    let mut buf = itoa::Buffer::new();
    out.push_str(buf.format(v));
}

/// Appends `value` escaped as a label value: backslash, double quote and
/// newline become `\\`, `\"` and `\n`.
pub(crate) fn push_escaped(out: &mut String, value: &str) {
    let mut rest = value;
    while let Some(i) = rest.find(['\\', '"', '\n']) {
        out.push_str(&rest[..i]);
        out.push_str(match rest.as_bytes()[i] {
            b'\\' => "\\\\",
            b'"' => "\\\"",
            _ => "\\n",
        });
        rest = &rest[i + 1..];
    }
    out.push_str(rest);
}

/// Appends `label="value"` (with a leading `,` unless `first`), the value
/// escaped.
pub(crate) fn push_label(out: &mut String, first: bool, name: &str, value: &str) {
    if !first {
        out.push(',');
    }
    out.push_str(name);
    out.push_str("=\"");
    push_escaped(out, value);
    out.push('"');
}

/// Appends `label="` + the value's `Display` form + `"` (with a leading
/// `,` unless `first`), unescaped: for values whose text has no backslash,
/// quote or newline (addresses, numbers, this crate's words).
pub(crate) fn push_label_plain(
    out: &mut String,
    first: bool,
    name: &str,
    value: impl std::fmt::Display,
) {
    if !first {
        out.push(',');
    }
    out.push_str(name);
    out.push_str("=\"");
    // Writing into a String cannot fail.
    let _ = write!(out, "{value}");
    out.push('"');
}

/// Appends `label="ADDR"`; IPv4 by hand (`core::fmt`'s costs ten times
/// more), IPv6 in its shortest form through `Display`.
pub(crate) fn push_label_addr(out: &mut String, first: bool, name: &str, addr: IpAddr) {
    let IpAddr::V4(v4) = addr else {
        return push_label_plain(out, first, name, addr);
    };
    if !first {
        out.push(',');
    }
    out.push_str(name);
    out.push_str("=\"");
    for (i, octet) in v4.octets().into_iter().enumerate() {
        if i > 0 {
            out.push('.');
        }
        if octet >= 100 {
            out.push(char::from(b'0' + octet / 100));
        }
        if octet >= 10 {
            out.push(char::from(b'0' + octet / 10 % 10));
        }
        out.push(char::from(b'0' + octet % 10));
    }
    out.push('"');
}

/// Appends `label="N"`.
pub(crate) fn push_label_u64(out: &mut String, first: bool, name: &str, v: u64) {
    if !first {
        out.push(',');
    }
    out.push_str(name);
    out.push_str("=\"");
    push_u64(out, v);
    out.push('"');
}

/// Appends one sample line: the family's `name`, the label set (`{...}` or
/// empty), a space, the value and a newline.
#[inline]
pub(crate) fn sample_u64(out: &mut String, name: &str, labels: &str, v: u64) {
    let mut buf = itoa::Buffer::new();
    let digits = buf.format(v);
    out.push_str(name);
    out.push_str(labels);
    out.push(' ');
    out.push_str(digits);
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_backslash_quote_and_newline_only() {
        let mut s = String::new();
        push_escaped(&mut s, "a\\b\"c\nd\te");
        assert_eq!(s, "a\\\\b\\\"c\\nd\te");
        let mut s = String::new();
        push_escaped(&mut s, "plain");
        assert_eq!(s, "plain");
    }

    #[test]
    fn integers_are_exact_at_the_top_of_u64() {
        for v in [0, 1, (1 << 53) + 1, u64::MAX - 1, u64::MAX] {
            let mut s = String::new();
            push_u64(&mut s, v);
            assert_eq!(s, v.to_string());
        }
    }

    #[test]
    fn headers_and_labels() {
        let mut s = String::new();
        header(&mut s, "ipvs_up", Kind::Gauge, "Whether it worked.");
        assert_eq!(
            s,
            "# HELP ipvs_up Whether it worked.\n# TYPE ipvs_up gauge\n"
        );
        let mut l = String::from("{");
        push_label(&mut l, true, "a", "x\"y");
        push_label(&mut l, false, "b", "");
        push_label_addr(&mut l, false, "c", "192.168.0.10".parse().unwrap());
        push_label_addr(&mut l, false, "d", "2001:db8::1".parse().unwrap());
        push_label_u64(&mut l, false, "e", 0);
        l.push('}');
        assert_eq!(
            l,
            "{a=\"x\\\"y\",b=\"\",c=\"192.168.0.10\",d=\"2001:db8::1\",e=\"0\"}"
        );
    }
}

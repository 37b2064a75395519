//! Typed reading of the parsed TOML tree: each reader records what is
//! wrong at the value's span and gives `None`, so a file's every error is
//! found in one pass.

use std::net::IpAddr;
use std::ops::Range;
use std::time::Duration;

use toml::de::{DeTable, DeValue};
use toml::Spanned;

use crate::config::duration::parse_duration;
use crate::config::source::Diagnostics;

/// A value of the file with its byte span.
pub(crate) type Value<'i> = Spanned<DeValue<'i>>;

/// A table of the file whose keys are known: unknown ones are reported
/// when it is opened.
pub(crate) struct Fields<'t, 'i> {
    table: &'t DeTable<'i>,
    span: Range<usize>,
}

impl<'t, 'i> Fields<'t, 'i> {
    /// Opens `value` as the table `what`, reporting a value that is not a
    /// table and every key not in `known`.
    pub(crate) fn open(
        d: &mut Diagnostics<'_>,
        value: &'t Value<'i>,
        what: &str,
        known: &[&str],
    ) -> Option<Self> {
        let DeValue::Table(table) = value.get_ref() else {
            d.error(
                &value.span(),
                format!("{what} must be a table, found {}", kind(value)),
            );
            return None;
        };
        for (k, _) in table.iter() {
            let name: &str = k.get_ref();
            if !known.contains(&name) {
                d.error(
                    &k.span(),
                    format!(
                        "unknown key `{name}` in {what} (known: {})",
                        known.join(", ")
                    ),
                );
            }
        }
        Some(Fields {
            table,
            span: value.span(),
        })
    }

    /// The value of `key`, if present.
    pub(crate) fn get(&self, key: &str) -> Option<&'t Value<'i>> {
        self.table
            .iter()
            .find(|(k, _)| {
                let name: &str = k.get_ref();
                name == key
            })
            .map(|(_, v)| v)
    }

    /// The span of the whole table (where a missing key is reported).
    pub(crate) fn span(&self) -> Range<usize> {
        self.span.clone()
    }

    /// The value of a key that must be there; its absence is reported.
    pub(crate) fn required(
        &self,
        d: &mut Diagnostics<'_>,
        key: &str,
        what: &str,
    ) -> Option<&'t Value<'i>> {
        let v = self.get(key);
        if v.is_none() {
            d.error(&self.span, format!("{what} needs `{key}`"));
        }
        v
    }
}

/// The TOML type of a value, for messages ("a string", "an integer"...).
pub(crate) fn kind(v: &Value<'_>) -> &'static str {
    match v.get_ref() {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a date-time",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}

/// A string.
pub(crate) fn string<'t>(d: &mut Diagnostics<'_>, key: &str, v: &'t Value<'_>) -> Option<&'t str> {
    match v.get_ref() {
        DeValue::String(s) => Some(s),
        _ => {
            d.error(
                &v.span(),
                format!("`{key}` must be a string, found {}", kind(v)),
            );
            None
        }
    }
}

/// A boolean.
pub(crate) fn boolean(d: &mut Diagnostics<'_>, key: &str, v: &Value<'_>) -> Option<bool> {
    match v.get_ref() {
        DeValue::Boolean(b) => Some(*b),
        _ => {
            d.error(
                &v.span(),
                format!("`{key}` must be true or false, found {}", kind(v)),
            );
            None
        }
    }
}

/// An integer from `min` to `max`.
pub(crate) fn integer(
    d: &mut Diagnostics<'_>,
    key: &str,
    v: &Value<'_>,
    min: u64,
    max: u64,
) -> Option<u64> {
    let DeValue::Integer(i) = v.get_ref() else {
        d.error(
            &v.span(),
            format!(
                "`{key}` must be an integer from {min} to {max}, found {}",
                kind(v)
            ),
        );
        return None;
    };
    let parsed = i128::from_str_radix(i.as_str(), i.radix()).ok();
    match parsed {
        Some(n) if n >= i128::from(min) && n <= i128::from(max) => u64::try_from(n).ok(),
        _ => {
            let shown = parsed.map_or_else(|| i.as_str().to_string(), |n| n.to_string());
            d.error(
                &v.span(),
                format!("`{key}` must be an integer from {min} to {max}, found {shown}"),
            );
            None
        }
    }
}

/// A port, 1 to 65535 (`allow_zero`: 0 too).
pub(crate) fn port(
    d: &mut Diagnostics<'_>,
    key: &str,
    v: &Value<'_>,
    allow_zero: bool,
) -> Option<u16> {
    integer(d, key, v, u64::from(!allow_zero), u64::from(u16::MAX))
        .and_then(|n| u16::try_from(n).ok())
}

/// An IPv4 or IPv6 address.
pub(crate) fn address(d: &mut Diagnostics<'_>, key: &str, v: &Value<'_>) -> Option<IpAddr> {
    let s = string(d, key, v)?;
    match s.parse::<IpAddr>() {
        Ok(a) => Some(a),
        Err(_) => {
            d.error(
                &v.span(),
                format!("`{key}`: \"{s}\" is not an IPv4 or IPv6 address"),
            );
            None
        }
    }
}

/// A duration written as a string: `"2s"`, `"500ms"`, `"1m"`, `"1h"`.
pub(crate) fn duration(d: &mut Diagnostics<'_>, key: &str, v: &Value<'_>) -> Option<Duration> {
    let s = string(d, key, v)?;
    match parse_duration(s) {
        Ok(t) => Some(t),
        Err(why) => {
            d.error(&v.span(), format!("`{key}`: \"{s}\" {why}"));
            None
        }
    }
}

/// One of a fixed set of words.
pub(crate) fn word<T: Copy>(
    d: &mut Diagnostics<'_>,
    key: &str,
    v: &Value<'_>,
    words: &[(&str, T)],
) -> Option<T> {
    let s = string(d, key, v)?;
    match words.iter().find(|(w, _)| *w == s) {
        Some((_, t)) => Some(*t),
        None => {
            let known: Vec<&str> = words.iter().map(|(w, _)| *w).collect();
            d.error(
                &v.span(),
                format!(
                    "`{key}`: unknown value \"{s}\" (known: {})",
                    known.join(", ")
                ),
            );
            None
        }
    }
}

/// An array of strings.
pub(crate) fn strings(d: &mut Diagnostics<'_>, key: &str, v: &Value<'_>) -> Option<Vec<String>> {
    let DeValue::Array(items) = v.get_ref() else {
        d.error(
            &v.span(),
            format!("`{key}` must be an array of strings, found {}", kind(v)),
        );
        return None;
    };
    let mut out = Vec::new();
    let mut ok = true;
    for item in items.iter() {
        match string(d, key, item) {
            Some(s) => out.push(s.to_string()),
            None => ok = false,
        }
    }
    ok.then_some(out)
}

/// The tables of an array of tables (`[[service]]`), or a report;
/// `header` is how the file writes one (`service`, `service.server`).
pub(crate) fn tables<'t, 'i>(
    d: &mut Diagnostics<'_>,
    key: &str,
    header: &str,
    v: &'t Value<'i>,
) -> &'t [Value<'i>] {
    match v.get_ref() {
        DeValue::Array(items) => items,
        _ => {
            d.error(
                &v.span(),
                format!(
                    "`{key}` must be an array of tables (`[[{header}]]`), found {}",
                    kind(v)
                ),
            );
            &[]
        }
    }
}

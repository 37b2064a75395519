//! The agent's TOML written from the import's tables: a header of
//! comments, then each `[[service]]` with its `[[service.server]]`s and
//! their `[service.server.check]`.

use std::fmt::Write as _;

use crate::import::output::{OutService, Table, Val};
use crate::import::report::Place;

/// The file's text, and where each of its tables comes from: the line of
/// its header (from 1) and the keepalived line.
pub(crate) fn write(header: &[String], services: &[OutService]) -> (String, Vec<(usize, Place)>) {
    let mut out = String::new();
    let mut origins = Vec::new();
    for line in header {
        comment(&mut out, line);
    }
    for s in services {
        out.push('\n');
        table(&mut out, &mut origins, "[[service]]", &s.table);
        for srv in &s.servers {
            table(&mut out, &mut origins, "[[service.server]]", &srv.table);
            if let Some(c) = &srv.check {
                table(&mut out, &mut origins, "[service.server.check]", c);
            }
        }
    }
    (out, origins)
}

fn comment(out: &mut String, line: &str) {
    if line.is_empty() {
        out.push_str("#\n");
    } else {
        for l in line.lines() {
            let _ = writeln!(out, "# {l}");
        }
    }
}

fn table(out: &mut String, origins: &mut Vec<(usize, Place)>, header: &str, t: &Table) {
    for c in &t.comments {
        comment(out, c);
    }
    if let Some(at) = &t.origin {
        origins.push((out.lines().count() + 1, at.clone()));
    }
    out.push_str(header);
    out.push('\n');
    for (k, v, c) in &t.fields {
        let _ = write!(out, "{k} = ");
        value(out, v);
        if let Some(c) = c {
            let _ = write!(out, "  # {}", c.replace('\n', " "));
        }
        out.push('\n');
    }
}

fn value(out: &mut String, v: &Val) {
    match v {
        Val::Str(s) => string(out, s),
        Val::Int(n) => {
            let _ = write!(out, "{n}");
        }
        Val::Bool(b) => {
            let _ = write!(out, "{b}");
        }
        Val::Strs(items) => {
            out.push('[');
            for (i, s) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                string(out, s);
            }
            out.push(']');
        }
        Val::Inline(fields) => {
            out.push_str("{ ");
            for (i, (k, v)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                let _ = write!(out, "{k} = ");
                value(out, v);
            }
            out.push_str(" }");
        }
    }
}

/// A basic TOML string, escaped.
fn string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_escaped() {
        let mut s = String::new();
        string(&mut s, "a\"b\\c\u{1}");
        assert_eq!(s, "\"a\\\"b\\\\c\\u0001\"");
    }
}

//! The rules-text reader fed arbitrary bytes: those that are UTF-8 go to
//! `ipvsnl::rules::parse` (numeric names), and a text that parses is
//! replayed into a table (`Rules::to_table`).
//!
//! Must hold: no panic; an error names at least one line, each within the
//! text, in order; and a table read from a text, printed back with the
//! library's printer (`service_rule`, `destination_rule`) and read again,
//! is the same table.

#![no_main]

use ipvsnl::rules::{destination_rule, parse, service_rule, Numeric};
use ipvsnl::sync::Table;
use libfuzzer_sys::fuzz_target;

/// The table printed as a rules text: each service, then its servers.
fn print(table: &Table) -> String {
    let mut text = String::new();
    for s in table.iter() {
        text.push_str(&service_rule(&s.service, &Numeric));
        text.push('\n');
        for d in &s.destinations {
            text.push_str(&destination_rule(&s.service.key, &d.destination, &Numeric));
            text.push('\n');
        }
    }
    text
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let rules = match parse(text, &Numeric) {
        Ok(rules) => rules,
        Err(e) => {
            let lines: Vec<usize> = e.lines().iter().map(|b| b.line()).collect();
            assert!(!lines.is_empty(), "an error without a bad line");
            assert!(lines.windows(2).all(|w| w[0] < w[1]), "{lines:?}");
            assert!(lines.iter().all(|n| *n >= 1 && *n <= text.lines().count()));
            return;
        }
    };
    let Ok(table) = rules.to_table() else {
        return;
    };
    let printed = print(&table);
    let again = parse(&printed, &Numeric)
        .unwrap_or_else(|e| panic!("the printed table does not read back: {e}\n{printed}"))
        .to_table()
        .unwrap_or_else(|e| panic!("the printed table does not replay: {e}\n{printed}"));
    assert_eq!(again, table, "the round trip changed the table:\n{printed}");
});

//! The rules-text reader fed arbitrary bytes: those that are UTF-8 go to
//! `ipvsnl::rules::parse` (numeric names), and a text that parses is
//! replayed into a table (`Rules::to_table`).
//!
//! Must hold: no panic; an error names at least one line, each within the
//! text, in order; and a table read from a text, printed back with the
//! library's printer (`table_rules`: `service_rule` and `destination_rule`
//! per line) and read again, is the same table, but for the connection
//! thresholds, which the printer leaves out as `ipvsadm -S` does.

#![no_main]

use ipvsnl::rules::{parse, table_rules, Numeric};
use ipvsnl::sync::Table;
use libfuzzer_sys::fuzz_target;

/// The table with what a rules text cannot hold taken out: thresholds.
fn printable(table: &Table) -> Table {
    let mut out = Table::new();
    for s in table.iter() {
        let dests = s
            .destinations
            .iter()
            .map(|d| d.destination.with_thresholds(0, 0));
        out.insert(s.service.clone(), dests);
    }
    out
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
    let printed = table_rules(&table, &Numeric);
    let again = parse(&printed, &Numeric)
        .unwrap_or_else(|e| panic!("the printed table does not read back: {e}\n{printed}"))
        .to_table()
        .unwrap_or_else(|e| panic!("the printed table does not replay: {e}\n{printed}"));
    assert_eq!(
        again,
        printable(&table),
        "the round trip changed the table:\n{printed}"
    );
});

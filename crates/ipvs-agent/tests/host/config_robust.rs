//! Bad input of every shape gets errors, never a panic: the example cut
//! at every character, and with characters replaced.

use ipvs_agent::config::parse_str;

const EXAMPLE: &str = include_str!("../../examples/agent.toml");

#[test]
fn the_example_cut_anywhere_never_panics_and_errors_are_located_in_the_file() {
    let mut refused = 0;
    for (cut, _) in EXAMPLE.char_indices() {
        let text = &EXAMPLE[..cut];
        if let Err(e) = parse_str("cut.toml", text) {
            refused += 1;
            let lines = text.lines().count().max(1);
            for err in &e.errors {
                assert!(
                    err.line >= 1 && err.line <= lines + 1,
                    "{err} in {lines} lines"
                );
                assert!(err.column >= 1);
                assert!(!err.message.is_empty());
            }
        }
    }
    assert!(refused > EXAMPLE.len() / 2, "{refused}");
}

#[test]
fn characters_replaced_anywhere_never_panic() {
    for replacement in ["\"", "]", "[", "=", "\n", "0", "-", "{", "é"] {
        for (at, c) in EXAMPLE.char_indices().step_by(7) {
            let mut text = String::with_capacity(EXAMPLE.len() + 2);
            text.push_str(&EXAMPLE[..at]);
            text.push_str(replacement);
            text.push_str(&EXAMPLE[at + c.len_utf8()..]);
            let _ = parse_str("x.toml", &text);
        }
    }
}

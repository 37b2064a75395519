//! `ipvs-agent import keepalived` fed arbitrary bytes: those that are
//! UTF-8 are a keepalived.conf (split at the first NUL: the part after it
//! is `inc.conf`, which the first may `include`), read from memory.
//!
//! Must hold: no panic; every error and every warning names a line of one
//! of the two files; and a file the import produces is one the agent's
//! own parser accepts.

#![no_main]

use std::path::PathBuf;

use ipvs_agent::import::{keepalived, MemFiles};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (main, inc) = text.split_once('\0').unwrap_or((text, ""));
    let mut files = MemFiles::default();
    files.files.insert(PathBuf::from("k.conf"), main.to_string());
    files.files.insert(PathBuf::from("inc.conf"), inc.to_string());
    let lines = |file: &str| match file {
        "k.conf" => main.lines().count(),
        _ => inc.lines().count(),
    };
    match keepalived(&files, "k.conf".as_ref()) {
        Ok(out) => {
            if let Err(e) = ipvs_agent::config::parse_str("out.toml", &out.toml) {
                panic!("the agent refuses the import's output: {e}\n{}", out.toml);
            }
            for n in &out.notes {
                assert!(n.at.line >= 1 && n.at.line as usize <= lines(&n.at.file), "{n}");
            }
        }
        Err(e) => {
            assert!(!e.errors.is_empty());
            for err in &e.errors {
                if let Some(at) = &err.at {
                    assert!(at.line >= 1 && at.line as usize <= lines(&at.file), "{err}");
                }
            }
        }
    }
});

//! `ipvs-agent import keepalived` on the sample configurations of
//! Debian's keepalived 2.2.7 package, written by people outside this
//! project: each imports to what it must configure (its services,
//! schedulers, methods, servers, weights and checks, as `ipvs-agent
//! check` prints the agent's file), or is refused where it must be, with
//! every warning at its line (import_samples.txt).
//!
//! The samples are the ones .ci/setup unpacks from the package into the
//! VM cache (`${IPVSNL_VM_CACHE:-${XDG_CACHE_HOME:-~/.cache}/ipvsnl-vm}/peers/`),
//! or those of `IPVSNL_KEEPALIVED_SAMPLES` (a directory). Without them the
//! test fails under CI (`CI=true`, as the other tests of what .ci/setup
//! unpacks) and says it was skipped elsewhere.

use std::collections::BTreeMap;
use std::path::PathBuf;

use ipvs_agent::import::{keepalived, DiskFiles, NoteKind};

const EXPECTED: &str = include_str!("import_samples.txt");

/// Where the samples are.
fn samples_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("IPVSNL_KEEPALIVED_SAMPLES") {
        return PathBuf::from(d);
    }
    let var = |v: &str| std::env::var_os(v).map(PathBuf::from);
    let cache = var("IPVSNL_VM_CACHE")
        .or_else(|| var("XDG_CACHE_HOME").map(|x| x.join("ipvsnl-vm")))
        .or_else(|| var("HOME").map(|h| h.join(".cache/ipvsnl-vm")))
        .unwrap_or_default();
    cache.join("peers/usr/share/doc/keepalived/samples")
}

/// What a sample must give.
#[derive(Debug, Default)]
struct Expected {
    /// The rules, or `refused: WHY`.
    lines: Vec<String>,
    /// The warnings, `LINE:KIND`.
    notes: String,
}

fn expected() -> BTreeMap<String, Expected> {
    let mut out: BTreeMap<String, Expected> = BTreeMap::new();
    let mut current = None;
    for line in EXPECTED.lines() {
        if let Some(name) = line.strip_prefix("== ") {
            current = Some(name.to_string());
            out.entry(name.to_string()).or_default();
        } else if let Some(name) = &current {
            let e = out.get_mut(name).unwrap();
            match line.strip_prefix("notes: ") {
                Some(n) => e.notes = n.to_string(),
                None if line == "notes:" => {}
                None => e.lines.push(line.to_string()),
            }
        }
    }
    out
}

fn kind(k: NoteKind) -> char {
    match k {
        NoteKind::Changed => 'C',
        NoteKind::NotSupported => 'N',
        NoteKind::Outside => 'O',
        _ => '?',
    }
}

#[test]
fn every_debian_sample_imports_to_what_it_must_configure() {
    let dir = samples_dir();
    if !dir.is_dir() {
        let why = format!(
            "keepalived's samples are not at {}: run .ci/setup (it unpacks Debian's keepalived \
             2.2.7 into the VM cache's peers/), or set IPVSNL_KEEPALIVED_SAMPLES",
            dir.display()
        );
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{why}");
        eprintln!("skipped: {why}");
        return;
    }
    let expected = expected();
    let mut found: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("keepalived.conf."))
        .collect();
    found.sort();
    let names: Vec<&String> = expected.keys().collect();
    assert_eq!(
        found.iter().collect::<Vec<_>>(),
        names,
        "the package's samples and import_samples.txt differ: add what a new sample must configure"
    );
    let mut imported = 0;
    for (name, want) in &expected {
        let path = dir.join(name);
        let (lines, notes) = match keepalived(&DiskFiles::default(), &path) {
            Ok(out) => {
                let config = ipvs_agent::config::parse_str(name, &out.toml).unwrap_or_else(|e| {
                    panic!("{name}: the agent refuses the output: {e}\n{}", out.toml)
                });
                let rules: Vec<String> = ipvs_agent::render::render(&config)
                    .lines()
                    .filter(|l| !l.starts_with("# agent:") && !l.starts_with("# service"))
                    .map(str::to_string)
                    .collect();
                imported += 1;
                (rules, out.notes)
            }
            Err(e) => {
                let first = e.errors[0].to_string();
                let why = first.split_once(": ").map_or(first.as_str(), |x| x.1);
                (vec![format!("refused: {why}")], e.notes)
            }
        };
        assert_eq!(&lines, &want.lines, "{name}: what it configures");
        let notes: Vec<String> = notes
            .iter()
            .map(|n| format!("{}:{}", n.at.line, kind(n.kind)))
            .collect();
        assert_eq!(notes.join(" "), want.notes, "{name}: its warnings");
    }
    assert_eq!(imported, 16, "the samples with virtual servers all import");
}

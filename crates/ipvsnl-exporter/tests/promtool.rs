//! `promtool check metrics` (Prometheus' own parser and linter) on the
//! rendered fixture and on a failed scrape's text.
//!
//! promtool comes from Debian's prometheus package, unpacked (never
//! installed) by `.ci/setup` into the VM cache's `tools/`. Found through
//! `IPVSNL_PROMTOOL`, else that cache path, else `promtool` on PATH. When
//! it is missing the test fails under CI (`CI=true`) and says how to get
//! it; elsewhere it prints a skip note and passes.

mod common;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use ipvsnl_exporter::{render, render_exporter_metrics, MetricPrefix};

fn promtool() -> Option<PathBuf> {
    if let Some(p) = common::tools::find("IPVSNL_PROMTOOL", "promtool") {
        return Some(p);
    }
    let on_path = Command::new("promtool").arg("--version").output();
    on_path
        .ok()
        .filter(|o| o.status.success())
        .map(|_| "promtool".into())
}

/// Runs `promtool check metrics` on `text`: its exit status and output.
fn check(tool: &PathBuf, text: &str) -> (bool, String) {
    let mut child = Command::new(tool)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", tool.display()));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success() && said.trim().is_empty(), said)
}

#[test]
fn promtool_accepts_the_exposition() {
    let Some(tool) = promtool() else {
        return common::tools::missing("promtool", "prometheus", "IPVSNL_PROMTOOL");
    };
    for ns in ["ipvs", "node_ipvs"] {
        let ns = MetricPrefix::new(ns).unwrap();
        let mut text = render(&ns, &common::table(), Some(&common::totals())).into_bytes();
        render_exporter_metrics(&mut text, &ns, true, Duration::from_micros(1234));
        let text = String::from_utf8(text).unwrap();
        let (ok, said) = check(&tool, &text);
        assert!(ok, "promtool on the fixture ({ns}):\n{said}");
    }
    let mut failed = Vec::new();
    render_exporter_metrics(&mut failed, &MetricPrefix::default(), false, Duration::ZERO);
    let (ok, said) = check(&tool, &String::from_utf8(failed).unwrap());
    assert!(ok, "promtool on a failed scrape:\n{said}");
    // It can fail: a counter without `_total` and a doubled family.
    let (ok, _) = check(&tool, "# TYPE x counter\nx 1\n# TYPE x counter\nx 2\n");
    assert!(!ok, "promtool accepted a broken exposition");
}

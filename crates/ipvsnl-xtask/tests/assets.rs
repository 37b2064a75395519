//! `ipvsnl-xtask --out DIR` writes every tool's man page and bash, zsh
//! and fish completions, each naming the tool's flags (from its clap
//! command line, so a flag added to a tool is documented and completed).

use std::path::Path;
use std::process::Command;

/// What a file of `dir` holds (roff's escaped dashes plain), or a
/// failure naming it.
fn read(dir: &Path, file: &str) -> String {
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.replace("\\-", "-")
}

#[test]
fn the_man_pages_and_completions_are_written_and_name_the_flags() {
    let dir = std::env::temp_dir().join(format!("ipvsnl-xtask-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = Command::new(env!("CARGO_BIN_EXE_ipvsnl-xtask"))
        .arg("--out")
        .arg(&dir)
        .output()
        .expect("the generator runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (tool, flags) in [
        ("ipvs-agent", &["check", "run"][..]),
        (
            "ipvs-exporter",
            &[
                "web.listen-address",
                "web.telemetry-path",
                "metrics.namespace",
            ],
        ),
        ("ipvs-doctor", &["scheduler", "netns", "json"]),
    ] {
        for file in [
            format!("man/{tool}.1"),
            format!("completions/bash/{tool}.bash"),
            format!("completions/zsh/_{tool}"),
            format!("completions/fish/{tool}.fish"),
        ] {
            let text = read(&dir, &file);
            assert!(text.contains(tool), "{file} names {tool}");
            for flag in flags {
                assert!(text.contains(flag), "{file} names {flag}");
            }
        }
    }
    // A command's flags: in its own man page and in every completion.
    let run = read(&dir, "man/ipvs-agent-run.1");
    for flag in ["listen", "no-http", "log-format", "watch", "remove-on-exit"] {
        let bold = format!("\\fB--{flag}\\fR");
        assert!(run.contains(&bold), "{bold} in\n{run}");
    }
    assert!(read(&dir, "man/ipvs-agent-check.1").contains("FILE"));
    let import = read(&dir, "man/ipvs-agent-import-keepalived.1");
    assert!(import.contains("dry"), "{import}");
    for file in [
        "completions/bash/ipvs-agent.bash",
        "completions/zsh/_ipvs-agent",
        "completions/fish/ipvs-agent.fish",
    ] {
        let text = read(&dir, file);
        for flag in ["listen", "no-http", "log-format", "watch"] {
            assert!(text.contains(flag), "{file} names --{flag}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

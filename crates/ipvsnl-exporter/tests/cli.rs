//! The binary's exit codes: 0 for --help and --version, 2 for a bad
//! command line (clap's message, naming the flag and suggesting the
//! nearest), 1 for a namespace that does not exist.

use std::process::Command;

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ipvs-exporter"))
        .args(args)
        .output()
        .unwrap();
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
    (
        out.status.code().unwrap_or(-1),
        text(out.stdout),
        text(out.stderr),
    )
}

#[test]
fn help_and_version() {
    let (code, out, _) = run(&["--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("--web.listen-address"), "{out}");
    let (code, out, _) = run(&["--version"]);
    assert_eq!(code, 0);
    assert_eq!(
        out,
        format!("ipvs-exporter {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn bad_flags_exit_2_naming_the_flag() {
    for (args, flag) in [
        (&["--web.listen-adress=:1"][..], "--web.listen-adress"),
        (&["--metrics.namespace=a-b"][..], "--metrics.namespace"),
        (
            &["--web.listen-address", "nope"][..],
            "--web.listen-address",
        ),
        (&["--netns"][..], "--netns"),
    ] {
        let (code, _, err) = run(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.starts_with("error: ") && err.contains(flag), "{err}");
    }
    let (_, _, err) = run(&["--web.listen-adress=:1"]);
    assert!(
        err.contains("tip: a similar argument exists: '--web.listen-address'"),
        "{err}"
    );
}

#[test]
fn a_missing_namespace_exits_1_and_says_which() {
    let (code, _, err) = run(&[
        "--netns",
        "/nonexistent/netns",
        "--web.listen-address=127.0.0.1:0",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("level=error"), "{err}");
    assert!(err.contains("/nonexistent/netns"), "{err}");
}

//! `ipvs-agent check FILE`: exit 0 with what it would configure, 1 with
//! every error at its line and column, 2 on a usage error.

use std::process::{Command, Output};

pub(crate) const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/agent.toml");

/// Runs the `ipvs-agent` binary with `args`; a publish's default cache
/// goes to a directory of this test process's, not the user's.
pub(crate) fn agent(args: &[&str]) -> Output {
    let cache = std::env::temp_dir().join(format!("ipvs-agent-tests-{}", std::process::id()));
    Command::new(env!("CARGO_BIN_EXE_ipvs-agent"))
        .args(args)
        .env("XDG_CACHE_HOME", cache)
        .output()
        .expect("the binary runs")
}

/// Output bytes as text.
pub(crate) fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn check_accepts_the_example_and_prints_the_rules() {
    let out = agent(&["check", EXAMPLE]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("-A -t 192.0.2.10:80 -s wrr\n"), "{stdout}");
    assert!(stdout.contains("-a -t 192.0.2.10:80 -r 10.0.0.1:8080 -m -w 10  # http GET /healthz -> 200 with \"ok\" every 2s (timeout 1s, jitter 200ms), rise 2 fall 3, starts up\n"), "{stdout}");
    assert!(
        stdout.contains("-A -f 7 -s mh -b mh-fallback\n"),
        "{stdout}"
    );
    assert!(stdout.contains("# sorry server, added below the quorum: -a -t 192.0.2.10:80 -r 10.0.9.1:8080 -m -w 1\n"), "{stdout}");
    assert!(text(&out.stderr).ends_with("valid: 4 services, 10 real servers\n"));
}

#[test]
fn check_prints_every_error_and_exits_1() {
    let dir = std::env::temp_dir().join(format!("ipvs-agent-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad.toml");
    std::fs::write(
        &file,
        "[[service]]\nprotocol = \"tcp\"\naddress = \"192.0.2.1\"\nport = 80\nscheduler = \"wrrr\"\n\
         [[service.server]]\naddress = \"10.0.0.1\"\nweight = -1\n",
    )
    .unwrap();
    let out = agent(&["check", file.to_str().unwrap()]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty(), "nothing printed as accepted");
    let f = file.display();
    assert_eq!(
        text(&out.stderr),
        format!(
            "{f}:5:13: `scheduler`: unknown scheduler \"wrrr\" (known: rr, wrr, lc, wlc, lblc, lblcr, dh, sh, sed, nq, fo, ovf, mh, twos, none)\n\
             {f}:8:10: `weight` must be an integer from 0 to 2147483647, found -1\n\
             {f}: 2 errors, nothing accepted\n"
        )
    );
}

#[test]
fn an_unreadable_file_exits_1_and_usage_errors_exit_2() {
    let out = agent(&["check", "/nonexistent/agent.toml"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).starts_with("ipvs-agent: /nonexistent/agent.toml: cannot read: "));
    for args in [
        &[][..],
        &["check"],
        &["check", "a", "b"],
        &["serve", "x"],
        &["--bogus"],
    ] {
        let out = agent(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            text(&out.stderr).contains("Usage: ipvs-agent "),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    let out = agent(&["--bogus"]);
    assert!(text(&out.stderr).contains("unexpected argument '--bogus'"));
    let out = agent(&["serve", "x"]);
    assert!(text(&out.stderr).contains("unrecognized subcommand 'serve'"));
    let out = agent(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("Usage: ipvs-agent <COMMAND>"), "{stdout}");
    for command in ["check", "import", "run"] {
        assert!(stdout.contains(&format!("\n  {command} ")), "{stdout}");
    }
    let out = agent(&["--version"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stdout),
        format!("ipvs-agent {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn each_commands_help_lists_its_flags_and_a_typo_gets_a_suggestion() {
    let out = agent(&["run", "--help"]);
    assert_eq!(out.status.code(), Some(0));
    let help = text(&out.stdout);
    let mut flags = vec![
        "--listen <ADDR>",
        "--no-http",
        "--netns <PATH>",
        "--remove-on-exit",
        "--log-format <FORMAT>",
        "--watch <PERIOD>",
        "--state-dir <DIR>",
    ];
    let fleet = [
        "--etcd <URL[,URL...]>",
        "--prefix <P>",
        "--vip <ADDR/PREFIX>",
        "--vip-interface <IF>",
        "--sync-interface <IF>",
        "--sync-id <N>",
        "--lease-ttl <SECONDS>",
        "--peer-listen <ADDR:PORT>",
        "--peers <ADDR:PORT[,...]>",
        "--peer-key <FILE>",
    ];
    if cfg!(feature = "fleet") {
        flags.extend(fleet);
    } else {
        for flag in fleet {
            assert!(!help.contains(flag), "{flag} hidden without fleet: {help}");
        }
    }
    for flag in flags {
        assert!(help.contains(flag), "{flag} in {help}");
    }
    assert!(help.contains("[default: 127.0.0.1:9102]"), "{help}");
    let out = agent(&["check", "--help"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).contains("Usage: ipvs-agent check <FILE>"));
    let out = agent(&["run", EXAMPLE, "--wach", "2s"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("unexpected argument '--wach'") && stderr.contains("'--watch'"),
        "{stderr}"
    );
}

#[test]
fn run_refuses_a_bad_command_line_and_a_bad_file_before_it_starts() {
    let out = agent(&["run", EXAMPLE, "--log-format", "xml"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("invalid value 'xml' for '--log-format <FORMAT>'")
            && stderr.contains("[possible values: logfmt, json]"),
        "{stderr}"
    );
    let out = agent(&["run"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("run needs a configuration FILE"),
        "{}",
        text(&out.stderr)
    );
    let out = agent(&["run", "/nonexistent/agent.toml", "--no-http"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("/nonexistent/agent.toml: cannot read"),
        "{}",
        text(&out.stderr)
    );
}

#[cfg(not(feature = "fleet"))]
#[test]
fn publish_without_the_fleet_feature_says_so_and_exits_2() {
    let out = agent(&["publish", EXAMPLE, "--etcd", "http://127.0.0.1:2379"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("build with the `fleet` feature"));
}

#[test]
fn run_with_etcd_refuses_a_file_too_and_without_the_fleet_feature() {
    for (args, message) in [
        (
            vec!["run", EXAMPLE, "--etcd", "http://127.0.0.1:1"],
            "run takes a FILE or --etcd, not both",
        ),
        (
            vec!["run", "--prefix", "/p", EXAMPLE],
            "--prefix goes with --etcd",
        ),
        (
            vec!["run", "--etcd", "http://127.0.0.1:1", "--watch", "2s"],
            "--watch is for a FILE, not --etcd",
        ),
    ] {
        let out = agent(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(text(&out.stderr).contains(message), "{}", text(&out.stderr));
    }
    // With the feature it would wait for etcd: not run here.
    if !cfg!(feature = "fleet") {
        let out = agent(&["run", "--etcd", "http://127.0.0.1:1"]);
        assert_eq!(out.status.code(), Some(2));
        assert!(text(&out.stderr).contains("build with the `fleet` feature"));
    }
}

#[test]
fn one_error_is_counted_in_the_singular() {
    let dir = std::env::temp_dir().join(format!("ipvs-agent-cli-one-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("one.toml");
    std::fs::write(&file, "[agent]\nresync = \"soon\"\n[[service]]\nfwmark = 1\n[[service.server]]\naddress = \"10.0.0.1\"\n").unwrap();
    let out = agent(&["check", file.to_str().unwrap()]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.ends_with(&format!("{}: 1 error, nothing accepted\n", file.display())),
        "{stderr}"
    );
}

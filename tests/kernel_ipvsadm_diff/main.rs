//! Differential tests: our `ipvsadm` (crates/ipvsnl-ipvsadm, installed by
//! `.ci/kernel-tests` with `cargo install`) against Debian's ipvsadm 1.31,
//! on the real kernel (in the VM, via .ci/kernel-tests).
//!
//! Each case is a sequence of commands run once with the reference and once
//! with ours, each side from the same starting state (set up with the
//! reference) in a network namespace of its own: stdout, stderr, exit status
//! of every step and the resulting state (`ipvsadm -S -n`, `-L --daemon`,
//! `-L --timeout`, read with the reference) must be identical.
//!
//! The cases live in tests/ipvsadm_cases/cases.txt:
//!
//! ```text
//! == name [samens] [nobody]   a case; flags: run both sides in one namespace,
//!                             resetting in between (for --nosort with several
//!                             services: service hashing depends on the
//!                             namespace); run the steps as user nobody
//! > args                      setup, run with the reference
//! $ args                      a step, run with each side
//! | text                      a line of stdin for the step above
//! |<no-eol>                   the stdin above ends without a newline
//! ! args                      a one-step case without setup
//! ```
//!
//! Arguments are split on white space; '...' quotes a word (possibly empty).

mod cases;
#[path = "../common/mod.rs"]
mod common;
mod runner;

use std::thread;
use std::time::Duration;

use cases::{file_cases, parse_cases, split_words, Case, Step, CASES};
use ipvsnl_test_support::client::talk;
use ipvsnl_test_support::commands::sh;
use ipvsnl_test_support::echo::Answer;
use ipvsnl_test_support::real_server::RealServers;
use runner::{check, run_case_unlocked, run_side, same_but_expiry, show, state, QUIET};

/// Bytes of the real server's answer in the live-counter case.
const REPLY_LEN: usize = 27;

#[test]
fn case_file_parses() {
    let all = parse_cases(CASES);
    assert!(all.len() >= 150, "only {} cases", all.len());
    for c in &all {
        assert!(!c.steps.is_empty(), "case {:?} has no step", c.name);
    }
    assert_eq!(split_words("-s '' -t 'a b'"), ["-s", "", "-t", "a b"]);
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn diff_command_line_errors() {
    check(&file_cases("errors"));
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn diff_kernel_errors() {
    check(&file_cases("kernel-errors"));
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn diff_changes() {
    check(&file_cases("changes"));
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn diff_listings() {
    check(&file_cases("listings"));
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn diff_restore() {
    check(&file_cases("restore"));
}

/// 1,000 services with two destinations each: restore, list, save.
#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn diff_thousand_services() {
    let mut rules = String::new();
    for i in 0..1000u32 {
        let vip = format!("10.{}.{}.1", 100 + i / 250, i % 250);
        let proto = ["-t", "-u", "--sctp-service"][(i % 3) as usize];
        rules.push_str(&format!("-A {proto} {vip}:{} -s rr\n", 80 + i % 7));
        for d in 1..=2 {
            rules.push_str(&format!(
                "-a {proto} {vip}:{} -r 192.168.{}.{d}:8080 -m -w {d}\n",
                80 + i % 7,
                i % 200
            ));
        }
    }
    let restore = |rules: &str| Step {
        args: vec!["-R".into()],
        stdin: Some(rules.to_owned()),
    };
    let step = |a: &str| Step {
        args: split_words(a),
        stdin: None,
    };
    let cases = vec![
        Case {
            name: "restore 1000 services".into(),
            samens: true,
            steps: vec![restore(&rules), step("-L -n"), step("-S -n")],
            ..Case::default()
        },
        Case {
            name: "list 1000 services".into(),
            samens: true,
            setup: vec![],
            steps: vec![
                restore(&rules),
                step("-L -n --stats"),
                step("-L -n --rate --exact"),
                step("-L -n --thresholds"),
                step("-L -n --persistent-conn"),
                step("-L -n --tun-info"),
                step("-L"),
                step("-S"),
            ],
            ..Case::default()
        },
    ];
    let _alone = QUIET.write().unwrap_or_else(|e| e.into_inner());
    let mut failures = 0;
    for case in &cases {
        let (a, b) = run_case_unlocked(case);
        if a != b {
            failures += 1;
            for (x, y) in a.iter().zip(&b) {
                if x != y {
                    eprintln!(
                        "case {:?}:\nreference:\n{}ours:\n{}",
                        case.name,
                        show(x),
                        show(y)
                    );
                }
            }
        }
    }
    eprintln!("{} differential cases, {failures} differ", cases.len());
    assert_eq!(failures, 0, "cases differ (shown above)");
}

/// A restore with bad lines: where ipvsadm stops at the first bad line
/// (after applying the lines before it), ours reports every bad line with
/// its number and changes nothing. The expectations are ours (see
/// crates/ipvsnl-ipvsadm/src/main.rs, `restore`); the reference's
/// behaviour is shown for contrast.
#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn restore_bad_lines_change_nothing() {
    struct Bad {
        input: &'static str,
        stderr: &'static str,
        status: i32,
    }
    let cases = [
        Bad {
            input: "-A -t 10.0.0.1:80\n# a comment\n-a -t 10.0.0.1:80 -r 10.0.1.1 -w x\n-A -t 10.0.0.2:80 --foo\n",
            stderr: "line 2: Try `ipvsadm -h' or 'ipvsadm --help' for more information.\n\
                     line 3: illegal weight specified\n\
                     line 4: --foo: unknown option\n",
            status: 255,
        },
        Bad {
            input: "-A -t 10.0.0.1:80\n-A -t 10.0.0.2\n-a -t 10.0.0.1:80 -r 10.0.1.1\n",
            stderr: "line 2: Zero port specified for non-persistent service\n",
            status: 2,
        },
        Bad {
            input: "-A -t 10.0.0.1:80\n\n-R\n",
            stderr: "line 3: Try `ipvsadm -h' or 'ipvsadm --help' for more information.\n",
            status: 255,
        },
        Bad {
            input: "-A -f 5 -6\n-A -6 -f 5\n-L -c -t 10.0.0.1:80\n",
            stderr: "line 2: -6 used before -f\n\n\
                     line 3: The option 'service-address' conflicts with the 'connection' option in the 'list' command\n",
            status: 2,
        },
    ];
    let handles: Vec<_> = cases
        .into_iter()
        .map(|c| {
            thread::spawn(move || {
                common::fresh_netns();
                let before = state();
                let ours = run_side(true, &["-R".to_owned()], Some(c.input), false);
                let after = state();
                assert_eq!(ours.stdout, "", "input {:?}", c.input);
                assert_eq!(ours.stderr, c.stderr, "input {:?}", c.input);
                assert_eq!(ours.status, Some(c.status), "input {:?}", c.input);
                assert_eq!(before, after, "input {:?} changed the state", c.input);
            })
        })
        .collect();
    for h in handles {
        h.join().expect("bad restore case");
    }
}

/// Live counters: real TCP traffic from the director's namespace through two
/// services (one persistent) to a listener in a second namespace over a veth
/// pair; then the listings that show counters, rates and connections must be
/// the same from both binaries. Both read the same live state, one after the
/// other; a rerun absorbs a counter that moved in between (the rate
/// estimator, a second of expiry time).
#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn diff_live_counters() {
    let _shared = QUIET.read().unwrap_or_else(|e| e.into_inner());
    let director = thread::spawn(move || {
        common::fresh_netns();
        // One real server, 10.9.0.2, behind a veth pair; each connection
        // answered with REPLY_LEN bytes once the client half-closes.
        let _server = RealServers::start(
            8080,
            1,
            Answer::AfterClose {
                reply_len: REPLY_LEN,
            },
        );
        sh("ip", &["addr", "add", "10.10.10.10/32", "dev", "lo"]);
        sh("ip", &["addr", "add", "10.10.10.11/32", "dev", "lo"]);
        for args in [
            "-A -t 10.10.10.10:80 -s rr",
            "-a -t 10.10.10.10:80 -r 10.9.0.2:8080 -m -w 2",
            "-A -t 10.10.10.11:80 -s wlc -p 120",
            "-a -t 10.10.10.11:80 -r 10.9.0.2:8080 -m",
        ] {
            let out = run_side(false, &split_words(args), None, false);
            assert_eq!(out.status, Some(0), "{args}: {}", out.stderr);
        }
        for i in 0..6 {
            let vip = if i % 2 == 0 {
                "10.10.10.10:80"
            } else {
                "10.10.10.11:80"
            };
            let reply = talk(vip, b"hello");
            assert_eq!(reply, vec![b'r'; REPLY_LEN], "reply through {vip}");
        }
        let mut failures = Vec::new();
        let commands = [
            "-L -n --stats",
            "-L -n --stats --exact",
            "-L -n --rate",
            "-L -n --rate --exact",
            "-L -n",
            "-L -n --persistent-conn",
            "-L -n --thresholds",
            "-L -n -c",
            "-L -n -c --persistent-conn",
            "-L -c",
            "-L --stats",
            "-S -n",
        ];
        for cmd in commands {
            let args = split_words(cmd);
            let mut last = None;
            for attempt in 0..10 {
                if attempt > 0 {
                    // Let the rate estimator (2 s period) settle between
                    // tries.
                    thread::sleep(Duration::from_millis(300));
                }
                // Both at once: they read /proc and the counters at the
                // same moment (name lookups can take seconds).
                let ours = {
                    let args = args.clone();
                    thread::spawn(move || run_side(true, &args, None, false))
                };
                let a = run_side(false, &args, None, false);
                let b = ours.join().expect("our side");
                if a == b || (cmd.contains("-c") && same_but_expiry(&a, &b)) {
                    assert!(
                        a.status == Some(0) && !a.stdout.is_empty(),
                        "{cmd}: {}",
                        show(&a)
                    );
                    last = None;
                    break;
                }
                last = Some((a, b));
            }
            if let Some((a, b)) = last {
                failures.push(format!("reference:\n{}ours:\n{}", show(&a), show(&b)));
            }
        }
        // The counters really moved.
        let stats = run_side(false, &split_words("-L -n --stats --exact"), None, false);
        assert!(
            !stats
                .stdout
                .contains("TCP  10.10.10.10:80                         0"),
            "no traffic counted:\n{}",
            stats.stdout
        );
        eprintln!(
            "{} live-counter cases, {} differ",
            commands.len(),
            failures.len()
        );
        failures
    });
    let failures = director.join().expect("director");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

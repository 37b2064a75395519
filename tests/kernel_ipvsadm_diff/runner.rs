//! Running a case: each side's binary in the thread's namespace, the
//! state a case left, both sides of a case and their comparison.

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::{mpsc, RwLock};
use std::thread;
use std::time::{Duration, Instant};

use super::cases::Case;
use crate::common;

/// How long one command may take (the VM emulates the CPU: slow).
pub const STEP_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub args: String,
    pub stdout: String,
    pub stderr: String,
    pub status: Option<i32>,
}

/// Runs one side's binary (`None`: the reference from PATH) with argv[0]
/// "ipvsadm" in the current thread's namespace.
pub fn run_side(ours: bool, args: &[String], stdin: Option<&str>, nobody: bool) -> Outcome {
    let mut cmd = if ours {
        let mut c = Command::new(common::tool("ipvsadm"));
        c.arg0("ipvsadm");
        c
    } else {
        Command::new("ipvsadm")
    };
    if nobody {
        cmd.uid(common::NOBODY).gid(common::NOBODY);
    }
    cmd.args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run ipvsadm (ours: {ours}): {e}"));
    if let Some(text) = stdin {
        let mut pipe = child.stdin.take().expect("stdin pipe");
        let text = text.to_owned();
        // Write from a thread: the child may not read all of it.
        thread::spawn(move || {
            let _ = pipe.write_all(text.as_bytes());
        });
    }
    let mut so = child.stdout.take().expect("stdout pipe");
    let mut se = child.stderr.take().expect("stderr pipe");
    let out_t = thread::spawn(move || {
        let mut v = Vec::new();
        let _ = so.read_to_end(&mut v);
        v
    });
    let err_t = thread::spawn(move || {
        let mut v = Vec::new();
        let _ = se.read_to_end(&mut v);
        v
    });
    // A hung command must not hang the VM: give up after STEP_TIMEOUT.
    let start = Instant::now();
    let status = loop {
        match child.try_wait().expect("wait for ipvsadm") {
            Some(st) => break st.code(),
            None if start.elapsed() > STEP_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                break Some(-999);
            }
            None => thread::sleep(Duration::from_millis(5)),
        }
    };
    let stdout = out_t.join().unwrap_or_default();
    let stderr = err_t.join().unwrap_or_default();
    Outcome {
        args: args.join(" "),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        status,
    }
}

pub fn reference(args: &[&str]) -> Outcome {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    run_side(false, &args, None, false)
}

/// A listing by the reference (`run`), run until two runs in a row give
/// the same: a dump read in parts repeats or skips services when other
/// namespaces (the other cases, run in parallel) change theirs between two
/// parts (see `common::ipvsadm_listing`). Ours lists whole, so only the
/// reference's side is read this way.
fn stable(run: impl FnMut() -> Outcome) -> Outcome {
    common::until_two_agree("the reference's listing", run)
}

/// The state the case left, read with the reference.
pub fn state() -> Vec<Outcome> {
    vec![
        stable(|| reference(&["-S", "-n"])),
        reference(&["-L", "-n", "--daemon"]),
        reference(&["-L", "-n", "--timeout"]),
    ]
}

pub fn setup(case: &Case) {
    for args in &case.setup {
        let out = run_side(false, args, None, false);
        assert!(
            out.status == Some(0),
            "case {:?}: setup `ipvsadm {}` failed: {}",
            case.name,
            out.args,
            out.stderr
        );
    }
}

pub fn reset() {
    reference(&["-C"]);
    reference(&["--stop-daemon", "master"]);
    reference(&["--stop-daemon", "backup"]);
    reference(&["--set", "900", "120", "300"]);
}

pub fn run_steps(case: &Case, ours: bool) -> Vec<Outcome> {
    let mut outs: Vec<Outcome> = case
        .steps
        .iter()
        .map(|s| {
            let run = || run_side(ours, &s.args, s.stdin.as_deref(), case.nobody);
            let args: Vec<&str> = s.args.iter().map(String::as_str).collect();
            if !ours && s.stdin.is_none() && common::is_service_listing(&args) {
                stable(run)
            } else {
                run()
            }
        })
        .collect();
    outs.extend(state());
    outs
}

/// The kernel's dumps resume by position in its global service table, so a
/// listing split over several reads skips or repeats services when other
/// namespaces change the table meanwhile (libnl reads in small pieces and
/// sees this often). Ordinary cases share this lock; the 1,000-service
/// cases take it alone.
pub static QUIET: RwLock<()> = RwLock::new(());

/// Both sides of a case: (reference, ours).
pub fn run_case(case: &Case) -> (Vec<Outcome>, Vec<Outcome>) {
    let _shared = QUIET.read().unwrap_or_else(|e| e.into_inner());
    run_case_unlocked(case)
}

pub fn run_case_unlocked(case: &Case) -> (Vec<Outcome>, Vec<Outcome>) {
    if case.samens {
        let case = case.clone();
        return thread::spawn(move || {
            common::fresh_netns();
            setup(&case);
            let a = run_steps(&case, false);
            reset();
            setup(&case);
            let b = run_steps(&case, true);
            (a, b)
        })
        .join()
        .unwrap_or_else(|_| panic!("case panicked"));
    }
    let (tx, rx) = mpsc::channel();
    let mut handles = Vec::new();
    for ours in [false, true] {
        let case = case.clone();
        let tx = tx.clone();
        handles.push(thread::spawn(move || {
            common::fresh_netns();
            setup(&case);
            tx.send((ours, run_steps(&case, ours))).expect("send");
        }));
    }
    drop(tx);
    for h in handles {
        if h.join().is_err() {
            panic!("case {:?} panicked", case.name);
        }
    }
    let mut a = None;
    let mut b = None;
    for (ours, outs) in rx {
        if ours {
            b = Some(outs);
        } else {
            a = Some(outs);
        }
    }
    (a.expect("reference side"), b.expect("our side"))
}

pub fn show(o: &Outcome) -> String {
    format!(
        "  `ipvsadm {}` -> {:?}\n  stdout:\n{}  stderr:\n{}",
        o.args,
        o.status,
        o.stdout.replace('\n', "$\n"),
        o.stderr.replace('\n', "$\n")
    )
}

/// Runs cases, in parallel a few at a time, and returns a report of those
/// that differ.
pub fn run_cases(cases: &[Case]) -> Vec<String> {
    let mut failures = Vec::new();
    for chunk in cases.chunks(4) {
        let handles: Vec<_> = chunk
            .iter()
            .cloned()
            .map(|case| {
                thread::spawn(move || {
                    // A difference that goes away on a rerun came from the
                    // dump quirk above; one that stays is real.
                    let mut result = run_case(&case);
                    for attempt in 1..3 {
                        if result.0 == result.1 {
                            break;
                        }
                        eprintln!("case {:?} differs, run {attempt} more time", case.name);
                        result = run_case(&case);
                    }
                    (case.name.clone(), result)
                })
            })
            .collect();
        for h in handles {
            let (name, (a, b)) = h.join().expect("case thread");
            if a != b {
                let mut report = format!("case {name:?} differs:\n");
                for (x, y) in a.iter().zip(&b) {
                    if x != y {
                        report.push_str(&format!("reference:\n{}ours:\n{}", show(x), show(y)));
                    }
                }
                // Shown as soon as known: a later hang must not hide it.
                eprintln!("{report}");
                failures.push(report);
            }
        }
    }
    failures
}

pub fn check(cases: &[Case]) {
    let failures = run_cases(cases);
    eprintln!(
        "{} differential cases, {} differ",
        cases.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} cases differ (shown above)",
        failures.len(),
        cases.len()
    );
}

/// Two connection listings that differ only in their expire columns, by at
/// most two seconds (the two binaries read /proc at slightly different
/// moments; the countdowns tick at different phases). The column layout is
/// still compared: the expire field keeps its width.
pub fn same_but_expiry(a: &Outcome, b: &Outcome) -> bool {
    if a.status != b.status || a.stderr != b.stderr {
        return false;
    }
    let (la, lb): (Vec<&str>, Vec<&str>) = (a.stdout.lines().collect(), b.stdout.lines().collect());
    if la.len() != lb.len() {
        return false;
    }
    let secs = |f: &str| -> Option<i64> {
        let (m, s) = f.split_once(':')?;
        Some(m.parse::<i64>().ok()? * 60 + s.parse::<i64>().ok()?)
    };
    la.iter().zip(&lb).all(|(x, y)| {
        if x == y {
            return true;
        }
        // "TCP 01:21  STATE ...": the expire field is bytes 4..10.
        if x.len() != y.len() || x.len() < 11 || x[..4] != y[..4] || x[10..] != y[10..] {
            return false;
        }
        match (secs(x[4..10].trim()), secs(y[4..10].trim())) {
            (Some(p), Some(q)) => (p - q).abs() <= 2,
            _ => false,
        }
    })
}

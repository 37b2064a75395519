//! The command check: exit status, the server in the environment, a
//! timeout that kills the command's whole process group.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ipvs_agent::check::{Failure, Outcome};

use crate::probe_support::probe;

const SERVER: &str = "127.0.0.1:8080";

fn command(argv: &[&str], extra: &str) -> String {
    let argv: Vec<String> = argv.iter().map(|a| format!("{a:?}")).collect();
    format!(
        r#"kind = "command", command = [{}]{extra}"#,
        argv.join(", ")
    )
}

async fn run(argv: &[&str], extra: &str) -> Outcome {
    probe(SERVER.parse().unwrap(), &command(argv, extra)).await
}

#[tokio::test]
async fn exit_zero_passes_and_another_status_fails_with_it() {
    assert_eq!(run(&["/bin/sh", "-c", "exit 0"], "").await, Outcome::Pass);
    assert_eq!(
        run(&["/bin/sh", "-c", "exit 3"], "").await,
        Outcome::Fail(Failure::Exit(Some(3)))
    );
    assert_eq!(
        run(&["/bin/sh", "-c", "kill -TERM $$"], "").await,
        Outcome::Fail(Failure::Exit(None))
    );
}

#[tokio::test]
async fn the_server_is_in_the_environment() {
    let script =
        r#"test "$IPVS_AGENT_SERVER_ADDRESS" = 127.0.0.1 && test "$IPVS_AGENT_SERVER_PORT" = 8080"#;
    assert_eq!(run(&["/bin/sh", "-c", script], "").await, Outcome::Pass);
    let script = r#"test "$IPVS_AGENT_SERVER_PORT" = 8081"#;
    assert_eq!(
        run(&["/bin/sh", "-c", script], "").await,
        Outcome::Fail(Failure::Exit(Some(1)))
    );
}

#[tokio::test]
async fn arguments_reach_the_program_without_a_shell() {
    // `$HOME` and `;` are two plain arguments, not expanded.
    let script = r#"test "$1" = '$HOME' && test "$2" = ';'"#;
    assert_eq!(
        run(&["/bin/sh", "-c", script, "sh", "$HOME", ";"], "").await,
        Outcome::Pass
    );
}

#[tokio::test]
async fn a_program_that_cannot_run_says_why() {
    match run(&["/nonexistent/check"], "").await {
        Outcome::Fail(Failure::Other(why)) => {
            assert!(why.starts_with("cannot run /nonexistent/check: "), "{why}");
        }
        other => panic!("{other:?}"),
    }
}

/// A scratch file's path, unique to this test process and name.
fn scratch(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("ipvs-agent-{}-{name}", std::process::id()))
}

/// The state letter of process `pid` (`Z` zombie), `None` once it is gone.
fn state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "PID (COMM) S ...": the state follows the command's closing paren.
    stat.rsplit_once(") ")?.1.chars().next()
}

/// Waits (10 s at most) until `pid` is dead: gone, or a zombie its new
/// parent has yet to reap.
fn wait_dead(pid: u32) -> bool {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        if matches!(state(pid), None | Some('Z')) {
            return true;
        }
        if Instant::now() > until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn pids(file: &Path) -> (u32, u32) {
    let text = std::fs::read_to_string(file).expect("the command wrote its pids");
    let mut it = text.split_whitespace().map(|p| p.parse::<u32>().unwrap());
    (it.next().unwrap(), it.next().unwrap())
}

#[tokio::test]
async fn a_timeout_kills_the_command_and_what_it_started() {
    let file = scratch("timeout");
    let _ = std::fs::remove_file(&file);
    // The shell starts a grandchild in its group, writes both pids, waits.
    let script = format!("sleep 600 & echo $$ $! > {}; wait", file.display());
    let argv = ["/bin/sh", "-c", &script];
    let check = run(&argv, r#", timeout = "2s", interval = "3s""#);
    // Were the group not killed, the shell would wait for its sleep and
    // the check would not end: a generous bound turns that into a failure.
    let outcome = tokio::time::timeout(Duration::from_secs(60), check)
        .await
        .expect("the check ends soon after its timeout");
    assert_eq!(outcome, Outcome::Fail(Failure::Timeout));
    let (shell, sleep) = pids(&file);
    let _ = std::fs::remove_file(&file);
    // The timeout is reported at once; the shell is reaped in the
    // background (not left a zombie of ours), the grandchild killed with it.
    let until = Instant::now() + Duration::from_secs(10);
    while state(shell).is_some() && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(state(shell), None, "the shell is still there");
    assert!(
        wait_dead(sleep),
        "the grandchild survived: {:?}",
        state(sleep)
    );
}

#[tokio::test]
async fn a_dropped_check_kills_the_group_too() {
    let file = scratch("dropped");
    let _ = std::fs::remove_file(&file);
    let script = format!(
        "sleep 600 & echo $$ $! > {}.tmp; mv {0}.tmp {0}; wait",
        file.display()
    );
    let table = command(
        &["/bin/sh", "-c", &script],
        r#", timeout = "30s", interval = "1m""#,
    );
    let check = probe(SERVER.parse().unwrap(), &table);
    // The daemon gives up on the check (a reload, a shutdown) once the
    // command has started its grandchild.
    let watch = async {
        while !file.exists() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::select! {
        o = check => panic!("the check ended first: {o:?}"),
        () = watch => {}
    }
    let (shell, sleep) = pids(&file);
    let _ = std::fs::remove_file(&file);
    assert!(
        wait_dead(sleep),
        "the grandchild survived: {:?}",
        state(sleep)
    );
    assert!(wait_dead(shell), "the shell survived: {:?}", state(shell));
}

#[tokio::test]
async fn what_a_command_leaves_behind_is_killed_when_it_exits() {
    let file = scratch("leftover");
    let _ = std::fs::remove_file(&file);
    // The shell starts a sleeper in its group, writes both pids and exits
    // at once: a pass, and the sleeper must not outlive the check.
    let script = format!("sleep 600 & echo $$ $! > {}", file.display());
    let outcome = run(
        &["/bin/sh", "-c", &script],
        r#", timeout = "10s", interval = "20s""#,
    )
    .await;
    assert_eq!(outcome, Outcome::Pass);
    let (shell, sleep) = pids(&file);
    let _ = std::fs::remove_file(&file);
    assert_eq!(state(shell), None, "the shell is still there");
    assert!(wait_dead(sleep), "the sleeper survived: {:?}", state(sleep));
}

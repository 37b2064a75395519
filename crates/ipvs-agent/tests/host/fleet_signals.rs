//! Signals while fleet mode waits for etcd: a SIGHUP does not end the
//! process (nothing to reload yet), a SIGTERM ends it at once, exit 0.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn signal(child: &Child, sig: libc::c_int) {
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    // SAFETY: kill only sends a signal, to our own unreaped child.
    assert_eq!(unsafe { libc::kill(pid, sig) }, 0);
}

/// Waits up to `limit` for the child's exit.
fn exited(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

#[test]
fn a_sighup_while_waiting_for_etcd_is_survived_and_a_sigterm_ends_it() {
    // An "etcd" that accepts connections and never answers: the agent
    // waits for it.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", silent.local_addr().unwrap());
    let mut child = Command::new(env!("CARGO_BIN_EXE_ipvs-agent"))
        .args(["run", "--etcd", &endpoint, "--no-http"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the agent");
    // Let it start and begin its wait.
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        exited(&mut child, Duration::ZERO).is_none(),
        "it did not wait for etcd"
    );
    signal(&child, libc::SIGHUP);
    let after_hup = exited(&mut child, Duration::from_millis(500));
    if let Some(status) = after_hup {
        let out = child.wait_with_output().unwrap();
        panic!(
            "a SIGHUP ended it: {status:?}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    signal(&child, libc::SIGTERM);
    let status = exited(&mut child, Duration::from_secs(5));
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(status.and_then(|s| s.code()), Some(0), "{stderr}");
    assert!(stderr.contains("SIGHUP before the agent runs"), "{stderr}");
    assert!(
        stderr.contains("SIGTERM while waiting for etcd: stopping"),
        "{stderr}"
    );
    drop(silent);
}

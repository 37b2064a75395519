//! Programs run in the calling thread's namespace (`ip`, `modprobe`,
//! `ipvsadm`): a child process inherits its parent thread's namespace.
//!
//! ```no_run
//! use ipvsnl_test_support::commands::{ip_batch, sh};
//! ipvsnl_test_support::netns::fresh_netns();
//! sh("ip", &["link", "add", "d0", "type", "dummy"]);
//! ip_batch(&["addr add 10.0.0.1/24 dev d0".to_string(), "link set d0 up".to_string()]);
//! ```

use std::ffi::OsStr;
use std::process::{Command, Output};

/// Runs a program from PATH in the current thread's namespace and returns
/// its output. Panics if it cannot be started.
pub fn run<S: AsRef<OsStr>>(program: &str, args: &[S]) -> Output {
    Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"))
}

/// Runs `program args` and panics with its stderr if it fails.
pub fn sh(program: &str, args: &[&str]) {
    let out = run(program, args);
    assert!(
        out.status.success(),
        "{program} {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs iproute2's `ip -batch -` with `commands`, one per line, in the
/// calling thread's namespace; panics naming the line that failed.
pub fn ip_batch(commands: &[String]) {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new("ip")
        .args(["-batch", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run ip: {e}"));
    let script = commands.join("\n") + "\n";
    child
        .stdin
        .take()
        .expect("ip's stdin")
        .write_all(script.as_bytes())
        .expect("write ip's commands");
    let out = child.wait_with_output().expect("wait for ip");
    assert!(
        out.status.success(),
        "ip -batch failed: {}\n--- commands:\n{script}",
        String::from_utf8_lossy(&out.stderr)
    );
}

//! The command check: a program run without a shell, the server in its
//! environment, in a process group of its own so that a timeout kills
//! whatever it started, and what it leaves behind when it exits is killed
//! too (a check is its command's whole work, never a daemon's start).
//! A command killed at its timeout is reported at once and reaped in the
//! background (`probe/lingering.rs`): one that cannot die yet does not
//! hold its check's result, nor get a second run beside it.

use std::io;
use std::net::SocketAddr;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use tokio::process::{Child, Command};

use crate::check::{Failure, Outcome};
use crate::probe::failure::io_outcome;
use crate::probe::lingering::Lingering;

/// The environment variable holding the server's address.
pub(crate) const ENV_ADDRESS: &str = "IPVS_AGENT_SERVER_ADDRESS";
/// The environment variable holding the server's port.
pub(crate) const ENV_PORT: &str = "IPVS_AGENT_SERVER_PORT";

/// Runs `argv` for `server`: exit status 0 within `timeout` passes. On
/// timeout (or when the check is dropped) the command's process group is
/// killed; on timeout the failure is reported at once and the command
/// reaped in the background, `argv` not run again for `server` until it
/// is. When the command exits, what is left of its group (a background
/// process it started) is killed.
pub(crate) async fn check(
    server: SocketAddr,
    argv: &[String],
    timeout: Duration,
    lingering: &Arc<Lingering>,
) -> Outcome {
    let Some((program, args)) = argv.split_first() else {
        return Outcome::Fail(Failure::Other("the command is empty".into()));
    };
    let key = (server, argv.to_vec());
    if let Some(pid) = lingering.pid_of(&key) {
        return Outcome::Fail(Failure::Other(format!(
            "not run: its last run (pid {pid}) was killed at its timeout and has not exited yet"
        )));
    }
    let spawned = Command::new(program)
        .args(args)
        .env(ENV_ADDRESS, server.ip().to_string())
        .env(ENV_PORT, server.port().to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .kill_on_drop(true)
        .spawn();
    let child = match spawned {
        Ok(c) => c,
        Err(e) => return spawn_failure(program, &e),
    };
    let mut group = Group::new(child);
    let status = match tokio::time::timeout(timeout, group.child.wait()).await {
        Ok(status) => status,
        Err(_) => {
            group.kill();
            // SIGKILL cannot be caught, but a process in uninterruptible
            // sleep takes it only when it wakes: reaped in the background.
            if let Some(pid) = group.child.id() {
                lingering.reap(key, pid, async move {
                    let _ = group.child.wait().await;
                    group.reaped();
                });
            }
            return Outcome::Fail(Failure::Timeout);
        }
    };
    group.leader_exited();
    match status {
        Ok(s) if s.success() => Outcome::Pass,
        Ok(s) => Outcome::Fail(Failure::Exit(s.code())),
        Err(e) => Outcome::Fail(Failure::Other(format!("waiting for {program}: {e}"))),
    }
}

/// A command that could not be started: the director's shortage
/// (descriptors, memory, processes: `EAGAIN` from `fork`) is inconclusive;
/// anything else (no such program, not executable) is the check's failure.
fn spawn_failure(program: &str, e: &io::Error) -> Outcome {
    let doing = format!("cannot run {program}");
    if e.raw_os_error() == Some(libc::EAGAIN) {
        return Outcome::Inconclusive(format!("{doing}: {e}"));
    }
    match io_outcome(&doing, e) {
        Outcome::Fail(Failure::Refused) => Outcome::Fail(Failure::Other(format!("{doing}: {e}"))),
        outcome => outcome,
    }
}

/// A running command and its process group (whose id is its pid): dropped
/// before the command is reaped, the group is killed; the child itself is
/// then reaped by tokio (`kill_on_drop`).
struct Group {
    child: Child,
    /// The group's id while its leader is unreaped (so the id cannot have
    /// been reused).
    pgid: Option<libc::pid_t>,
}

impl Group {
    fn new(child: Child) -> Self {
        // A pid is positive; 0 would be our own group.
        let pgid = child
            .id()
            .and_then(|p| libc::pid_t::try_from(p).ok())
            .filter(|&p| p > 0);
        Group { child, pgid }
    }

    /// Kills every process of the group.
    fn kill(&mut self) {
        if let Some(pgid) = self.pgid {
            kill_group(pgid);
        }
    }

    /// The leader is reaped: its group id may be reused from now on.
    fn reaped(&mut self) {
        self.pgid = None;
    }

    /// The leader exited and was reaped: what is left of its group is
    /// killed. While any member is left, the group holds its id (the
    /// kernel gives no new process a number still used as a group's), so
    /// the signal reaches that group. With no member left, the number is
    /// free again; the signal then finds nothing (ESRCH) unless a new
    /// process took the number and made itself a group leader in the
    /// microseconds since the reaping, which needs the whole pid space to
    /// wrap around in between.
    fn leader_exited(&mut self) {
        if let Some(pgid) = self.pgid.take() {
            kill_group(pgid);
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill();
    }
}

/// SIGKILL to every process of group `pgid`. A group already gone (ESRCH)
/// is fine.
fn kill_group(pgid: libc::pid_t) {
    // SAFETY: killpg only sends a signal; it reads and writes no memory of
    // ours. `pgid` is the group of a child we spawned with
    // `process_group(0)`: unreaped, or just reaped (see
    // `Group::leader_exited` for why the id is still that group's).
    unsafe {
        libc::killpg(pgid, libc::SIGKILL);
    }
}

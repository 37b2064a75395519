//! The signals a daemon takes: SIGHUP reloads, SIGTERM and SIGINT stop,
//! and a second SIGTERM or SIGINT exits at once.
//!
//! They are taken from the process's first moments ([`Signals::install`]),
//! not from when the agent runs: fleet mode waits for etcd first, for as
//! long as it takes, and a SIGHUP's default action (the end of the
//! process) in that window would kill a director that a configuration
//! manager merely told to reload.

use tokio::signal::unix::{signal, Signal, SignalKind};

use crate::daemon::control::Handle;

/// The exit status after a second SIGTERM or SIGINT: 128 + SIGTERM's
/// number, as a shell reports a process a SIGTERM ended.
pub const FORCED_EXIT: i32 = 128 + libc::SIGTERM;

/// SIGHUP, SIGTERM and SIGINT, taken from the process (their default
/// actions no longer apply).
#[derive(Debug)]
pub struct Signals {
    hup: Signal,
    term: Signal,
    int: Signal,
}

/// What a signal asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Asked {
    Reload,
    Stop(&'static str),
}

impl Signals {
    /// Takes the three signals. Called within a tokio runtime (its
    /// context entered). `Err` when a handler cannot be installed.
    pub fn install() -> std::io::Result<Self> {
        Ok(Signals {
            hup: signal(SignalKind::hangup())?,
            term: signal(SignalKind::terminate())?,
            int: signal(SignalKind::interrupt())?,
        })
    }

    async fn next(&mut self) -> Asked {
        tokio::select! {
            _ = self.hup.recv() => Asked::Reload,
            _ = self.term.recv() => Asked::Stop("SIGTERM"),
            _ = self.int.recv() => Asked::Stop("SIGINT"),
        }
    }

    /// Before the agent runs (fleet mode waiting for etcd): ends at the
    /// first SIGTERM or SIGINT, giving its name; a SIGHUP is logged and
    /// has nothing to reload yet.
    pub async fn stop_before_start(&mut self) -> &'static str {
        loop {
            match self.next().await {
                Asked::Stop(name) => return name,
                Asked::Reload => {
                    tracing::info!("SIGHUP before the agent runs: nothing to reload yet")
                }
            }
        }
    }
}

/// Turns signals into calls on `handle` until the agent stops: SIGHUP
/// reloads, SIGTERM and SIGINT stop (the sync in flight ends first, at
/// most 10 s); a second SIGTERM or SIGINT exits the process at once with
/// [`FORCED_EXIT`], the table left as it is.
pub async fn forward_signals(handle: Handle, mut signals: Signals) {
    let mut stopping = false;
    loop {
        match signals.next().await {
            Asked::Reload => {
                tracing::info!("SIGHUP: reloading");
                handle.reload().await;
            }
            Asked::Stop(name) if stopping => {
                tracing::warn!(
                    "second {name}: exiting now, the sync in flight and any removal not waited for"
                );
                std::process::exit(FORCED_EXIT);
            }
            Asked::Stop(name) => {
                tracing::info!("{name}: stopping");
                stopping = true;
                handle.stop();
            }
        }
    }
}

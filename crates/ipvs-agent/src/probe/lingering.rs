//! Command checks killed at their timeout but not yet reaped: a process in
//! uninterruptible sleep (a hung NFS mount, a dying disk) takes SIGKILL
//! only when it wakes, which may be never. Its check reports the timeout
//! at once and is reaped here in the background; until it is, its server's
//! command is not run again, so that stuck runs cannot pile up one an
//! interval.

use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

/// One command check: the server and the command run for it.
pub(crate) type RunKey = (SocketAddr, Vec<String>);

/// The command checks whose last run is killed but not yet reaped, each
/// with that run's process id.
#[derive(Debug, Default)]
pub(crate) struct Lingering {
    runs: Mutex<HashMap<RunKey, u32>>,
}

impl Lingering {
    /// The process id of `key`'s last run, while it is unreaped.
    pub(crate) fn pid_of(&self, key: &RunKey) -> Option<u32> {
        self.lock().get(key).copied()
    }

    /// `key`'s run `pid`, killed, is reaped by `reaped` (a future that
    /// ends when it is) on a task of its own; `key` is free again then.
    pub(crate) fn reap(
        self: &Arc<Self>,
        key: RunKey,
        pid: u32,
        reaped: impl Future<Output = ()> + Send + 'static,
    ) {
        self.lock().insert(key.clone(), pid);
        let this = Arc::clone(self);
        tokio::spawn(async move {
            reaped.await;
            this.lock().remove(&key);
        });
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<RunKey, u32>> {
        // A panic elsewhere cannot leave the map half-changed: each use is
        // one insert, get or remove.
        self.runs.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_run_is_held_until_it_is_reaped() {
        let lingering = Arc::new(Lingering::default());
        let key: RunKey = ("10.0.0.1:80".parse().unwrap(), vec!["/bin/check".into()]);
        let other: RunKey = ("10.0.0.2:80".parse().unwrap(), vec!["/bin/check".into()]);
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        lingering.reap(key.clone(), 4242, async move {
            let _ = rx.await;
        });
        assert_eq!(lingering.pid_of(&key), Some(4242));
        assert_eq!(lingering.pid_of(&other), None);
        // Still unreaped after the scheduler has run the reaper.
        tokio::task::yield_now().await;
        assert_eq!(lingering.pid_of(&key), Some(4242));
        tx.send(()).unwrap();
        for _ in 0..100 {
            if lingering.pid_of(&key).is_none() {
                return;
            }
            tokio::task::yield_now().await;
        }
        panic!("still held after it was reaped");
    }
}

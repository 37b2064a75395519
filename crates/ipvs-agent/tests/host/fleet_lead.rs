//! The leader's actions on each change of role, on the emulated kernel
//! with addresses recorded by the test: a new leader takes its VIPs
//! before its sync daemon becomes master, one stepping down drops them
//! while its daemon is still master; the VIPs released when the election ends.

use std::sync::{Arc, Mutex};

use ipvs_agent::fleet::leader::actions::{lead, Addresses};
use ipvs_agent::fleet::leader::election::Status;
use ipvs_agent::fleet::leader::state_machine::Role;
use ipvs_agent::fleet::leader::sync_daemon::SyncRoles;
use ipvsnl::emulator::Kernel;
use ipvsnl::{AsyncClient, DaemonRole};
use tokio::sync::watch;
use tokio::time::Instant;

/// Each call, with the sync daemons running at that moment.
type Log = Arc<Mutex<Vec<(&'static str, Vec<DaemonRole>)>>>;

/// Records each call in its log.
struct Recorded {
    kernel: Kernel,
    log: Log,
}

impl Recorded {
    fn note(&self, what: &'static str) {
        let running = self
            .kernel
            .init_netns()
            .sync_daemons()
            .into_iter()
            .map(|d| d.role)
            .collect();
        self.log.lock().unwrap().push((what, running));
    }
}

impl Addresses for Recorded {
    fn hold(&mut self) -> Result<(), String> {
        self.note("hold");
        Ok(())
    }
    fn release(&mut self) -> Result<(), String> {
        self.note("release");
        Ok(())
    }
}

#[tokio::test]
async fn each_role_is_applied_in_order_and_the_vips_released_at_the_end() {
    let kernel = Kernel::new();
    kernel.init_netns().add_link("eth1", 1500);
    let log = Arc::new(Mutex::new(Vec::new()));
    let addresses = Recorded {
        kernel: kernel.clone(),
        log: log.clone(),
    };
    let (tx, rx) = watch::channel(Status::new(Role::Follower, Instant::now()));
    let task = tokio::spawn(lead(
        rx,
        addresses,
        Some(SyncRoles::new("eth1", 9)),
        AsyncClient::emulated(&kernel),
    ));
    // Waits until the addresses saw `n` calls and the sync daemon `role`
    // runs (the role applied whole), so that no change is coalesced.
    let applied = |n: usize, role: DaemonRole| {
        let (log, kernel) = (log.clone(), kernel.clone());
        async move {
            let done = || {
                let running = kernel.init_netns().sync_daemons();
                log.lock().unwrap().len() == n && running.len() == 1 && running[0].role == role
            };
            tokio::time::timeout(std::time::Duration::from_secs(5), async {
                while !done() {
                    tokio::task::yield_now().await;
                }
            })
            .await
            .expect("the role applied");
        }
    };
    applied(1, DaemonRole::Backup).await;
    tx.send(Status::new(Role::Leader, Instant::now())).unwrap();
    applied(2, DaemonRole::Master).await;
    tx.send(Status::new(Role::Follower, Instant::now()))
        .unwrap();
    applied(3, DaemonRole::Backup).await;
    drop(tx);
    task.await.unwrap();
    use DaemonRole::{Backup, Master};
    assert_eq!(
        *log.lock().unwrap(),
        [
            // Start as follower: release (nothing yet), then backup.
            ("release", vec![]),
            // Leader: the VIPs while still backup, then master.
            ("hold", vec![Backup]),
            // Follower: the VIPs dropped while still master.
            ("release", vec![Master]),
            // The election ended.
            ("release", vec![Backup]),
        ]
    );
    let running: Vec<_> = kernel
        .init_netns()
        .sync_daemons()
        .into_iter()
        .map(|d| (d.role, d.sync_id))
        .collect();
    assert_eq!(running, [(Backup, 9)]);
}

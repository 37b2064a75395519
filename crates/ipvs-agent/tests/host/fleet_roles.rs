//! The sync daemon's role on the emulated kernel: backup for a follower,
//! master for the leader, switched on each change, idempotent, a refused
//! start leaving the daemons as they were.

use ipvs_agent::fleet::leader::state_machine::Role;
use ipvs_agent::fleet::leader::sync_daemon::{Switched, SyncRoles};
use ipvsnl::emulator::Kernel;
use ipvsnl::{AsyncClient, DaemonRole, SyncDaemon};

fn kernel() -> Kernel {
    let kernel = Kernel::new();
    kernel.init_netns().add_link("eth1", 1500);
    kernel
}

/// The running daemons as (role, interface, sync id).
fn running(kernel: &Kernel) -> Vec<(DaemonRole, String, u32)> {
    kernel
        .init_netns()
        .sync_daemons()
        .into_iter()
        .map(|d| (d.role, d.interface, d.sync_id))
        .collect()
}

#[tokio::test]
async fn a_follower_runs_backup_and_a_leader_master_switched_each_way() {
    let kernel = kernel();
    let mut client = AsyncClient::emulated(&kernel);
    let roles = SyncRoles::new("eth1", 7);
    let s = roles.apply(&mut client, Role::Follower).await.unwrap();
    assert_eq!(
        (s.started, s.stopped),
        (Some(DaemonRole::Backup), [None, None])
    );
    assert_eq!(running(&kernel), [(DaemonRole::Backup, "eth1".into(), 7)]);

    let s = roles.apply(&mut client, Role::Leader).await.unwrap();
    assert_eq!(
        (s.started, s.stopped),
        (Some(DaemonRole::Master), [None, Some(DaemonRole::Backup)])
    );
    assert_eq!(running(&kernel), [(DaemonRole::Master, "eth1".into(), 7)]);

    let s = roles.apply(&mut client, Role::Follower).await.unwrap();
    assert_eq!(
        (s.started, s.stopped),
        (Some(DaemonRole::Backup), [None, Some(DaemonRole::Master)])
    );
    assert_eq!(running(&kernel), [(DaemonRole::Backup, "eth1".into(), 7)]);
}

#[tokio::test]
async fn applying_the_same_role_again_does_nothing() {
    let kernel = kernel();
    let mut client = AsyncClient::emulated(&kernel);
    let roles = SyncRoles::new("eth1", 7);
    for role in [Role::Leader, Role::Follower] {
        roles.apply(&mut client, role).await.unwrap();
        let before = kernel.init_netns().sync_daemons();
        let s = roles.apply(&mut client, role).await.unwrap();
        assert_eq!(s, Switched::default());
        assert_eq!(kernel.init_netns().sync_daemons(), before);
    }
}

#[tokio::test]
async fn a_daemon_with_other_settings_is_restarted_with_ours() {
    let kernel = kernel();
    kernel.init_netns().add_link("eth2", 1500);
    let mut client = AsyncClient::emulated(&kernel);
    let other = SyncDaemon::new(DaemonRole::Backup, "eth2").with_sync_id(3);
    client.start_sync_daemon(&other).await.unwrap();
    let s = SyncRoles::new("eth1", 7)
        .apply(&mut client, Role::Follower)
        .await
        .unwrap();
    assert_eq!(
        (s.started, s.stopped),
        (Some(DaemonRole::Backup), [Some(DaemonRole::Backup), None])
    );
    assert_eq!(running(&kernel), [(DaemonRole::Backup, "eth1".into(), 7)]);
}

#[tokio::test]
async fn a_refused_start_names_it_and_leaves_the_daemons_as_they_were() {
    let kernel = kernel();
    let mut client = AsyncClient::emulated(&kernel);
    SyncRoles::new("eth1", 7)
        .apply(&mut client, Role::Follower)
        .await
        .unwrap();
    let e = SyncRoles::new("nosuch0", 7)
        .apply(&mut client, Role::Leader)
        .await
        .unwrap_err();
    let text = e.to_string();
    assert!(
        text.starts_with("sync daemon: start master on nosuch0 (sync id 7): "),
        "{text}"
    );
    assert_eq!(e.source.errno(), Some(libc::ENODEV));
    assert_eq!(running(&kernel), [(DaemonRole::Backup, "eth1".into(), 7)]);
}

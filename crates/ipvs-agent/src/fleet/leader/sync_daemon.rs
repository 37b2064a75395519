//! The kernel's connection-sync daemon in the role the fleet gives this
//! agent: the leader runs it as master (it sends its connections), the
//! followers as backup (they receive them, so that one that takes over
//! knows the connections the old leader had).
//!
//! A switch starts the wanted role first and then stops the other (the
//! kernel runs a master and a backup side by side), so a start the kernel
//! refuses leaves the daemon as it was. Stops go through the library's
//! `stop_sync_daemon`, which is answered even when the kernel says nothing
//! (a stop right after a start, on 6.1 and 6.12: docs/KERNEL.md).
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use ipvs_agent::fleet::leader::state_machine::Role;
//! use ipvs_agent::fleet::leader::sync_daemon::SyncRoles;
//! use ipvsnl::emulator::Kernel;
//! use ipvsnl::{AsyncClient, DaemonRole};
//!
//! let kernel = Kernel::new();
//! kernel.init_netns().add_link("eth1", 1500);
//! let mut client = AsyncClient::emulated(&kernel);
//! let roles = SyncRoles::new("eth1", 7);
//! roles.apply(&mut client, Role::Leader).await.unwrap();
//! let running = kernel.init_netns().sync_daemons();
//! assert_eq!((running.len(), running[0].role), (1, DaemonRole::Master));
//! # });
//! ```

use std::fmt;

use ipvsnl::{AsyncClient, DaemonRole, SyncDaemon};

use crate::fleet::leader::state_machine::Role;

/// The sync daemon's settings: the interface it multicasts on and the
/// fleet's sync id (the same on every director).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SyncRoles {
    /// The interface.
    pub interface: String,
    /// The sync id.
    pub sync_id: u32,
}

/// What a switch did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Switched {
    /// The role started, if one was.
    pub started: Option<DaemonRole>,
    /// The roles stopped (the other role's daemon, or the wanted one's
    /// with other settings).
    pub stopped: [Option<DaemonRole>; 2],
}

/// A switch that failed: what was being done, and the kernel's error.
#[derive(Debug)]
#[non_exhaustive]
pub struct SyncRoleError {
    /// What was being done ("start master on eth1 (sync id 7)").
    pub doing: String,
    /// The library's error.
    pub source: ipvsnl::Error,
}

impl fmt::Display for SyncRoleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sync daemon: {}: {}", self.doing, self.source)
    }
}

impl std::error::Error for SyncRoleError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

fn name(role: DaemonRole) -> &'static str {
    match role {
        DaemonRole::Master => "master",
        _ => "backup",
    }
}

impl SyncRoles {
    /// The daemon on `interface` with `sync_id`.
    pub fn new(interface: impl Into<String>, sync_id: u32) -> SyncRoles {
        SyncRoles {
            interface: interface.into(),
            sync_id,
        }
    }

    /// The daemon of the fleet role: master for the leader, else backup.
    pub fn daemon(&self, role: Role) -> SyncDaemon {
        let role = match role {
            Role::Leader => DaemonRole::Master,
            Role::Follower => DaemonRole::Backup,
        };
        SyncDaemon::new(role, self.interface.clone()).with_sync_id(self.sync_id)
    }

    /// Makes the kernel's daemons those of `role`: the wanted one running
    /// with these settings, the other stopped. Idempotent.
    pub async fn apply(
        &self,
        client: &mut AsyncClient,
        role: Role,
    ) -> Result<Switched, SyncRoleError> {
        let wanted = self.daemon(role);
        let other = match wanted.role {
            DaemonRole::Master => DaemonRole::Backup,
            _ => DaemonRole::Master,
        };
        let running = client
            .sync_daemons()
            .await
            .map_err(|source| SyncRoleError {
                doing: "list the running daemons".into(),
                source,
            })?;
        let mut done = Switched::default();
        let current = running.iter().find(|d| d.role == wanted.role);
        let same =
            current.is_some_and(|d| d.interface == wanted.interface && d.sync_id == wanted.sync_id);
        if !same {
            if current.is_some() {
                self.stop(client, wanted.role).await?;
                done.stopped[0] = Some(wanted.role);
            }
            client
                .start_sync_daemon(&wanted)
                .await
                .map_err(|source| SyncRoleError {
                    doing: format!(
                        "start {} on {} (sync id {})",
                        name(wanted.role),
                        self.interface,
                        self.sync_id
                    ),
                    source,
                })?;
            done.started = Some(wanted.role);
        }
        if running.iter().any(|d| d.role == other) {
            self.stop(client, other).await?;
            done.stopped[1] = Some(other);
        }
        Ok(done)
    }

    /// Stops the daemon of `role`; one already gone (`ESRCH`) is stopped.
    async fn stop(&self, client: &mut AsyncClient, role: DaemonRole) -> Result<(), SyncRoleError> {
        match client.stop_sync_daemon(role).await {
            Err(e) if e.errno() != Some(libc::ESRCH) => Err(SyncRoleError {
                doing: format!("stop {}", name(role)),
                source: e,
            }),
            _ => Ok(()),
        }
    }
}

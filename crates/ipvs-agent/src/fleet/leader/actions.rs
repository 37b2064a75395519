//! The leader's actions on each change of role: the VIPs and the sync
//! daemon, in the order [`Role::actions`] gives (a new leader takes its
//! VIPs first, a leader stepping down drops them first), applied as the
//! [`Election`](crate::fleet::leader::election::Election)'s status changes.

use ipvsnl::AsyncClient;
use tokio::sync::watch;

use crate::fleet::leader::election::Status;
use crate::fleet::leader::state_machine::{Action, Role};
use crate::fleet::leader::sync_daemon::SyncRoles;
use crate::fleet::vip::addresses::Vips;

/// Where the VIPs go: [`Vips`] on a real interface, something else in tests.
pub trait Addresses: Send {
    /// Adds them all.
    fn hold(&mut self) -> Result<(), String>;
    /// Removes those this agent added.
    fn release(&mut self) -> Result<(), String>;
}

impl Addresses for Vips {
    fn hold(&mut self) -> Result<(), String> {
        let held = Vips::hold(self).map_err(|e| e.to_string())?;
        for e in &held.announce_errors {
            tracing::warn!(error = %e, "fleet: announcing a VIP failed (gratuitous ARP or neighbour advertisement)");
        }
        Ok(())
    }

    fn release(&mut self) -> Result<(), String> {
        Vips::release(self).map(drop).map_err(|e| e.to_string())
    }
}

/// Applies the role `status` says, now and on each change, until the
/// election ends; then releases the VIPs. Failures are logged and the
/// next change tries again (a role is applied whole each time).
pub async fn lead(
    mut status: watch::Receiver<Status>,
    mut addresses: impl Addresses,
    roles: Option<SyncRoles>,
    mut client: AsyncClient,
) {
    let mut applied = None;
    loop {
        let role = status.borrow_and_update().role;
        if applied != Some(role) {
            apply(role, &mut addresses, roles.as_ref(), &mut client).await;
            applied = Some(role);
        }
        if status.changed().await.is_err() {
            if let Err(e) = addresses.release() {
                tracing::error!(error = %e, "fleet: cannot release the VIPs");
            }
            return;
        }
    }
}

/// Takes `role`: its actions in order.
pub async fn apply(
    role: Role,
    addresses: &mut impl Addresses,
    roles: Option<&SyncRoles>,
    client: &mut AsyncClient,
) {
    for action in role.actions() {
        let result = match action {
            Action::HoldVips => addresses.hold(),
            Action::DropVips => addresses.release(),
            Action::SyncMaster | Action::SyncBackup => match roles {
                Some(r) => r
                    .apply(client, role)
                    .await
                    .map(drop)
                    .map_err(|e| e.to_string()),
                None => Ok(()),
            },
        };
        match result {
            Ok(()) => tracing::info!(%role, ?action, "fleet: done"),
            Err(e) => tracing::error!(%role, ?action, error = %e, "fleet: failed"),
        }
    }
}

//! The agent's ownership record in its syncs: the services it may create
//! are claimed (written to disk) before a sync starts, the syncer's scope
//! is the file's services and those recorded, and after each sync the
//! record drops what the kernel was seen without.
//!
//! Without a record (an agent built without [`Agent::with_ownership`]),
//! the scope is the file's services alone, as before.
//!
//! [`Agent::with_ownership`]: crate::daemon::Agent::with_ownership

use std::collections::BTreeSet;

use ipvsnl::sync::{Ownership, OwnershipError, PlanOptions, Syncer, Table};
use ipvsnl::ServiceKey;

/// The record, if the agent keeps one.
#[derive(Debug, Default)]
pub(crate) struct Owned {
    record: Option<Ownership>,
}

impl Owned {
    pub(crate) fn new(record: Option<Ownership>) -> Self {
        Owned { record }
    }

    /// The keys recorded (none without a record).
    pub(crate) fn keys(&self) -> BTreeSet<ServiceKey> {
        self.record
            .as_ref()
            .map(|r| r.keys().clone())
            .unwrap_or_default()
    }

    /// `options` with the recorded services in its scope.
    pub(crate) fn scope(&self, mut options: PlanOptions) -> PlanOptions {
        if let Some(r) = &self.record {
            if let ipvsnl::sync::Scope::Keys(keys) = &options.scope {
                options.scope = r.scope(keys.iter());
            }
        }
        options
    }

    /// Claims the services of `desired` before a sync may create them. On
    /// `Err` the sync must not start.
    pub(crate) fn claim(&mut self, desired: &Table) -> Result<(), OwnershipError> {
        match &mut self.record {
            Some(r) => r.claim(desired.keys()).map(|_| ()),
            None => Ok(()),
        }
    }

    /// After a sync: drops from the record what the kernel was seen
    /// without. Whether the record changed (the scope narrows). A record
    /// that cannot be written keeps every key (logged: the safe side).
    pub(crate) fn after(&mut self, syncer: &Syncer) -> bool {
        let Some(r) = &mut self.record else {
            return false;
        };
        match r.after_sync(syncer) {
            Ok(changed) => changed,
            Err(e) => {
                tracing::error!(error = %e, "the ownership record not updated");
                false
            }
        }
    }
}

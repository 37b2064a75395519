//! The sync engine from async code (feature `tokio`): the same engine as
//! [`Syncer::sync`], its listing and batches awaited on an [`AsyncClient`]
//! (the planning between them is CPU work of the calling task).

use crate::sync::planned::Plan;
use crate::sync::report::Report;
use crate::sync::syncer::Syncer;
use crate::sync::table::Table;
use crate::{AsyncClient, Error};

/// The sync engine from async code: the same engine as
/// [`Syncer::sync`], its listing and batches awaited on the async client
/// (the planning between them is CPU work of the calling task). Each is
/// the `*_on` method of the same name ([`Syncer::sync_on`]) given an
/// async client; code written for either client calls those.
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
impl Syncer {
    /// [`Syncer::list`] on an async client.
    pub async fn list_async(&self, client: &mut AsyncClient) -> Result<Table, Error> {
        self.list_in(&mut client.core).await
    }

    /// [`Syncer::plan`] on an async client.
    pub async fn plan_async(
        &self,
        client: &mut AsyncClient,
        desired: &Table,
    ) -> Result<Plan, Error> {
        self.plan_in(&mut client.core, desired).await
    }

    /// [`Syncer::sync`] on an async client.
    pub async fn sync_async(
        &mut self,
        client: &mut AsyncClient,
        desired: &Table,
    ) -> Result<Report, Error> {
        self.sync_in(&mut client.core, desired).await
    }

    /// [`Syncer::sync_cached`] on an async client. Dropped before it
    /// finished, it leaves no cached view (the next sync lists).
    pub async fn sync_cached_async(
        &mut self,
        client: &mut AsyncClient,
        desired: &Table,
    ) -> Result<Report, Error> {
        self.sync_cached_in(&mut client.core, desired).await
    }
}

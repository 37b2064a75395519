//! The sync engine on either client: [`Syncer::sync_on`] and its
//! siblings take any [`Operations`], so a controller's reconciling code
//! is written once, generic over the client, and runs with the blocking
//! [`Client`](crate::Client) as with the async client (feature `tokio`).
//!
//! Each is the engine of [`Syncer::sync`] itself, compiled for the client
//! it is given: the trait is sealed, and through it the client runs the
//! engine on its core as its own entry points do ([`CoreWork`]), with no
//! dispatch at run time and no allocation of its own. The
//! client-specific entry points ([`Syncer::sync`], and `sync_async` with
//! `tokio`) remain, for code written for one client.

use std::future::Future;

use crate::client_core::ClientCore;
use crate::operations::sealed::CoreWork;
use crate::sync::planned::Plan;
use crate::sync::report::Report;
use crate::sync::syncer::Syncer;
use crate::sync::table::Table;
use crate::transport::Transport;
use crate::{Error, Operations};

/// The sync engine on any client ([`Operations`]): code written once for
/// both clients.
///
/// Each method returns a future, `Send` as the trait's are, and behaves as
/// the trait's operations do: the async client's is the future of its
/// `_async` method; the blocking client runs the engine on the calling
/// thread when the method is called and returns a future already
/// complete, so it runs on any executor, or on none with
/// [`block_on`](crate::block_on).
impl Syncer {
    /// [`Syncer::list`] on either client.
    ///
    /// ```
    /// # #[cfg(feature = "emulator")]
    /// # fn main() -> Result<(), ipvsnl::Error> {
    /// use ipvsnl::emulator::Kernel;
    /// use ipvsnl::sync::{PlanOptions, Scope, Syncer, Table};
    /// use ipvsnl::{Client, Destination, Service, ServiceKey};
    ///
    /// let kernel = Kernel::new();
    /// let mut ipvs = Client::emulated(&kernel); // or an AsyncClient, awaited on its runtime
    /// let mut syncer = Syncer::new(PlanOptions::new(Scope::All));
    /// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
    /// let mut want = Table::new();
    /// want.insert(Service::new(key), [Destination::new("10.1.0.1".parse().unwrap(), 80)]);
    /// ipvsnl::block_on(syncer.sync_on(&mut ipvs, &want))?;
    /// let listed = ipvsnl::block_on(syncer.list_on(&mut ipvs))?;
    /// assert!(listed.same_settings(&want));
    /// # Ok(())
    /// # }
    /// # #[cfg(not(feature = "emulator"))]
    /// # fn main() {}
    /// ```
    pub fn list_on<'a, C: Operations>(
        &'a self,
        client: &'a mut C,
    ) -> impl Future<Output = Result<Table, Error>> + Send + 'a {
        client.on_core(List(self))
    }

    /// [`Syncer::plan`] (a dry run) on either client.
    ///
    /// ```
    /// # #[cfg(feature = "emulator")]
    /// # fn main() -> Result<(), ipvsnl::Error> {
    /// use ipvsnl::emulator::Kernel;
    /// use ipvsnl::sync::{PlanOptions, Scope, Syncer, Table};
    /// use ipvsnl::{Client, Destination, Service, ServiceKey};
    ///
    /// let kernel = Kernel::new();
    /// let mut ipvs = Client::emulated(&kernel); // or an AsyncClient, awaited on its runtime
    /// let mut syncer = Syncer::new(PlanOptions::new(Scope::All));
    /// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
    /// let mut want = Table::new();
    /// want.insert(Service::new(key), [Destination::new("10.1.0.1".parse().unwrap(), 80)]);
    /// let dry = ipvsnl::block_on(syncer.plan_on(&mut ipvs, &want))?;
    /// assert_eq!(dry.requests().len(), 2); // the service, its destination
    /// assert!(kernel.init_netns().table().is_empty(), "nothing applied");
    /// # Ok(())
    /// # }
    /// # #[cfg(not(feature = "emulator"))]
    /// # fn main() {}
    /// ```
    pub fn plan_on<'a, C: Operations>(
        &'a self,
        client: &'a mut C,
        desired: &'a Table,
    ) -> impl Future<Output = Result<Plan, Error>> + Send + 'a {
        client.on_core(PlanOf(self, desired))
    }

    /// [`Syncer::sync`] on either client: lists the kernel's table, plans
    /// and applies.
    ///
    /// ```
    /// # #[cfg(feature = "emulator")]
    /// # fn main() -> Result<(), ipvsnl::Error> {
    /// use ipvsnl::emulator::Kernel;
    /// use ipvsnl::sync::{PlanOptions, Report, Scope, Syncer, Table};
    /// use ipvsnl::{Client, Destination, Error, Operations, Service, ServiceKey};
    ///
    /// /// The controller's one reconciling step, for either client.
    /// async fn reconcile(ipvs: &mut impl Operations, syncer: &mut Syncer, want: &Table)
    ///     -> Result<Report, Error>
    /// {
    ///     let report = syncer.sync_on(ipvs, want).await?;
    ///     if !report.is_complete() {
    ///         return syncer.sync_on(ipvs, want).await; // once more, listing again
    ///     }
    ///     Ok(report)
    /// }
    ///
    /// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
    /// let mut want = Table::new();
    /// want.insert(Service::new(key), [Destination::new("172.16.0.1".parse().unwrap(), 80)]);
    /// let mut syncer = Syncer::new(PlanOptions::new(Scope::keys([key])));
    ///
    /// // The blocking client (here of an emulated kernel): no runtime needed.
    /// let kernel = Kernel::new();
    /// let mut ipvs = Client::emulated(&kernel);
    /// assert!(ipvsnl::block_on(reconcile(&mut ipvs, &mut syncer, &want))?.is_complete());
    ///
    /// // The same function, awaited on an async client (feature `tokio`).
    /// # #[cfg(feature = "tokio")] {
    /// let kernel = Kernel::new();
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    /// let mut syncer = Syncer::new(PlanOptions::new(Scope::keys([key])));
    /// let report = runtime.block_on(async {
    ///     let mut ipvs = ipvsnl::AsyncClient::emulated(&kernel);
    ///     reconcile(&mut ipvs, &mut syncer, &want).await
    /// })?;
    /// assert!(report.is_complete(), "{report}");
    /// # }
    /// # Ok(())
    /// # }
    /// # #[cfg(not(feature = "emulator"))]
    /// # fn main() {}
    /// ```
    pub fn sync_on<'a, C: Operations>(
        &'a mut self,
        client: &'a mut C,
        desired: &'a Table,
    ) -> impl Future<Output = Result<Report, Error>> + Send + 'a {
        client.on_core(SyncAll(self, desired))
    }

    /// [`Syncer::sync_cached`] on either client. Dropped before it
    /// finished, it leaves no cached view (the next sync lists).
    ///
    /// ```
    /// # #[cfg(feature = "emulator")]
    /// # fn main() -> Result<(), ipvsnl::Error> {
    /// use ipvsnl::emulator::Kernel;
    /// use ipvsnl::sync::{PlanOptions, Scope, Syncer, Table};
    /// use ipvsnl::{Client, Destination, Service, ServiceKey};
    ///
    /// let kernel = Kernel::new();
    /// let mut ipvs = Client::emulated(&kernel); // or an AsyncClient, awaited on its runtime
    /// let mut syncer = Syncer::new(PlanOptions::new(Scope::All));
    /// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
    /// let mut want = Table::new();
    /// want.insert(Service::new(key), [Destination::new("10.1.0.1".parse().unwrap(), 80)]);
    /// ipvsnl::block_on(syncer.sync_on(&mut ipvs, &want))?;
    /// want.set_weight(&key, "10.1.0.1".parse().unwrap(), 80, 5).unwrap();
    /// let report = ipvsnl::block_on(syncer.sync_cached_on(&mut ipvs, &want))?;
    /// assert!(report.is_complete() && report.requests().len() == 1, "{report}");
    /// # Ok(())
    /// # }
    /// # #[cfg(not(feature = "emulator"))]
    /// # fn main() {}
    /// ```
    pub fn sync_cached_on<'a, C: Operations>(
        &'a mut self,
        client: &'a mut C,
        desired: &'a Table,
    ) -> impl Future<Output = Result<Report, Error>> + Send + 'a {
        client.on_core(SyncCached(self, desired))
    }
}

/// [`Syncer::list_on`]'s work.
struct List<'a>(&'a Syncer);

impl<'a> CoreWork<'a> for List<'a> {
    type Output = Result<Table, Error>;

    fn run<T: Transport + Send + Sync + 'a>(
        self,
        core: &'a mut ClientCore<T>,
    ) -> impl Future<Output = Self::Output> + Send + 'a {
        self.0.list_in(core)
    }
}

/// [`Syncer::plan_on`]'s work.
struct PlanOf<'a>(&'a Syncer, &'a Table);

impl<'a> CoreWork<'a> for PlanOf<'a> {
    type Output = Result<Plan, Error>;

    fn run<T: Transport + Send + Sync + 'a>(
        self,
        core: &'a mut ClientCore<T>,
    ) -> impl Future<Output = Self::Output> + Send + 'a {
        self.0.plan_in(core, self.1)
    }
}

/// [`Syncer::sync_on`]'s work.
struct SyncAll<'a>(&'a mut Syncer, &'a Table);

impl<'a> CoreWork<'a> for SyncAll<'a> {
    type Output = Result<Report, Error>;

    fn run<T: Transport + Send + Sync + 'a>(
        self,
        core: &'a mut ClientCore<T>,
    ) -> impl Future<Output = Self::Output> + Send + 'a {
        self.0.sync_in(core, self.1)
    }
}

/// [`Syncer::sync_cached_on`]'s work.
struct SyncCached<'a>(&'a mut Syncer, &'a Table);

impl<'a> CoreWork<'a> for SyncCached<'a> {
    type Output = Result<Report, Error>;

    fn run<T: Transport + Send + Sync + 'a>(
        self,
        core: &'a mut ClientCore<T>,
    ) -> impl Future<Output = Self::Output> + Send + 'a {
        self.0.sync_cached_in(core, self.1)
    }
}

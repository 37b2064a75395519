//! One operation suite for both clients: the kernel tests in
//! `kernel_operations.rs` are written once, as async functions generic over
//! [`Ops`], and [`both!`] runs each with the blocking [`Client`] and with
//! the tokio [`AsyncClient`].

#![allow(async_fn_in_trait)]

use std::net::IpAddr;
use std::ops::ControlFlow;

use ipvsnl::sync::{Report, Syncer, Table};
use ipvsnl::{
    AsyncClient, Client, DaemonRole, Destination, DestinationEntry, Error, Info, Request, Service,
    ServiceEntry, ServiceKey, Stats, SyncDaemon, Timeouts,
};

/// Every operation of a client, as the suite calls it.
pub trait Ops {
    /// Which client this is, for messages.
    const NAME: &'static str;
    async fn add_service(&mut self, s: &Service) -> Result<(), Error>;
    async fn edit_service(&mut self, s: &Service) -> Result<(), Error>;
    async fn delete_service(&mut self, k: &ServiceKey) -> Result<(), Error>;
    async fn add_destination(&mut self, k: &ServiceKey, d: &Destination) -> Result<(), Error>;
    async fn edit_destination(&mut self, k: &ServiceKey, d: &Destination) -> Result<(), Error>;
    async fn delete_destination(&mut self, k: &ServiceKey, a: IpAddr, p: u16) -> Result<(), Error>;
    async fn zero(&mut self, k: Option<&ServiceKey>) -> Result<(), Error>;
    async fn flush(&mut self) -> Result<(), Error>;
    async fn set_timeouts(&mut self, t: &Timeouts) -> Result<(), Error>;
    async fn timeouts(&mut self) -> Result<Timeouts, Error>;
    async fn info(&mut self) -> Result<Info, Error>;
    async fn family_id(&mut self) -> Result<u16, Error>;
    async fn start_sync_daemon(&mut self, d: &SyncDaemon) -> Result<(), Error>;
    async fn stop_sync_daemon(&mut self, r: DaemonRole) -> Result<(), Error>;
    async fn sync_daemons(&mut self) -> Result<Vec<SyncDaemon>, Error>;
    async fn totals(&mut self) -> Result<Stats, Error>;
    async fn services(&mut self) -> Result<Vec<ServiceEntry>, Error>;
    async fn service(&mut self, k: &ServiceKey) -> Result<ServiceEntry, Error>;
    async fn destinations(&mut self, k: &ServiceKey) -> Result<Vec<DestinationEntry>, Error>;
    async fn table(&mut self) -> Result<Vec<ServiceEntry>, Error>;
    async fn list_table_where(
        &mut self,
        wanted: impl FnMut(&ServiceKey) -> bool + Send,
    ) -> Result<Vec<ServiceEntry>, Error>;
    /// The keys `for_each_service` visits, stopping after `stop_after`.
    async fn visit_keys(&mut self, stop_after: usize) -> Result<Vec<ServiceKey>, Error>;
    async fn apply(&mut self, r: &[Request]) -> Vec<Result<(), Error>>;
    async fn sync(&mut self, s: &mut Syncer, t: &Table) -> Result<Report, Error>;
    async fn sync_cached(&mut self, s: &mut Syncer, t: &Table) -> Result<Report, Error>;
    async fn list(&mut self, s: &Syncer) -> Result<Table, Error>;
}

fn visitor(
    out: &mut Vec<ServiceKey>,
    stop_after: usize,
) -> impl FnMut(&ServiceEntry) -> ControlFlow<()> + Send + '_ {
    move |e| {
        out.push(*e.key());
        if out.len() >= stop_after {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    }
}

/// Implements [`Ops`] for a client type: `$($aw)*` is `.await` for the
/// async one and nothing for the blocking one. (Forwarding only: the
/// operations themselves are the library's, written once.)
macro_rules! forward_ops {
    ($ty:ty, $name:literal, $($aw:tt)*) => {
        impl Ops for $ty {
            const NAME: &'static str = $name;
            async fn add_service(&mut self, s: &Service) -> Result<(), Error> { <$ty>::add_service(self, s) $($aw)* }
            async fn edit_service(&mut self, s: &Service) -> Result<(), Error> { <$ty>::edit_service(self, s) $($aw)* }
            async fn delete_service(&mut self, k: &ServiceKey) -> Result<(), Error> { <$ty>::delete_service(self, k) $($aw)* }
            async fn add_destination(&mut self, k: &ServiceKey, d: &Destination) -> Result<(), Error> { <$ty>::add_destination(self, k, d) $($aw)* }
            async fn edit_destination(&mut self, k: &ServiceKey, d: &Destination) -> Result<(), Error> { <$ty>::edit_destination(self, k, d) $($aw)* }
            async fn delete_destination(&mut self, k: &ServiceKey, a: IpAddr, p: u16) -> Result<(), Error> { <$ty>::delete_destination(self, k, a, p) $($aw)* }
            async fn zero(&mut self, k: Option<&ServiceKey>) -> Result<(), Error> { <$ty>::zero(self, k) $($aw)* }
            async fn flush(&mut self) -> Result<(), Error> { <$ty>::flush(self) $($aw)* }
            async fn set_timeouts(&mut self, t: &Timeouts) -> Result<(), Error> { <$ty>::set_timeouts(self, t) $($aw)* }
            async fn timeouts(&mut self) -> Result<Timeouts, Error> { <$ty>::timeouts(self) $($aw)* }
            async fn info(&mut self) -> Result<Info, Error> { <$ty>::info(self) $($aw)* }
            async fn family_id(&mut self) -> Result<u16, Error> { <$ty>::family_id(self) $($aw)* }
            async fn start_sync_daemon(&mut self, d: &SyncDaemon) -> Result<(), Error> { <$ty>::start_sync_daemon(self, d) $($aw)* }
            async fn stop_sync_daemon(&mut self, r: DaemonRole) -> Result<(), Error> { <$ty>::stop_sync_daemon(self, r) $($aw)* }
            async fn sync_daemons(&mut self) -> Result<Vec<SyncDaemon>, Error> { <$ty>::sync_daemons(self) $($aw)* }
            async fn totals(&mut self) -> Result<Stats, Error> { <$ty>::totals(self) $($aw)* }
            async fn services(&mut self) -> Result<Vec<ServiceEntry>, Error> { <$ty>::services(self) $($aw)* }
            async fn service(&mut self, k: &ServiceKey) -> Result<ServiceEntry, Error> { <$ty>::service(self, k) $($aw)* }
            async fn destinations(&mut self, k: &ServiceKey) -> Result<Vec<DestinationEntry>, Error> { <$ty>::destinations(self, k) $($aw)* }
            async fn table(&mut self) -> Result<Vec<ServiceEntry>, Error> { <$ty>::table(self) $($aw)* }
            async fn list_table_where(&mut self, wanted: impl FnMut(&ServiceKey) -> bool + Send) -> Result<Vec<ServiceEntry>, Error> { <$ty>::list_table_where(self, wanted) $($aw)* }
            async fn visit_keys(&mut self, stop_after: usize) -> Result<Vec<ServiceKey>, Error> {
                let mut out = Vec::new();
                <$ty>::for_each_service(self, visitor(&mut out, stop_after)) $($aw)* ?;
                Ok(out)
            }
            async fn apply(&mut self, r: &[Request]) -> Vec<Result<(), Error>> { <$ty>::apply(self, r) $($aw)* }
            async fn sync(&mut self, s: &mut Syncer, t: &Table) -> Result<Report, Error> { sync_call!($($aw)*, s, self, t, sync, sync_async) }
            async fn sync_cached(&mut self, s: &mut Syncer, t: &Table) -> Result<Report, Error> { sync_call!($($aw)*, s, self, t, sync_cached, sync_cached_async) }
            async fn list(&mut self, s: &Syncer) -> Result<Table, Error> {
                sync_list!($($aw)*, s, self)
            }
        }
    };
}

/// The syncer's blocking method, or its `_async` twin.
macro_rules! sync_call {
    (, $s:ident, $c:expr, $t:ident, $blocking:ident, $async:ident) => {
        $s.$blocking($c, $t)
    };
    (.await, $s:ident, $c:expr, $t:ident, $blocking:ident, $async:ident) => {
        $s.$async($c, $t).await
    };
}
macro_rules! sync_list {
    (, $s:ident, $c:expr) => {
        $s.list($c)
    };
    (.await, $s:ident, $c:expr) => {
        $s.list_async($c).await
    };
}

forward_ops!(Client, "blocking",);
forward_ops!(AsyncClient, "tokio", .await);

/// A current-thread tokio runtime with I/O and timers.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// Defines, for the async suite function `$body(&mut impl Ops)`, a module
/// `$body` with two kernel tests: `blocking` (the blocking client) and
/// `tokio` (the async one), each in a fresh network namespace.
#[macro_export]
macro_rules! both {
    ($($body:ident),* $(,)?) => {$(
        mod $body {
            #[test]
            #[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
            fn blocking() {
                $crate::common::fresh_netns();
                let mut c = ipvsnl::Client::new().expect("blocking client");
                $crate::common::ops::runtime().block_on(super::$body(&mut c));
            }

            #[test]
            #[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
            fn tokio() {
                $crate::common::fresh_netns();
                $crate::common::ops::runtime().block_on(async {
                    let mut c = ipvsnl::AsyncClient::new().expect("async client");
                    super::$body(&mut c).await
                });
            }
        }
    )*};
}

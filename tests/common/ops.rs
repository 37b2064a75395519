//! One operation suite for both clients: the kernel tests in
//! `kernel_api/operations.rs` are written once, as async functions generic over
//! [`Ops`], and `both!` (tests/common/both.rs) runs each with the blocking [`Client`] and with
//! the tokio [`AsyncClient`]. The client's operations are the library's
//! [`Operations`] trait (declared once, with the clients' methods), and
//! so is the sync engine's (`Syncer::sync_on` and its siblings take
//! either client); [`Ops`] adds the client's name, and keeps the engine's
//! calls as methods of the client for the suite's brevity.

#![allow(async_fn_in_trait)]

use std::ops::ControlFlow;

use ipvsnl::sync::{Report, Syncer, Table};
use ipvsnl::{AsyncClient, Client, Error, Operations, ServiceEntry, ServiceKey};

/// A client's operations, and the sync engine run on it.
pub trait Ops: Operations + Sized {
    /// Which client this is, for messages.
    const NAME: &'static str;
    async fn sync(&mut self, s: &mut Syncer, t: &Table) -> Result<Report, Error> {
        s.sync_on(self, t).await
    }
    async fn sync_cached(&mut self, s: &mut Syncer, t: &Table) -> Result<Report, Error> {
        s.sync_cached_on(self, t).await
    }
    async fn list(&mut self, s: &Syncer) -> Result<Table, Error> {
        s.list_on(self).await
    }
}

impl Ops for Client {
    const NAME: &'static str = "blocking";
}

impl Ops for AsyncClient {
    const NAME: &'static str = "tokio";
}

/// The keys `for_each_service` visits, stopping after `stop_after`.
pub async fn visit_keys(
    c: &mut impl Operations,
    stop_after: usize,
) -> Result<Vec<ServiceKey>, Error> {
    let mut out = Vec::new();
    c.for_each_service(|e: &ServiceEntry| {
        out.push(*e.key());
        if out.len() >= stop_after {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    })
    .await?;
    Ok(out)
}

/// A current-thread tokio runtime with I/O and timers.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

//! The supertrait that seals [`Operations`](super::Operations): only this
//! crate's clients implement it, and through it the crate's layers above
//! the clients (the sync engine) run their work on a client's
//! [`ClientCore`], whichever the client, without a method on the public
//! trait. Outside the crate it can be neither named nor called.

// Its interface is the crate's own (the work on a core, and its output)
// on purpose: a user reaches none of it.
#![allow(private_bounds, private_interfaces)]

use std::future::Future;

use crate::block_on::block_on;
use crate::client_core::ClientCore;
use crate::transport::Transport;

/// Work on a client's core, over whichever transport the client has: the
/// future of a layer above the clients (a sync), written once over
/// [`Transport`]. The transport is a type parameter, so the work is
/// compiled for each client's own (no dispatch at run time).
pub(crate) trait CoreWork<'a> {
    /// What the work gives.
    type Output: Send;

    /// The work's future on `core`.
    fn run<T: Transport + Send + Sync + 'a>(
        self,
        core: &'a mut ClientCore<T>,
    ) -> impl Future<Output = Self::Output> + Send + 'a;
}

/// A client of this crate, which runs [`CoreWork`] on its core as it runs
/// its own operations: the blocking client on the calling thread when
/// called (its future is then complete), the async client as a future.
// Sealed on purpose: unnameable outside.
#[allow(unnameable_types)]
pub trait Sealed {
    /// Runs `work` on the client's core.
    fn on_core<'a, W: CoreWork<'a> + 'a>(
        &'a mut self,
        work: W,
    ) -> impl Future<Output = W::Output> + Send + 'a;
}

impl Sealed for crate::Client {
    fn on_core<'a, W: CoreWork<'a> + 'a>(
        &'a mut self,
        work: W,
    ) -> impl Future<Output = W::Output> + Send + 'a {
        // Done now, as the client's own operations are through the trait.
        std::future::ready(block_on(work.run(&mut self.core)))
    }
}

#[cfg(feature = "tokio")]
impl Sealed for crate::AsyncClient {
    fn on_core<'a, W: CoreWork<'a> + 'a>(
        &'a mut self,
        work: W,
    ) -> impl Future<Output = W::Output> + Send + 'a {
        work.run(&mut self.core)
    }
}

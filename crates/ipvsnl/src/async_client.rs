//! The async client (feature `tokio`): the blocking client's operations as
//! futures, over the same socket code, the same protocol machines and the
//! same operations ([`crate::client_core`]); only the transport differs (tokio's
//! reactor instead of waiting system calls). Here are its constructors and
//! its watcher; its operations are declared once, for both clients, in
//! [`crate::operations`].
//!
//! Every future is cancel-safe: dropped at any await, it leaves the client
//! usable, and the next call does not read the abandoned call's replies
//! (the protocol session reads an abandoned dump out, and drops replies
//! to numbers it no longer waits for). A request whose future was dropped
//! after it was sent may have been applied: its outcome is not known.

use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use crate::client_core::{setup_error, ClientCore};
use crate::totals::read_totals;
use crate::transport::choice::{real, Io};
use crate::transport::netns::{duplicate_namespace, NetnsHandle, Sockets};
use crate::transport::tokio::Tokio;
use crate::{ClientOptions, Error, Object, RequestKind, ServiceEntry, Stats, Target};

/// A client of the kernel's IPVS table in one network namespace, for
/// tokio: the operations of [`Client`](crate::Client), each a future (and
/// code written for [`Operations`](crate::Operations) runs with either).
/// Like it, after a wait for the kernel runs out it makes its next call
/// on a fresh socket (see [`ClientOptions::with_timeout`]).
///
/// It must be made inside a tokio runtime (its socket is registered with
/// that runtime's reactor); the runtime needs its I/O and time drivers
/// (`enable_all`, or `#[tokio::main]`). Its futures are `Send`.
///
/// ```no_run
/// use ipvsnl::{AsyncClient, Destination, Request, Scheduler, Service, ServiceKey};
/// # async fn run() -> Result<(), ipvsnl::Error> {
/// let mut ipvs = AsyncClient::new()?;
/// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
/// ipvs.add_service(&Service::new(key).with_scheduler(Scheduler::RoundRobin)).await?;
/// let outcomes = ipvs
///     .apply(&[Request::AddDestination(key, Destination::new("10.0.1.1".parse().unwrap(), 80))])
///     .await;
/// assert!(outcomes.iter().all(|o| o.is_ok()));
/// for row in ipvs.table().await? {
///     println!("{} {} destinations", row.key(), row.destinations.len());
/// }
/// # Ok(())
/// # }
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
pub struct AsyncClient {
    pub(crate) core: ClientCore<Io<Tokio>>,
}

impl std::fmt::Debug for AsyncClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.core.fmt(f)
    }
}

/// Runs `work` on tokio's blocking pool (for what only blocking system
/// calls can do: entering a namespace, reading its `/proc/net`).
async fn off_runtime<R: Send + 'static>(
    work: impl FnOnce() -> Result<R, Error> + Send + 'static,
    target: impl FnOnce() -> Target,
) -> Result<R, Error> {
    match tokio::task::spawn_blocking(work).await {
        Ok(result) => result,
        Err(e) => Err(Error::io(target(), std::io::Error::other(e))),
    }
}

impl AsyncClient {
    /// A client in the calling thread's network namespace, with default
    /// options (an error outside a tokio runtime).
    pub fn new() -> Result<Self, Error> {
        AsyncClient::with_options(ClientOptions::default())
    }

    /// A client in the calling thread's network namespace.
    pub fn with_options(opts: ClientOptions) -> Result<Self, Error> {
        let sockets = Sockets::open().map_err(setup_error)?;
        AsyncClient::from_sockets(sockets, opts, NetnsHandle::current().ok())
    }

    /// A client bound to the network namespace of `path`
    /// (`/var/run/netns/NAME`, `/proc/PID/ns/net`), without moving any
    /// thread of the caller (the socket is made on tokio's blocking pool).
    pub async fn in_namespace(path: impl AsRef<Path>) -> Result<Self, Error> {
        AsyncClient::in_namespace_with_options(path, ClientOptions::default()).await
    }

    /// [`AsyncClient::in_namespace`] with options.
    pub async fn in_namespace_with_options(
        path: impl AsRef<Path>,
        opts: ClientOptions,
    ) -> Result<Self, Error> {
        let path: PathBuf = path.as_ref().to_path_buf();
        let (sockets, netns) = off_runtime(
            move || Sockets::open_in(&path),
            || Target::new(RequestKind::ResolveFamily, Object::Family),
        )
        .await?;
        AsyncClient::from_sockets(sockets, opts, Some(netns))
    }

    /// A client bound to the network namespace of the open namespace file
    /// `netns` (see [`Client::in_namespace_fd`](crate::Client::in_namespace_fd)),
    /// without moving any thread of the caller (the socket is made on
    /// tokio's blocking pool). The client keeps a duplicate of the
    /// descriptor: the caller's may be closed.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let netns = std::fs::File::open("/run/netns/blue")?;
    /// let mut ipvs = ipvsnl::AsyncClient::in_namespace_fd(&netns).await?;
    /// drop(netns);
    /// println!("{} services in blue", ipvs.services().await?.len());
    /// # Ok(())
    /// # }
    /// ```
    pub async fn in_namespace_fd(netns: impl AsFd) -> Result<Self, Error> {
        AsyncClient::in_namespace_fd_with_options(netns, ClientOptions::default()).await
    }

    /// [`AsyncClient::in_namespace_fd`] with options.
    pub async fn in_namespace_fd_with_options(
        netns: impl AsFd,
        opts: ClientOptions,
    ) -> Result<Self, Error> {
        // The duplicate is made here: the caller's descriptor is borrowed
        // for this call only.
        let (netns, named) = duplicate_namespace(netns.as_fd())?;
        let (sockets, netns) = off_runtime(
            move || Sockets::open_there(netns, &named),
            || Target::new(RequestKind::ResolveFamily, Object::Family),
        )
        .await?;
        AsyncClient::from_sockets(sockets, opts, Some(netns))
    }

    fn from_sockets(
        sockets: Sockets,
        opts: ClientOptions,
        netns: Option<NetnsHandle>,
    ) -> Result<Self, Error> {
        let Sockets {
            netlink: sock,
            service_dumps: dumps,
            sockopt,
        } = sockets;
        let granted = sock
            .set_receive_buffer(opts.socket_buffer)
            .map_err(setup_error)?;
        let io = real(Tokio::new(sock).map_err(setup_error)?);
        let dumps = real(Tokio::new(dumps).map_err(setup_error)?);
        Ok(AsyncClient {
            core: ClientCore::new(io, granted, opts, netns, (dumps, sockopt)),
        })
    }

    /// The options in force.
    pub fn options(&self) -> &ClientOptions {
        &self.core.opts
    }

    /// The totals' read, on tokio's blocking pool (see
    /// [`AsyncClient::totals`]).
    pub(crate) async fn read_totals(&self) -> Result<Stats, Error> {
        #[cfg(feature = "emulator")]
        if let Io::Emulated(port) = &self.core.io {
            return Ok(port.totals());
        }
        let netns = match &self.core.netns {
            Some(ns) => Some(ns.try_clone().map_err(|source| {
                Error::io(Target::new(RequestKind::Totals, Object::Table), source)
            })?),
            None => None,
        };
        off_runtime(
            move || read_totals(netns.as_ref()),
            || Target::new(RequestKind::Totals, Object::Table),
        )
        .await
    }
}

/// The watcher's listing: [`AsyncClient::table`], one per tick.
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
impl crate::watch::Lister for AsyncClient {
    fn list(
        &mut self,
    ) -> impl std::future::Future<Output = Result<Vec<ServiceEntry>, Error>> + Send + '_ {
        self.table()
    }
}

impl AsyncClient {
    /// A [`Watcher`](crate::watch::Watcher) of this client's table: one
    /// listing every `period`, yielding what changed between two.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), ipvsnl::Error> {
    /// let mut watcher = ipvsnl::AsyncClient::new()?.watch(std::time::Duration::from_secs(5));
    /// loop {
    ///     for change in watcher.next().await?.changes {
    ///         println!("{change}");
    ///     }
    /// }
    /// # }
    /// ```
    pub fn watch(self, period: std::time::Duration) -> crate::watch::Watcher<AsyncClient> {
        crate::watch::Watcher::new(self, period)
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;
    use crate::drive::{drive, DATAGRAMS};
    use crate::proto::{Input, Machine, Poll, Wait};
    use crate::transport::socket::NlSocket;

    #[test]
    fn made_outside_a_runtime_it_is_an_error_not_a_panic() {
        let e = AsyncClient::new().unwrap_err();
        assert!(e.is_io(), "{e}");
        assert!(e.to_string().contains("tokio runtime"), "{e}");
    }

    #[tokio::test]
    async fn the_family_lookup_runs_over_tokio() {
        // A generic-netlink socket exists on any Linux host, IPVS or not.
        let mut c = AsyncClient::new().unwrap();
        match c.family_id().await {
            Ok(id) => assert!(id >= 0x10),
            Err(e) => assert!(e.is_unavailable(), "{e}"),
        }
        // The client is still usable for the next call.
        match c.info().await {
            Ok(info) => assert!(info.conn_tab_size > 0),
            Err(e) => assert!(e.is_unavailable(), "{e}"),
        }
    }

    #[tokio::test]
    async fn after_a_wait_ran_out_the_next_call_takes_a_fresh_socket() {
        let mut c = AsyncClient::new().unwrap();
        // As a wait that ran out leaves the session; the fresh socket is
        // made in the client's namespace, off the runtime.
        c.core.session.state.fresh_socket_due = true;
        let r = c.family_id().await;
        assert!(!c.core.session.wants_fresh_socket());
        match r {
            Ok(id) => assert!(id >= 0x10),
            Err(e) => assert!(e.is_unavailable(), "{e}"),
        }
    }

    /// A machine that waits once for a reply that never comes.
    struct WaitOnce {
        wait: Option<Wait>,
        told: Vec<String>,
    }

    impl Machine for WaitOnce {
        fn poll(&mut self) -> Poll<'_> {
            match self.wait {
                Some(w) => Poll::Receive(w),
                None => Poll::Finished,
            }
        }
        fn handle(&mut self, input: Input<'_>) {
            self.told.push(format!("{input:?}"));
            self.wait = None;
        }
    }

    #[tokio::test]
    async fn a_receive_wait_is_a_timer_and_queued_does_not_wait() {
        let mut io = Tokio::new(NlSocket::open().unwrap()).unwrap();
        let mut rx = vec![0; 4096 * DATAGRAMS];
        let start = Instant::now();
        let mut m = WaitOnce {
            wait: Some(Wait::Up(Duration::from_millis(30))),
            told: Vec::new(),
        };
        drive(&mut io, &mut rx, 4096, &mut m).await;
        assert_eq!(m.told, ["TimedOut"]);
        assert!(start.elapsed() >= Duration::from_millis(30));
        let mut m = WaitOnce {
            wait: Some(Wait::Queued),
            told: Vec::new(),
        };
        drive(&mut io, &mut rx, 4096, &mut m).await;
        assert_eq!(m.told, ["TimedOut"]);
    }
}

//! The blocking client: its sockets, typed operations, pipelined batches.
//! Here are its constructors; its operations are declared once, for both
//! clients, in [`crate::operations`]: each is the one of [`crate::client_core`],
//! run to its end on the calling thread.

use std::os::fd::AsFd;
use std::path::Path;

use crate::client_core::{setup_error, ClientCore};
use crate::totals::read_totals;
use crate::transport::blocking::Blocking;
use crate::transport::choice::{real, Io};
use crate::transport::netns::{duplicate_namespace, NetnsHandle, Sockets};
use crate::{ClientOptions, Error, Stats};

/// A client of the kernel's IPVS table in one network namespace.
///
/// It owns its sockets for its whole life (two netlink sockets, the
/// second for its service dumps, and a socket for the older
/// socket-option interface: three descriptors), resolves the IPVS family
/// id on first use (and again if the module was reloaded), and never waits
/// longer than its timeout for a reply. It is a thin driver: every protocol
/// decision is made by the sans-IO machines of [`crate::proto`]. Its calls
/// block the calling thread; `AsyncClient` (feature `tokio`) has the same
/// operations as futures, and code written for [`Operations`](crate::Operations)
/// runs with either.
///
/// After a wait for the kernel runs out, its next call goes out on a
/// fresh socket: a kernel that stopped answering on one socket (a
/// handler stuck holding it) does not stall every later call, and no
/// late reply to the old socket can be taken for a new call's answer.
/// What each error lets a caller assume: [the crate's
/// errors](crate#errors).
///
/// ```no_run
/// use ipvsnl::{Client, Destination, Scheduler, Service, ServiceKey};
/// let mut ipvs = Client::new()?;
/// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
/// ipvs.add_service(&Service::new(key).with_scheduler(Scheduler::RoundRobin))?;
/// ipvs.add_destination(&key, &Destination::new("10.0.1.1".parse().unwrap(), 80))?;
/// for entry in ipvs.services()? {
///     println!("{} {}", entry.service.key, entry.service.scheduler);
/// }
/// # Ok::<(), ipvsnl::Error>(())
/// ```
pub struct Client {
    pub(crate) core: ClientCore<Io<Blocking>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.core.fmt(f)
    }
}

impl Client {
    /// A client in the caller's network namespace, with default options.
    pub fn new() -> Result<Self, Error> {
        Client::with_options(ClientOptions::default())
    }

    /// A client in the caller's network namespace.
    pub fn with_options(opts: ClientOptions) -> Result<Self, Error> {
        let sockets = Sockets::open().map_err(setup_error)?;
        // The sockets belong to this thread's namespace: remember it.
        Client::from_sockets(sockets, opts, NetnsHandle::current().ok())
    }

    /// A client bound to the network namespace of `path`
    /// (`/var/run/netns/NAME`, `/proc/PID/ns/net`), without moving any
    /// thread of the caller.
    pub fn in_namespace(path: impl AsRef<Path>) -> Result<Self, Error> {
        Client::in_namespace_with_options(path, ClientOptions::default())
    }

    /// [`Client::in_namespace`] with options.
    pub fn in_namespace_with_options(
        path: impl AsRef<Path>,
        opts: ClientOptions,
    ) -> Result<Self, Error> {
        let (sockets, netns) = Sockets::open_in(path.as_ref())?;
        Client::from_sockets(sockets, opts, Some(netns))
    }

    /// A client bound to the network namespace of the open namespace file
    /// `netns` (a descriptor of `/var/run/netns/NAME` or
    /// `/proc/PID/ns/net`, held by a container runtime, handed over a
    /// socket...), without moving any thread of the caller. The client
    /// keeps a duplicate of the descriptor: the caller's may be closed.
    ///
    /// A descriptor of anything but a network namespace is an
    /// [`Error::Namespace`] (the kernel refuses to enter it, `EINVAL`)
    /// naming `/proc/self/fd/N`.
    ///
    /// ```no_run
    /// let netns = std::fs::File::open("/run/netns/blue")?;
    /// let mut ipvs = ipvsnl::Client::in_namespace_fd(&netns)?;
    /// drop(netns);
    /// println!("{} services in blue", ipvs.services()?.len());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn in_namespace_fd(netns: impl AsFd) -> Result<Self, Error> {
        Client::in_namespace_fd_with_options(netns, ClientOptions::default())
    }

    /// [`Client::in_namespace_fd`] with options.
    pub fn in_namespace_fd_with_options(
        netns: impl AsFd,
        opts: ClientOptions,
    ) -> Result<Self, Error> {
        let (netns, named) = duplicate_namespace(netns.as_fd())?;
        let (sockets, netns) = Sockets::open_there(netns, &named)?;
        Client::from_sockets(sockets, opts, Some(netns))
    }

    fn from_sockets(
        sockets: Sockets,
        opts: ClientOptions,
        netns: Option<NetnsHandle>,
    ) -> Result<Self, Error> {
        let Sockets {
            netlink: mut sock,
            service_dumps: mut dumps,
            sockopt,
        } = sockets;
        sock.set_timeout(opts.timeout).map_err(setup_error)?;
        dumps.set_timeout(opts.timeout).map_err(setup_error)?;
        let granted = sock
            .set_receive_buffer(opts.socket_buffer)
            .map_err(setup_error)?;
        let dumps = real(Blocking { sock: dumps });
        Ok(Client {
            core: ClientCore::new(
                real(Blocking { sock }),
                granted,
                opts,
                netns,
                (dumps, sockopt),
            ),
        })
    }

    /// The options in force.
    pub fn options(&self) -> &ClientOptions {
        &self.core.opts
    }

    /// The totals' read, done now (see [`Client::totals`]).
    pub(crate) fn read_totals(&self) -> std::future::Ready<Result<Stats, Error>> {
        #[cfg(feature = "emulator")]
        if let Io::Emulated(port) = &self.core.io {
            return std::future::ready(Ok(port.totals()));
        }
        std::future::ready(read_totals(self.core.netns.as_ref()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn debug_shows_the_state_not_the_buffers() {
        // A generic-netlink socket opens on any Linux host, IPVS or not.
        let opts = ClientOptions::default().with_timeout(Duration::from_secs(3));
        let c = Client::with_options(opts).unwrap();
        let shown = format!("{c:?}");
        for part in [
            "namespace",
            "family: None",
            "options",
            "timeout: 3s",
            "unfinished_dump",
        ] {
            assert!(shown.contains(part), "{part} not in {shown}");
        }
        // A page of receive buffer would be thousands of numbers.
        assert!(shown.len() < 600, "{shown}");
        assert!(!shown.contains("rx"), "{shown}");
    }

    #[test]
    fn after_a_wait_ran_out_the_next_call_takes_a_fresh_socket() {
        let opts = ClientOptions::default().with_timeout(Duration::from_secs(3));
        let mut c = Client::with_options(opts).unwrap();
        // As a wait that ran out leaves the session.
        c.core.session.state.fresh_socket_due = true;
        let r = crate::block_on::block_on(c.core.family_id());
        assert!(!c.core.session.wants_fresh_socket());
        // The fresh socket is answered as the first was: an id on a host
        // with IPVS, its absence on one without.
        match r {
            Ok(id) => assert!(id >= 0x10),
            Err(e) => assert!(e.is_unavailable(), "{e}"),
        }
        c.core.service_dumps.session.state.fresh_socket_due = true;
        crate::block_on::block_on(c.core.service_dumps.renew_if_due(None));
        assert!(!c.core.service_dumps.session.wants_fresh_socket());
    }
}

//! Clients of an emulated kernel: the library's own [`Client`] and
//! `AsyncClient`, over the emulated kernel's socket instead of a real
//! one. Everything above the transport (operations, listings, the sync
//! engine, the watcher) is the code that runs against a real kernel.

use super::kernel::{Kernel, Netns};
use super::socket::Port;
use super::sockopt::SockoptPort;
use crate::client_core::ClientCore;
use crate::transport::choice::Io;
use crate::transport::sockopt::SockoptSocket;
use crate::{Client, ClientOptions};

/// The receive buffer a client is given (what a socket grants).
const GRANTED: usize = 4 << 20;

/// A client's state over new sockets of `netns` (its own, and its service
/// dumps').
fn core<R: crate::transport::Transport + Send>(
    netns: &Netns,
    opts: ClientOptions,
) -> ClientCore<Io<R>> {
    let port = Port::open(&netns.kernel, &netns.name);
    let serial = port.serial();
    let dumps = Io::Emulated(Port::open(&netns.kernel, &netns.name));
    let sockopt = SockoptSocket::emulated(SockoptPort::new(&netns.kernel, &netns.name));
    let mut core = ClientCore::new(
        Io::Emulated(port),
        GRANTED,
        opts,
        None,
        (dumps, Ok(sockopt)),
    );
    core.emulated_ns = Some(serial);
    core
}

impl Client {
    /// A client of the initial namespace of the emulated `kernel`
    /// (feature `emulator`): the same client, operations and sync engine
    /// as over a real kernel, without root or a kernel module.
    ///
    /// ```
    /// use ipvsnl::emulator::Kernel;
    /// let kernel = Kernel::new();
    /// let mut ipvs = ipvsnl::Client::emulated(&kernel);
    /// assert!(ipvs.services()?.is_empty());
    /// # Ok::<(), ipvsnl::Error>(())
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "emulator")))]
    pub fn emulated(kernel: &Kernel) -> Client {
        Client::emulated_in(&kernel.init_netns())
    }

    /// A client of namespace `netns` of an emulated kernel.
    #[cfg_attr(docsrs, doc(cfg(feature = "emulator")))]
    pub fn emulated_in(netns: &Netns) -> Client {
        Client::emulated_with_options(netns, ClientOptions::default())
    }

    /// [`Client::emulated_in`] with options (a receive buffer size, a
    /// timeout: waits are not real, and count in
    /// [`Kernel::waited`](super::Kernel::waited)).
    #[cfg_attr(docsrs, doc(cfg(feature = "emulator")))]
    pub fn emulated_with_options(netns: &Netns, opts: ClientOptions) -> Client {
        Client {
            core: core(netns, opts),
        }
    }
}

#[cfg(feature = "tokio")]
impl crate::AsyncClient {
    /// An async client of the initial namespace of the emulated `kernel`
    /// (features `emulator` and `tokio`). Unlike the real one, it may be
    /// made outside a runtime.
    #[cfg_attr(docsrs, doc(cfg(all(feature = "emulator", feature = "tokio"))))]
    pub fn emulated(kernel: &Kernel) -> crate::AsyncClient {
        crate::AsyncClient::emulated_in(&kernel.init_netns())
    }

    /// An async client of namespace `netns` of an emulated kernel.
    #[cfg_attr(docsrs, doc(cfg(all(feature = "emulator", feature = "tokio"))))]
    pub fn emulated_in(netns: &Netns) -> crate::AsyncClient {
        crate::AsyncClient::emulated_with_options(netns, ClientOptions::default())
    }

    /// [`AsyncClient::emulated_in`](crate::AsyncClient::emulated_in) with
    /// options.
    #[cfg_attr(docsrs, doc(cfg(all(feature = "emulator", feature = "tokio"))))]
    pub fn emulated_with_options(netns: &Netns, opts: ClientOptions) -> crate::AsyncClient {
        crate::AsyncClient {
            core: core(netns, opts),
        }
    }
}

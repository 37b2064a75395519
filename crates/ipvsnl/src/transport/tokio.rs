//! The tokio transport: the same socket, non-blocking, waited on through
//! tokio's reactor ([`AsyncFd`]); a receive's wait is a tokio timer.

use std::future::Future;
use std::io;

use tokio::io::unix::AsyncFd;

use super::netns::open_socket;
use super::socket::{NlSocket, Received};
use super::{Fresh, Transport};
use crate::proto::Wait;

/// A non-blocking socket registered with the current tokio runtime.
#[derive(Debug)]
pub(crate) struct Tokio {
    fd: AsyncFd<NlSocket>,
}

impl Tokio {
    /// Registers `sock` with the runtime of the calling thread: an error
    /// outside a runtime (tokio itself would panic then). A runtime built
    /// without its I/O driver makes tokio panic here; the client's docs
    /// say to enable it.
    pub(crate) fn new(sock: NlSocket) -> io::Result<Self> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(io::Error::other(
                "the async client must be made inside a tokio runtime",
            ));
        }
        sock.set_non_blocking()?;
        // SAFETY: `NlSocket` owns its descriptor (netlink-sys closes it on
        // drop, never before), and `as_raw_fd` returns that one descriptor
        // for the socket's whole life; the `AsyncFd` owns the socket, so
        // the descriptor stays open and the same until it is deregistered.
        let fd = unsafe { AsyncFd::register(sock) }.map_err(io::Error::from)?;
        Ok(Tokio { fd })
    }
}

/// Takes one unit of the task's tokio budget, yielding to the runtime when
/// it is spent. The kernel answers a netlink request in the sender's
/// system call, so the socket is nearly always ready and a readiness wait
/// would never yield (`AsyncFd`'s does not count against the budget): a
/// listing of 10,000 services would hold its runtime thread for all of its
/// 20,000 exchanges. With this, another task runs every 128 or so (the
/// kernel test `a_sync_of_a_big_table_lets_other_tasks_run` fails without
/// it). The socket-option listing's `GET_DESTS` calls, which never touch
/// this socket, take it too, one a call ([`Transport::cooperate`]).
/// Cancel-safe: nothing has touched the socket yet.
async fn cooperate() {
    tokio::task::consume_budget().await;
}

/// "Nothing came within the wait", as the blocking socket says it.
fn timed_out() -> io::Error {
    io::Error::from_raw_os_error(libc::EAGAIN)
}

impl Transport for Tokio {
    fn cooperate(&mut self) -> impl Future<Output = ()> + Send {
        cooperate()
    }

    async fn reopen(&mut self, fresh: &Fresh<'_>) -> io::Result<()> {
        // Entering a namespace takes a thread of its own: off the runtime.
        let sock = match fresh.netns {
            Some(ns) => {
                let ns = ns.try_clone()?;
                tokio::task::spawn_blocking(move || open_socket(Some(&ns)))
                    .await
                    .map_err(io::Error::other)??
            }
            None => open_socket(None)?,
        };
        if let Some(bytes) = fresh.buffer {
            sock.set_receive_buffer(bytes)?;
        }
        *self = Tokio::new(sock)?;
        Ok(())
    }

    async fn send(&mut self, datagram: &[u8]) -> io::Result<()> {
        cooperate().await;
        // A netlink send is processed in the sender's system call; it
        // waits only when the kernel is out of memory for it.
        loop {
            let mut ready = self.fd.writable().await?;
            if let Ok(sent) = ready.try_io(|fd| fd.get_ref().send(datagram)) {
                return sent;
            }
        }
    }

    async fn receive(
        &mut self,
        rx: &mut [u8],
        segment: usize,
        got: &mut [Received],
        wait: Wait,
    ) -> io::Result<usize> {
        cooperate().await;
        let Wait::Up(limit) = wait else {
            return self.fd.get_ref().recv_many(rx, segment, got, true);
        };
        let read = async {
            loop {
                let mut ready = self.fd.readable().await?;
                // `try_io` clears the readiness when the read would block,
                // so the next wait is a real one.
                if let Ok(received) =
                    ready.try_io(|fd| fd.get_ref().recv_many(rx, segment, got, true))
                {
                    return received;
                }
            }
        };
        match tokio::time::timeout(limit, read).await {
            Ok(received) => received,
            Err(_elapsed) => Err(timed_out()),
        }
    }
}

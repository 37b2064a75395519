//! The socket a client's service dumps take: a second netlink socket of
//! the client's namespace, read with 32 KiB buffers, beside the one every
//! other call takes with a page.
//!
//! Why two: the kernel sizes a dump's parts from the largest buffer the
//! socket was ever read with (`max_recvmsg_len`, kept per socket and
//! capped at 32 KiB), and a service dump costs less in large parts: each
//! part resumes its walk of the service hash from the start, so 10,000
//! services in parts of 11 walk it about 900 times, in parts of about 100,
//! 100 times. A destination dump (one per service, a few destinations
//! each) costs more in large parts: each part is allocated at the size
//! the socket remembers, 32 KiB for a few hundred bytes. One socket read
//! with 32 KiB once would give every later destination dump 32 KiB parts;
//! a socket of its own keeps the two apart. Measured on 6.1 and 6.12
//! (`tests/kernel_api/listing_facts.rs`): after one 64 KiB read, parts of
//! 32,320 bytes (101 services; at most 32 KiB less the 320 bytes of the
//! kernel's overhead), and 4 KiB reads of that socket get them truncated;
//! a new socket's first part, made when the request is sent, before any
//! read, is a page at most (3,520 bytes, 11 services).
//!
//! It is opened with the client's other sockets, in its namespace (a
//! socket stays in the namespace it was made in), so a client holds one
//! more descriptor than before. Opening it lazily at the first service
//! dump would save that descriptor for clients that never list services
//! (those that only apply), but would make a namespace-bound client enter
//! its namespace again mid-call, on a thread of its own (on the tokio
//! blocking pool for the async client): it is not worth the descriptor.
//! What the second socket adds to a client's construction: `socket`,
//! `bind`, `getsockname`, `connect`, two `setsockopt` (and a `close` at
//! drop), and tokio's registration for the async client. Measured on the
//! host (release, 20,000 `Client::new` and drop in a loop, three runs):
//! 14.6-14.8 us each with it, 13.4-15.5 us without, within the host's
//! noise.
//!
//! It has its own protocol session (sequence numbers, an unfinished dump
//! of its own to read out), and shares the family id with the main one:
//! each takes the other's before a call and gives it back after, so a
//! family looked up again on one (the module was reloaded) is the other's
//! too. Errors are those of any call: the errno kept, a reply never seen
//! an unknown outcome. After a wait on it ran out it is replaced before
//! its next dump, as the client's own socket is (made in the client's
//! namespace, on a thread that enters it when the caller is elsewhere:
//! the one time a client makes a socket after its construction).
//!
//! Cost, measured with `scripts/measure/listing-cost --kernel 6.1 --before main`
//! (main at aefe61a: every call on one socket read with a page; qemu
//! `-icount shift=0,sleep=off`, one boot; 10,000 TCP services x 5
//! masquerading destinations, IPv4, nothing changing; medians of 8 runs,
//! 2 processes of 4 rounds; the kernel's time and ours):
//!
//! | | before | after |
//! |---|---|---|
//! | `Client::services` (the service dump, made whole) | 0.0937 s | 0.0588 s |
//! | `Client::table_settings` | 0.1547 s | 0.1180 s |
//! | a new `Syncer`'s no-op sync (its settings listing) | 0.1939 s | 0.1529 s |
//! | `Client::table` (a destination dump per service) | 0.6513 s | 0.6154 s |
//! | plain netlink listing (one socket, 4 KiB reads) | 0.6203 s | 0.6272 s |
//! | plain socket-option listing | 0.0368 s | 0.0369 s |
//!
//! `table_settings` is 3.20x the plain socket-option listing (4.20x
//! before) and 0.188x the plain netlink one; `table` 0.981x the plain
//! netlink listing. The same run with every call read with 32 KiB on one
//! socket (the `default_recv_buffer` note in `options.rs`) had
//! `table_settings` at 0.118 s too, but `table` at 1.134 s.

use crate::drive::DATAGRAMS;
use crate::proto::Session;
use crate::transport::netns::NetnsHandle;
use crate::transport::{Fresh, Transport};

/// The buffer a service dump is read with: the most the kernel sizes a
/// dump part from (`netlink_recvmsg` caps the size it remembers at
/// 32 KiB on 6.1 and 6.12).
pub(crate) const SERVICE_DUMP_BUFFER: usize = 32 << 10;

/// The service dumps' socket (over transport `T`), its session and its
/// receive buffer.
#[derive(Debug)]
pub(crate) struct ServiceDumps<T> {
    pub(crate) io: T,
    pub(crate) session: Session,
    /// Room for [`DATAGRAMS`] datagrams of [`SERVICE_DUMP_BUFFER`].
    pub(crate) rx: Vec<u8>,
}

impl<T> ServiceDumps<T> {
    /// The service dumps' side over `io`, whose session shares `main`'s
    /// timeout.
    pub(crate) fn new(io: T, main: &Session) -> Self {
        ServiceDumps {
            io,
            session: Session::new(main.timeout()),
            rx: vec![0; SERVICE_DUMP_BUFFER * DATAGRAMS],
        }
    }

    /// Takes the family id the main session knows (if it knows one), for
    /// a call on this socket.
    pub(crate) fn take_family(&mut self, main: &Session) {
        if let Some(id) = main.family() {
            self.session.state.family = Some(id);
        }
    }

    /// Gives the main session the family id this one knows after a call
    /// (looked up again, or forgotten, when the module was reloaded).
    pub(crate) fn give_family(&self, main: &mut Session) {
        main.state.family = self.session.family();
    }
}

impl<T: Transport> ServiceDumps<T> {
    /// Moves to a fresh socket in `netns` if a wait ran out on this one,
    /// as the client's own socket does
    /// ([`ClientCore::renew_if_due`](crate::client_core::ClientCore::renew_if_due)).
    pub(crate) async fn renew_if_due(&mut self, netns: Option<&NetnsHandle>) {
        if !self.session.wants_fresh_socket() {
            return;
        }
        let fresh = Fresh {
            netns,
            buffer: None,
            timeout: self.session.timeout(),
        };
        if self.io.reopen(&fresh).await.is_ok() {
            self.session.moved_to_fresh_socket();
        }
    }
}

#[cfg(test)]
mod tests;

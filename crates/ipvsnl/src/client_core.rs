//! The operations of a client, written once over any [`Transport`]: the
//! blocking [`Client`](crate::Client) runs them with
//! [`block_on`](crate::block_on::block_on), the async client awaits them.
//! Each builds a machine of the protocol core, runs it with the one
//! driver and decodes what it collected; nothing here knows how the
//! socket waits.

use ipvsnl_wire::{IpvsCommand, IpvsMessage};

use crate::decode;
use crate::drive::{drive, outcome, DATAGRAMS};
use crate::listing::Checks;
use crate::options::ClientOptions;
use crate::proto::{frame, CallKind, Replies, Session};
use crate::service_dumps::ServiceDumps;
use crate::transport::netns::NetnsHandle;
use crate::transport::sockopt::SockoptSocket;
use crate::transport::{Fresh, Transport};
use crate::{Error, Info, Object, Request, RequestKind, SyncDaemon, Target, Timeouts};

/// Estimated kernel memory one queued reply takes from the socket buffer
/// (an skb's truesize for a small message).
const REPLY_TRUESIZE: usize = 1024;

/// A client's state over transport `T`: the socket, the protocol session
/// and the buffers.
pub(crate) struct ClientCore<T> {
    pub(crate) io: T,
    pub(crate) session: Session,
    pub(crate) opts: ClientOptions,
    /// Replies one batch may leave queued without overflowing the socket.
    pub(crate) max_batch_requests: usize,
    /// Room for [`DATAGRAMS`] datagrams of the receive buffer's size.
    pub(crate) rx: Vec<u8>,
    /// The socket its service dumps take ([`crate::service_dumps`]).
    pub(crate) service_dumps: ServiceDumps<T>,
    /// The client's namespace, for the `/proc/net` files (None if `/proc`
    /// was not there when the client was made).
    pub(crate) netns: Option<NetnsHandle>,
    /// What makes its listings whole (the socket-option socket).
    pub(crate) checks: Checks,
    /// The emulated namespace it talks to, if it does (its identity for
    /// the sync engine, in place of a namespace file).
    #[cfg(any(test, feature = "emulator"))]
    pub(crate) emulated_ns: Option<u64>,
}

impl<T> std::fmt::Debug for ClientCore<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("namespace", &self.netns)
            .field("family", &self.session.family())
            .field("last_seq", &self.session.last_seq())
            .field("unfinished_dump", &self.session.unfinished_dump())
            .field("options", &self.opts)
            .field("max_batch_requests", &self.max_batch_requests)
            .field("listing_checks", &self.checks)
            .finish_non_exhaustive()
    }
}

/// The error of a socket that could not be set up, as a failed family
/// lookup (the first thing a client does).
pub(crate) fn setup_error(source: std::io::Error) -> Error {
    Error::io(
        Target::new(RequestKind::ResolveFamily, Object::Family),
        source,
    )
}

impl<T: Transport> ClientCore<T> {
    /// A client's state over `io`, whose socket was given a receive buffer
    /// of `granted` bytes, with the socket of its service dumps over
    /// `service_dumps` and the socket-option socket of its namespace (or
    /// why there is none).
    pub(crate) fn new(
        io: T,
        granted: usize,
        opts: ClientOptions,
        netns: Option<NetnsHandle>,
        (service_dumps, sockopt): (T, std::io::Result<SockoptSocket>),
    ) -> Self {
        let session = Session::new(opts.timeout);
        ClientCore {
            checks: Checks::new(sockopt),
            io,
            service_dumps: ServiceDumps::new(service_dumps, &session),
            session,
            max_batch_requests: (granted / REPLY_TRUESIZE / 2).max(1),
            rx: vec![0; opts.recv_buffer * DATAGRAMS],
            opts,
            netns,
            #[cfg(any(test, feature = "emulator"))]
            emulated_ns: None,
        }
    }

    /// Moves to a fresh socket if a wait for the kernel ran out on this
    /// one ([`Session::wants_fresh_socket`]); every call on the socket
    /// begins with it. A socket that cannot be opened (out of
    /// descriptors, the namespace gone) leaves the old one in use, and is
    /// tried again before the next call.
    pub(crate) async fn renew_if_due(&mut self) {
        if !self.session.wants_fresh_socket() {
            return;
        }
        let fresh = Fresh {
            netns: self.netns.as_ref(),
            buffer: Some(self.opts.socket_buffer),
            timeout: self.opts.timeout,
        };
        if self.io.reopen(&fresh).await.is_ok() {
            self.session.moved_to_fresh_socket();
        }
    }

    /// The IPVS family id, resolved on first use.
    pub(crate) async fn family_id(&mut self) -> Result<u16, Error> {
        self.renew_if_due().await;
        if let Some(id) = self.session.family() {
            return Ok(id);
        }
        let mut lookup = self.session.resolve_family();
        drive(
            &mut self.io,
            &mut self.rx,
            self.opts.recv_buffer,
            &mut lookup,
        )
        .await;
        outcome(lookup.result(), || {
            Target::new(RequestKind::ResolveFamily, Object::Family)
        })
    }

    /// The IPVS family id as the kernel has it now, looked up again: an id
    /// that differs from an earlier one means the `ip_vs` module was
    /// unloaded and loaded since (its tables started empty).
    pub(crate) async fn family_now(&mut self) -> Result<u16, Error> {
        self.session.forget_family();
        self.family_id().await
    }

    /// The family id this connection last resolved, if any.
    pub(crate) fn known_family(&self) -> Option<u16> {
        self.session.family()
    }

    /// Sends a get or a dump (`kind` says which, and names it in errors)
    /// written by `write` (given the family id, sequence number and
    /// flags), and hands each IPVS reply (its command and attribute bytes)
    /// to `decode`, which appends what it decodes to the list returned.
    pub(crate) async fn exchange<R>(
        &mut self,
        kind: RequestKind,
        target: impl FnOnce() -> Object,
        write: impl Fn(&mut Vec<u8>, u16, u32, u16),
        decode: impl Fn(u8, &[u8], &mut Vec<R>) -> Result<(), crate::DecodeError>,
    ) -> Result<Vec<R>, Error> {
        let call_kind = match kind {
            RequestKind::ListServices
            | RequestKind::ListDestinations
            | RequestKind::ListDaemons => CallKind::Dump,
            _ => CallKind::Get,
        };
        self.renew_if_due().await;
        let mut call = self.session.call(
            call_kind,
            write,
            Collect {
                out: Vec::new(),
                decode,
            },
        );
        drive(&mut self.io, &mut self.rx, self.opts.recv_buffer, &mut call).await;
        let result = call.result();
        let out = std::mem::take(&mut call.replies().out);
        drop(call);
        outcome(result, || Target::new(kind, target()))?;
        Ok(out)
    }

    /// Sends one request and collects its reply messages, parsed into
    /// owned attributes.
    async fn transact(
        &mut self,
        kind: RequestKind,
        msg: IpvsMessage,
    ) -> Result<Vec<IpvsMessage>, Error> {
        self.exchange(
            kind,
            || Object::Table,
            |out, family, seq, flags| frame::push_request(out, family, seq, flags, msg.clone()),
            |command, attrs, out| {
                out.push(frame::decode(command, attrs)?);
                Ok(())
            },
        )
        .await
    }

    /// One change: an apply of one request (the same state machine, so a
    /// lost reply is unknown and a stale family id is looked up again).
    pub(crate) async fn set(&mut self, request: Request) -> Result<(), Error> {
        let results = self
            .apply_failures(std::slice::from_ref(&request), &Default::default())
            .await
            .into_results(1);
        match results.into_iter().next() {
            Some(r) => r,
            None => Err(Error::decode(request.target(), "no outcome")),
        }
    }

    /// The version and connection table size.
    pub(crate) async fn info(&mut self) -> Result<Info, Error> {
        let kind = RequestKind::GetInfo;
        let msg = IpvsMessage::new(IpvsCommand::GetInfo, vec![]);
        let replies = self.transact(kind, msg).await?;
        let target = || Target::new(kind, Object::Table);
        let first = replies
            .first()
            .ok_or_else(|| Error::decode(target(), "no reply"))?;
        decode::info(&first.attrs).map_err(|detail| Error::decode(target(), detail))
    }

    /// The connection timeouts.
    pub(crate) async fn timeouts(&mut self) -> Result<Timeouts, Error> {
        let kind = RequestKind::GetTimeouts;
        let msg = IpvsMessage::new(IpvsCommand::GetConfig, vec![]);
        let replies = self.transact(kind, msg).await?;
        let first = replies
            .first()
            .ok_or_else(|| Error::decode(Target::new(kind, Object::Table), "no reply"))?;
        Ok(decode::timeouts(&first.attrs))
    }

    /// The running sync daemons (master first).
    pub(crate) async fn sync_daemons(&mut self) -> Result<Vec<SyncDaemon>, Error> {
        let kind = RequestKind::ListDaemons;
        let msg = IpvsMessage::new(IpvsCommand::GetDaemon, vec![]);
        let replies = self.transact(kind, msg).await?;
        replies
            .iter()
            .map(|m| {
                decode::sync_daemon(&m.attrs)
                    .map_err(|detail| Error::decode(Target::new(kind, Object::Table), detail))
            })
            .collect()
    }
}

/// The replies of a get or dump, decoded into a list.
struct Collect<R, D> {
    out: Vec<R>,
    decode: D,
}

impl<R, D> Replies for Collect<R, D>
where
    D: Fn(u8, &[u8], &mut Vec<R>) -> Result<(), crate::DecodeError>,
{
    #[inline]
    fn message(&mut self, command: u8, attrs: &[u8]) -> Result<(), crate::DecodeError> {
        (self.decode)(command, attrs, &mut self.out)
    }

    fn restart(&mut self) {
        self.out.clear();
    }

    #[inline]
    fn datagram(&mut self, datagram: &[u8]) {
        // Room for every data message of the datagram at once (a dump's
        // part is typically all of a service's destinations).
        self.out.reserve(frame::data_message_count(datagram));
    }
}

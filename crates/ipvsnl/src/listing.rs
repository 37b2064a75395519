//! Listing: services and destinations, one dump (or get) at a time on the
//! client's one socket (over either transport), each reply decoded in place from the kernel's bytes
//! (the wire crate's one-pass values, then [`crate::decode`]) without an
//! intermediate attribute list.
//!
//! One dump at a time: the kernel answers a second dump request on a socket
//! whose first dump is unfinished with `EBUSY`. The first part of a dump is
//! produced while the request is being sent, and each next part (at the
//! end, `NLMSG_DONE`) as the previous one is read, so one `recvmmsg` takes
//! two: a service with a few destinations costs one `sendmsg` and one
//! receive call. The kernel sizes the parts from the reader's buffer: the
//! client's page-sized buffers keep them small, which measured faster than
//! big ones.

use std::collections::HashSet;
use std::ops::ControlFlow;

use ipvsnl_wire::write::{begin_ipvs_message, end_message};
use ipvsnl_wire::IpvsCommand;

use crate::conn::Conn;
use crate::decode::{self, DecodeResult, Detail};
use crate::drive::{drive, outcome};
use crate::proto::repeats::keep_first;
use crate::proto::{CallKind, Replies};
use crate::request::push_service_nest;
use crate::transport::Transport;
use crate::{DestinationEntry, Error, Object, RequestKind, ServiceEntry, ServiceKey, Target};

#[cfg(doc)]
use crate::Client;

impl<T: Transport> Conn<T> {
    /// One service, or not found (see [`Client::service`]).
    pub(crate) async fn service(&mut self, key: &ServiceKey) -> Result<ServiceEntry, Error> {
        key.validate()?;
        let kind = RequestKind::GetService;
        let mut replies = self
            .fetch(kind, IpvsCommand::GetService, Some(key), |attrs, out| {
                out.push(decode::service_reply(attrs, Detail::Full)?);
                Ok(())
            })
            .await?;
        if replies.is_empty() {
            return Err(Error::decode(
                Target::new(kind, Object::Service(*key)),
                "no reply",
            ));
        }
        Ok(replies.swap_remove(0))
    }

    /// Visits every service once (see [`Client::for_each_service`]).
    pub(crate) async fn for_each_service(
        &mut self,
        visit: impl FnMut(&ServiceEntry) -> ControlFlow<()>,
    ) -> Result<(), Error> {
        let kind = RequestKind::ListServices;
        let mut call = self.session.call(
            CallKind::Dump,
            |out: &mut Vec<u8>, family, seq, flags| {
                let msg = begin_ipvs_message(out, family, flags, seq, IpvsCommand::GetService);
                end_message(out, msg);
            },
            Visit {
                scratch: Vec::with_capacity(1),
                seen: HashSet::new(),
                visit,
                stopped: false,
            },
        );
        drive(&mut self.io, &mut self.rx, self.opts.recv_buffer, &mut call).await;
        outcome(call.result(), || Target::new(kind, Object::Table))
    }

    /// Every service from `passes` service dumps merged, each listed into
    /// the entry it stays in, and the destinations of those `wanted`
    /// accepts (one dump each; the others get none).
    pub(crate) async fn list_entries(
        &mut self,
        passes: usize,
        detail: Detail,
        mut wanted: impl FnMut(&ServiceKey) -> bool,
    ) -> Result<Vec<ServiceEntry>, Error> {
        let mut entries = self.list_services(passes, detail).await?;
        for entry in &mut entries {
            let key = &entry.service.key;
            if wanted(key) {
                entry.destinations = self.list_destinations(key, detail).await?;
            }
        }
        Ok(entries)
    }

    /// Every service, each once, from `passes` service dumps merged (see
    /// [`keep_first`] for why a resumed dump can miss or repeat entries:
    /// a second pass catches what one missed, at the cost of a dump).
    pub(crate) async fn list_services(
        &mut self,
        passes: usize,
        detail: Detail,
    ) -> Result<Vec<ServiceEntry>, Error> {
        let mut services = self.dump_services(detail).await?;
        for _ in 1..passes {
            if services.len() <= ONE_PART_SERVICES {
                break;
            }
            let again = self.dump_services(detail).await?;
            services.extend(again);
        }
        keep_first(&mut services, |s: &ServiceEntry| s.service.key);
        Ok(services)
    }

    async fn dump_services(&mut self, detail: Detail) -> Result<Vec<ServiceEntry>, Error> {
        self.fetch(
            RequestKind::ListServices,
            IpvsCommand::GetService,
            None,
            |attrs, out| push_service(attrs, detail, out),
        )
        .await
    }

    /// The destinations of one service (one dump), unchecked key.
    pub(crate) async fn list_destinations(
        &mut self,
        key: &ServiceKey,
        detail: Detail,
    ) -> Result<Vec<DestinationEntry>, Error> {
        let family = key.family();
        let mut dests = self
            .fetch(
                RequestKind::ListDestinations,
                IpvsCommand::GetDest,
                Some(key),
                |attrs, out| decode::push_destination(attrs, family, detail, out),
            )
            .await?;
        keep_first(&mut dests, |d| (d.destination.addr, d.destination.port));
        Ok(dests)
    }

    /// Sends a get (or, for a list kind, a dump) of `command` with the
    /// service key nest of `key`, and decodes each reply's attribute bytes.
    async fn fetch<R>(
        &mut self,
        kind: RequestKind,
        command: IpvsCommand,
        key: Option<&ServiceKey>,
        decode: impl Fn(&[u8], &mut Vec<R>) -> DecodeResult<()>,
    ) -> Result<Vec<R>, Error> {
        let target = || key.map_or(Object::Table, |k| Object::Service(*k));
        self.exchange(
            kind,
            target,
            |out, family, seq, flags| {
                let msg = begin_ipvs_message(out, family, flags, seq, command);
                if let Some(k) = key {
                    push_service_nest(out, k, None);
                }
                end_message(out, msg);
            },
            |_, attrs, out| decode(attrs, out),
        )
        .await
    }
}

/// The replies of [`Client::for_each_service`]: each service decoded into
/// one scratch entry and shown to the visitor, once per key.
struct Visit<F> {
    scratch: Vec<ServiceEntry>,
    seen: HashSet<ServiceKey>,
    visit: F,
    stopped: bool,
}

impl<F: FnMut(&ServiceEntry) -> ControlFlow<()>> Replies for Visit<F> {
    fn message(&mut self, _command: u8, attrs: &[u8]) -> Result<(), String> {
        self.scratch.clear();
        push_service(attrs, Detail::Full, &mut self.scratch)?;
        if let Some(s) = self.scratch.first() {
            // A resumed dump can send a service again (see keep_first).
            if self.seen.insert(s.service.key) {
                self.stopped = (self.visit)(s).is_break();
            }
        }
        Ok(())
    }

    fn restart(&mut self) {
        // Taken again from the start: those already shown are not shown
        // twice.
    }

    fn stopped(&self) -> bool {
        self.stopped
    }
}

/// Appends the service of a service dump part's attribute bytes to `out`
/// (nothing on error; no destinations), filled where it lies: a listing decodes tens of
/// thousands, and under emulation every copy of an entry costs.
pub(crate) fn push_service(
    attrs: &[u8],
    detail: Detail,
    out: &mut Vec<ServiceEntry>,
) -> DecodeResult<()> {
    let at = out.len();
    out.push(decode::empty_service());
    let filled = match out.last_mut() {
        Some(last) => decode::fill_service(attrs, detail, last),
        None => Ok(()),
    };
    if filled.is_err() {
        out.truncate(at);
    }
    filled
}

/// Services that surely fit in the first part of a dump (a part is about a
/// page; a service message about 330 bytes): a dump of no more was never
/// resumed, so it can neither miss nor repeat one.
const ONE_PART_SERVICES: usize = 8;

#[cfg(test)]
mod tests {
    /// A service message's attribute bytes (after the netlink and generic
    /// headers).
    fn service_attrs(attrs: Vec<ipvsnl_wire::ServiceAttr>) -> Vec<u8> {
        use ipvsnl_wire::{IpvsAttr, IpvsCommand, IpvsMessage};
        let mut v = Vec::new();
        let msg = IpvsMessage::new(IpvsCommand::NewService, vec![IpvsAttr::Service(attrs)]);
        crate::proto::frame::push_request(&mut v, 0x30, 1, 0, msg);
        v.split_off(20)
    }

    #[test]
    fn a_listed_service_is_filled_in_place_and_a_refused_one_not_kept() {
        use super::push_service;
        use crate::decode::Detail;
        use crate::{AddressFamily, Scheduler, ServiceEntry, ServiceKey};
        use ipvsnl_wire::ServiceAttr;
        let good = service_attrs(vec![
            ServiceAttr::AddressFamily(2),
            ServiceAttr::Fwmark(4),
            ServiceAttr::Scheduler("wlc".into()),
            ServiceAttr::Timeout(30),
        ]);
        let mut out: Vec<ServiceEntry> = Vec::new();
        push_service(&good, Detail::Full, &mut out).unwrap();
        // No family: refused, and nothing of it is left in the list.
        let bad = service_attrs(vec![ServiceAttr::Fwmark(5)]);
        let err = push_service(&bad, Detail::Full, &mut out).unwrap_err();
        assert!(err.contains("IPVS_SVC_ATTR_AF"), "{err}");
        assert_eq!(out.len(), 1);
        let s = &out[0].service;
        assert_eq!(s.key, ServiceKey::fwmark(4, AddressFamily::Inet));
        assert_eq!(s.scheduler, Scheduler::WeightedLeastConnection);
        assert_eq!(s.timeout, 30);
        assert!(out[0].destinations.is_empty());
    }
}

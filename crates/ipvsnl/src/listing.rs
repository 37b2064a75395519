//! Listing: services and destinations, one dump (or get) at a time on the
//! client's one socket (over either transport), each reply decoded in place from the kernel's bytes
//! (the wire crate's one-pass values, then [`crate::decode`]) without an
//! intermediate attribute list. A listing of the services is whole: what
//! the kernel's dump skipped is found by the checks of [`whole`].
//!
//! One dump at a time: the kernel answers a second dump request on a socket
//! whose first dump is unfinished with `EBUSY`. The first part of a dump is
//! produced while the request is being sent, and each next part (at the
//! end, `NLMSG_DONE`) as the previous one is read, so one `recvmmsg` takes
//! two: a service with a few destinations costs one `sendmsg` and one
//! receive call. The kernel sizes the parts from the reader's buffer: the
//! client's page-sized buffers keep them small, which measured faster than
//! big ones.

mod checks;
mod parts;
mod whole;

use std::collections::HashSet;
use std::ops::ControlFlow;

use ipvsnl_wire::write::{begin_ipvs_message, end_message};
use ipvsnl_wire::IpvsCommand;

use crate::conn::Conn;
use crate::decode::{self, DecodeResult, Detail};
use crate::drive::{drive, outcome};
use crate::proto::repeats::keep_first;
use crate::proto::{frame, CallKind, Replies};
use crate::request::push_service_nest;
use crate::transport::sockopt::ServiceSnapshot;
use crate::transport::Transport;
use crate::{
    AddressFamily, DestinationEntry, Error, Object, RequestKind, ServiceEntry, ServiceKey, Target,
};

pub(crate) use checks::Checks;
use parts::Parts;
use whole::{Found, Listed};

#[cfg(doc)]
use crate::Client;

impl<T: Transport> Conn<T> {
    /// One service, or not found (see [`Client::service`]).
    pub(crate) async fn service(&mut self, key: &ServiceKey) -> Result<ServiceEntry, Error> {
        key.validate()?;
        self.get_service(key, Detail::Full).await
    }

    /// One service (a `GET_SERVICE`), unchecked key.
    async fn get_service(
        &mut self,
        key: &ServiceKey,
        detail: Detail,
    ) -> Result<ServiceEntry, Error> {
        let kind = RequestKind::GetService;
        let mut replies = self
            .fetch(kind, IpvsCommand::GetService, Some(key), |attrs, out| {
                out.push(decode::service_reply(attrs, detail)?);
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

    /// Visits every service once, those the dump missed at the end (see
    /// [`Client::for_each_service`]).
    pub(crate) async fn for_each_service(
        &mut self,
        visit: impl FnMut(&ServiceEntry) -> ControlFlow<()>,
    ) -> Result<(), Error> {
        let kind = RequestKind::ListServices;
        let mut visit = Visit {
            scratch: Vec::with_capacity(1),
            seen: HashSet::new(),
            visit,
            stopped: false,
            parts: Parts::default(),
            ipv6: false,
        };
        let mut call = self
            .session
            .call(CallKind::Dump, write_service_dump, Visiting(&mut visit));
        drive(&mut self.io, &mut self.rx, self.opts.recv_buffer, &mut call).await;
        let result = call.result();
        drop(call);
        outcome(result, || Target::new(kind, Object::Table))?;
        if visit.ipv6 {
            self.checks.ipv6_listed();
        }
        if visit.stopped {
            return Ok(());
        }
        if !visit.parts.is_one_snapshot() {
            self.complete(&mut visit, Detail::Full).await?;
            if visit.stopped {
                return Ok(());
            }
        }
        self.checks.whole(visit.seen.iter());
        Ok(())
    }

    /// Every service, and the destinations of those `wanted` accepts (one
    /// dump each; the others get none).
    pub(crate) async fn list_entries(
        &mut self,
        detail: Detail,
        mut wanted: impl FnMut(&ServiceKey) -> bool,
    ) -> Result<Vec<ServiceEntry>, Error> {
        let mut entries = self.list_services(detail).await?;
        for entry in &mut entries {
            let key = &entry.service.key;
            if wanted(key) {
                entry.destinations = self.list_destinations(key, detail).await?;
            }
        }
        Ok(entries)
    }

    /// Every service, each once, whole (see [`Client::table`]): one dump,
    /// checked by [`whole`] unless it was made in one part.
    pub(crate) async fn list_services(
        &mut self,
        detail: Detail,
    ) -> Result<Vec<ServiceEntry>, Error> {
        let (services, parts) = self.dump_services(detail).await?;
        self.checks.listed(services.iter().map(|e| &e.service.key));
        // Repeats are dropped when the list is handed out, unless the check
        // showed there are none (or the dump never resumed).
        let mut listed = Listed::new(services, parts.is_single());
        if !parts.is_one_snapshot() {
            self.complete(&mut listed, detail).await?;
        }
        let services = listed.into_services();
        self.checks.whole(services.iter().map(|e| &e.service.key));
        Ok(services)
    }

    /// One service dump, and how its services came. A dump that resumed
    /// can hold repeats (see [`keep_first`]): they are the caller's to
    /// drop.
    async fn dump_services(&mut self, detail: Detail) -> Result<(Vec<ServiceEntry>, Parts), Error> {
        let mut call = self.session.call(
            CallKind::Dump,
            write_service_dump,
            ServiceDump {
                out: Vec::new(),
                detail,
                parts: Parts::default(),
            },
        );
        drive(&mut self.io, &mut self.rx, self.opts.recv_buffer, &mut call).await;
        let result = call.result();
        let out = std::mem::take(&mut call.replies().out);
        let parts = call.replies().parts;
        drop(call);
        outcome(result, || {
            Target::new(RequestKind::ListServices, Object::Table)
        })?;
        Ok((out, parts))
    }

    /// The destinations of one service (one dump), unchecked key.
    pub(crate) async fn list_destinations(
        &mut self,
        key: &ServiceKey,
        detail: Detail,
    ) -> Result<Vec<DestinationEntry>, Error> {
        let family = key.family();
        let mut call = self.session.call(
            CallKind::Dump,
            |out: &mut Vec<u8>, family_id, seq, flags| {
                let msg = begin_ipvs_message(out, family_id, flags, seq, IpvsCommand::GetDest);
                push_service_nest(out, key, None);
                end_message(out, msg);
            },
            DestDump {
                out: Vec::new(),
                family,
                detail,
                parts: Parts::default(),
            },
        );
        drive(&mut self.io, &mut self.rx, self.opts.recv_buffer, &mut call).await;
        let result = call.result();
        let mut dests = std::mem::take(&mut call.replies().out);
        let parts = call.replies().parts;
        drop(call);
        outcome(result, || {
            Target::new(RequestKind::ListDestinations, Object::Service(*key))
        })?;
        // A dump repeats an entry only when it resumes: one of a few
        // destinations (one part) never does, and is not searched.
        if !parts.is_single() {
            keep_first(&mut dests, |d| (d.destination.addr, d.destination.port));
        }
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

/// Writes the request of a service dump.
fn write_service_dump(out: &mut Vec<u8>, family: u16, seq: u32, flags: u16) {
    let msg = begin_ipvs_message(out, family, flags, seq, IpvsCommand::GetService);
    end_message(out, msg);
}

/// The replies of a destination dump, collected, and how they came.
struct DestDump {
    out: Vec<DestinationEntry>,
    family: AddressFamily,
    detail: Detail,
    parts: Parts,
}

impl Replies for DestDump {
    #[inline]
    fn message(&mut self, _command: u8, attrs: &[u8]) -> Result<(), String> {
        self.parts.entry();
        decode::push_destination(attrs, self.family, self.detail, &mut self.out)
    }

    fn restart(&mut self) {
        self.out.clear();
        self.parts.restart();
    }

    #[inline]
    fn datagram(&mut self, datagram: &[u8]) {
        self.parts.datagram(datagram.len());
        // Room for every destination of the part at once.
        self.out.reserve(frame::data_message_count(datagram));
    }
}

/// The replies of a service dump, collected, and how they came.
struct ServiceDump {
    out: Vec<ServiceEntry>,
    detail: Detail,
    parts: Parts,
}

impl Replies for ServiceDump {
    #[inline]
    fn message(&mut self, _command: u8, attrs: &[u8]) -> Result<(), String> {
        self.parts.entry();
        push_service(attrs, self.detail, &mut self.out)
    }

    fn restart(&mut self) {
        self.out.clear();
        self.parts.restart();
    }

    #[inline]
    fn datagram(&mut self, datagram: &[u8]) {
        self.parts.datagram(datagram.len());
        // Room for every service of the part at once.
        self.out.reserve(frame::data_message_count(datagram));
    }
}

/// The replies of [`Client::for_each_service`]: each service decoded into
/// one scratch entry and shown to the visitor, once per key; and how they
/// came.
struct Visit<F> {
    scratch: Vec<ServiceEntry>,
    seen: HashSet<ServiceKey>,
    visit: F,
    stopped: bool,
    parts: Parts,
    /// An IPv6 service was seen.
    ipv6: bool,
}

/// A visit lent to the call of its dump.
struct Visiting<'v, F>(&'v mut Visit<F>);

impl<F: FnMut(&ServiceEntry) -> ControlFlow<()>> Replies for Visiting<'_, F> {
    fn message(&mut self, _command: u8, attrs: &[u8]) -> Result<(), String> {
        self.0.message(attrs)
    }

    fn restart(&mut self) {
        // Taken again from the start: those already shown are not shown
        // twice.
        self.0.parts.restart();
    }

    fn datagram(&mut self, datagram: &[u8]) {
        self.0.parts.datagram(datagram.len());
    }

    fn stopped(&self) -> bool {
        self.0.stopped
    }
}

impl<F: FnMut(&ServiceEntry) -> ControlFlow<()>> Visit<F> {
    /// One service of the dump.
    fn message(&mut self, attrs: &[u8]) -> Result<(), String> {
        self.parts.entry();
        self.scratch.clear();
        push_service(attrs, Detail::Full, &mut self.scratch)?;
        if let Some(s) = self.scratch.first() {
            // A resumed dump can send a service again (see keep_first).
            if self.seen.insert(s.service.key) {
                self.ipv6 |= s.service.key.family() == AddressFamily::Inet6;
                self.stopped = (self.visit)(s).is_break();
            }
        }
        Ok(())
    }
}

/// A visit goes on with the services found after its dump.
impl<F: FnMut(&ServiceEntry) -> ControlFlow<()>> Found for Visit<F> {
    fn surely_has(&mut self, _snapshot: &ServiceSnapshot) -> bool {
        // Its keys are in a set already: looking each up is cheap.
        false
    }

    fn contains(&mut self, key: &ServiceKey) -> bool {
        self.seen.contains(key)
    }

    fn add(&mut self, entry: ServiceEntry) -> ControlFlow<()> {
        if self.seen.insert(entry.service.key) {
            self.stopped = (self.visit)(&entry).is_break();
        }
        if self.stopped {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
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

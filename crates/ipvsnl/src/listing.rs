//! Listing: services and destinations, one dump (or get) at a time, over
//! either transport (service dumps on a socket of their own,
//! [`crate::service_dumps`]), each reply decoded in place from the kernel's bytes
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
//! client's page-sized buffers keep destination dumps' parts small, which
//! measured faster than big ones; service dumps, read with 32 KiB on their
//! own socket, come in large parts, which costs them less.

mod by_sockopt;
mod checks;
mod parts;
mod replies;
mod visit;
mod whole;

use std::ops::ControlFlow;

use ipvsnl_wire::write::{begin_ipvs_message, end_message};
use ipvsnl_wire::IpvsCommand;

use crate::client_core::ClientCore;
use crate::decode::{self, DecodeResult, Detail};
use crate::drive::{drive, outcome};
use crate::proto::repeats::keep_first;
use crate::proto::CallKind;
use crate::request::push_service_nest;
use crate::service_dumps::SERVICE_DUMP_BUFFER;
use crate::transport::Transport;
use crate::{DestinationEntry, Error, Object, RequestKind, ServiceEntry, ServiceKey, Target};

use by_sockopt::{Copy, DestCounts};
pub(crate) use checks::Checks;
use parts::Parts;
use replies::{write_service_dump, Destinations, Dump, Services};
use visit::{Visit, Visiting};
use whole::Listed;

#[cfg(doc)]
use crate::Client;

impl<T: Transport> ClientCore<T> {
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
        let mut visit = Visit::new(visit);
        let dumps = &mut self.service_dumps;
        dumps.renew_if_due(self.netns.as_ref()).await;
        dumps.take_family(&self.session);
        let mut call = dumps
            .session
            .call(CallKind::Dump, write_service_dump, Visiting(&mut visit));
        drive(&mut dumps.io, &mut dumps.rx, SERVICE_DUMP_BUFFER, &mut call).await;
        let result = call.result();
        drop(call);
        dumps.give_family(&mut self.session);
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

    /// Every service ([`Self::list_services`]), with the whole-listing
    /// check's `GET_SERVICES` snapshot kept afterwards when `keep` (for
    /// the socket-option copies of destinations; the caller clears it);
    /// on an error nothing is kept.
    async fn list_services_keeping_snapshot(
        &mut self,
        detail: Detail,
        keep: bool,
    ) -> Result<Vec<ServiceEntry>, Error> {
        self.checks.keep_snapshot = keep;
        let listed = self.list_services(detail).await;
        self.checks.keep_snapshot = false;
        if listed.is_err() {
            self.checks.snapshot = None;
        }
        listed
    }

    /// Every service, and the destinations of those `wanted` accepts (the
    /// others get none): of a settings listing, by the socket-option
    /// interface where it lists them whole ([`by_sockopt`]); else one dump
    /// each.
    pub(crate) async fn list_entries(
        &mut self,
        detail: Detail,
        mut wanted: impl FnMut(&ServiceKey) -> bool,
    ) -> Result<Vec<ServiceEntry>, Error> {
        let copies = matches!(detail, Detail::Settings) && self.opts.sockopt_listing;
        let mut entries = self.list_services_keeping_snapshot(detail, copies).await?;
        let wanted: Vec<bool> = entries.iter().map(|e| wanted(&e.service.key)).collect();
        let copied = if copies {
            self.copy_destinations(&mut entries, &wanted).await
        } else {
            Vec::new()
        };
        self.checks.snapshot = None;
        self.checks.dests_buffer = Vec::new();
        for (i, entry) in entries.iter_mut().enumerate() {
            if wanted[i] && !copied.get(i).copied().unwrap_or(false) {
                let key = &entry.service.key;
                entry.destinations = self.list_destinations(key, detail).await?;
            }
        }
        Ok(entries)
    }

    /// Visits every row of a settings listing ([`Client::table_settings`])
    /// in turn, each service's destinations listed just before its visit
    /// and dropped after it (see [`Client::for_each_settings_row`]): in the
    /// kernel's order, or in the one `order` gives (see
    /// [`Client::for_each_settings_row_in`]).
    pub(crate) async fn for_each_settings_row(
        &mut self,
        order: Option<impl FnOnce(&[ServiceKey]) -> Vec<usize>>,
        mut visit: impl FnMut(&ServiceEntry) -> ControlFlow<()>,
    ) -> Result<(), Error> {
        let copies = self.opts.sockopt_listing;
        let mut entries = self
            .list_services_keeping_snapshot(Detail::Settings, copies)
            .await?;
        let snapshot = if copies { self.copies_snapshot() } else { None };
        self.checks.snapshot = None;
        // Each service's count of destinations in the snapshot, looked up
        // in the listing's order (whatever the visit's).
        let mut expected = Vec::new();
        if let Some(snapshot) = &snapshot {
            let mut counts = DestCounts::new(snapshot);
            expected.extend(entries.iter().map(|e| counts.expected(&e.service.key)));
        }
        let visiting = match order {
            Some(order) => {
                let keys: Vec<ServiceKey> = entries.iter().map(|e| e.service.key).collect();
                visiting_order(order(&keys), keys.len())?
            }
            None => (0..entries.len()).collect(),
        };
        // One list of destinations, handed from row to row.
        let mut spare = Vec::new();
        for i in visiting {
            let entry = &mut entries[i];
            entry.destinations = std::mem::take(&mut spare);
            let copy = match expected.get(i) {
                Some(&count) => self.copy_into(count, entry).await,
                None => Copy::Netlink,
            };
            if copy == Copy::Stop {
                // The interface failed: netlink for the rest.
                expected.clear();
            }
            if copy != Copy::Filled {
                let key = entry.service.key;
                entry.destinations = self.list_destinations(&key, Detail::Settings).await?;
            }
            let flow = visit(entry);
            spare = std::mem::take(&mut entry.destinations);
            if flow.is_break() {
                break;
            }
        }
        self.checks.dests_buffer = Vec::new();
        Ok(())
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

    /// One service dump, on the socket of service dumps
    /// ([`crate::service_dumps`]), and how its services came. A dump that
    /// resumed can hold repeats (see [`keep_first`]): they are the
    /// caller's to drop.
    async fn dump_services(&mut self, detail: Detail) -> Result<(Vec<ServiceEntry>, Parts), Error> {
        let dumps = &mut self.service_dumps;
        dumps.renew_if_due(self.netns.as_ref()).await;
        dumps.take_family(&self.session);
        let mut call = dumps.session.call(
            CallKind::Dump,
            write_service_dump,
            Dump::new(Services(detail)),
        );
        drive(&mut dumps.io, &mut dumps.rx, SERVICE_DUMP_BUFFER, &mut call).await;
        let result = call.result();
        let out = std::mem::take(&mut call.replies().out);
        let parts = call.replies().parts;
        drop(call);
        dumps.give_family(&mut self.session);
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
        self.renew_if_due().await;
        let mut call = self.session.call(
            CallKind::Dump,
            |out: &mut Vec<u8>, family_id, seq, flags| {
                let msg = begin_ipvs_message(out, family_id, flags, seq, IpvsCommand::GetDest);
                push_service_nest(out, key, None);
                end_message(out, msg);
            },
            Dump::new(Destinations(family, detail)),
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

/// The order of a visit as its caller gave it (indices into `len`
/// services), checked: each index in range and there once, or an error
/// naming the first that is not (nothing is visited then).
fn visiting_order(order: Vec<usize>, len: usize) -> Result<Vec<usize>, Error> {
    let mut seen = vec![false; len];
    for &i in &order {
        match seen.get_mut(i) {
            Some(slot) if !*slot => *slot = true,
            Some(_) => {
                return Err(Error::invalid(
                    "visiting order",
                    format!("service {i} is in it twice"),
                ))
            }
            None => {
                return Err(Error::invalid(
                    "visiting order",
                    format!("index {i} is past the {len} services listed"),
                ))
            }
        }
    }
    Ok(order)
}

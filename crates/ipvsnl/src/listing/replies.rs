//! The replies of the listing's dumps, collected as they come: each
//! entry decoded in place, and the parts counted ([`Parts`]).

use ipvsnl_wire::write::{begin_ipvs_message, end_message};
use ipvsnl_wire::IpvsCommand;

use super::parts::Parts;
use crate::decode::{self, DecodeResult, Detail};
use crate::proto::{frame, Replies};
use crate::{AddressFamily, DestinationEntry, ServiceEntry};

/// Writes the request of a service dump.
pub(super) fn write_service_dump(out: &mut Vec<u8>, family: u16, seq: u32, flags: u16) {
    let msg = begin_ipvs_message(out, family, flags, seq, IpvsCommand::GetService);
    end_message(out, msg);
}

/// How one dump's entries are decoded: a service dump's, or one
/// service's destination dump's.
pub(super) trait Decoder {
    /// What an entry becomes.
    type Entry;
    /// Appends the entry of one reply's attribute bytes to `out`
    /// (nothing on error).
    fn push(&self, attrs: &[u8], out: &mut Vec<Self::Entry>) -> DecodeResult<()>;
}

/// The entries of a service dump.
pub(super) struct Services(pub(super) Detail);

impl Decoder for Services {
    type Entry = ServiceEntry;
    #[inline]
    fn push(&self, attrs: &[u8], out: &mut Vec<ServiceEntry>) -> DecodeResult<()> {
        push_service(attrs, self.0, out)
    }
}

/// The entries of a destination dump of a service of this family.
pub(super) struct Destinations(pub(super) AddressFamily, pub(super) Detail);

impl Decoder for Destinations {
    type Entry = DestinationEntry;
    #[inline]
    fn push(&self, attrs: &[u8], out: &mut Vec<DestinationEntry>) -> DecodeResult<()> {
        decode::push_destination(attrs, self.0, self.1, out)
    }
}

/// The replies of one dump, collected, and how they came.
pub(super) struct Dump<D: Decoder> {
    pub(super) out: Vec<D::Entry>,
    pub(super) parts: Parts,
    decoder: D,
}

impl<D: Decoder> Dump<D> {
    /// Nothing collected yet.
    pub(super) fn new(decoder: D) -> Self {
        Dump {
            out: Vec::new(),
            parts: Parts::default(),
            decoder,
        }
    }
}

impl<D: Decoder> Replies for Dump<D> {
    #[inline]
    fn message(&mut self, _command: u8, attrs: &[u8]) -> DecodeResult<()> {
        self.parts.entry();
        self.decoder.push(attrs, &mut self.out)
    }

    fn restart(&mut self) {
        self.out.clear();
        self.parts.restart();
    }

    #[inline]
    fn datagram(&mut self, datagram: &[u8]) {
        self.parts.datagram(datagram.len());
        // Room for every entry of the part at once.
        self.out.reserve(frame::data_message_count(datagram));
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
        let missing = crate::DecodeError::Missing {
            object: "service",
            attr: "IPVS_SVC_ATTR_AF",
        };
        assert_eq!(err, missing);
        assert_eq!(out.len(), 1);
        let s = &out[0].service;
        assert_eq!(s.key, ServiceKey::fwmark(4, AddressFamily::Inet));
        assert_eq!(s.scheduler, Scheduler::WeightedLeastConnection);
        assert_eq!(s.timeout, 30);
        assert!(out[0].destinations.is_empty());
    }
}

//! `IP_VS_SO_GET_DESTS` on the socket-option socket: the destinations of
//! one IPv4 service, copied by the kernel in one call under its IPVS mutex
//! (the structs and what the kernel does: [`ipvsnl_wire::sockopt`]'s
//! `dests` module).

use std::net::IpAddr;

use ipvsnl_wire::sockopt::{
    dests_request_into, DestsQuery, SockoptDest, SockoptDests, DEST_ENTRY_SIZE, IP_VS_SO_GET_DESTS,
};

use super::SockoptSocket;
use crate::{AddressFamily, DecodeError, Error, Object, RequestKind, ServiceKey, Target};

/// How often a copy is asked for again when its room was used up
/// (destinations added since the count it was sized by).
const DESTS_TRIES: u32 = 3;

/// Room asked for beyond the expected count, for destinations added
/// meanwhile.
const SPARE_SLOTS: u32 = 4;

/// The query naming `key`, if the interface can name it (an IPv4 service).
fn query_of(key: &ServiceKey) -> Option<DestsQuery> {
    match *key {
        ServiceKey::Inet {
            protocol,
            addr: IpAddr::V4(addr),
            port,
        } => Some(DestsQuery::service(protocol.to_raw(), addr, port)),
        ServiceKey::Fwmark {
            mark,
            family: AddressFamily::Inet,
        } => Some(DestsQuery::fwmark(mark)),
        _ => None,
    }
}

impl SockoptSocket {
    /// `IP_VS_SO_GET_DESTS`: the destinations of the IPv4 service `key`,
    /// sized for `expected` of them and some more, copied into `buf` (its
    /// bytes replaced: one buffer serves a whole listing, where one
    /// allocated a call cost 650 instructions, measured on the host with
    /// `scripts/measure/ipvsadm-text-cost`), in the kernel's order (newest first); a
    /// copy that used all of its room may have left some out, and is asked
    /// for again with twice the room (a few times at most, then it is an
    /// error). The kernel's refusal keeps its errno (`ESRCH`: no such IPv4
    /// service, an [`Error::is_not_found`]); an IPv6 key is refused here,
    /// unsent.
    pub(crate) fn dests<'b>(
        &self,
        key: &ServiceKey,
        expected: u32,
        buf: &'b mut Vec<u8>,
    ) -> Result<SockoptDests<'b>, Error> {
        let target = || Target::new(RequestKind::ListDestinations, Object::Service(*key));
        let query = query_of(key).ok_or_else(|| {
            Error::invalid(
                "service key",
                format!("{key}: IP_VS_SO_GET_DESTS names IPv4 services only"),
            )
        })?;
        let mut slots = expected.saturating_add(SPARE_SLOTS);
        for _ in 0..DESTS_TRIES {
            if !dests_request_into(buf, &query, slots) {
                break;
            }
            self.get_for(target, IP_VS_SO_GET_DESTS, buf)?;
            // Filled from the first entry: room was left if the last one
            // is still marked empty.
            let last = buf.len().saturating_sub(DEST_ENTRY_SIZE);
            if slots == 0 || SockoptDest::decode(&buf[last..]).is_none() {
                return Ok(SockoptDests::new(buf));
            }
            slots = slots.saturating_mul(2);
        }
        let detail = DecodeError::Sockopt {
            option: "IP_VS_SO_GET_DESTS",
            why: format!("the destinations outgrew every copy (last room: {slots})").into(),
        };
        Err(Error::decode(target(), detail))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Protocol;

    #[test]
    fn only_ipv4_keys_make_a_query() {
        let tcp = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
        let q = query_of(&tcp).unwrap();
        assert_eq!((q.protocol, q.port, q.fwmark), (6, 80, 0));
        let mark = ServiceKey::Fwmark {
            mark: 9,
            family: AddressFamily::Inet,
        };
        assert_eq!(query_of(&mark).unwrap().fwmark, 9);
        let v6 = ServiceKey::Inet {
            protocol: Protocol::Udp,
            addr: "2001:db8::1".parse().unwrap(),
            port: 53,
        };
        assert!(query_of(&v6).is_none());
        let mark6 = ServiceKey::Fwmark {
            mark: 9,
            family: AddressFamily::Inet6,
        };
        assert!(query_of(&mark6).is_none());
    }
}

//! The direct encoder: a request's netlink message written straight into
//! the send buffer, byte for byte what [`Request::to_message`] gives
//! framed, without building it (a sync sends these by the thousand).

use ipvsnl_wire::write::{begin_ipvs_message, begin_nest, end_message, end_nest, push_attr};
use ipvsnl_wire::write::{push_str, MessageStart};
use ipvsnl_wire::{
    IPVS_CMD_ATTR_DEST, IPVS_CMD_ATTR_SERVICE, IPVS_SVC_ATTR_PE_NAME, IPVS_SVC_ATTR_SCHED_NAME,
};

use super::fixed::{
    fixed_dest, fixed_dest_id, fixed_key, fixed_key_nest, fixed_settings, DEST_NEST_MAX,
    KEY_NEST_MAX, SETTINGS_MAX,
};
use super::value::Request;
use crate::fixed_attrs::FixedAttrs;
use crate::proto::Encode;
use crate::{Service, ServiceKey};

/// Appends `IPVS_CMD_ATTR_SERVICE`, written directly: the key, and the
/// names and settings of `full`.
pub(crate) fn push_service_nest(out: &mut Vec<u8>, key: &ServiceKey, full: Option<&Service>) {
    let Some(s) = full else {
        let mut f = FixedAttrs::<KEY_NEST_MAX>::new();
        fixed_key_nest(key, &mut f);
        out.extend_from_slice(f.as_bytes());
        return;
    };
    let nest = begin_nest(out, IPVS_CMD_ATTR_SERVICE);
    let mut f = FixedAttrs::<KEY_NEST_MAX>::new();
    fixed_key(key, &mut f);
    out.extend_from_slice(f.as_bytes());
    push_str(out, IPVS_SVC_ATTR_SCHED_NAME, s.scheduler.name());
    if let Some(pe) = &s.persistence_engine {
        push_str(out, IPVS_SVC_ATTR_PE_NAME, pe);
    }
    let mut f = FixedAttrs::<SETTINGS_MAX>::new();
    fixed_settings(s, &mut f);
    out.extend_from_slice(f.as_bytes());
    end_nest(out, nest);
}

/// Appends the key nest of `k` and a destination nest of what `dest`
/// writes, in one copy.
#[inline(always)]
fn push_key_and_dest(
    out: &mut Vec<u8>,
    k: &ServiceKey,
    dest: impl FnOnce(&mut FixedAttrs<{ KEY_NEST_MAX + DEST_NEST_MAX }>),
) {
    let mut f = FixedAttrs::new();
    fixed_key_nest(k, &mut f);
    let nest = f.begin_nest(IPVS_CMD_ATTR_DEST);
    dest(&mut f);
    f.end_nest(nest);
    out.extend_from_slice(f.as_bytes());
}

/// Appends one request as a netlink message: written directly for the
/// service and destination requests a sync sends by the thousand (byte for
/// byte what [`Request::to_message`] gives, without building it), from
/// that message for the others. Returns where the message starts.
pub(crate) fn encode(
    out: &mut Vec<u8>,
    family: u16,
    seq: u32,
    flags: u16,
    r: &Request,
) -> MessageStart {
    let msg = begin_ipvs_message(out, family, flags, seq, r.command());
    match r {
        Request::AddService(s) | Request::EditService(s) => push_service_nest(out, &s.key, Some(s)),
        Request::DeleteService(k) => push_service_nest(out, k, None),
        Request::AddDestination(k, d) | Request::EditDestination(k, d) => {
            push_key_and_dest(out, k, |f| fixed_dest(d, f))
        }
        Request::DeleteDestination(k, a, p) => {
            push_key_and_dest(out, k, |f| fixed_dest_id(a, *p, f))
        }
        other => {
            for a in &other.to_message().attrs {
                push_attr(out, a);
            }
        }
    }
    end_message(out, msg);
    msg
}

impl Encode for Request {
    fn encode(&self, out: &mut Vec<u8>, family: u16, seq: u32, flags: u16) {
        encode(out, family, seq, flags, self);
    }

    /// A stop of a sync daemon whose thread has not run yet is answered
    /// with nothing (the kernel passes on the thread's `EINTR`, and netlink
    /// sends no reply to that code), though the daemon is stopped.
    fn may_go_unanswered(&self) -> bool {
        matches!(self, Request::StopDaemon(_))
    }
}

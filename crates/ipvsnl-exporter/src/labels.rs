//! The label sets of a service's and a destination's series, spelled as
//! node_exporter's ipvs collector spells them where it has an opinion.
//!
//! node_exporter (1.5, through procfs reading `/proc/net/ip_vs`):
//! `proto` is `TCP` or `UDP` (the kernel's word) and `FWM` for a
//! firewall-mark service; a firewall-mark service has `local_address=""`,
//! `local_port="0"` and `local_mark` the kernel's eight upper-case hex
//! digits (`00000005`); an address-keyed one `local_mark=""`. Addresses are
//! in their shortest form (`2001:db8::1`), ports in decimal.
//!
//! Ours besides (node_exporter has no opinion): `SCTP` for SCTP services
//! (node_exporter skips them), `family` (`IPv4`, `IPv6`: two firewall-mark
//! services of one mark differ only by it), `scheduler` on service series
//! (the kernel's name, `wlc`), `forwarding_method` on destination series
//! (`Masq`, `Route`, `Tunnel`, `Local`, `Bypass`).

use ipvsnl::{AddressFamily, DestinationEntry, Forward, Protocol, ServiceEntry, ServiceKey};

use crate::text::{push_label, push_label_addr, push_label_plain, push_label_u64, push_label_word};

/// Appends the labels every series of `key` carries, after `{` and
/// without the closing brace: the service's half of a destination's label
/// set, and all but the scheduler of the service's own.
pub(crate) fn push_service_key(out: &mut Vec<u8>, key: &ServiceKey) {
    out.push(b'{');
    match key {
        ServiceKey::Inet {
            protocol,
            addr,
            port,
        } => {
            push_label_addr(out, true, "local_address", *addr);
            push_label_u64(out, false, "local_port", u64::from(*port));
            push_label_word(out, false, "local_mark", "");
            match protocol {
                Protocol::Tcp => push_label_word(out, false, "proto", "TCP"),
                Protocol::Udp => push_label_word(out, false, "proto", "UDP"),
                Protocol::Sctp => push_label_word(out, false, "proto", "SCTP"),
                other => push_label_plain(out, false, "proto", other),
            }
        }
        ServiceKey::Fwmark { mark, .. } => {
            push_label_word(out, true, "local_address", "");
            push_label_word(out, false, "local_port", "0");
            push_label_plain(out, false, "local_mark", format_args!("{mark:08X}"));
            push_label_word(out, false, "proto", "FWM");
        }
        // A key kind this version does not know: only the family.
        _ => push_label_word(out, true, "proto", ""),
    }
    // The model's words (its `Display`), without `core::fmt`.
    match key.family() {
        AddressFamily::Inet => push_label_word(out, false, "family", "IPv4"),
        AddressFamily::Inet6 => push_label_word(out, false, "family", "IPv6"),
        other => push_label_plain(out, false, "family", other),
    }
}

/// Appends the whole label set of a service's series, braces included.
pub(crate) fn push_service(out: &mut Vec<u8>, entry: &ServiceEntry) {
    push_service_key(out, &entry.service.key);
    // The kernel's name; any name the kernel reports is served, escaped.
    push_label(out, false, "scheduler", entry.service.scheduler.name());
    out.push(b'}');
}

/// Appends the rest of a destination's label set after its service's
/// half ([`push_service_key`]), closing brace included.
pub(crate) fn push_destination(out: &mut Vec<u8>, dest: &DestinationEntry) {
    let d = &dest.destination;
    push_label_addr(out, false, "remote_address", d.addr);
    push_label_u64(out, false, "remote_port", u64::from(d.port));
    // The model's words (its `Display`), without `core::fmt` for the named
    // methods.
    let method = match d.forward {
        Forward::Masquerade => Some("Masq"),
        Forward::Route => Some("Route"),
        Forward::Tunnel(_) => Some("Tunnel"),
        Forward::Local => Some("Local"),
        Forward::Bypass => Some("Bypass"),
        _ => None,
    };
    match method {
        Some(word) => push_label_word(out, false, "forwarding_method", word),
        None => push_label_plain(out, false, "forwarding_method", d.forward),
    }
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;
    use ipvsnl::{Destination, Scheduler, Service};

    #[test]
    fn fwmark_services_are_spelled_as_node_exporter_spells_them() {
        let e = ServiceEntry::new(
            Service::new(ServiceKey::fwmark(0x1a, AddressFamily::Inet6))
                .with_scheduler(Scheduler::RoundRobin),
        );
        let mut s = Vec::new();
        push_service(&mut s, &e);
        assert_eq!(
            String::from_utf8(s).unwrap(),
            "{local_address=\"\",local_port=\"0\",local_mark=\"0000001A\",proto=\"FWM\",family=\"IPv6\",scheduler=\"rr\"}"
        );
    }

    #[test]
    fn destination_sets_add_the_real_server_and_method() {
        let key = ServiceKey::udp("2001:db8::1".parse().unwrap(), 53);
        let d = DestinationEntry::new(
            Destination::new("2001:db8:0:0:0:0:0:a".parse().unwrap(), 5353)
                .with_forward(Forward::Route),
        );
        let mut s = Vec::new();
        push_service_key(&mut s, &key);
        push_destination(&mut s, &d);
        assert_eq!(
            String::from_utf8(s).unwrap(),
            "{local_address=\"2001:db8::1\",local_port=\"53\",local_mark=\"\",proto=\"UDP\",family=\"IPv6\",remote_address=\"2001:db8::a\",remote_port=\"5353\",forwarding_method=\"Route\"}"
        );
    }
}

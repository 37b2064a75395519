//! Unit tests: bad bytes from the kernel are a [`DecodeError`] naming the
//! attribute (or message) that was bad, never a panic.

use ipvsnl_wire::{
    DaemonAttr, IpvsAttr, IPVS_CMD_ATTR_SERVICE, IPVS_STATS_ATTR_CONNS, IPVS_SVC_ATTR_AF,
    IPVS_SVC_ATTR_FWMARK, IPVS_SVC_ATTR_STATS64,
};

use super::*;
use crate::DecodeError;

/// One attribute, as the kernel lays it out (header, value, padding).
fn nla(kind: u16, value: &[u8]) -> Vec<u8> {
    let len = 4 + value.len();
    let mut out = Vec::with_capacity((len + 3) & !3);
    out.extend_from_slice(&(len as u16).to_ne_bytes());
    out.extend_from_slice(&kind.to_ne_bytes());
    out.extend_from_slice(value);
    out.resize((len + 3) & !3, 0);
    out
}

/// A service nest of `attrs` (each already laid out).
fn service(attrs: &[Vec<u8>]) -> Vec<u8> {
    nla(IPVS_CMD_ATTR_SERVICE, &attrs.concat())
}

#[test]
fn a_service_of_an_unknown_family_names_the_attribute_and_the_value() {
    let bytes = service(&[
        nla(IPVS_SVC_ATTR_AF, &99u16.to_ne_bytes()),
        nla(IPVS_SVC_ATTR_FWMARK, &5u32.to_ne_bytes()),
    ]);
    let err = service_reply(&bytes, Detail::Full).unwrap_err();
    assert_eq!(
        err,
        DecodeError::UnexpectedValue {
            attr: "IPVS_SVC_ATTR_AF",
            value: 99
        }
    );
    assert_eq!(err.attribute(), Some("IPVS_SVC_ATTR_AF"));
}

#[test]
fn a_counter_of_the_wrong_width_names_its_nest_and_the_counter() {
    // CONNS is 8 bytes in STATS64: 3 is no counter.
    let stats = nla(
        IPVS_SVC_ATTR_STATS64,
        &nla(IPVS_STATS_ATTR_CONNS, &[1, 2, 3]),
    );
    let bytes = service(&[
        nla(IPVS_SVC_ATTR_AF, &2u16.to_ne_bytes()),
        nla(IPVS_SVC_ATTR_FWMARK, &5u32.to_ne_bytes()),
        stats,
    ]);
    let err = service_reply(&bytes, Detail::Full).unwrap_err();
    assert!(
        matches!(
            err,
            DecodeError::Attribute {
                attr: "IPVS_SVC_ATTR_STATS64",
                ..
            }
        ),
        "{err:?}"
    );
    // Settings only: the counters are not read, so not refused.
    assert!(service_reply(&bytes, Detail::Settings).is_ok());
}

#[test]
fn a_service_nest_that_runs_past_its_reply_is_named() {
    let mut bytes = service(&[nla(IPVS_SVC_ATTR_AF, &2u16.to_ne_bytes())]);
    bytes[0] = 200; // the nest's length, past the end
    let err = service_reply(&bytes, Detail::Full).unwrap_err();
    assert_eq!(err.attribute(), Some("IPVS_CMD_ATTR_SERVICE"), "{err:?}");
    // A reply with no service nest at all.
    let err = service_reply(&[], Detail::Full).unwrap_err();
    assert_eq!(
        err,
        DecodeError::Missing {
            object: "reply",
            attr: "IPVS_CMD_ATTR_SERVICE"
        }
    );
}

#[test]
fn daemons_and_info_name_what_they_lack() {
    let no_state = [IpvsAttr::Daemon(vec![DaemonAttr::SyncId(1)])];
    assert_eq!(
        sync_daemon(&no_state).unwrap_err(),
        DecodeError::Missing {
            object: "sync daemon",
            attr: "IPVS_DAEMON_ATTR_STATE"
        }
    );
    let bad_state = [IpvsAttr::Daemon(vec![DaemonAttr::State(7)])];
    assert_eq!(
        sync_daemon(&bad_state).unwrap_err(),
        DecodeError::UnexpectedValue {
            attr: "IPVS_DAEMON_ATTR_STATE",
            value: 7
        }
    );
    assert_eq!(
        info(&[IpvsAttr::ConnTabSize(4096)]).unwrap_err(),
        DecodeError::Missing {
            object: "info",
            attr: "IPVS_INFO_ATTR_VERSION"
        }
    );
}

#[test]
fn stats_text_not_in_its_form_is_named_with_what_it_held() {
    let err = proc_stats("1 2 3 4 5\n").unwrap_err();
    assert!(
        matches!(
            &err,
            DecodeError::ProcText { file: "ip_vs_stats", text, .. } if &**text == "1 2 3 4 5\n"
        ),
        "{err:?}"
    );
}

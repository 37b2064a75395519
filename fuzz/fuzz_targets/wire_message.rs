//! Arbitrary bytes as the attributes of an IPVS generic-netlink message
//! (what follows the generic-netlink header), parsed for every command: the
//! first byte is a command number (so the fuzzer covers all 256, known and
//! unknown), the rest the attributes, parsed for that command and for the
//! two the parse tells apart, `SET_INFO` and any other (`NEW_SERVICE`).
//! (Parsing each input for all 17 known commands ran about half as many
//! inputs a second, for no more coverage.)
//!
//! Checked:
//! * no parse panics, whatever the bytes and the command;
//! * the command decides only whether attributes 1 and 2 are the
//!   `IPVS_INFO_ATTR_*` (in `SET_INFO`) or the service and destination nests
//!   (everywhere else): every other command parses the same attributes;
//! * a parsed message, emitted and parsed again, is the same value, and its
//!   bytes are then a fixed point of emit-and-parse;
//! * the one-pass finders accept the nests the owned parse accepted, and a
//!   top-level walk they refuse is refused by the owned parse too.
//!
//! The round trip is of values, not of the input bytes: the crate keeps
//! what it does not know (`Other`, with the attribute number and its
//! `NLA_F_*` flags) and the width of each counter, but it does not keep a
//! string's bytes after its first NUL, the length of a short address
//! (zero-filled to 16 bytes), a padding attribute's payload, the flag bits of
//! a known attribute's number, or trailing bytes of alignment. So the
//! emitted bytes may differ from the input, and the property is
//! `parse(emit(parse(x))) == parse(x)`, with one exception: an unknown
//! attribute whose number carries both `NLA_F_NESTED` and
//! `NLA_F_NET_BYTEORDER` is emitted with the nested flag only
//! (netlink-packet-core 0.9's `Nla` emitter sets the second flag from the
//! masked number, dropping the first; no kernel sends both on one
//! attribute). So the first pass is compared with that bit cleared, and from
//! the second pass on the round trip is exact.
#![no_main]

use ipvsnl_wire::netlink_packet_core::{
    DecodeError, DefaultNla, Emitable, Nla, ParseableParametrized, NLA_F_NESTED,
    NLA_F_NET_BYTEORDER,
};
use ipvsnl_wire::netlink_packet_generic::GenlHeader;
use ipvsnl_wire::{
    find_attr, DaemonAttr, DestAttr, DestValues, IpvsAttr, IpvsCommand, IpvsMessage, ServiceAttr,
    ServiceValues, StatsAttr, IPVS_CMD_ATTR_DEST, IPVS_CMD_ATTR_SERVICE,
};
use libfuzzer_sys::fuzz_target;

/// `IPVS_CMD_SET_INFO`, the one command whose attributes are numbered apart.
const SET_INFO: u8 = 14;
/// Any other command (the first one).
const NEW_SERVICE: u8 = 1;

fn parse(attrs: &[u8], cmd: u8) -> Result<IpvsMessage, DecodeError> {
    // The kernel does not check the version, nor does the parse.
    IpvsMessage::parse_with_param(attrs, GenlHeader { cmd, version: 1 })
}

/// An unknown attribute as the emitter writes it (see the module's
/// documentation): with both flags, the nested one only.
fn as_emitted(nla: &DefaultNla) -> DefaultNla {
    const BOTH: u16 = NLA_F_NESTED | NLA_F_NET_BYTEORDER;
    if nla.kind() & BOTH != BOTH {
        return nla.clone();
    }
    let mut value = vec![0; nla.value_len()];
    nla.emit_value(&mut value);
    DefaultNla::new(nla.kind() & !NLA_F_NET_BYTEORDER, value)
}

fn stats_as_emitted(attrs: &[StatsAttr]) -> Vec<StatsAttr> {
    attrs
        .iter()
        .map(|a| match a {
            StatsAttr::Other(n) => StatsAttr::Other(as_emitted(n)),
            a => a.clone(),
        })
        .collect()
}

/// The message that emitting `msg` and parsing it again should give.
fn expected_back(msg: &IpvsMessage) -> IpvsMessage {
    let attrs = msg.attrs.iter().map(|a| match a {
        IpvsAttr::Service(v) => IpvsAttr::Service(
            v.iter()
                .map(|a| match a {
                    ServiceAttr::Stats(s) => ServiceAttr::Stats(stats_as_emitted(s)),
                    ServiceAttr::Stats64(s) => ServiceAttr::Stats64(stats_as_emitted(s)),
                    ServiceAttr::Other(n) => ServiceAttr::Other(as_emitted(n)),
                    a => a.clone(),
                })
                .collect(),
        ),
        IpvsAttr::Dest(v) => IpvsAttr::Dest(
            v.iter()
                .map(|a| match a {
                    DestAttr::Stats(s) => DestAttr::Stats(stats_as_emitted(s)),
                    DestAttr::Stats64(s) => DestAttr::Stats64(stats_as_emitted(s)),
                    DestAttr::Other(n) => DestAttr::Other(as_emitted(n)),
                    a => a.clone(),
                })
                .collect(),
        ),
        IpvsAttr::Daemon(v) => IpvsAttr::Daemon(
            v.iter()
                .map(|a| match a {
                    DaemonAttr::Other(n) => DaemonAttr::Other(as_emitted(n)),
                    a => a.clone(),
                })
                .collect(),
        ),
        IpvsAttr::Other(n) => IpvsAttr::Other(as_emitted(n)),
        a => a.clone(),
    });
    IpvsMessage::new(msg.command, attrs.collect())
}

/// Emits `msg` and parses the bytes again.
fn emit_parse(msg: &IpvsMessage) -> (Vec<u8>, IpvsMessage) {
    let mut bytes = vec![0; msg.buffer_len()];
    msg.emit(&mut bytes);
    match parse(&bytes, msg.command.into()) {
        Ok(back) => (bytes, back),
        Err(e) => panic!("an emitted message does not parse: {e}\n{msg:?}\n{bytes:?}"),
    }
}

/// Emit, parse again: the same message (but for the flag above); once more:
/// exactly the same message and the same bytes.
fn round_trip(msg: &IpvsMessage) {
    // An attribute's length is a u16. Widening short addresses can make a
    // nest outgrow it, which no input of the default `-max_len` (4096) can
    // reach; past that, emitting is not expected to be faithful.
    if msg
        .attrs
        .iter()
        .any(|a| a.buffer_len() > usize::from(u16::MAX))
    {
        return;
    }
    let (bytes, back) = emit_parse(msg);
    assert_eq!(back, expected_back(msg), "emitted as {bytes:?}");
    let (again, twice) = emit_parse(&back);
    assert_eq!(twice, back);
    assert_eq!(again, bytes);
}

fuzz_target!(|data: &[u8]| {
    let Some((&cmd, attrs)) = data.split_first() else {
        return;
    };

    let info = parse(attrs, SET_INFO);
    let general = parse(attrs, NEW_SERVICE);
    for (msg, cmd) in [(&info, SET_INFO), (&general, NEW_SERVICE)] {
        match msg {
            Ok(msg) => {
                assert_eq!(msg.command, IpvsCommand::from(cmd));
                round_trip(msg);
            }
            // The error's text is built from its context: it must not panic.
            Err(e) => drop(e.to_string()),
        }
    }

    let want = if cmd == SET_INFO { &info } else { &general };
    match (parse(attrs, cmd), want) {
        (Ok(got), Ok(want)) => {
            assert_eq!(got.command, IpvsCommand::from(cmd));
            assert_eq!(u8::from(got.command), cmd);
            assert_eq!(got.attrs, want.attrs, "command {cmd}");
        }
        (Err(_), Err(_)) => {}
        (got, want) => panic!("command {cmd}: {got:?}, but {want:?}"),
    }

    // The one-pass finders (not for SET_INFO, whose attribute 1 is no nest).
    let found_service = find_attr(attrs, IPVS_CMD_ATTR_SERVICE);
    let found_dest = find_attr(attrs, IPVS_CMD_ATTR_DEST);
    if found_service.is_err() || found_dest.is_err() {
        // Both walk every top-level attribute, as the owned parse does.
        assert!(found_service.is_err() && found_dest.is_err());
        assert!(info.is_err() && general.is_err());
    }
    let services = ServiceValues::find(attrs);
    let dests = DestValues::find(attrs);
    if let Ok(msg) = &general {
        let has = |f: fn(&IpvsAttr) -> bool| msg.attrs.iter().any(f);
        let has_service = has(|a| matches!(a, IpvsAttr::Service(_)));
        let has_dest = has(|a| matches!(a, IpvsAttr::Dest(_)));
        assert_eq!(found_service.unwrap().is_some(), has_service);
        assert_eq!(found_dest.unwrap().is_some(), has_dest);
        // The owned parse read the first nest of each whole, so the
        // one-pass readings of it cannot fail.
        assert_eq!(services.unwrap().is_some(), has_service);
        assert_eq!(dests.unwrap().is_some(), has_dest);
    }
});

//! Reading attributes as the kernel's liberal parser does
//! (`nla_parse_deprecated`): walk while an attribute fits, ignore numbers
//! above the maximum, keep the last of repeats, check each against its
//! policy. A policy failure is `ERANGE` or `EINVAL` as the kernel's
//! `validate_nla` says; IPVS turns any failure of a nested parse into
//! `EINVAL` itself.

/// How the kernel checks one attribute number.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Policy {
    /// Not in the policy: taken as is.
    Any,
    /// `NLA_U8`/`U16`/`U32`: at least this many bytes (shorter: `ERANGE`).
    Int(usize),
    /// `NLA_BINARY` with a maximum length (longer: `ERANGE`).
    Binary(usize),
    /// `NLA_NUL_STRING` of at most `n` characters: a NUL within the first
    /// `n + 1` bytes (else `EINVAL`).
    NulString(usize),
    /// `NLA_UNSPEC` with a minimum length (`.len`), shorter: `ERANGE`.
    AtLeast(usize),
}

/// The attributes of a payload, by number (index 0 unused), each the last
/// one of its number, checked against `policy` (index = number).
pub(crate) fn parse<'a>(payload: &'a [u8], policy: &[Policy]) -> Result<Table<'a>, i32> {
    let mut table = Table {
        payload,
        at: [ABSENT; 16],
        len: [0; 16],
    };
    let mut rest = payload;
    while rest.len() >= 4 {
        let len = usize::from(u16::from_ne_bytes([rest[0], rest[1]]));
        let kind = usize::from(u16::from_ne_bytes([rest[2], rest[3]]) & 0x3fff);
        if len < 4 || len > rest.len() {
            break;
        }
        let value = &rest[4..len];
        if kind > 0 && kind < policy.len() && kind < table.at.len() {
            check(value, policy[kind])?;
            // Where the value starts in the payload (it fits in 16 bits:
            // a netlink attribute's length does).
            table.at[kind] = (payload.len() - rest.len() + 4) as u16;
            table.len[kind] = (len - 4) as u16;
        }
        rest = rest.get((len + 3) & !3..).unwrap_or_default();
    }
    Ok(table)
}

fn check(value: &[u8], policy: Policy) -> Result<(), i32> {
    match policy {
        Policy::Any => Ok(()),
        Policy::Int(n) | Policy::AtLeast(n) if value.len() < n => Err(libc::ERANGE),
        Policy::Binary(max) if value.len() > max => Err(libc::ERANGE),
        Policy::NulString(n) => {
            let within = &value[..value.len().min(n + 1)];
            if within.is_empty() || !within.contains(&0) {
                Err(libc::EINVAL)
            } else {
                Ok(())
            }
        }
        _ => Ok(()),
    }
}

/// An attribute number not present.
const ABSENT: u16 = u16::MAX;

/// The attributes of one nest or message, by number: where each value
/// starts in the payload and how long it is (small, as a request is
/// parsed three times over).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Table<'a> {
    payload: &'a [u8],
    at: [u16; 16],
    len: [u16; 16],
}

impl<'a> Table<'a> {
    /// The payload of attribute `kind`, if present.
    pub(crate) fn get(&self, kind: u16) -> Option<&'a [u8]> {
        let k = usize::from(kind);
        let at = usize::from(*self.at.get(k)?);
        if at == usize::from(ABSENT) {
            return None;
        }
        self.payload.get(at..at + usize::from(self.len[k]))
    }

    /// Whether attribute `kind` is present.
    pub(crate) fn has(&self, kind: u16) -> bool {
        self.get(kind).is_some()
    }

    /// A `u8` (checked long enough by the policy).
    pub(crate) fn u8(&self, kind: u16) -> Option<u8> {
        self.get(kind).and_then(|v| v.first().copied())
    }

    /// A host-order `u16`.
    pub(crate) fn u16(&self, kind: u16) -> Option<u16> {
        self.get(kind)
            .and_then(|v| Some(u16::from_ne_bytes(v.get(..2)?.try_into().ok()?)))
    }

    /// A network-order `u16` (a port).
    pub(crate) fn be16(&self, kind: u16) -> Option<u16> {
        self.get(kind)
            .and_then(|v| Some(u16::from_be_bytes(v.get(..2)?.try_into().ok()?)))
    }

    /// A host-order `u32`.
    pub(crate) fn u32(&self, kind: u16) -> Option<u32> {
        self.get(kind)
            .and_then(|v| Some(u32::from_ne_bytes(v.get(..4)?.try_into().ok()?)))
    }

    /// Up to `N` bytes, zero-filled (the kernel's `nla_memcpy`).
    pub(crate) fn bytes<const N: usize>(&self, kind: u16) -> [u8; N] {
        let mut out = [0; N];
        if let Some(v) = self.get(kind) {
            let n = v.len().min(N);
            out[..n].copy_from_slice(&v[..n]);
        }
        out
    }

    /// A NUL-terminated string (checked by the policy), up to its NUL.
    pub(crate) fn string(&self, kind: u16) -> Option<String> {
        self.get(kind).map(|v| {
            let end = v.iter().position(|&b| b == 0).unwrap_or(v.len());
            String::from_utf8_lossy(&v[..end]).into_owned()
        })
    }
}

/// `ip_vs_cmd_policy`: the top-level attributes.
pub(crate) const CMD: [Policy; 7] = [
    Policy::Any,
    Policy::Any, // SERVICE: nested
    Policy::Any, // DEST: nested
    Policy::Any, // DAEMON: nested
    Policy::Int(4),
    Policy::Int(4),
    Policy::Int(4),
];

/// `ip_vs_svc_policy`.
pub(crate) const SERVICE: [Policy; 12] = [
    Policy::Any,
    Policy::Int(2),        // AF
    Policy::Int(2),        // PROTOCOL
    Policy::Binary(16),    // ADDR
    Policy::Int(2),        // PORT
    Policy::Int(4),        // FWMARK
    Policy::NulString(15), // SCHED_NAME
    Policy::Binary(8),     // FLAGS
    Policy::Int(4),        // TIMEOUT
    Policy::Int(4),        // NETMASK
    Policy::Any,           // STATS
    // `IP_VS_PENAME_MAXLEN`, not less one as for the scheduler: a name of
    // 16 passes, and is then an unknown engine (ENOENT).
    Policy::NulString(16), // PE_NAME
];

/// `ip_vs_dest_policy`.
pub(crate) const DEST: [Policy; 16] = [
    Policy::Any,
    Policy::Binary(16), // ADDR
    Policy::Int(2),     // PORT
    Policy::Int(4),     // FWD_METHOD
    Policy::Int(4),     // WEIGHT
    Policy::Int(4),     // U_THRESH
    Policy::Int(4),     // L_THRESH
    Policy::Int(4),     // ACTIVE_CONNS
    Policy::Int(4),     // INACT_CONNS
    Policy::Int(4),     // PERSIST_CONNS
    Policy::Any,        // STATS
    Policy::Int(2),     // ADDR_FAMILY
    Policy::Any,        // STATS64
    Policy::Int(1),     // TUN_TYPE
    Policy::Int(2),     // TUN_PORT
    Policy::Int(2),     // TUN_FLAGS
];

/// `ip_vs_daemon_policy`.
pub(crate) const DAEMON: [Policy; 9] = [
    Policy::Any,
    Policy::Int(4),        // STATE
    Policy::NulString(15), // MCAST_IFN
    Policy::Int(4),        // SYNC_ID
    Policy::Int(2),        // SYNC_MAXLEN
    Policy::Int(4),        // MCAST_GROUP
    Policy::AtLeast(16),   // MCAST_GROUP6
    Policy::Int(2),        // MCAST_PORT
    Policy::Int(1),        // MCAST_TTL
];

/// The generic controller's `GETFAMILY` attributes (id, name).
pub(crate) const CTRL: [Policy; 3] = [Policy::Any, Policy::Int(2), Policy::NulString(15)];

#[cfg(test)]
mod tests {
    use super::*;

    fn attr(kind: u16, value: &[u8]) -> Vec<u8> {
        let mut v = ((4 + value.len()) as u16).to_ne_bytes().to_vec();
        v.extend_from_slice(&kind.to_ne_bytes());
        v.extend_from_slice(value);
        while v.len() % 4 != 0 {
            v.push(0);
        }
        v
    }

    #[test]
    fn the_last_repeat_wins_and_short_integers_are_out_of_range() {
        let mut p = attr(1, &2u16.to_ne_bytes());
        p.extend(attr(1, &10u16.to_ne_bytes()));
        assert_eq!(parse(&p, &SERVICE).unwrap().u16(1), Some(10));
        assert_eq!(parse(&attr(5, &[1]), &SERVICE).unwrap_err(), libc::ERANGE);
        assert_eq!(parse(&attr(6, b"wlc"), &SERVICE).unwrap_err(), libc::EINVAL);
        assert_eq!(
            parse(&attr(3, &[0; 17]), &SERVICE).unwrap_err(),
            libc::ERANGE
        );
        // A cut attribute ends the walk; numbers above the maximum are ignored.
        let mut p = attr(40, &[1, 2, 3, 4]);
        p.extend_from_slice(&[200, 0, 1, 0]);
        assert!(!parse(&p, &SERVICE).unwrap().has(1));
    }
}

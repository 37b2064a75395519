//! Serialize and Deserialize by hand, for the model types whose derived
//! form would be unreadable or would let a value be spelled two ways (the
//! `serde` feature; the other model types derive theirs).
//!
//! - Flag sets: a list of their names (`["persistent", "ops"]`), unnamed
//!   bits as hex (`"0x400"`); a comma-joined string is read too.
//! - Schedulers: the kernel name (`"rr"`), read through [`Scheduler::new`].
//! - Protocols and tunnel kinds: the name (`"TCP"`, `"gue"`) for a known
//!   value, the number for another; a number of a known value reads as
//!   that value, so `Other` never spells a named one.
//! - A forwarding method with no name: its number, 5 to 7 only.
//! - A service: every field but the key may be left out (the defaults of
//!   [`Service::new`]).

use std::fmt;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};

use super::flag_names::{FlagNames, SEPARATOR, SERVICE, SERVICE_ALIASES, TUNNEL};
use super::other::OtherForward;
use crate::TunnelKind;
use crate::{Netmask, Protocol, Scheduler, Service, ServiceFlags, ServiceKey, TunnelFlags};

fn serialize_flags<S: Serializer>(names: &FlagNames, bits: u32, s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(names.words(bits))
}

/// Reads a flag set from a list of words or one comma-joined string.
struct FlagsVisitor {
    names: &'static FlagNames,
    aliases: &'static [(u32, &'static str)],
    what: &'static str,
}

impl FlagsVisitor {
    fn word<E: de::Error>(&self, word: &str) -> Result<u32, E> {
        let word = word.trim();
        if word.is_empty() || word == self.names.empty {
            return Ok(0);
        }
        self.names.parse(word, self.aliases).ok_or_else(|| {
            let known: Vec<&str> = self.names.names.iter().map(|(_, n)| *n).collect();
            E::custom(format!(
                "{word:?} is not a {} (expected one of {}, or a hex number)",
                self.what,
                known.join(", ")
            ))
        })
    }
}

impl<'de> Visitor<'de> for FlagsVisitor {
    type Value = u32;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a list of {} names", self.what)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<u32, E> {
        v.split(SEPARATOR)
            .try_fold(0, |bits, w| Ok(bits | self.word::<E>(w)?))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<u32, A::Error> {
        let mut bits = 0;
        while let Some(w) = seq.next_element::<String>()? {
            bits |= self.word::<A::Error>(&w)?;
        }
        Ok(bits)
    }
}

#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
impl Serialize for ServiceFlags {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serialize_flags(&SERVICE, self.bits(), s)
    }
}

#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
impl<'de> Deserialize<'de> for ServiceFlags {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let bits = d.deserialize_any(FlagsVisitor {
            names: &SERVICE,
            aliases: SERVICE_ALIASES,
            what: "service flag",
        })?;
        Ok(ServiceFlags::from_bits_retain(bits))
    }
}

#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
impl Serialize for TunnelFlags {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serialize_flags(&TUNNEL, u32::from(self.bits()), s)
    }
}

#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
impl<'de> Deserialize<'de> for TunnelFlags {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let bits = d.deserialize_any(FlagsVisitor {
            names: &TUNNEL,
            aliases: &[],
            what: "tunnel flag",
        })?;
        let bits = u16::try_from(bits)
            .map_err(|_| de::Error::custom(format!("tunnel flags {bits:#x} exceed 16 bits")))?;
        Ok(TunnelFlags::from_bits_retain(bits))
    }
}

#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
impl Serialize for Scheduler {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
impl<'de> Deserialize<'de> for Scheduler {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Scheduler::new(&name).map_err(de::Error::custom)
    }
}

/// Reads a name (case-insensitive) or a number of a value with both.
struct NameOrNumber<T: 'static> {
    what: &'static str,
    names: &'static [(&'static str, T)],
    from_number: fn(u64) -> Option<T>,
}

impl<'de, T: Copy + 'static> Visitor<'de> for NameOrNumber<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a {} name or number", self.what)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        self.names
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(v))
            .map(|(_, value)| *value)
            .ok_or_else(|| {
                let known: Vec<&str> = self.names.iter().map(|(n, _)| *n).collect();
                E::custom(format!(
                    "{v:?} is not a {} (expected {}, or a number)",
                    self.what,
                    known.join(", ")
                ))
            })
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        (self.from_number)(v)
            .ok_or_else(|| E::custom(format!("{v} is out of range for a {}", self.what)))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        let n = u64::try_from(v)
            .map_err(|_| E::custom(format!("{v} is out of range for a {}", self.what)))?;
        self.visit_u64(n)
    }
}

const PROTOCOLS: &[(&str, Protocol)] = &[
    ("TCP", Protocol::Tcp),
    ("UDP", Protocol::Udp),
    ("SCTP", Protocol::Sctp),
];

#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
impl Serialize for Protocol {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Protocol::Other(n) => s.serialize_u16(n.get()),
            named => s.serialize_str(&named.to_string()),
        }
    }
}

#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
impl<'de> Deserialize<'de> for Protocol {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NameOrNumber {
            what: "protocol",
            names: PROTOCOLS,
            from_number: |n| u16::try_from(n).ok().map(Protocol::from_raw),
        })
    }
}

const TUNNEL_KINDS: &[(&str, TunnelKind)] = &[
    ("ipip", TunnelKind::Ipip),
    ("gue", TunnelKind::Gue),
    ("gre", TunnelKind::Gre),
];

#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
impl Serialize for TunnelKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            TunnelKind::Other(n) => s.serialize_u8(n.get()),
            named => s.serialize_str(&named.to_string()),
        }
    }
}

#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
impl<'de> Deserialize<'de> for TunnelKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NameOrNumber {
            what: "tunnel type",
            names: TUNNEL_KINDS,
            from_number: |n| u8::try_from(n).ok().map(TunnelKind::from_raw),
        })
    }
}

#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
impl Serialize for OtherForward {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u32(self.get())
    }
}

#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
impl<'de> Deserialize<'de> for OtherForward {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let n = u32::deserialize(d)?;
        match crate::Forward::from_raw(n) {
            Some(crate::Forward::Other(m)) => Ok(m),
            Some(named) => Err(de::Error::custom(format!(
                "forwarding method {n} is {named}: write it by name"
            ))),
            None => Err(de::Error::custom(format!(
                "forwarding method {n} is above 7"
            ))),
        }
    }
}

/// A service as read: the key, and whatever else is given.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ServiceSpec {
    key: ServiceKey,
    #[serde(default)]
    scheduler: Scheduler,
    #[serde(default)]
    flags: ServiceFlags,
    #[serde(default)]
    timeout: u32,
    #[serde(default)]
    netmask: Option<Netmask>,
    #[serde(default)]
    persistence_engine: Option<String>,
}

impl From<ServiceSpec> for Service {
    fn from(s: ServiceSpec) -> Self {
        Service {
            netmask: s.netmask.unwrap_or_else(|| Netmask::host(s.key.family())),
            key: s.key,
            scheduler: s.scheduler,
            flags: s.flags,
            timeout: s.timeout,
            persistence_engine: s.persistence_engine,
        }
    }
}

/// The weight of a destination read without one: ipvsadm's default.
pub(crate) fn default_weight() -> u32 {
    1
}

//! Flag sets in words: the names [`ServiceFlags`] and [`TunnelFlags`]
//! print (and, with the `serde` feature, serialize) as.
//!
//! One convention for every flag set: the names of the set bits joined by
//! `,` in bit order, then any bits without a name as one hex number
//! (`0x400`); an empty set prints the set's word for nothing.

use std::fmt;

use crate::{Scheduler, ServiceFlags, TunnelFlags};

/// The separator between the names of a flag set.
pub(crate) const SEPARATOR: &str = ",";

/// Names of the bits of a flag set, in bit order, and the word for none.
pub(crate) struct FlagNames {
    /// Each named bit and its name.
    pub(crate) names: &'static [(u32, &'static str)],
    /// What an empty set prints.
    pub(crate) empty: &'static str,
}

impl FlagNames {
    /// The names of the set bits of `bits`, then the unnamed rest as hex.
    pub(crate) fn words(&self, bits: u32) -> Vec<String> {
        let mut out = Vec::new();
        let mut rest = bits;
        for (bit, name) in self.names {
            if bits & bit != 0 {
                out.push((*name).to_owned());
                rest &= !bit;
            }
        }
        if rest != 0 {
            out.push(format!("{rest:#x}"));
        }
        out
    }

    /// Writes `bits` as [`FlagNames::words`] joined, or the empty word.
    pub(crate) fn write(&self, f: &mut fmt::Formatter<'_>, bits: u32) -> fmt::Result {
        if bits == 0 {
            return f.write_str(self.empty);
        }
        f.write_str(&self.words(bits).join(SEPARATOR))
    }

    /// The bits of one word: a name of this set, an alias, or a hex
    /// number (`0x...`).
    #[cfg(any(test, feature = "serde"))]
    pub(crate) fn parse(&self, word: &str, aliases: &[(u32, &str)]) -> Option<u32> {
        if let Some(hex) = word.strip_prefix("0x") {
            return u32::from_str_radix(hex, 16).ok();
        }
        self.names
            .iter()
            .chain(aliases)
            .find(|(_, n)| *n == word)
            .map(|(bit, _)| *bit)
    }
}

/// ipvsadm's words for the service flags (its `-b` list for the scheduler
/// flags, its listing's `persistent` and `ops`).
pub(crate) const SERVICE: FlagNames = FlagNames {
    names: &[
        (ServiceFlags::PERSISTENT.bits(), "persistent"),
        (ServiceFlags::HASHED.bits(), "hashed"),
        (ServiceFlags::ONE_PACKET.bits(), "ops"),
        (ServiceFlags::SCHED1.bits(), "flag-1"),
        (ServiceFlags::SCHED2.bits(), "flag-2"),
        (ServiceFlags::SCHED3.bits(), "flag-3"),
    ],
    empty: "none",
};

/// The scheduler flags' names for `sh`.
const SH: &[(u32, &str)] = &[
    (ServiceFlags::SCHED1.bits(), "sh-fallback"),
    (ServiceFlags::SCHED2.bits(), "sh-port"),
];

/// The scheduler flags' names for `mh`.
const MH: &[(u32, &str)] = &[
    (ServiceFlags::SCHED1.bits(), "mh-fallback"),
    (ServiceFlags::SCHED2.bits(), "mh-port"),
];

/// The scheduler-specific names a service flag may also be written as.
#[cfg(any(test, feature = "serde"))]
pub(crate) const SERVICE_ALIASES: &[(u32, &str)] = &[
    (ServiceFlags::SCHED1.bits(), "sh-fallback"),
    (ServiceFlags::SCHED2.bits(), "sh-port"),
    (ServiceFlags::SCHED1.bits(), "mh-fallback"),
    (ServiceFlags::SCHED2.bits(), "mh-port"),
];

/// ipvsadm's words for the tunnel checksum flags (`--tun-nocsum`,
/// `--tun-csum`, `--tun-remcsum`): no flag is `nocsum`.
pub(crate) const TUNNEL: FlagNames = FlagNames {
    names: &[
        (TunnelFlags::CSUM.bits() as u32, "csum"),
        (TunnelFlags::REMCSUM.bits() as u32, "remcsum"),
    ],
    empty: "nocsum",
};

impl fmt::Display for ServiceFlags {
    /// The flags in ipvsadm's words, joined by `,`: `persistent`, `hashed`,
    /// `ops`, `flag-1`, `flag-2`, `flag-3`; bits without a name as hex;
    /// `none` for no flag. See [`ServiceFlags::display_for`] for the
    /// scheduler flags' names of `sh` and `mh`.
    ///
    /// ```
    /// use ipvsnl::ServiceFlags;
    /// let f = ServiceFlags::PERSISTENT | ServiceFlags::SCHED1;
    /// assert_eq!(f.to_string(), "persistent,flag-1");
    /// assert_eq!(ServiceFlags::empty().to_string(), "none");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        SERVICE.write(f, self.bits())
    }
}

impl ServiceFlags {
    /// The scheduler flag ipvsadm's `-b` names `name`, and the scheduler it
    /// belongs to if it is one scheduler's (`sh-port` is `sh`'s):
    /// `flag-1`..`flag-3` for any, `sh-fallback`/`sh-port`,
    /// `mh-fallback`/`mh-port`. `None` for any other word.
    ///
    /// ```
    /// use ipvsnl::ServiceFlags;
    /// assert_eq!(ServiceFlags::scheduler_flag("sh-port"), Some((ServiceFlags::SH_PORT, Some("sh"))));
    /// assert_eq!(ServiceFlags::scheduler_flag("flag-3"), Some((ServiceFlags::SCHED3, None)));
    /// assert_eq!(ServiceFlags::scheduler_flag("port"), None);
    /// ```
    pub fn scheduler_flag(name: &str) -> Option<(ServiceFlags, Option<&'static str>)> {
        let generic = [
            ("flag-1", ServiceFlags::SCHED1),
            ("flag-2", ServiceFlags::SCHED2),
            ("flag-3", ServiceFlags::SCHED3),
        ];
        if let Some((_, f)) = generic.iter().find(|(n, _)| *n == name) {
            return Some((*f, None));
        }
        [(SH, "sh"), (MH, "mh")].iter().find_map(|(names, sched)| {
            names
                .iter()
                .find(|(_, n)| *n == name)
                .map(|(bits, _)| (ServiceFlags::from_bits_retain(*bits), Some(*sched)))
        })
    }

    /// The flags in words, the scheduler flags named as `scheduler` names
    /// them (`sh-fallback`, `sh-port` for `sh`; `mh-fallback`, `mh-port`
    /// for `mh`; `flag-1` ... for the others), as ipvsadm lists them.
    ///
    /// ```
    /// use ipvsnl::{Scheduler, ServiceFlags};
    /// let f = ServiceFlags::SH_FALLBACK | ServiceFlags::SH_PORT;
    /// assert_eq!(f.display_for(&Scheduler::SourceHashing).to_string(), "sh-fallback,sh-port");
    /// assert_eq!(f.display_for(&Scheduler::RoundRobin).to_string(), "flag-1,flag-2");
    /// ```
    pub fn display_for(self, scheduler: &Scheduler) -> impl fmt::Display {
        let specific: &'static [(u32, &'static str)] = match scheduler {
            Scheduler::SourceHashing => SH,
            Scheduler::Maglev => MH,
            _ => &[],
        };
        ForScheduler {
            flags: self,
            specific,
        }
    }
}

/// [`ServiceFlags::display_for`]'s value.
struct ForScheduler {
    flags: ServiceFlags,
    specific: &'static [(u32, &'static str)],
}

impl fmt::Display for ForScheduler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bits = self.flags.bits();
        if bits == 0 {
            return f.write_str(SERVICE.empty);
        }
        let words: Vec<String> = SERVICE
            .words(bits)
            .into_iter()
            .map(|w| {
                let named = SERVICE
                    .names
                    .iter()
                    .find(|(_, n)| *n == w)
                    .and_then(|(bit, _)| self.specific.iter().find(|(b, _)| b == bit));
                named.map_or(w, |(_, n)| (*n).to_owned())
            })
            .collect();
        f.write_str(&words.join(SEPARATOR))
    }
}

impl fmt::Display for TunnelFlags {
    /// The checksum flags in ipvsadm's words, joined by `,`: `csum`,
    /// `remcsum`; bits without a name as hex; `nocsum` for no flag.
    ///
    /// ```
    /// use ipvsnl::TunnelFlags;
    /// assert_eq!(TunnelFlags::empty().to_string(), "nocsum");
    /// assert_eq!(TunnelFlags::REMCSUM.to_string(), "remcsum");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        TUNNEL.write(f, u32::from(self.bits()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_flags_print_ipvsadm_words() {
        let cases = [
            (ServiceFlags::empty(), "none"),
            (ServiceFlags::PERSISTENT, "persistent"),
            (ServiceFlags::HASHED, "hashed"),
            (ServiceFlags::ONE_PACKET, "ops"),
            (ServiceFlags::SCHED1, "flag-1"),
            (ServiceFlags::SCHED2, "flag-2"),
            (ServiceFlags::SCHED3, "flag-3"),
            (
                ServiceFlags::PERSISTENT | ServiceFlags::ONE_PACKET | ServiceFlags::SCHED3,
                "persistent,ops,flag-3",
            ),
            (ServiceFlags::from_bits_retain(0x400), "0x400"),
            (
                ServiceFlags::from_bits_retain(0x1 | 0xc00),
                "persistent,0xc00",
            ),
        ];
        for (flags, text) in cases {
            assert_eq!(flags.to_string(), text, "{flags:?}");
        }
    }

    #[test]
    fn scheduler_flags_take_the_schedulers_names() {
        let f = ServiceFlags::PERSISTENT | ServiceFlags::SCHED1 | ServiceFlags::SCHED2;
        let cases = [
            (Scheduler::SourceHashing, "persistent,sh-fallback,sh-port"),
            (Scheduler::Maglev, "persistent,mh-fallback,mh-port"),
            (Scheduler::WeightedRoundRobin, "persistent,flag-1,flag-2"),
        ];
        for (s, text) in cases {
            assert_eq!(f.display_for(&s).to_string(), text, "{s}");
        }
        let odd = ServiceFlags::SCHED3 | ServiceFlags::from_bits_retain(0x800);
        assert_eq!(
            odd.display_for(&Scheduler::SourceHashing).to_string(),
            "flag-3,0x800"
        );
        assert_eq!(
            ServiceFlags::empty()
                .display_for(&Scheduler::Maglev)
                .to_string(),
            "none"
        );
    }

    #[test]
    fn tunnel_flags_print_ipvsadm_words() {
        let cases = [
            (TunnelFlags::empty(), "nocsum"),
            (TunnelFlags::CSUM, "csum"),
            (TunnelFlags::REMCSUM, "remcsum"),
            (TunnelFlags::CSUM | TunnelFlags::REMCSUM, "csum,remcsum"),
            (TunnelFlags::from_bits_retain(0x10), "0x10"),
        ];
        for (flags, text) in cases {
            assert_eq!(flags.to_string(), text, "{flags:?}");
        }
    }

    #[test]
    fn words_parse_back_and_nonsense_does_not() {
        for (bit, name) in SERVICE.names.iter().chain(SERVICE_ALIASES) {
            assert_eq!(SERVICE.parse(name, SERVICE_ALIASES), Some(*bit), "{name}");
        }
        assert_eq!(SERVICE.parse("0x400", SERVICE_ALIASES), Some(0x400));
        assert_eq!(SERVICE.parse("sticky", SERVICE_ALIASES), None);
        assert_eq!(SERVICE.parse("0xzz", SERVICE_ALIASES), None);
        assert_eq!(TUNNEL.parse("remcsum", &[]), Some(2));
    }
}

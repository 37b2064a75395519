//! Scheduler names.

use std::fmt;
use std::str::FromStr;

use super::invalid::InvalidValue;
use super::other::OtherScheduler;

/// The longest scheduler name the kernel accepts (its buffer is 16 bytes
/// with the NUL; kernels before 4.17 took one more).
pub const SCHED_NAME_MAX: usize = 15;

/// A scheduling algorithm, by name.
///
/// The common schedulers are named values; any other name the kernel knows
/// (a scheduler from an out-of-tree module, say) is [`Scheduler::Other`].
/// Parsing normalises: `"rr".parse()` gives [`Scheduler::RoundRobin`]. An
/// [`OtherScheduler`] is only ever made by parsing (or listing) a name
/// that is none of the named ones, so a scheduler has one spelling and two
/// values naming the same scheduler compare equal.
///
/// ```
/// use ipvsnl::Scheduler;
/// let s: Scheduler = "mh".parse().unwrap();
/// assert_eq!(s, Scheduler::Maglev);
/// assert_eq!(s.module(), "ip_vs_mh");
/// assert_eq!("rr".parse::<Scheduler>().unwrap(), Scheduler::RoundRobin);
/// let other: Scheduler = "foo".parse().unwrap();
/// assert!(matches!(&other, Scheduler::Other(u) if u.name() == "foo"));
/// assert!("a-name-that-is-too-long".parse::<Scheduler>().is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Scheduler {
    /// `rr`: round robin.
    RoundRobin,
    /// `wrr`: weighted round robin.
    WeightedRoundRobin,
    /// `lc`: least connections.
    LeastConnection,
    /// `wlc`: weighted least connections (ipvsadm's default).
    WeightedLeastConnection,
    /// `lblc`: locality-based least connections.
    LocalityBasedLeastConnection,
    /// `lblcr`: locality-based least connections with replication.
    LocalityBasedLeastConnectionReplication,
    /// `dh`: destination hashing.
    DestinationHashing,
    /// `sh`: source hashing (flags: sh-fallback, sh-port).
    SourceHashing,
    /// `sed`: shortest expected delay.
    ShortestExpectedDelay,
    /// `nq`: never queue.
    NeverQueue,
    /// `fo`: weighted failover.
    WeightedFailover,
    /// `ovf`: weighted overflow.
    WeightedOverflow,
    /// `mh`: Maglev hashing (flags: mh-fallback, mh-port; kernel 4.18+).
    Maglev,
    /// `twos`: weighted random twos choice (kernel 6.7+).
    TwoChoice,
    /// `none`: no scheduler (the kernel accepts and reports it).
    None,
    /// Any other scheduler name (never the name of one above).
    Other(OtherScheduler),
}

const NAMED: [(Scheduler, &str); 15] = [
    (Scheduler::RoundRobin, "rr"),
    (Scheduler::WeightedRoundRobin, "wrr"),
    (Scheduler::LeastConnection, "lc"),
    (Scheduler::WeightedLeastConnection, "wlc"),
    (Scheduler::LocalityBasedLeastConnection, "lblc"),
    (Scheduler::LocalityBasedLeastConnectionReplication, "lblcr"),
    (Scheduler::DestinationHashing, "dh"),
    (Scheduler::SourceHashing, "sh"),
    (Scheduler::ShortestExpectedDelay, "sed"),
    (Scheduler::NeverQueue, "nq"),
    (Scheduler::WeightedFailover, "fo"),
    (Scheduler::WeightedOverflow, "ovf"),
    (Scheduler::Maglev, "mh"),
    (Scheduler::TwoChoice, "twos"),
    (Scheduler::None, "none"),
];

impl Scheduler {
    /// Every named scheduler, in the order of this enum.
    pub fn named() -> impl Iterator<Item = Scheduler> {
        NAMED.iter().map(|(s, _)| s.clone())
    }

    /// The name the kernel knows it by.
    pub fn name(&self) -> &str {
        match self {
            Scheduler::Other(u) => u.name(),
            known => NAMED
                .iter()
                .find(|(s, _)| s == known)
                .map(|(_, n)| *n)
                .unwrap_or(""),
        }
    }

    /// The kernel module that provides it (`ip_vs_<name>`).
    pub fn module(&self) -> String {
        format!("ip_vs_{}", self.name())
    }

    /// The scheduler of a name, checking what the kernel would refuse: an
    /// empty name, one longer than [`SCHED_NAME_MAX`] bytes, or one with a
    /// NUL, white space or anything but printable ASCII (a scheduler is a
    /// kernel module, `ip_vs_<name>`). The error says which.
    ///
    /// ```
    /// use ipvsnl::Scheduler;
    /// let e = Scheduler::new("r\u{e9}").unwrap_err();
    /// assert_eq!(e.to_string(), "invalid scheduler name: \"r\u{e9}\" is not printable ASCII (it names a kernel module)");
    /// ```
    pub fn new(name: &str) -> Result<Self, InvalidValue> {
        check_name("scheduler name", name, SCHED_NAME_MAX, true)?;
        Ok(Scheduler::from_kernel(name))
    }

    /// The scheduler of a name, unchecked (as the kernel reported it, or
    /// as ipvsadm's grammar keeps it): never fails, keeps anything, and
    /// gives the named value for a known name. This and [`Scheduler::new`]
    /// are the only makers of an [`OtherScheduler`].
    /// (Allocates only for a name it does not know.)
    pub(crate) fn from_kernel(name: &str) -> Self {
        NAMED.iter().find(|(_, n)| *n == name).map_or_else(
            || {
                Scheduler::Other(OtherScheduler {
                    name: name.to_owned(),
                })
            },
            |(s, _)| s.clone(),
        )
    }
}

/// Checks a name the kernel keeps in a buffer of `max` bytes and a NUL:
/// not empty, not too long, no NUL, no white space, and, for the name of a
/// kernel module (`module`: a scheduler, a persistence engine), printable
/// ASCII only. The error names `what` and the fault.
pub(crate) fn check_name(
    what: &'static str,
    name: &str,
    max: usize,
    module: bool,
) -> Result<(), InvalidValue> {
    let why = if name.is_empty() {
        "it is empty".to_owned()
    } else if name.len() > max {
        format!(
            "{name:?} is {} bytes long; the kernel allows at most {max}",
            name.len()
        )
    } else if name.bytes().any(|b| b == 0) {
        format!("{name:?} contains a NUL byte")
    } else if name.chars().any(char::is_whitespace) {
        format!("{name:?} contains white space")
    } else if module && !name.bytes().all(|b| b.is_ascii_graphic()) {
        format!("{name:?} is not printable ASCII (it names a kernel module)")
    } else {
        return Ok(());
    };
    Err(InvalidValue::new(what, why))
}

impl Default for Scheduler {
    /// `wlc`, the default of ipvsadm.
    fn default() -> Self {
        Scheduler::WeightedLeastConnection
    }
}

impl FromStr for Scheduler {
    type Err = InvalidValue;
    fn from_str(s: &str) -> Result<Self, InvalidValue> {
        Scheduler::new(s)
    }
}

impl fmt::Display for Scheduler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_normalise() {
        for s in Scheduler::named() {
            assert_eq!(Scheduler::new(s.name()).unwrap(), s);
            assert_eq!(s.name().parse::<Scheduler>().unwrap(), s);
            assert_eq!(Scheduler::from_kernel(s.name()), s);
            assert!(!matches!(s, Scheduler::Other(_)), "{s}");
        }
        let fancy = Scheduler::new("fancy").unwrap();
        assert!(matches!(&fancy, Scheduler::Other(u) if u.name() == "fancy"));
        assert_eq!(Scheduler::from_kernel("fancy"), fancy);
        assert_eq!(fancy.to_string(), "fancy");
        assert_eq!(Scheduler::new("123456789012345").unwrap().name().len(), 15);
    }

    /// `Other` holds only names none of the named schedulers has: whatever
    /// the maker, a known name comes back as its named value.
    #[test]
    fn other_never_holds_a_known_name() {
        let known: Vec<&str> = NAMED.iter().map(|(_, n)| *n).collect();
        let mut names: Vec<String> = known.iter().map(|n| n.to_string()).collect();
        names.extend(["fancy", "RR", "rr2", "w", "ip_vs_rr"].map(String::from));
        for name in &names {
            for s in [Scheduler::new(name).unwrap(), Scheduler::from_kernel(name)] {
                assert_eq!(s.name(), name);
                let is_other = matches!(s, Scheduler::Other(_));
                assert_eq!(is_other, !known.contains(&name.as_str()), "{name}");
            }
        }
    }

    #[test]
    fn bad_names_are_refused_with_the_reason() {
        let e = Scheduler::new("1234567890123456").unwrap_err().to_string();
        assert!(e.contains("at most 15"), "{e}");
        assert!(Scheduler::new("").is_err());
        assert!(Scheduler::new("a b").is_err());
        assert!(Scheduler::new("r\u{e9}").is_err());
        assert!(Scheduler::new("r\u{1}").is_err());
    }
}

//! Scheduler names.

use std::fmt;
use std::str::FromStr;

use crate::Error;

/// The longest scheduler name the kernel accepts (its buffer is 16 bytes
/// with the NUL; kernels before 4.17 took one more).
pub const SCHED_NAME_MAX: usize = 15;

/// A scheduling algorithm, by name.
///
/// The common schedulers are named values; any other name the kernel knows
/// (a scheduler from an out-of-tree module, say) is [`Scheduler::Other`].
/// Parsing normalises: `"rr".parse()` gives [`Scheduler::RoundRobin`], never
/// `Other("rr")`, so two values naming the same scheduler compare equal.
///
/// ```
/// use ipvsnl::Scheduler;
/// let s: Scheduler = "mh".parse().unwrap();
/// assert_eq!(s, Scheduler::Maglev);
/// assert_eq!(s.module(), "ip_vs_mh");
/// assert_eq!("foo".parse::<Scheduler>().unwrap().name(), "foo");
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
    /// Any other scheduler name.
    Other(String),
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
            Scheduler::Other(name) => name,
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

    /// The scheduler of a name, checking what the kernel would refuse.
    pub fn new(name: &str) -> Result<Self, Error> {
        if name.is_empty() {
            return Err(Error::invalid("scheduler name", "it is empty"));
        }
        if name.len() > SCHED_NAME_MAX {
            return Err(Error::invalid(
                "scheduler name",
                format!(
                    "\"{name}\" is {} bytes long; the kernel allows at most {SCHED_NAME_MAX}",
                    name.len()
                ),
            ));
        }
        if name.bytes().any(|b| b == 0 || b.is_ascii_whitespace()) {
            return Err(Error::invalid(
                "scheduler name",
                format!("{name:?} contains a NUL or white space"),
            ));
        }
        Ok(NAMED
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(s, _)| s.clone())
            .unwrap_or_else(|| Scheduler::Other(name.to_owned())))
    }

    /// The scheduler as the kernel reported it: never fails, keeps anything.
    /// (Allocates only for a name it does not know.)
    pub(crate) fn from_kernel(name: &str) -> Self {
        NAMED
            .iter()
            .find(|(_, n)| *n == name)
            .map_or_else(|| Scheduler::Other(name.to_owned()), |(s, _)| s.clone())
    }
}

impl Default for Scheduler {
    /// `wlc`, the default of ipvsadm.
    fn default() -> Self {
        Scheduler::WeightedLeastConnection
    }
}

impl FromStr for Scheduler {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
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
            assert_eq!(Scheduler::from_kernel(s.name()), s);
        }
        assert_eq!(
            Scheduler::new("fancy").unwrap(),
            Scheduler::Other("fancy".into())
        );
        assert_eq!(
            Scheduler::from_kernel("fancy"),
            Scheduler::Other("fancy".into())
        );
        assert_eq!(Scheduler::new("123456789012345").unwrap().name().len(), 15);
    }

    #[test]
    fn bad_names_are_refused_with_the_reason() {
        let e = Scheduler::new("1234567890123456").unwrap_err().to_string();
        assert!(e.contains("at most 15"), "{e}");
        assert!(Scheduler::new("").is_err());
        assert!(Scheduler::new("a b").is_err());
    }
}

//! Kernel values this crate has no name for: the payloads of the `Other`
//! variants of [`Scheduler`], [`Protocol`], [`Forward`] and [`TunnelKind`].
//!
//! Each is opaque: it is made only by its enum's normalising maker
//! (`Scheduler::new`, `Protocol::from_raw`, `Forward::from_raw`,
//! `TunnelKind::from_raw`, and the decoding of kernel replies), which gives
//! the named variant for every value it knows. A value it has no name for is kept,
//! but never as a second spelling of a known one, so equal settings
//! compare equal and the sync engine sees no change where there is none.

use std::fmt;

#[cfg(doc)]
use crate::{Forward, Protocol, Scheduler, TunnelKind};

/// The name of a scheduler that is none of [`Scheduler`]'s named values:
/// the payload of [`Scheduler::Other`].
///
/// It has no public constructor: [`Scheduler::new`] (or `parse`) makes one
/// only for a name it does not know, so `Other` never spells a named
/// scheduler a second way.
///
/// ```
/// use ipvsnl::Scheduler;
/// match "ip_vs_custom".parse::<Scheduler>().unwrap() {
///     Scheduler::Other(u) => {
///         assert_eq!(u.name(), "ip_vs_custom");
///         assert_eq!(u.to_string(), "ip_vs_custom");
///     }
///     named => panic!("{named} has a name"),
/// }
/// ```
///
/// ```compile_fail
/// use ipvsnl::{Scheduler, OtherScheduler};
/// let alias = Scheduler::Other(OtherScheduler { name: "rr".into() });
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub struct OtherScheduler {
    pub(super) name: String,
}

impl OtherScheduler {
    /// The scheduler's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl fmt::Display for OtherScheduler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

/// An IP protocol number that is none of [`Protocol`]'s named values: the
/// payload of [`Protocol::Other`].
///
/// It has no public constructor: [`Protocol::from_raw`] makes one only for
/// a number it does not know, so `Other` never spells TCP, UDP or SCTP a
/// second way.
///
/// ```
/// use ipvsnl::Protocol;
/// let Protocol::Other(p) = Protocol::from_raw(47) else { panic!() };
/// assert_eq!(p.get(), 47);
/// assert_eq!(p.to_string(), "47");
/// ```
///
/// ```compile_fail
/// use ipvsnl::{Protocol, OtherProtocol};
/// let alias = Protocol::Other(OtherProtocol(6));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub struct OtherProtocol(pub(super) u16);

impl OtherProtocol {
    /// The IP protocol number.
    pub fn get(self) -> u16 {
        self.0
    }
}

impl fmt::Display for OtherProtocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A tunnel type number that is none of [`TunnelKind`]'s named values: the
/// payload of [`TunnelKind::Other`].
///
/// It has no public constructor: [`TunnelKind::from_raw`] makes one only
/// for a number it does not know.
///
/// ```
/// use ipvsnl::TunnelKind;
/// let TunnelKind::Other(k) = TunnelKind::from_raw(7) else { panic!() };
/// assert_eq!(k.get(), 7);
/// assert_eq!(k.to_string(), "7");
/// ```
///
/// ```compile_fail
/// use ipvsnl::{TunnelKind, OtherTunnelKind};
/// let alias = TunnelKind::Other(OtherTunnelKind(1));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub struct OtherTunnelKind(pub(super) u8);

impl OtherTunnelKind {
    /// The kernel's number.
    pub fn get(self) -> u8 {
        self.0
    }
}

impl fmt::Display for OtherTunnelKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A forwarding method number that is none of [`Forward`]'s named methods
/// (5 to 7, the rest of the kernel's three-bit field): the payload of
/// [`Forward::Other`].
///
/// It has no public constructor: [`Forward::from_raw`] makes one only for
/// a number it does not know.
///
/// ```
/// use ipvsnl::Forward;
/// let Some(Forward::Other(m)) = Forward::from_raw(7) else { panic!() };
/// assert_eq!(m.get(), 7);
/// assert_eq!(m.to_string(), "7");
/// ```
///
/// ```compile_fail
/// use ipvsnl::{Forward, OtherForward};
/// let alias = Forward::Other(OtherForward(3));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub struct OtherForward(pub(super) u32);

impl OtherForward {
    /// The kernel's method number.
    pub fn get(self) -> u32 {
        self.0
    }
}

impl fmt::Display for OtherForward {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

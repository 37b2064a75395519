//! The report of one sync: every planned request with its outcome, and
//! what became of the requests whose replies were never seen.

use std::fmt;

use crate::proto::Cause;
use crate::sync::fates::{Fate, Fates};
use crate::{Error, Request, ServiceKey};

/// A request of a sync whose reply was never seen, and what reading its
/// service back from the kernel found.
///
/// ```
/// use ipvsnl::sync::Found;
/// assert_eq!(Found::Applied.to_string(), "found applied");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Unknown {
    /// Its index in [`Report::requests`].
    pub index: usize,
    /// Why its reply was not seen.
    pub cause: Cause,
    /// What the kernel showed.
    pub found: Found,
}

/// What reading a service back showed of a request whose reply was lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Found {
    /// The request had been applied.
    Applied,
    /// It had not; the service was planned again and the requests that
    /// correct it are appended to the report.
    Replanned,
    /// The service could not be read back: the outcome stays unknown.
    Unread,
}

impl fmt::Display for Found {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Found::Applied => "found applied",
            Found::Replanned => "found not applied, planned again",
            Found::Unread => "could not be read back",
        })
    }
}

/// Every planned request with its outcome.
#[derive(Debug)]
#[must_use = "a report holds the requests that failed or whose outcome is unknown"]
#[non_exhaustive]
pub struct Report {
    pub(crate) requests: Vec<Request>,
    pub(crate) outcomes: Fates,
    pub(crate) conflicts: Vec<ServiceKey>,
    pub(crate) listed: bool,
    pub(crate) unknown: Vec<Unknown>,
}

impl Report {
    /// Each request in plan order with its outcome.
    pub fn operations(&self) -> impl Iterator<Item = (&Request, &Fate)> {
        self.requests.iter().zip(self.outcomes.iter())
    }

    /// The planned requests.
    pub fn requests(&self) -> &[Request] {
        &self.requests
    }

    /// What became of each request, in plan order.
    pub fn fates(&self) -> impl Iterator<Item = &Fate> {
        self.outcomes.iter()
    }

    /// What became of request `i` of [`Report::requests`].
    pub fn fate(&self, i: usize) -> Option<&Fate> {
        (i < self.outcomes.len()).then(|| self.outcomes.get(i))
    }

    /// How many requests were applied.
    pub fn done(&self) -> usize {
        let not_done = self.outcomes.exceptions().filter(|(_, o)| !o.is_done());
        self.outcomes.len() - not_done.count()
    }

    /// The failed requests with their errors.
    pub fn failures(&self) -> impl Iterator<Item = (&Request, &Error)> {
        self.outcomes.exceptions().filter_map(|(i, o)| match o {
            Fate::Failed(e) => Some((&self.requests[i], e)),
            _ => None,
        })
    }

    /// How many requests failed.
    pub fn failed(&self) -> usize {
        self.failures().count()
    }

    /// How many requests were skipped because their service failed.
    pub fn skipped(&self) -> usize {
        self.outcomes
            .exceptions()
            .filter(|(_, o)| matches!(o, Fate::Skipped { .. }))
            .count()
    }

    /// Wanted services outside the scope, refused.
    pub fn conflicts(&self) -> &[ServiceKey] {
        &self.conflicts
    }

    /// True when every request was applied and nothing was refused: the
    /// kernel now holds the desired state (within the scope).
    pub fn is_complete(&self) -> bool {
        self.conflicts.is_empty() && self.outcomes.exceptions().all(|(_, o)| o.is_done())
    }

    /// True when the table was listed from the kernel for this sync (false:
    /// planned from the cached view).
    pub fn listed(&self) -> bool {
        self.listed
    }

    /// Requests whose replies were lost (`ENOBUFS`) and whose outcome was
    /// established by reading the kernel's state back as applied.
    pub fn verified(&self) -> usize {
        self.unknown
            .iter()
            .filter(|u| u.found == Found::Applied)
            .count()
    }

    /// Every request whose reply was never seen (sent, outcome unknown),
    /// with what reading its service back found.
    pub fn unknown(&self) -> &[Unknown] {
        &self.unknown
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} requests: {} done, {} failed, {} skipped",
            self.requests.len(),
            self.done(),
            self.failed(),
            self.skipped()
        )?;
        if !self.conflicts.is_empty() {
            write!(f, ", {} wanted services out of scope", self.conflicts.len())?;
        }
        for (i, o) in self.outcomes.exceptions() {
            let r = &self.requests[i];
            match o {
                Fate::Failed(e) => write!(f, "\n  failed: {e}")?,
                Fate::Skipped { cause } => {
                    write!(f, "\n  skipped: {r} (request {cause} failed; this is {i})")?
                }
                Fate::Done | Fate::Superseded => {}
            }
        }
        for u in &self.unknown {
            let r = &self.requests[u.index];
            write!(f, "\n  unknown: {r} ({}): {}", u.cause, u.found)?;
        }
        Ok(())
    }
}

//! What became of each request of a sync. Kept as the exceptions (the
//! requests not simply done, by index): a cold create of tens of thousands
//! of requests that all succeed then keeps nothing per request.

use std::collections::BTreeMap;

use crate::Error;

/// What became of one planned request of a sync (its fate; the
/// pipelined apply's own word for one request, with no read-back, is
/// [`proto::Outcome`](crate::proto::Outcome)).
///
/// ```no_run
/// use ipvsnl::sync::{Fate, PlanOptions, Syncer, Table};
/// let mut ipvs = ipvsnl::Client::new()?;
/// let report = Syncer::new(PlanOptions::default()).sync(&mut ipvs, &Table::new())?;
/// for (request, fate) in report.operations() {
///     if let Fate::Failed(e) = fate {
///         eprintln!("{request}: {e}");
///     }
/// }
/// # Ok::<(), ipvsnl::Error>(())
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum Fate {
    /// Applied.
    Done,
    /// Refused by the kernel (the error names the request and the errno),
    /// not sent, or sent with its outcome unknown and its service not
    /// readable back ([`Error::is_unknown_outcome`]).
    Failed(Error),
    /// Not sent, because the request at index `cause` (adding its service)
    /// failed.
    Skipped {
        /// Index, in the plan, of the request whose failure caused this.
        cause: usize,
    },
    /// Settled by requests appended at the end of the report: the listing
    /// had missed the service (the kernel refused to add it again,
    /// `EEXIST`), or the request's reply was lost and reading the service
    /// back showed it not applied; either way the service was read back,
    /// planned again and corrected in the same sync. This request, and
    /// those of its destinations, count as settled.
    Superseded,
}

impl Fate {
    /// True for [`Fate::Done`] and [`Fate::Superseded`]: nothing
    /// left to do for this request.
    pub fn is_done(&self) -> bool {
        matches!(self, Fate::Done | Fate::Superseded)
    }
}

/// [`Fate::Done`], for the requests with no exception recorded.
static DONE: Fate = Fate::Done;

/// The fate of each of `len` requests: [`Fate::Done`] unless an
/// exception is recorded.
#[derive(Debug, Default)]
pub(crate) struct Fates {
    len: usize,
    exceptions: BTreeMap<usize, Fate>,
}

impl Fates {
    /// `len` requests, all done.
    pub(crate) fn all_done(len: usize) -> Self {
        Fates {
            len,
            exceptions: BTreeMap::new(),
        }
    }

    /// How many requests.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The outcome of request `i` (done if none was recorded).
    pub(crate) fn get(&self, i: usize) -> &Fate {
        self.exceptions.get(&i).unwrap_or(&DONE)
    }

    /// Records the outcome of request `i` (`i < len`).
    pub(crate) fn set(&mut self, i: usize, outcome: Fate) {
        debug_assert!(i < self.len);
        match outcome {
            Fate::Done => {
                self.exceptions.remove(&i);
            }
            other => {
                self.exceptions.insert(i, other);
            }
        }
    }

    /// One more request, with its outcome.
    pub(crate) fn push(&mut self, outcome: Fate) {
        self.len += 1;
        self.set(self.len - 1, outcome);
    }

    /// Every outcome, in request order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Fate> {
        (0..self.len).map(|i| self.get(i))
    }

    /// The requests not simply done, in order: (index, outcome).
    pub(crate) fn exceptions(&self) -> impl Iterator<Item = (usize, &Fate)> {
        self.exceptions.iter().map(|(i, o)| (*i, o))
    }

    /// Marks [`Fate::Superseded`] every exception `settled` accepts
    /// (given its index and outcome).
    pub(crate) fn supersede_where(&mut self, mut settled: impl FnMut(usize, &Fate) -> bool) {
        for o in self
            .exceptions
            .iter_mut()
            .filter_map(|(i, o)| settled(*i, o).then_some(o))
        {
            *o = Fate::Superseded;
        }
    }

    /// True when nothing but [`Fate::Done`] was recorded.
    pub(crate) fn all_plain_done(&self) -> bool {
        self.exceptions.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RequestKind;

    #[test]
    fn exceptions_only_are_kept() {
        let mut o = Fates::all_done(4);
        assert!(o.all_plain_done());
        o.set(2, Fate::Skipped { cause: 1 });
        o.set(
            1,
            Fate::Failed(Error::refused(
                crate::Target::new(RequestKind::AddService, crate::Object::Table),
                libc::EEXIST,
            )),
        );
        o.set(1, Fate::Superseded);
        o.push(Fate::Done);
        o.push(Fate::Skipped { cause: 0 });
        assert_eq!(o.len(), 6);
        let shown: Vec<String> = o.iter().map(|o| format!("{o:?}")).collect();
        assert_eq!(
            shown,
            [
                "Done",
                "Superseded",
                "Skipped { cause: 1 }",
                "Done",
                "Done",
                "Skipped { cause: 0 }"
            ]
        );
        let at: Vec<usize> = o.exceptions().map(|(i, _)| i).collect();
        assert_eq!(at, [1, 2, 5]);
        o.supersede_where(|i, _| i == 5);
        assert!(matches!(o.get(5), Fate::Superseded));
        assert!(matches!(o.get(2), Fate::Skipped { cause: 1 }));
        o.set(2, Fate::Done);
        assert_eq!(o.exceptions().count(), 2);
        assert!(!o.all_plain_done());
    }
}

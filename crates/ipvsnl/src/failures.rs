//! The outcome of applying many requests, kept as its exceptions: the
//! requests that did not succeed, by index. A bulk apply of tens of
//! thousands of requests that mostly succeed then costs memory for its
//! failures only, not a result per request.

use std::collections::BTreeMap;

use crate::Error;

/// Failed requests of one apply, by their index in the request list; an
/// index not present succeeded.
#[derive(Debug, Default)]
pub(crate) struct Failures(BTreeMap<usize, Error>);

impl Failures {
    /// Records request `i` as failed with `e` (replacing what was there).
    pub(crate) fn set(&mut self, i: usize, e: Error) {
        self.0.insert(i, e);
    }

    /// Records request `i` as failed with `e()` unless it already failed.
    pub(crate) fn set_if_ok(&mut self, i: usize, e: impl FnOnce() -> Error) {
        self.0.entry(i).or_insert_with(e);
    }

    /// One result per request, for `n` requests, in order.
    pub(crate) fn into_results(self, n: usize) -> Vec<Result<(), Error>> {
        let mut out: Vec<Result<(), Error>> = (0..n).map(|_| Ok(())).collect();
        for (i, e) in self.0 {
            if let Some(slot) = out.get_mut(i) {
                *slot = Err(e);
            }
        }
        out
    }
}

impl IntoIterator for Failures {
    type Item = (usize, Error);
    type IntoIter = std::collections::btree_map::IntoIter<usize, Error>;

    /// The failures in request order.
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RequestKind;

    fn refused(errno: i32) -> Error {
        Error::Kernel {
            kind: RequestKind::AddService,
            target: String::new(),
            errno,
        }
    }

    #[test]
    fn failures_become_results_in_order() {
        let mut f = Failures::default();
        f.set(3, refused(libc::EEXIST));
        f.set_if_ok(3, || refused(libc::ENOBUFS)); // already failed: kept
        f.set_if_ok(1, || refused(libc::ENOBUFS));
        let r = f.into_results(5);
        let errnos: Vec<Option<i32>> = r
            .iter()
            .map(|r| r.as_ref().err().and_then(Error::errno))
            .collect();
        assert_eq!(
            errnos,
            [None, Some(libc::ENOBUFS), None, Some(libc::EEXIST), None]
        );
    }
}

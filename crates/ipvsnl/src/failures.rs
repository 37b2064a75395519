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
    use crate::{Object, RequestKind, Target};

    fn refused(errno: i32) -> Error {
        Error::refused(Target::new(RequestKind::AddService, Object::Table), errno)
    }

    #[test]
    fn failures_become_results_in_order() {
        let mut f = Failures::default();
        f.set(3, refused(libc::ENOBUFS));
        f.set(3, refused(libc::EEXIST)); // replaced
        f.set(1, refused(libc::ESRCH));
        f.set(9, refused(libc::ESRCH)); // past the end: not reported
        let r = f.into_results(5);
        let errnos: Vec<Option<i32>> = r
            .iter()
            .map(|r| r.as_ref().err().and_then(Error::errno))
            .collect();
        assert_eq!(
            errnos,
            [None, Some(libc::ESRCH), None, Some(libc::EEXIST), None]
        );
    }
}

//! A generation's entries as a publish gets them: every key with its
//! value's length, and the values, some of which are made only when the
//! entry is put (a service whose key the publisher knew from its cache is
//! read again only if etcd does not have that key).
//!
//! ```
//! use ipvs_agent::fleet::publish::entries::Staged;
//! let value = b"a value".to_vec();
//! let key = format!("settings/{}", ipvs_agent::fleet::store::layout::value_digest(&value));
//! let made = value.clone();
//! let staged = Staged::lazy(vec![(key.clone(), value.len(), None)], Box::new(move |_| Some(made.clone())));
//! assert_eq!(staged.value(0).unwrap(), value);
//! let wrong = Staged::lazy(vec![(key, value.len(), None)], Box::new(|_| Some(b"other".to_vec())));
//! assert!(wrong.value(0).is_err());
//! ```

use std::collections::HashSet;

use crate::config::Config;
use crate::fleet::errors::FleetError;
use crate::fleet::publish::delta::Delta;
use crate::fleet::store::current::Digests;
use crate::fleet::store::current::{digest, Current};
use crate::fleet::store::layout::{entries, services_in, value_digest};

/// Makes the value of entry `i` again (`None` when it cannot).
pub type Maker = Box<dyn Fn(usize) -> Option<Vec<u8>> + Send + Sync>;

/// The entries of a generation, keys relative to `PREFIX/entries/`, in
/// key order.
#[non_exhaustive]
pub struct Staged {
    /// Each key with its value, or an empty one when the value is made on
    /// demand (see [`Staged::value`]).
    pub entries: Vec<(String, Vec<u8>)>,
    /// Each value's length.
    pub lens: Vec<usize>,
    /// Whether `entries` holds the value.
    held: Vec<bool>,
    maker: Option<Maker>,
    /// The keys presumed stored if `current` was last written at this
    /// revision ([`Staged::presuming`]).
    pub presumed: Option<(i64, Vec<String>)>,
}

impl std::fmt::Debug for Staged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Staged")
            .field("entries", &self.entries.len())
            .field("held", &self.held.iter().filter(|h| **h).count())
            .finish()
    }
}

impl Staged {
    /// Entries whose values are all held.
    pub fn new(entries: Vec<(String, Vec<u8>)>) -> Self {
        let lens = entries.iter().map(|(_, v)| v.len()).collect();
        let held = vec![true; entries.len()];
        Staged {
            entries,
            lens,
            held,
            maker: None,
            presumed: None,
        }
    }

    /// A configuration's entries ([`entries`]).
    pub fn of(config: &Config) -> Self {
        Staged::new(entries(config))
    }

    /// Entries each a key, its value's length and its value if held;
    /// `maker` makes those not held.
    pub fn lazy(items: Vec<(String, usize, Option<Vec<u8>>)>, maker: Maker) -> Self {
        let mut s = Staged {
            entries: Vec::with_capacity(items.len()),
            lens: Vec::with_capacity(items.len()),
            held: Vec::with_capacity(items.len()),
            maker: Some(maker),
            presumed: None,
        };
        for (k, len, v) in items {
            s.held.push(v.is_some());
            s.entries.push((k, v.unwrap_or_default()));
            s.lens.push(len);
        }
        s
    }

    /// With the keys stored presumed to be `keys` (relative to
    /// `PREFIX/entries/`) when `current` was last written at `revision`
    /// (what the publisher's cache says it stored): a publish checks the
    /// presumption against etcd's count of the entries, and reads the
    /// keys only when it fails (`write`).
    #[must_use]
    pub fn presuming(mut self, revision: i64, keys: Vec<String>) -> Self {
        self.presumed = Some((revision, keys));
        self
    }

    /// The keys, in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> + Clone {
        self.entries.iter().map(|(k, _)| k.as_str())
    }

    /// The `current` record of these entries as generation `n`.
    pub fn record(&self, n: u64) -> Current {
        Current::new(n, services_in(self.keys()), digest(self.keys()))
    }

    /// What turns the `stored` keys into these entries ([`Delta::new`]'s
    /// result, its sets hashed by [`Digests`]: the keys name digests).
    pub fn delta(&self, stored: &[String]) -> Delta {
        let mut wanted: HashSet<&str, Digests> = HashSet::default();
        wanted.extend(self.keys());
        let mut have: HashSet<&str, Digests> = HashSet::default();
        have.extend(stored.iter().map(String::as_str));
        let mut deletes: Vec<String> = stored
            .iter()
            .filter(|k| !wanted.contains(k.as_str()))
            .cloned()
            .collect();
        deletes.sort();
        deletes.dedup();
        let puts = self
            .keys()
            .enumerate()
            .filter(|(_, k)| !have.contains(k))
            .map(|(i, _)| i)
            .collect();
        Delta { deletes, puts }
    }

    /// The value of entry `i`: held, or made and checked against the
    /// digest its key names (an error when it differs: then the cache that
    /// named the key was wrong, and nothing is written).
    pub fn value(&self, i: usize) -> Result<Vec<u8>, FleetError> {
        let (key, held) = &self.entries[i];
        if self.held[i] {
            return Ok(held.clone());
        }
        let made = self.maker.as_ref().and_then(|m| m(i));
        let named = key.rsplit('/').next().unwrap_or_default();
        match made {
            Some(v) if value_digest(&v) == named && v.len() == self.lens[i] => Ok(v),
            _ => Err(FleetError::Stale { key: key.clone() }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_delta_is_delta_new_s() {
        let stored: Vec<String> = ["s/0/a", "s/1/b", "s/2/c", "s/2/c", "x"]
            .iter()
            .map(ToString::to_string)
            .collect();
        let entries: Vec<(String, Vec<u8>)> = ["s/0/a", "s/1/d", "s/3/c", "y"]
            .iter()
            .map(|k| (k.to_string(), Vec::new()))
            .collect();
        let staged = Staged::new(entries.clone());
        assert_eq!(staged.delta(&stored), Delta::new(&stored, &entries));
        assert_eq!(staged.delta(&stored).deletes, ["s/1/b", "s/2/c", "x"]);
        assert_eq!(staged.delta(&[]), Delta::new(&[], &entries));
    }
}

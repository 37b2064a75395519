//! What a publish writes: the keys stored that its entries do not have
//! (deleted) and its entries not stored yet (put). Keys are named by
//! content, so comparing keys compares values: an unchanged service is
//! neither read nor written.
//!
//! ```
//! use ipvs_agent::fleet::publish::delta::Delta;
//! let stored = vec!["services/0/aa".to_string(), "services/1/bb".to_string()];
//! let entries = vec![
//!     ("services/0/aa".to_string(), b"a".to_vec()),
//!     ("services/1/cc".to_string(), b"c".to_vec()),
//! ];
//! let d = Delta::new(&stored, &entries);
//! assert_eq!(d.deletes, ["services/1/bb"]);
//! assert_eq!(d.puts, [1]);
//! ```

use std::collections::HashSet;

/// The operations that turn what is stored into a configuration's entries.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Delta {
    /// Stored keys to delete, in key order.
    pub deletes: Vec<String>,
    /// The indices of the entries to put, in order.
    pub puts: Vec<usize>,
}

impl Delta {
    /// The delta from the `stored` keys to `entries` (keys relative to the
    /// same place, each with its value).
    pub fn new(stored: &[String], entries: &[(String, Vec<u8>)]) -> Self {
        let wanted: HashSet<&str> = entries.iter().map(|(k, _)| k.as_str()).collect();
        let have: HashSet<&str> = stored.iter().map(String::as_str).collect();
        let mut deletes: Vec<String> = stored
            .iter()
            .filter(|k| !wanted.contains(k.as_str()))
            .cloned()
            .collect();
        deletes.sort();
        deletes.dedup();
        let puts = entries
            .iter()
            .enumerate()
            .filter(|(_, (k, _))| !have.contains(k.as_str()))
            .map(|(i, _)| i)
            .collect();
        Delta { deletes, puts }
    }

    /// Whether nothing is to be written.
    pub fn is_empty(&self) -> bool {
        self.deletes.is_empty() && self.puts.is_empty()
    }

    /// How many operations.
    pub fn len(&self) -> usize {
        self.deletes.len() + self.puts.len()
    }
}

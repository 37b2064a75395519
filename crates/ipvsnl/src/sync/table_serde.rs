//! [`Table`] as data (the `serde` feature): a list of services, each with
//! its destinations, in key order. Read back through the same path as
//! [`Table::insert`]: destinations sorted, a destination given twice keeps
//! its last settings, and a service given twice its last entry.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::table::{Table, TableService};

#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
impl Serialize for Table {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
impl<'de> Deserialize<'de> for Table {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let services = Vec::<TableService>::deserialize(d)?;
        let mut t = Table::new();
        for s in services {
            t.insert_table_destinations(s.service, s.destinations);
        }
        Ok(t)
    }
}

/// Whether a connection count is zero (a wanted destination's is: it is
/// left out of the data).
pub(crate) fn is_zero(n: &u64) -> bool {
    *n == 0
}

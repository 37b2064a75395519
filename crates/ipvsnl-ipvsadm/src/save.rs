//! `-S` built row by row, as the library's settings listing visits them
//! (`for_each_settings_row`): each service's rules are written when its
//! row comes, in the kernel's order, and the blocks put in ipvsadm's order
//! at the end. So the listing never holds every destination at once: of
//! a 10,000 x 5 table, 6.8 MB of `DestinationEntry` that `table_settings`
//! would return, against the 2.7 MB of text, written once either way.

use ipvsnl::rules::{self, Names};
use ipvsnl::{ServiceEntry, ServiceKey};

use crate::sort::{self, DestSorter};

/// The `-S` text of the rows seen so far.
pub(crate) struct SaveRows {
    text: Vec<u8>,
    /// Where each row's rules end in `text` (each starts where the one
    /// before ended).
    ends: Vec<usize>,
    keys: Vec<ServiceKey>,
    dests: DestSorter,
    nosort: bool,
    names: &'static dyn Names,
}

impl SaveRows {
    /// No row yet; ipvsadm's order at the end unless `nosort`.
    pub(crate) fn new(nosort: bool, names: &'static dyn Names) -> Self {
        SaveRows {
            text: Vec::new(),
            ends: Vec::new(),
            keys: Vec::new(),
            dests: DestSorter::default(),
            nosort,
            names,
        }
    }

    /// Writes the rules of one row (its service, then its destinations in
    /// ipvsadm's order).
    pub(crate) fn row(&mut self, se: &ServiceEntry) {
        if self.text.capacity() == 0 {
            // About 56 bytes a line, for a table of rows like this one.
            self.text.reserve(4096);
        }
        let order = self.dests.order(&se.destinations, self.nosort);
        rules::write_service_rules(
            &mut self.text,
            &se.service,
            order
                .iter()
                .map(|&j| &se.destinations[j as usize].destination),
            self.names,
        );
        self.ends.push(self.text.len());
        self.keys.push(se.service.key);
    }

    /// The text of every row, the services in ipvsadm's order.
    pub(crate) fn finish(self) -> Vec<u8> {
        if self.nosort {
            return self.text;
        }
        let mut out = Vec::with_capacity(self.text.len());
        for &i in &sort::service_keys(self.keys.iter(), false) {
            let i = i as usize;
            let start = if i == 0 { 0 } else { self.ends[i - 1] };
            out.extend_from_slice(&self.text[start..self.ends[i]]);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::ListFormat;
    use crate::text_cost::listed_table;
    use ipvsnl::rules::Numeric;

    #[test]
    fn rows_saved_one_by_one_are_the_table_saved_whole() {
        let table = listed_table(300, 4);
        for nosort in [false, true] {
            let f = ListFormat {
                nosort,
                ..ListFormat::default()
            };
            let mut whole = Vec::new();
            crate::list::save_table(&mut whole, &table, &f, &Numeric);
            let mut rows = SaveRows::new(nosort, &Numeric);
            for se in &table {
                rows.row(se);
            }
            let text = rows.finish();
            assert!(!text.is_empty());
            assert_eq!(
                String::from_utf8(text).unwrap(),
                String::from_utf8(whole).unwrap(),
                "nosort {nosort}"
            );
        }
    }
}

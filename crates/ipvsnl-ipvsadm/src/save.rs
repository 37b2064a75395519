//! `-S` built row by row, as the library's settings listing visits them
//! (`for_each_settings_row`): each service's rules are written when its
//! row comes, in the kernel's order, and the blocks put in ipvsadm's order
//! when written, many to a `writev`. So the listing never holds every
//! destination at once: of a 10,000 x 5 table, 6.8 MB of
//! `DestinationEntry` that `table_settings` would return, against the
//! 2.7 MB of text, written once either way.
//!
//! Cost, measured in one boot under qemu `-icount shift=0,sleep=off` on
//! 6.1 (`bulk-compare --cli-only --sizes 10000x5 --no-bucket
//! --cli-rounds 2` run twice in the VM, `--ours-ipvsadm` the build
//! without this file, `table_settings` then `list::save_table`, and the
//! build with it; 10,000 x 5, `-S -n` as a process, start-up included;
//! median and range of 2 runs):
//!
//! | | wall s | user s | sys s | the plain client in the same run |
//! |---|---|---|---|---|
//! | before (all rows held) | 0.207 (0.207-0.216) | 0.107 | 0.091 | 0.162 s: 1.28x |
//! | after (row by row, `writev`) | 0.195 (0.195-0.202) | 0.090 | 0.098 | 0.163 s: 1.19x |
//!
//! (user and sys are the guest's tick-sampled split; the wall time is the
//! instruction count.)

use std::io::{self, IoSlice, Write};

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

    /// The rules of row `i`.
    fn block(&self, i: u32) -> &[u8] {
        let i = i as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.text[start..self.ends[i]]
    }

    /// Writes the text of every row to `w`, the services in ipvsadm's
    /// order: the blocks where they are, many to a `writev` (no second
    /// copy of the text).
    pub(crate) fn write_to(&self, w: &mut impl Write) -> io::Result<()> {
        if self.nosort {
            return w.write_all(&self.text);
        }
        let order = sort::service_keys(self.keys.iter(), false);
        // The next block to write, and how much of it is written.
        let (mut next, mut done) = (0, 0);
        let mut slices = Vec::with_capacity(IOVECS);
        while next < order.len() {
            slices.clear();
            slices.push(IoSlice::new(&self.block(order[next])[done..]));
            for &i in order[next + 1..].iter().take(IOVECS - 1) {
                slices.push(IoSlice::new(self.block(i)));
            }
            let mut n = match w.write_vectored(&slices) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            while n > 0 {
                let left = self.block(order[next]).len() - done;
                if n < left {
                    done += n;
                    break;
                }
                n -= left;
                next += 1;
                done = 0;
            }
        }
        Ok(())
    }
}

/// The settings listing of `client`, row by row, as `-S` text.
pub(crate) fn list_rows(
    client: &mut ipvsnl::Client,
    nosort: bool,
    names: &'static dyn Names,
) -> Result<SaveRows, ipvsnl::Error> {
    let mut rows = SaveRows::new(nosort, names);
    client.for_each_settings_row(|se| {
        rows.row(se);
        std::ops::ControlFlow::Continue(())
    })?;
    Ok(rows)
}

/// Blocks a `writev` takes at most (Linux's `IOV_MAX`).
const IOVECS: usize = 1024;

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
            let mut text = Vec::new();
            rows.write_to(&mut text).unwrap();
            assert!(!text.is_empty());
            assert_eq!(
                String::from_utf8(text).unwrap(),
                String::from_utf8(whole.clone()).unwrap(),
                "nosort {nosort}"
            );
            // A writer that takes a few bytes at a time gets the same.
            let mut short = Dribble(Vec::new());
            rows.write_to(&mut short).unwrap();
            assert!(short.0 == whole, "nosort {nosort}: written in pieces");
        }
    }

    /// Takes at most 7 bytes a call, of its first slice only.
    struct Dribble(Vec<u8>);

    impl Write for Dribble {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let n = buf.len().min(7);
            self.0.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
}

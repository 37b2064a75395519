//! `-S` (without counters) row by row, in ipvsadm's order as the library
//! visits them (`for_each_settings_row_in`: the services listed first,
//! sorted, then each one's destinations listed just before its visit):
//! each row's rules are appended as it comes and written out in blocks of
//! [`BLOCK`] bytes. Neither the table's destinations nor its text are held
//! whole: of a 10,000 x 5 table, 6.8 MB of `DestinationEntry` that
//! `table_settings` would return, and 2.7 MB of text.
//!
//! As Debian's ipvsadm, whose output is stdio's buffer flushed at its exit:
//! a listing that fails midway prints the rows before the failure, then
//! the error.
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
//! | after (row by row, every block's text held, `writev` at the end) | 0.195 (0.195-0.202) | 0.090 | 0.098 | 0.163 s: 1.19x |
//!
//! (user and sys are the guest's tick-sampled split; the wall time is the
//! instruction count.) Since, the rows come sorted and their text goes out
//! as it is made: see `scripts/measure/ipvsadm-text-cost` (`listed`) and
//! benches/IPVSADM.md.

use std::io::{self, Write};
use std::ops::ControlFlow;

use ipvsnl::rules::{self, Names};
use ipvsnl::{Client, ServiceEntry, ServiceKey};

use crate::sort::{self, DestSorter};

/// How much text is gathered before it is written (one `write`).
pub(crate) const BLOCK: usize = 64 << 10;

/// ipvsadm's order of the services of `keys` (indices into it).
fn ipvsadm_order(keys: &[ServiceKey]) -> Vec<usize> {
    sort::service_keys(keys.iter(), false)
        .into_iter()
        .map(|i| i as usize)
        .collect()
}

/// The rules of every row of `client`'s settings listing, written to
/// `out` in ipvsadm's order (the kernel's with `nosort`). The listing's
/// failure is returned after what was made before it is written; a
/// failure to write ends the listing (nothing more is written).
pub(crate) fn save(
    client: &mut Client,
    nosort: bool,
    names: &dyn Names,
    out: &mut impl Write,
) -> Result<(), ipvsnl::Error> {
    let mut text = Vec::with_capacity(BLOCK + (4 << 10));
    let mut dests = DestSorter::default();
    let mut written = Ok(());
    let visit = |se: &ServiceEntry| {
        let order = dests.order(&se.destinations, nosort);
        rules::write_service_rules(
            &mut text,
            &se.service,
            order
                .iter()
                .map(|&j| &se.destinations[j as usize].destination),
            names,
        );
        if text.len() >= BLOCK {
            written = out.write_all(&text);
            text.clear();
            if written.is_err() {
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    };
    let listed = if nosort {
        client.for_each_settings_row(visit)
    } else {
        client.for_each_settings_row_in(ipvsadm_order, visit)
    };
    if written.is_ok() {
        // What a write failure would say is not ipvsadm's to report.
        let _ = out.write_all(&text).and_then(|()| out.flush());
    }
    listed
}

/// [`save`] to stdout.
pub(crate) fn save_to_stdout(
    client: &mut Client,
    nosort: bool,
    names: &dyn Names,
) -> Result<(), ipvsnl::Error> {
    save(client, nosort, names, &mut io::stdout().lock())
}

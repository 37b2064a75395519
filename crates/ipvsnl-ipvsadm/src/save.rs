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
//! as it is made: see `.ci/ipvsadm-text-cost` (`listed`) and
//! benches/IPVSADM.md.

use std::io::{self, Write};
use std::ops::ControlFlow;

use ipvsnl::rules::{self, Names};
use ipvsnl::{Client, ServiceEntry, ServiceKey};

use crate::sort::{self, DestSorter};

/// How much text is gathered before it is written (one `write`).
const BLOCK: usize = 64 << 10;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::ListFormat;
    use crate::text_cost::listed_table;
    use ipvsnl::rules::Numeric;
    use ipvsnl::{Destination, Request};

    /// An emulated kernel holding `table`.
    fn holding(table: &[ServiceEntry]) -> (ipvsnl::emulator::Kernel, Client) {
        let kernel = ipvsnl::emulator::Kernel::new();
        let mut client = Client::emulated(&kernel);
        let mut requests = Vec::new();
        for se in table {
            requests.push(Request::add_service(se.service.clone()));
            for d in &se.destinations {
                requests.push(Request::AddDestination(se.service.key, d.destination));
            }
        }
        assert!(client.apply(&requests).iter().all(Result::is_ok));
        (kernel, client)
    }

    #[test]
    fn rows_saved_as_they_come_are_the_table_saved_whole() {
        // Over several blocks; a service added last with a tunnelled IPv6
        // one (listed by netlink) among its destinations.
        let mut table = listed_table(3000, 4);
        let key = ServiceKey::tcp("10.9.9.9".parse().unwrap(), 443);
        table.push(
            ServiceEntry::new(ipvsnl::Service::new(key)).with_destinations([
                ipvsnl::DestinationEntry::new(
                    Destination::new("2001:db8::1".parse().unwrap(), 1)
                        .with_forward(ipvsnl::Forward::Tunnel(ipvsnl::Tunnel::ipip())),
                ),
                ipvsnl::DestinationEntry::new(Destination::new("10.1.1.1".parse().unwrap(), 1)),
            ]),
        );
        let (_kernel, mut client) = holding(&table);
        let listed = client.table_settings().unwrap();
        for nosort in [false, true] {
            let f = ListFormat {
                nosort,
                ..ListFormat::default()
            };
            let mut whole = Vec::new();
            crate::list::save_table(&mut whole, &listed, &f, &Numeric);
            assert!(whole.len() > 2 * BLOCK);
            let mut text = Vec::new();
            save(&mut client, nosort, &Numeric, &mut text).unwrap();
            assert_eq!(
                String::from_utf8(text).unwrap(),
                String::from_utf8(whole).unwrap(),
                "nosort {nosort}"
            );
        }
    }

    /// Takes `left` bytes, then fails.
    struct Full {
        taken: Vec<u8>,
        left: usize,
    }

    impl Write for Full {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.left == 0 {
                return Err(io::ErrorKind::BrokenPipe.into());
            }
            let n = buf.len().min(self.left);
            self.taken.extend_from_slice(&buf[..n]);
            self.left -= n;
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_failed_write_ends_the_listing_quietly() {
        let table = listed_table(3000, 4);
        let (kernel, _) = holding(&table);
        // Destinations by netlink, so that the requests show them.
        let opts = ipvsnl::ClientOptions::default().with_socket_option_listing(false);
        let mut client = Client::emulated_with_options(&kernel.init_netns(), opts);
        kernel.clear_requests();
        let mut out = Full {
            taken: Vec::new(),
            left: 1000,
        };
        save(&mut client, false, &Numeric, &mut out).unwrap();
        assert_eq!(out.taken.len(), 1000);
        // It stopped after the first block: far fewer destination
        // listings than services.
        let dumps = kernel
            .requests()
            .iter()
            .filter(|t| t.kind == Some(ipvsnl::RequestKind::ListDestinations))
            .count();
        assert!((1..1000).contains(&dumps), "{dumps} destination listings");
    }
}

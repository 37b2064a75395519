//! `ipvsadm -S` row by row (save.rs) against the whole table saved at once,
//! and a failed write, on the emulated kernel (a file of its own: the
//! tables come from text_cost.rs, which counts save.rs's work).

use std::io::{self, Write};

use ipvsnl::rules::Numeric;
use ipvsnl::{Client, Destination, Request, ServiceEntry, ServiceKey};

use crate::grammar::ListFormat;
use crate::save::{save, BLOCK};
use crate::text_cost::listed_table;

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

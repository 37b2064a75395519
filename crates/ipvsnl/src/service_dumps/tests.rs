//! The socket of service dumps, on the emulated kernel: which socket
//! reads with which buffer, and the family id the two share.

use super::SERVICE_DUMP_BUFFER;
use crate::block_on::block_on;
use crate::client_core::ClientCore;
use crate::decode::Detail;
use crate::emulator::{Fault, Kernel, Port, When, INIT_NETNS};
use crate::{ClientOptions, Destination, Request, RequestKind, Service, ServiceKey};

/// A kernel of `services` services of 3 destinations each.
fn kernel_with(services: u8) -> Kernel {
    let kernel = Kernel::new();
    let mut requests = Vec::new();
    for i in 0..services {
        let key = ServiceKey::tcp([10, 0, 0, i].into(), 80);
        requests.push(Request::add_service(Service::new(key)));
        for d in 1..=3 {
            let dest = Destination::new([10, 1, i, d].into(), 80);
            requests.push(Request::AddDestination(key, dest));
        }
    }
    let errnos = kernel.init_netns().apply(&requests);
    assert!(errnos.iter().all(|&e| e == 0), "{errnos:?}");
    kernel
}

/// A client of its initial namespace, without the socket-option
/// interface (its listings use netlink alone).
fn connect(kernel: &Kernel) -> ClientCore<Port> {
    let port = Port::open(kernel, INIT_NETNS);
    let dumps = Port::open(kernel, INIT_NETNS);
    let none = Err(std::io::Error::from_raw_os_error(libc::EAFNOSUPPORT));
    ClientCore::new(port, 1 << 20, ClientOptions::default(), None, (dumps, none))
}

#[test]
fn service_dumps_read_32_kib_and_every_other_call_a_page() {
    let kernel = kernel_with(150);
    let mut core = connect(&kernel);
    let page = core.opts.recv_buffer;
    let table = block_on(core.list_entries(Detail::Full, |_| true)).unwrap();
    assert_eq!(table.len(), 150);
    assert!(table.iter().all(|e| e.destinations.len() == 3));
    assert_eq!(core.service_dumps.io.largest_receive(), SERVICE_DUMP_BUFFER);
    // The destination dumps never read with 32 KiB: their parts stay
    // page-sized.
    assert_eq!(core.io.largest_receive(), page);
    assert!(page < SERVICE_DUMP_BUFFER);
    let services = block_on(core.list_services(Detail::Full)).unwrap();
    assert_eq!(services.len(), 150);
    assert_eq!(core.io.largest_receive(), page);
}

#[test]
fn a_family_looked_up_again_on_one_socket_is_the_others() {
    let kernel = kernel_with(3);
    let mut core = connect(&kernel);
    block_on(core.family_id()).unwrap();
    let first = core.known_family();
    // The service dump finds the module reloaded (a new family id),
    // looks it up again, and the main socket knows it after.
    kernel.inject(When::next(RequestKind::ListServices), Fault::Reload);
    let services = block_on(core.list_services(Detail::Full)).unwrap();
    assert!(services.is_empty(), "a reloaded module starts empty");
    let now = core.known_family();
    assert!(now.is_some() && now != first, "{first:?} then {now:?}");
    assert_eq!(core.service_dumps.session.family(), now);
    // The main socket's next call uses it without looking it up again.
    let seq = core.session.last_seq();
    block_on(core.info()).unwrap();
    assert_eq!(core.session.last_seq(), seq + 1, "one request, no lookup");
}

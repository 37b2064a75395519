//! The protocol core's machines against the emulated kernel
//! ([`crate::emulator`]): one socket into it (its [`Port`]), driven by the
//! crate's own driver ([`crate::drive`]), with what the tests assert on
//! counted on the way: the wait each receive asked for, and the receives
//! that waited for a reply that never came. What the kernel answers (real
//! requests, real verdicts) and what a socket does (an overrun, a full
//! queue, truncation, garbage, strangers, failed calls, a hang) are the
//! emulator's, its faults armed with [`Kernel::inject`].

use std::collections::BTreeMap;
use std::future::Future;
use std::io;
use std::net::IpAddr;

use crate::block_on::block_on;
use crate::drive::{drive, DATAGRAMS};
use crate::emulator::{Kernel, Port, Taken, INIT_NETNS};
use crate::proto::{Encode, Limits, Machine, Outcome, Session, Wait};
use crate::transport::{Received, Transport};
use crate::{Request, Scheduler, Service, ServiceKey};

/// The receive buffer of each datagram a receive takes: a page, as the
/// kernel's smallest dump part.
const SEGMENT: usize = 4096;

/// The service of test item `i`.
pub(crate) fn key(i: u32) -> ServiceKey {
    ServiceKey::tcp(IpAddr::from([10, 1, (i >> 8) as u8, i as u8]), 80)
}

/// The item a service of [`key`] is.
pub(crate) fn index(key: &ServiceKey) -> Option<u32> {
    match key.socket_addr()?.ip() {
        IpAddr::V4(a) => {
            let [_, _, hi, lo] = a.octets();
            Some(u32::from(hi) << 8 | u32::from(lo))
        }
        IpAddr::V6(_) => None,
    }
}

/// A kernel whose initial namespace holds the services of items `0..n`.
pub(crate) fn kernel_with(n: u32) -> Kernel {
    let k = Kernel::new();
    let adds: Vec<Request> = (0..n).map(add).collect();
    assert!(k.init_netns().apply(&adds).iter().all(|e| *e == 0));
    k
}

/// Adds the service of item `i`.
pub(crate) fn add(i: u32) -> Request {
    Request::add_service(Service::new(key(i)))
}

/// A request about item `i`'s service that `kernel` answers with `errno`
/// (0, `EEXIST`, `ESRCH` or `ENOENT`), the kernel made ready for it: an
/// add of a new service; an add of one it has (added here); a delete of
/// one it has not; an add with a scheduler it has no module for.
pub(crate) fn answered(kernel: &Kernel, i: u32, errno: i32) -> Request {
    match errno {
        0 => add(i),
        libc::EEXIST => {
            assert_eq!(kernel.init_netns().apply(&[add(i)]), [0]);
            add(i)
        }
        libc::ESRCH => Request::DeleteService(key(i)),
        libc::ENOENT => Request::add_service(
            Service::new(key(i)).with_scheduler("no-such".parse::<Scheduler>().unwrap()),
        ),
        e => panic!("no request is answered {e}"),
    }
}

/// One socket into an emulated kernel, as a driver sees it.
pub(crate) struct Socket {
    pub kernel: Kernel,
    pub port: Port,
    /// How many datagrams one receive takes (1, or 2 as the client's
    /// `recvmmsg`).
    pub per_receive: usize,
    /// Receives that waited for a reply and got none: each a whole
    /// time-out on a real socket.
    pub stalls: usize,
    /// Datagrams received.
    pub datagrams: usize,
}

impl Socket {
    /// A socket into the initial namespace of `kernel`, one datagram a
    /// receive.
    pub(crate) fn new(kernel: &Kernel) -> Self {
        Socket {
            kernel: kernel.clone(),
            port: Port::open(kernel, INIT_NETNS),
            per_receive: 1,
            stalls: 0,
            datagrams: 0,
        }
    }

    /// The kernel's family id now.
    pub(crate) fn family(&self) -> u16 {
        self.kernel.family_id().expect("the module is loaded")
    }

    /// What the kernel took about item `i`'s service, in order.
    pub(crate) fn taken(&self, i: u32) -> Vec<Taken> {
        let key = key(i);
        let all = self.kernel.requests();
        all.into_iter().filter(|t| t.service == Some(key)).collect()
    }

    /// Whether a request about item `i` reached the kernel at all.
    pub(crate) fn received(&self, i: u32) -> bool {
        !self.taken(i).is_empty()
    }

    /// Whether the kernel ran a request about item `i` (took it and did
    /// not stall).
    pub(crate) fn ran(&self, i: u32) -> bool {
        self.taken(i).iter().any(|t| t.errno.is_some())
    }

    /// Dump requests answered `EBUSY`.
    pub(crate) fn busy(&self) -> usize {
        let all = self.kernel.requests();
        all.iter()
            .filter(|t| t.dump && t.errno == Some(libc::EBUSY))
            .count()
    }

    /// Item indexes in the order the kernel lists its services.
    pub(crate) fn listing(&self) -> Vec<u32> {
        let table = self.kernel.init_netns().table();
        table.iter().filter_map(|e| index(e.key())).collect()
    }

    /// Sends one datagram.
    pub(crate) fn transmit(&mut self, datagram: &[u8]) -> io::Result<()> {
        block_on(self.port.send(datagram))
    }

    /// One receive of one datagram, if one is queued (or a dump part can
    /// be written).
    pub(crate) fn receive_one(&mut self) -> Option<Vec<u8>> {
        let mut rx = vec![0; SEGMENT];
        let mut got = [Received::default(); 1];
        let n = block_on(self.port.receive(&mut rx, SEGMENT, &mut got, Wait::Queued)).ok()?;
        (n == 1 && !got[0].truncated).then(|| rx[..got[0].len].to_vec())
    }
}

/// The driver's transport: the socket's, counting steps, waits and stalls.
struct Counting<'a> {
    socket: &'a mut Socket,
    waits: Vec<Wait>,
    steps: usize,
    limit: usize,
}

impl Counting<'_> {
    fn step(&mut self) {
        self.steps += 1;
        assert!(
            self.steps <= self.limit,
            "the machine did not finish in {} steps",
            self.limit
        );
    }
}

impl Transport for Counting<'_> {
    fn send(&mut self, datagram: &[u8]) -> impl Future<Output = io::Result<()>> + Send {
        self.step();
        std::future::ready(self.socket.transmit(datagram))
    }

    fn receive(
        &mut self,
        rx: &mut [u8],
        segment: usize,
        got: &mut [Received],
        wait: Wait,
    ) -> impl Future<Output = io::Result<usize>> + Send {
        self.step();
        self.waits.push(wait);
        let take = self.socket.per_receive.clamp(1, got.len());
        let r = block_on(
            self.socket
                .port
                .receive(rx, segment, &mut got[..take], wait),
        );
        let nothing = matches!(&r, Err(e) if e.raw_os_error() == Some(libc::EAGAIN));
        if nothing && matches!(wait, Wait::Up(_)) {
            self.socket.stalls += 1;
        }
        if let Ok(n) = r {
            self.socket.datagrams += n;
        }
        std::future::ready(r)
    }
}

/// Runs `m` over `socket` with the crate's driver until it finishes;
/// panics if it takes more than `limit` sends and receives. Returns the
/// waits it asked for.
pub(crate) fn run(m: &mut impl Machine, socket: &mut Socket, limit: usize) -> Vec<Wait> {
    let mut io = Counting {
        socket,
        waits: Vec::new(),
        steps: 0,
        limit,
    };
    let mut rx = vec![0; SEGMENT * DATAGRAMS];
    block_on(drive(&mut io, &mut rx, SEGMENT, m));
    io.waits
}

/// Runs an apply of `requests` over `socket`: the outcomes by index (each
/// reported once: a second report fails the test) and the waits asked for.
pub(crate) fn apply<R: Encode>(
    session: &mut Session,
    socket: &mut Socket,
    requests: &[R],
    limits: Limits,
) -> (BTreeMap<usize, Outcome>, Vec<Wait>) {
    let skip = vec![false; requests.len()];
    let mut out = BTreeMap::new();
    let mut sink = |i: usize, o: Outcome| {
        assert!(out.insert(i, o).is_none(), "request {i} got two outcomes");
    };
    let mut m = session.apply(requests, &skip, limits, &mut sink);
    let waits = run(&mut m, socket, 100_000);
    drop(m);
    assert_eq!(out.len(), requests.len(), "every request has an outcome");
    (out, waits)
}

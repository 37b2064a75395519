//! A service dump counts every namespace's services (`walk`): another
//! namespace adding services between two parts makes the dump repeat some
//! of ours, one deleting them makes it skip some. On the emulator (host)
//! and, the same scenarios, on the real kernel (a kernel test, in the VM:
//! `.ci/kernel-tests -- walk_tests`), compared part by part.
//!
//! Each namespace's services are one per hash bucket (TCP, one address,
//! ports `0x1000..=0x10ff`: the bucket's hash takes the port's low byte
//! as it is), whatever the kernel's per-namespace pointer in the hash, so
//! what a dump repeats or skips is the same on any kernel.

use std::net::IpAddr;

use ipvsnl_wire::netlink_packet_core::{NLMSG_DONE, NLM_F_ACK, NLM_F_DUMP, NLM_F_REQUEST};
use ipvsnl_wire::write::{begin_ipvs_message, end_message};
use ipvsnl_wire::IpvsCommand;

use super::{Kernel, Port, INIT_NETNS};
use crate::block_on::block_on;
use crate::proto::Wait;
use crate::transport::{Received, Transport};
use crate::{Request, Service, ServiceKey};

/// The reader's receive buffer: parts of a dozen services.
const READ: usize = 4096;

/// 256 services of `host`, one in each bucket of the kernel's hash.
fn one_per_bucket(host: u8) -> Vec<Request> {
    (0..=255u16)
        .map(|i| {
            let key = ServiceKey::tcp(IpAddr::from([10, 0, 0, host]), 0x1000 + i);
            Request::add_service(Service::new(key))
        })
        .collect()
}

/// A service dump request.
fn dump_request(family: u16) -> Vec<u8> {
    let mut out = Vec::new();
    let flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_DUMP;
    let m = begin_ipvs_message(&mut out, family, flags, 1, IpvsCommand::GetService);
    end_message(&mut out, m);
    out
}

/// The messages of a datagram: (type, bytes after the header).
fn messages(d: &[u8]) -> Vec<(u16, &[u8])> {
    let mut out = Vec::new();
    let mut at = 0;
    while at + 16 <= d.len() {
        let len = u32::from_ne_bytes(d[at..at + 4].try_into().unwrap()) as usize;
        let kind = u16::from_ne_bytes([d[at + 4], d[at + 5]]);
        out.push((kind, &d[at + 16..(at + len).min(d.len())]));
        at += (len + 3) & !3;
    }
    out
}

/// One side of the comparison: two namespaces, A (dumped) and B (the
/// other writer), of the emulator or of the kernel.
trait Side {
    /// Applies `requests` in A (`in_a`) or B; every one must be done.
    fn apply(&mut self, in_a: bool, requests: &[Request]);
    /// Sends a service dump request on A's socket.
    fn start_dump(&mut self);
    /// The next datagram of A's socket.
    fn read(&mut self) -> Vec<u8>;
    /// The IPVS family id.
    fn family(&self) -> u16;
}

/// What a dump of A showed: the services of each part, the distinct
/// ones in all.
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    per_part: Vec<usize>,
    distinct: usize,
}

impl Seen {
    fn listed(&self) -> usize {
        self.per_part.iter().sum()
    }
}

/// A's dump read a part at a time, B's `change` made after the first part
/// was read (the kernel writes the second as the first is read, so the
/// change shows from the third on).
fn dump_around(side: &mut dyn Side, change: &[Request]) -> Seen {
    side.start_dump();
    let family = side.family();
    let mut per_part = Vec::new();
    let mut all: Vec<Vec<u8>> = Vec::new();
    for part in 0.. {
        if part == 1 {
            side.apply(false, change);
        }
        let d = side.read();
        let msgs = messages(&d);
        let done = msgs.iter().any(|(kind, _)| *kind == NLMSG_DONE);
        let services: Vec<&[u8]> = msgs
            .iter()
            .filter(|(kind, _)| *kind == family)
            .map(|(_, m)| *m)
            .collect();
        if !services.is_empty() {
            per_part.push(services.len());
            all.extend(services.iter().map(|m| m.to_vec()));
        }
        if done {
            break;
        }
    }
    all.sort();
    all.dedup();
    Seen {
        per_part,
        distinct: all.len(),
    }
}

/// B adds its services (one per bucket) while A's dump is read: A's
/// repeats. Then, A and B flushed, B's come first and B deletes them
/// while A's dump is read: A's skips.
fn scenarios(side: &mut dyn Side) -> [Seen; 2] {
    side.apply(true, &one_per_bucket(1));
    let added = dump_around(side, &one_per_bucket(2));
    side.apply(true, &[Request::Flush]);
    side.apply(false, &[Request::Flush]);
    side.apply(false, &one_per_bucket(2));
    side.apply(true, &one_per_bucket(1));
    let deleted = dump_around(side, &[Request::Flush]);
    side.apply(true, &[Request::Flush]);
    [added, deleted]
}

/// The emulator's side.
struct Emulated {
    kernel: Kernel,
    port: Port,
}

impl Emulated {
    fn new() -> Self {
        let kernel = Kernel::new();
        let port = Port::open(&kernel, INIT_NETNS);
        Emulated { kernel, port }
    }
}

impl Side for Emulated {
    fn apply(&mut self, in_a: bool, requests: &[Request]) {
        let ns = if in_a {
            self.kernel.init_netns()
        } else {
            self.kernel.netns("b")
        };
        assert!(ns.apply(requests).iter().all(|e| *e == 0));
    }

    fn start_dump(&mut self) {
        block_on(self.port.send(&dump_request(self.family()))).unwrap();
    }

    fn read(&mut self) -> Vec<u8> {
        let mut rx = vec![0; READ];
        let mut got = [Received::default(); 1];
        let n = block_on(self.port.receive(&mut rx, READ, &mut got, Wait::Queued)).unwrap();
        assert!(n == 1 && !got[0].truncated);
        rx.truncate(got[0].len);
        rx
    }

    fn family(&self) -> u16 {
        self.kernel.family_id().unwrap()
    }
}

#[test]
fn another_namespaces_writer_makes_a_dump_repeat_or_skip_ours() {
    let [added, deleted] = scenarios(&mut Emulated::new());
    // Counted per namespace, neither would: the resume point would not
    // move with B's services.
    assert_eq!(added.distinct, 256, "{added:?}");
    assert!(
        added.listed() > 256,
        "B's additions repeat some of A's: {added:?}"
    );
    assert_eq!(deleted.listed(), deleted.distinct, "{deleted:?}");
    assert!(
        deleted.distinct < 256,
        "B's deletions skip some of A's: {deleted:?}"
    );
}

#[test]
fn the_walk_counts_other_namespaces_only_where_they_are() {
    // B's services all before A's one (A's newer, in the same bucket):
    // each part's resume point takes them into account.
    let k = Kernel::new();
    let a = k.init_netns();
    assert_eq!(k.netns("b").apply(&one_per_bucket(2)), [0; 256]);
    assert_eq!(a.apply(&one_per_bucket(1)), [0; 256]);
    let mut side = Emulated {
        port: Port::open(&k, INIT_NETNS),
        kernel: k,
    };
    // Nothing changes: the dump is whole and lists each once.
    let seen = dump_around(&mut side, &[]);
    assert_eq!((seen.listed(), seen.distinct), (256, 256), "{seen:?}");
}

/// The kernel's side (root and IPVS: in the VM).
mod kernel {
    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::process::Command;
    use std::time::{Duration, Instant};

    use super::{dump_request, scenarios, Emulated, Side, READ};
    use crate::{Client, Request};

    /// Moves the calling thread into a new network namespace.
    fn fresh_netns() {
        // SAFETY: unshare takes a flag; it moves only the calling thread.
        let rc = unsafe { libc::unshare(libc::CLONE_NEWNET) };
        assert_eq!(rc, 0, "unshare: {}", io::Error::last_os_error());
        let ok = Command::new("ip")
            .args(["link", "set", "lo", "up"])
            .status();
        assert!(ok.is_ok_and(|s| s.success()), "ip link set lo up");
    }

    /// Services of every namespace, by the references they hold on
    /// their scheduler modules.
    fn services_anywhere() -> u32 {
        let Ok(dir) = std::fs::read_dir("/sys/module") else {
            return 0;
        };
        dir.flatten()
            .filter(|e| {
                let name = e.file_name();
                let name = name.to_string_lossy();
                name.starts_with("ip_vs_") && name != "ip_vs_ftp"
            })
            .filter_map(|e| std::fs::read_to_string(e.path().join("refcnt")).ok())
            .filter_map(|t| t.trim().parse::<u32>().ok())
            .sum()
    }

    struct Real {
        a: Client,
        b: Client,
        raw: OwnedFd,
        family: u16,
    }

    impl Real {
        fn new() -> Self {
            // B: a client made in a namespace of its own, on a thread that
            // leaves it (its sockets stay B's).
            let b = std::thread::spawn(|| {
                fresh_netns();
                Client::new().unwrap()
            })
            .join()
            .unwrap();
            fresh_netns();
            let mut a = Client::new().unwrap();
            let family = a.family_id().unwrap();
            // SAFETY: socket(2) with constant arguments, checked.
            let fd = unsafe {
                libc::socket(
                    libc::AF_NETLINK,
                    libc::SOCK_RAW | libc::SOCK_CLOEXEC,
                    libc::NETLINK_GENERIC,
                )
            };
            assert!(fd >= 0, "socket: {}", io::Error::last_os_error());
            // SAFETY: a new descriptor no one else owns.
            let raw = unsafe { OwnedFd::from_raw_fd(fd) };
            let tv = libc::timeval {
                tv_sec: 5,
                tv_usec: 0,
            };
            // SAFETY: a timeval of the size given, for SO_RCVTIMEO.
            let rc = unsafe {
                libc::setsockopt(
                    raw.as_raw_fd(),
                    libc::SOL_SOCKET,
                    libc::SO_RCVTIMEO,
                    (&tv as *const libc::timeval).cast(),
                    std::mem::size_of::<libc::timeval>() as libc::socklen_t,
                )
            };
            assert_eq!(rc, 0, "SO_RCVTIMEO: {}", io::Error::last_os_error());
            Real { a, b, raw, family }
        }
    }

    impl Side for Real {
        fn apply(&mut self, in_a: bool, requests: &[Request]) {
            let c = if in_a { &mut self.a } else { &mut self.b };
            for r in c.apply(requests) {
                r.unwrap();
            }
        }

        fn start_dump(&mut self) {
            let req = dump_request(self.family);
            // SAFETY: sends `req` (valid for its length) to the kernel.
            let n = unsafe { libc::send(self.raw.as_raw_fd(), req.as_ptr().cast(), req.len(), 0) };
            assert_eq!(n, req.len() as isize, "{}", io::Error::last_os_error());
        }

        fn read(&mut self) -> Vec<u8> {
            let mut rx = vec![0u8; READ];
            // SAFETY: receives into `rx` (valid for its length); MSG_TRUNC
            // returns the datagram's real length.
            let n = unsafe {
                libc::recv(
                    self.raw.as_raw_fd(),
                    rx.as_mut_ptr().cast(),
                    rx.len(),
                    libc::MSG_TRUNC,
                )
            };
            assert!(n >= 0, "recv: {}", io::Error::last_os_error());
            assert!(n as usize <= READ, "a part of {n} bytes");
            rx.truncate(n as usize);
            rx
        }

        fn family(&self) -> u16 {
            self.family
        }
    }

    #[test]
    #[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
    fn a_dump_repeats_and_skips_as_the_kernels_does() {
        // Another test's namespaces being torn down would hold services
        // in the kernel's tables, which every dump walks.
        let deadline = Instant::now() + Duration::from_secs(30);
        while services_anywhere() > 0 {
            assert!(
                Instant::now() < deadline,
                "{} services in other namespaces",
                services_anywhere()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let kernel = scenarios(&mut Real::new());
        let emulated = scenarios(&mut Emulated::new());
        assert_eq!(emulated, kernel);
        // Not a comparison of two dumps that saw nothing.
        assert!(kernel[0].listed() > 256, "{kernel:?}");
        assert!(kernel[1].distinct < 256, "{kernel:?}");
    }
}

//! The bad-input table (the workspace's tests/bad_input/api.rs) against
//! the emulator and the real kernel. The library refuses every one of its
//! requests before sending (`Request::validate`), so through a client
//! none reaches either kernel: checked here on the emulator, whose record
//! of requests taken stays empty. Sent raw (encoded, not validated, over
//! a socket of the test's own driven by the library's protocol core), each
//! gets the same verdict from the emulator as from the kernel, on an empty
//! table and on one where the cases' services exist (a kernel test: in
//! the VM).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

use ipvsnl::emulator::Kernel;
use ipvsnl::proto::{Input, Limits, Machine, Outcome, Poll, Session};
use ipvsnl::{Client, DaemonRole, Request, Service, Timeouts};

// The table itself, shared with the workspace's bad-input tests.
#[allow(dead_code, unreachable_pub)]
#[path = "../../../../tests/bad_input/api.rs"]
mod api;

/// The table's requests, by name.
fn requests() -> Vec<(&'static str, Request)> {
    api::cases()
        .into_iter()
        .filter_map(|c| match c.input {
            api::Input::Request(r) => Some((c.name, r)),
            api::Input::Scheduler(_) => None,
        })
        .collect()
}

/// The services the cases name, made before a case on the second pass.
fn base() -> Vec<Request> {
    let v6 = ipvsnl::ServiceKey::udp("2001:db8::1".parse().unwrap(), 53);
    vec![
        Request::add_service(Service::new(api::v4())),
        Request::add_service(Service::new(v6)),
    ]
}

#[test]
fn no_bad_input_reaches_the_kernel_through_a_client() {
    let requests = requests();
    assert!(requests.len() >= 30, "{} requests", requests.len());
    let kernel = Kernel::new();
    let mut c = Client::emulated(&kernel);
    for (name, r) in &requests {
        let e = c.apply(std::slice::from_ref(r)).remove(0).unwrap_err();
        assert!(e.is_invalid_input(), "{name}: {e}");
    }
    assert!(kernel.requests().is_empty(), "{:?}", kernel.requests());
}

#[test]
fn the_emulator_judges_every_bad_input_sent_raw() {
    // On the host: every case gets a verdict (no panic), and most are
    // refused by the emulator's own checks too.
    let mut refused = 0;
    for (_, r) in requests() {
        for with_base in [false, true] {
            let k = Kernel::new();
            if with_base {
                assert!(k.init_netns().apply(&base()).iter().all(|e| *e == 0));
            }
            if k.init_netns().apply(std::slice::from_ref(&r))[0] != 0 {
                refused += 1;
            }
        }
    }
    assert!(refused > 0, "{refused}");
}

/// A generic-netlink socket of the test's own.
struct Raw {
    fd: OwnedFd,
    rx: Vec<u8>,
}

impl Raw {
    fn open() -> Raw {
        // SAFETY: socket(2) with constant arguments; the result is checked
        // before it is owned.
        let fd = unsafe {
            libc::socket(
                libc::AF_NETLINK,
                libc::SOCK_RAW | libc::SOCK_CLOEXEC,
                libc::NETLINK_GENERIC,
            )
        };
        assert!(fd >= 0, "socket: {}", io::Error::last_os_error());
        // SAFETY: fd is a new descriptor no one else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let tv = libc::timeval {
            tv_sec: 2,
            tv_usec: 0,
        };
        // SAFETY: a timeval of the size given, for SO_RCVTIMEO.
        let rc = unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVTIMEO,
                (&tv as *const libc::timeval).cast(),
                std::mem::size_of::<libc::timeval>() as libc::socklen_t,
            )
        };
        assert_eq!(rc, 0, "SO_RCVTIMEO: {}", io::Error::last_os_error());
        Raw {
            fd,
            rx: vec![0; 65536],
        }
    }

    /// Runs `m` to its end over the socket.
    fn drive(&mut self, m: &mut impl Machine) {
        loop {
            match m.poll() {
                Poll::Transmit(bytes) => {
                    // SAFETY: sends `bytes` (valid for its length) to the
                    // kernel, the unconnected netlink socket's default.
                    let n = unsafe {
                        libc::send(self.fd.as_raw_fd(), bytes.as_ptr().cast(), bytes.len(), 0)
                    };
                    if n < 0 {
                        m.handle(Input::SendFailed(io::Error::last_os_error()));
                    } else {
                        m.handle(Input::Sent);
                    }
                }
                Poll::Receive(_) => {
                    // SAFETY: receives into `rx` (valid for its length);
                    // MSG_TRUNC returns the datagram's real length.
                    let n = unsafe {
                        libc::recv(
                            self.fd.as_raw_fd(),
                            self.rx.as_mut_ptr().cast(),
                            self.rx.len(),
                            libc::MSG_TRUNC,
                        )
                    };
                    if n < 0 {
                        let e = io::Error::last_os_error();
                        match e.raw_os_error() {
                            Some(libc::EAGAIN) => m.handle(Input::TimedOut),
                            Some(libc::ENOBUFS) => m.handle(Input::Overrun),
                            _ => m.handle(Input::ReceiveFailed(e)),
                        }
                    } else if n as usize > self.rx.len() {
                        m.handle(Input::Truncated { len: n as usize });
                    } else {
                        m.handle(Input::Datagram(&self.rx[..n as usize]));
                    }
                }
                _ => return,
            }
        }
    }

    /// Sends `requests` unvalidated: each one's errno (0 done).
    fn apply(&mut self, session: &mut Session, requests: &[Request]) -> Vec<i32> {
        let mut out = vec![-1; requests.len()];
        let skip = vec![false; requests.len()];
        let mut sink = |i: usize, o: Outcome| {
            out[i] = match o {
                Outcome::Done => 0,
                Outcome::Refused(e) => e,
                other => panic!("request {i}: {other:?}"),
            }
        };
        let mut m = session.apply(requests, &skip, Limits::new(65536, 1), &mut sink);
        self.drive(&mut m);
        drop(m);
        out
    }
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn bad_inputs_sent_raw_get_the_kernels_verdicts() {
    crate::differential::fresh_netns();
    let mut raw = Raw::open();
    let mut session = Session::new(Duration::from_secs(2));
    let reset = [
        Request::Flush,
        Request::StopDaemon(DaemonRole::Master),
        Request::StopDaemon(DaemonRole::Backup),
        Request::SetTimeouts(Timeouts::new(900, 120, 300)),
    ];
    let mut differ = Vec::new();
    let mut compared = 0;
    for (name, r) in requests() {
        for with_base in [false, true] {
            raw.apply(&mut session, &reset);
            let k = Kernel::new();
            if with_base {
                assert!(raw.apply(&mut session, &base()).iter().all(|e| *e == 0));
                assert!(k.init_netns().apply(&base()).iter().all(|e| *e == 0));
            }
            let want = raw.apply(&mut session, std::slice::from_ref(&r))[0];
            let got = k.init_netns().apply(std::slice::from_ref(&r))[0];
            compared += 1;
            if got != want {
                differ.push(format!(
                    "{name} (services there: {with_base}): kernel {want}, emulator {got}"
                ));
            }
        }
    }
    raw.apply(&mut session, &reset);
    assert!(compared >= 60, "{compared}");
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

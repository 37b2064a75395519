//! Real servers in a network namespace of their own behind one veth pair
//! (`v0`, the director's end, at 10.9.0.1/24 in the calling thread's
//! namespace; `v1` in theirs), holding the addresses 10.9.0.2, 10.9.0.3...
//! (one a real server) and an echo server on all of them: the way a NAT
//! director and its real servers are wired.
//!
//! ```no_run
//! use ipvsnl_test_support::echo::Answer;
//! use ipvsnl_test_support::real_server::RealServers;
//!
//! ipvsnl_test_support::netns::fresh_netns(); // the director
//! let servers = RealServers::start(8080, 3, Answer::GreetThenEcho);
//! assert_eq!(servers.addrs().len(), 3);
//! ```

use std::net::{IpAddr, Ipv4Addr, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use crate::commands::sh;
use crate::echo::{self, Answer};
use crate::netns::{fresh_netns, gettid};

/// The director's address on the link.
pub const DIRECTOR_LINK: &str = "10.9.0.1";
/// The first real server's address.
pub const REAL_SERVER: &str = "10.9.0.2";

/// The longest the servers run, whatever the test does.
const LIFETIME: Duration = Duration::from_secs(600);

/// Held while a veth pair is created.
static VETH_ADD: Mutex<()> = Mutex::new(());

/// The address of real server `i` (from 0): 10.9.0.2, 10.9.0.3, ...
pub fn server_addr(i: usize) -> IpAddr {
    let last = u8::try_from(i + 2).expect("at most 253 real servers");
    IpAddr::V4(Ipv4Addr::new(10, 9, 0, last))
}

/// Real servers 10.9.0.2... on one link, answering on one port. Stops when
/// dropped (held connections are closed then).
pub struct RealServers {
    addrs: Vec<IpAddr>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl RealServers {
    /// Starts `count` real servers listening on `port` and answering
    /// `answer`; the calling thread must be in the director's (fresh)
    /// namespace. They listen when this returns.
    pub fn start(port: u16, count: usize, answer: Answer) -> RealServers {
        let addrs: Vec<IpAddr> = (0..count).map(server_addr).collect();
        let stop = Arc::new(AtomicBool::new(false));
        let (tid_tx, tid_rx) = mpsc::channel::<i64>();
        let (wired_tx, wired_rx) = mpsc::channel::<()>();
        let (ready_tx, ready_rx) = mpsc::channel::<()>();
        let thread = {
            let addrs = addrs.clone();
            let stop = stop.clone();
            thread::spawn(move || {
                fresh_netns();
                tid_tx.send(gettid()).ok();
                wired_rx.recv().expect("the director moved v1 here");
                for a in &addrs {
                    sh("ip", &["addr", "add", &format!("{a}/24"), "dev", "v1"]);
                }
                sh("ip", &["link", "set", "v1", "up"]);
                sh("ip", &["route", "add", "default", "via", DIRECTOR_LINK]);
                let listener = TcpListener::bind(("0.0.0.0", port)).expect("bind the servers");
                ready_tx.send(()).ok();
                echo::serve(&listener, &answer, &stop, LIFETIME);
            })
        };
        let tid = tid_rx.recv().expect("the servers' thread id").to_string();
        let link = format!("{DIRECTOR_LINK}/24");
        {
            // The first veth of a boot loads the module, and an add racing
            // it fails ("Unknown device type"): one add at a time.
            let _alone = VETH_ADD.lock().unwrap_or_else(|e| e.into_inner());
            sh(
                "ip",
                &["link", "add", "v0", "type", "veth", "peer", "name", "v1"],
            );
        }
        sh("ip", &["link", "set", "v1", "netns", &tid]);
        wired_tx.send(()).expect("the servers' thread waits");
        sh("ip", &["addr", "add", &link, "dev", "v0"]);
        sh("ip", &["link", "set", "v0", "up"]);
        ready_rx.recv().expect("the servers are listening");
        RealServers {
            addrs,
            stop,
            thread: Some(thread),
        }
    }

    /// The real servers' addresses, in order.
    pub fn addrs(&self) -> &[IpAddr] {
        &self.addrs
    }

    /// The index of real server `addr` in [`RealServers::addrs`].
    pub fn index(&self, addr: IpAddr) -> usize {
        self.addrs
            .iter()
            .position(|a| *a == addr)
            .unwrap_or_else(|| panic!("{addr} is none of the real servers {:?}", self.addrs))
    }
}

impl Drop for RealServers {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

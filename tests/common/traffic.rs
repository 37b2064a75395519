//! Real TCP traffic for the kernel tests: a real server in a network
//! namespace of its own, joined to the calling thread's namespace (the
//! director's) by a veth pair, the way a NAT director and its real server
//! are wired; and a client that talks through a virtual service.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// The director's address on the link.
pub const DIRECTOR_LINK: &str = "10.9.0.1";
/// The real server's address.
pub const REAL_SERVER: &str = "10.9.0.2";

/// Runs `program args` and panics with its stderr if it fails.
pub fn sh(program: &str, args: &[&str]) {
    let out = super::run(program, args);
    assert!(
        out.status.success(),
        "{program} {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A TCP server in its own namespace behind a veth pair (`v0` in the
/// caller's namespace at 10.9.0.1/24, `v1` in the server's at
/// 10.9.0.2/24, routing back through the director). Each connection on
/// `port` is read until the client half-closes, then answered with
/// `reply_len` bytes and closed. Stops when dropped.
pub struct RealServer {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl RealServer {
    /// Starts it; the calling thread must be in the director's (fresh)
    /// namespace.
    pub fn start(port: u16, reply_len: usize) -> RealServer {
        let (tid_tx, tid_rx) = mpsc::channel::<i64>();
        let (moved_tx, moved_rx) = mpsc::channel::<()>();
        let (ready_tx, ready_rx) = mpsc::channel::<()>();
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let thread = thread::spawn(move || {
            super::fresh_netns();
            // SAFETY: gettid has no preconditions.
            let tid = unsafe { libc::syscall(libc::SYS_gettid) };
            tid_tx.send(tid).expect("send tid");
            moved_rx.recv().expect("veth moved");
            sh(
                "ip",
                &["addr", "add", &format!("{REAL_SERVER}/24"), "dev", "v1"],
            );
            sh("ip", &["link", "set", "v1", "up"]);
            sh("ip", &["route", "add", "default", "via", DIRECTOR_LINK]);
            let listener = TcpListener::bind((REAL_SERVER, port)).expect("bind");
            listener.set_nonblocking(true).expect("nonblocking");
            ready_tx.send(()).expect("ready");
            let reply = vec![b'r'; reply_len];
            let deadline = Instant::now() + Duration::from_secs(600);
            while !stopping.load(Ordering::Relaxed) && Instant::now() < deadline {
                let Ok((mut s, _)) = listener.accept() else {
                    thread::sleep(Duration::from_millis(5));
                    continue;
                };
                let _ = s.set_nonblocking(false);
                let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
                let mut sink = Vec::new();
                let _ = s.read_to_end(&mut sink);
                let _ = s.write_all(&reply);
            }
        });
        let tid = tid_rx.recv().expect("server tid");
        sh(
            "ip",
            &["link", "add", "v0", "type", "veth", "peer", "name", "v1"],
        );
        sh("ip", &["link", "set", "v1", "netns", &tid.to_string()]);
        moved_tx.send(()).expect("moved");
        sh(
            "ip",
            &["addr", "add", &format!("{DIRECTOR_LINK}/24"), "dev", "v0"],
        );
        sh("ip", &["link", "set", "v0", "up"]);
        ready_rx.recv().expect("server ready");
        RealServer {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for RealServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Sends `request` to `addr`, half-closes, and returns the whole reply.
pub fn talk(addr: &str, request: &[u8]) -> Vec<u8> {
    let addr: SocketAddr = addr.parse().expect("address");
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(10))
        .unwrap_or_else(|e| panic!("connect {addr}: {e}"));
    s.set_read_timeout(Some(Duration::from_secs(10))).ok();
    s.write_all(request).expect("send");
    s.shutdown(std::net::Shutdown::Write).expect("half-close");
    let mut reply = Vec::new();
    let _ = s.read_to_end(&mut reply);
    reply
}

/// `GET path` over HTTP/1.0 from `addr`: the status code and the body,
/// retried for up to 20 s while nothing listens yet.
pub fn http_get(addr: &str, path: &str) -> (u16, String) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match try_get(addr, path) {
            Ok(got) => return got,
            Err(e) if Instant::now() < deadline => {
                let _ = e;
                thread::sleep(Duration::from_millis(100));
            }
            Err(e) => panic!("GET http://{addr}{path}: {e}"),
        }
    }
}

fn try_get(addr: &str, path: &str) -> std::io::Result<(u16, String)> {
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n")?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)?;
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| std::io::Error::other(format!("no header end in {text:?}")))?;
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("no status in {head:?}")))?;
    Ok((status, body.to_string()))
}

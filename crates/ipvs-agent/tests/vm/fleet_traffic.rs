//! The traffic of the fleet's VM tests (`fleet_lab`'s segment): real
//! servers that greet with their address and echo lines, a client's new
//! connection through the VIP ([`reach`]) and a connection that streams
//! through it ([`Stream`]).

use std::io::{BufRead, BufReader, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::fleet_lab::{PORT, VIP};
use super::fleet_vip::in_netns;

/// A real server in namespace `ns` on `0.0.0.0:PORT`: greets each
/// connection with its address and a newline, then echoes lines, until
/// `stop`.
pub(crate) fn serve(ns: String, me: Ipv4Addr, stop: Arc<AtomicBool>) {
    drop(in_netns(&ns, move || {
        let listener = TcpListener::bind(("0.0.0.0", PORT)).expect("the real server's listener");
        listener.set_nonblocking(true).unwrap();
        while !stop.load(Ordering::Relaxed) {
            match listener.accept() {
                Ok((s, _)) => {
                    std::thread::spawn(move || echo(s, me));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }));
}

fn echo(s: TcpStream, me: Ipv4Addr) {
    let _ = s.set_nonblocking(false);
    let _ = s.set_read_timeout(Some(Duration::from_secs(120)));
    let mut w = s.try_clone().expect("clone the socket");
    if writeln!(w, "{me}").is_err() {
        return;
    }
    for line in BufReader::new(s).lines() {
        let Ok(line) = line else { return };
        if writeln!(w, "{line}").is_err() {
            return;
        }
    }
}

/// The real server a new connection from the client to the VIP reaches
/// (its greeting), within 5 s.
pub(crate) fn reach() -> Result<Ipv4Addr, String> {
    in_netns("fl-c", || {
        let vip = SocketAddr::from((VIP, PORT));
        let s =
            TcpStream::connect_timeout(&vip, Duration::from_secs(5)).map_err(|e| e.to_string())?;
        s.set_read_timeout(Some(Duration::from_secs(5)))
            .map_err(|e| e.to_string())?;
        let mut line = String::new();
        BufReader::new(s)
            .read_line(&mut line)
            .map_err(|e| e.to_string())?;
        line.trim()
            .parse()
            .map_err(|_| format!("greeting {line:?}"))
    })
    .join()
    .unwrap()
}

/// What a [`Stream`] saw so far.
#[derive(Debug, Clone, Default)]
pub(crate) struct Seen {
    /// The real server that greeted it.
    pub server: Option<Ipv4Addr>,
    /// The client's port.
    pub port: u16,
    /// Lines echoed back so far.
    pub echoed: u64,
    /// When the last one came back.
    pub last: Option<Instant>,
    /// The error that ended it.
    pub error: Option<String>,
}

/// A connection from the client to the VIP that sends a line every 50 ms
/// and reads it back (a read waits up to 20 s: TCP retransmits through a
/// failover).
pub(crate) struct Stream {
    seen: Arc<Mutex<Seen>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Stream {
    /// Connects and starts streaming.
    pub(crate) fn start() -> Stream {
        let seen = Arc::new(Mutex::new(Seen::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let (s2, stop2) = (seen.clone(), stop.clone());
        let thread = in_netns("fl-c", move || {
            let fail = |e: String| s2.lock().unwrap().error = Some(e);
            let vip = SocketAddr::from((VIP, PORT));
            let s = match TcpStream::connect_timeout(&vip, Duration::from_secs(5)) {
                Ok(s) => s,
                Err(e) => return fail(format!("connect: {e}")),
            };
            let _ = s.set_read_timeout(Some(Duration::from_secs(20)));
            s2.lock().unwrap().port = s.local_addr().map(|a| a.port()).unwrap_or(0);
            let mut w = s.try_clone().expect("clone the socket");
            let mut r = BufReader::new(s);
            let mut line = String::new();
            if let Err(e) = r.read_line(&mut line) {
                return fail(format!("greeting: {e}"));
            }
            s2.lock().unwrap().server = line.trim().parse().ok();
            let mut k = 0u64;
            while !stop2.load(Ordering::Relaxed) {
                k += 1;
                line.clear();
                if let Err(e) = writeln!(w, "{k}").and_then(|()| r.read_line(&mut line).map(drop)) {
                    return fail(format!("line {k}: {e}"));
                }
                if line.trim() != k.to_string() {
                    return fail(format!("line {k}: got {line:?}"));
                }
                let mut seen = s2.lock().unwrap();
                seen.echoed = k;
                seen.last = Some(Instant::now());
                drop(seen);
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        Stream {
            seen,
            stop,
            thread: Some(thread),
        }
    }

    /// What it saw so far.
    pub(crate) fn seen(&self) -> Seen {
        self.seen.lock().unwrap().clone()
    }

    /// Stops it; what it saw.
    pub(crate) fn stop(mut self) -> Seen {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.seen()
    }
}

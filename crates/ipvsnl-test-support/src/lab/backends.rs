//! Real servers for a director daemon's tests: each in a network namespace
//! of its own behind a veth pair of its own from the director (the calling
//! thread's namespace), serving on the ports a test chooses a TCP echo that
//! greets with its address, HTTP, HTTPS (a self-signed certificate), a
//! server that accepts and never answers, or DNS over UDP.
//!
//! ```text
//!  director (the calling thread)        backend i (a namespace of its own)
//!  rs<i> 10.30.i.1/24 ------------------ b<i> 10.30.i.2/24, default via 10.30.i.1
//! ```
//!
//! [`Backend::start_v6`] wires one by IPv6 instead: `rs<i>` fd00:30:i::1/64,
//! `b<i>` fd00:30:i::2/64 (i in hex), the default route through the
//! director.
//!
//! A served port can be stopped ([`Backend::stop`]: its listening socket is
//! closed, so connections are refused and DNS queries meet a closed port)
//! and served again; the connections it had accepted go on, so a test can
//! tell whether a director cut them. Dropping a [`Backend`] ends everything.
//!
//! ```no_run
//! use ipvsnl_test_support::lab::backends::{Backend, Serve};
//!
//! ipvsnl_test_support::netns::fresh_netns(); // the director
//! let rs = Backend::start(1);
//! rs.serve(8080, Serve::Echo);
//! assert_eq!(rs.addr().to_string(), "10.30.1.2");
//! rs.stop(8080); // connections to 10.30.1.2:8080 are refused now
//! ```

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::commands::ip_batch;
use crate::echo::{answer_one, Answer};
use crate::netns::{load_module, Netns};
use crate::poll::readable;

/// The longest a connection is served, whatever the test does.
const LIFETIME: Duration = Duration::from_secs(600);
/// How long a server waits for a request's head.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);
/// How often the loops look at their stop flags.
const TICK: Duration = Duration::from_millis(50);

/// What a backend serves on a port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Serve {
    /// TCP: greets with the backend's address (a line), then echoes
    /// ([`Answer::GreetThenEcho`]), so a client knows which real server
    /// it reached and can go on talking to it.
    Echo,
    /// HTTP/1.x: any request answered `200 OK` with the backend's address
    /// (a line) as the body, then the connection closed.
    Http,
    /// The same over TLS, with a self-signed certificate for the backend's
    /// address (a checker must not verify it).
    #[cfg(feature = "tls")]
    Https,
    /// TCP: accepts and never answers (reads until the client closes).
    Silent,
    /// TCP: accepts and closes at once (a TCP check's peer, thousands a
    /// second, without a thread a connection).
    Close,
    /// HTTP/1.x as [`Serve::Http`], each request answered by the accept
    /// loop itself, without a thread a connection (HTTP checks' peer,
    /// thousands a second); a client slow to send its request holds up
    /// the next.
    HttpInLoop,
    /// DNS over UDP: every query answered NOERROR with no records.
    Dns,
}

/// A port being served: its accept (or receive) loop and its stop flag.
struct Running {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<()>,
}

/// One real server: a namespace and the ports it serves.
pub struct Backend {
    index: u8,
    /// Wired by IPv6 ([`Backend::start_v6`]).
    v6: bool,
    host: Netns,
    /// Set when the backend is dropped: every connection ends.
    end: Arc<AtomicBool>,
    running: Mutex<BTreeMap<u16, Running>>,
    accepted: Mutex<BTreeMap<u16, Arc<AtomicU64>>>,
}

impl Backend {
    /// Backend `index` (1 to 254): its namespace, wired to the calling
    /// thread's (the director's) by the veth pair `rs<index>` (director's
    /// end, 10.30.index.1/24) and `b<index>` (10.30.index.2/24, the default
    /// route through the director, as NAT needs). It serves nothing yet.
    pub fn start(index: u8) -> Backend {
        assert!((1..=254).contains(&index), "backend index {index}");
        load_module("veth");
        let host = Netns::new(&format!("backend{index}"));
        ip_batch(&[
            format!("link add name rs{index} type veth peer name b{index}"),
            format!("link set dev b{index} netns {}", host.tid()),
            format!("addr add 10.30.{index}.1/24 dev rs{index}"),
            format!("link set dev rs{index} up"),
        ]);
        host.exec(move || {
            ip_batch(&[
                format!("addr add 10.30.{index}.2/24 dev b{index}"),
                format!("link set dev b{index} up"),
                format!("route add default via 10.30.{index}.1"),
            ]);
        });
        Backend {
            index,
            v6: false,
            host,
            end: Arc::new(AtomicBool::new(false)),
            running: Mutex::new(BTreeMap::new()),
            accepted: Mutex::new(BTreeMap::new()),
        }
    }

    /// Backend `index` (1 to 254) wired by IPv6, as [`Backend::start`]
    /// does by IPv4: the director's end fd00:30:index::1/64, the backend's
    /// fd00:30:index::2/64 (index in hex; no duplicate address detection,
    /// so both are usable at once), the default route through the
    /// director. It serves nothing yet; what it serves listens on its IPv6
    /// address.
    pub fn start_v6(index: u8) -> Backend {
        assert!((1..=254).contains(&index), "backend index {index}");
        load_module("veth");
        let host = Netns::new(&format!("backend{index}"));
        let net = format!("fd00:30:{index:x}");
        ip_batch(&[
            format!("link add name rs{index} type veth peer name b{index}"),
            format!("link set dev b{index} netns {}", host.tid()),
            format!("addr add {net}::1/64 dev rs{index} nodad"),
            format!("link set dev rs{index} up"),
        ]);
        host.exec(move || {
            ip_batch(&[
                format!("addr add {net}::2/64 dev b{index} nodad"),
                format!("link set dev b{index} up"),
                format!("route add default via {net}::1"),
            ]);
        });
        Backend {
            index,
            v6: true,
            host,
            end: Arc::new(AtomicBool::new(false)),
            running: Mutex::new(BTreeMap::new()),
            accepted: Mutex::new(BTreeMap::new()),
        }
    }

    /// The backend's address (10.30.index.2; fd00:30:index::2 by IPv6).
    pub fn addr(&self) -> IpAddr {
        self.on_link(2)
    }

    /// The director's address on the backend's link (10.30.index.1;
    /// fd00:30:index::1 by IPv6).
    pub fn director_side(&self) -> IpAddr {
        self.on_link(1)
    }

    /// Host `host` of the backend's link.
    fn on_link(&self, host: u8) -> IpAddr {
        if self.v6 {
            let i = u16::from(self.index);
            IpAddr::V6(Ipv6Addr::new(0xfd00, 0x30, i, 0, 0, 0, 0, u16::from(host)))
        } else {
            IpAddr::V4(Ipv4Addr::new(10, 30, self.index, host))
        }
    }

    /// Serves `what` on `port` of [`Backend::addr`] (TCP, or UDP for
    /// [`Serve::Dns`]); listening when this returns. Panics if the port is
    /// served already.
    pub fn serve(&self, port: u16, what: Serve) {
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        assert!(
            !running.contains_key(&port),
            "backend {} serves port {port} already",
            self.index
        );
        let at = SocketAddr::new(self.addr(), port);
        let stop = Arc::new(AtomicBool::new(false));
        let accepted = self.accepted_counter(port);
        let end = self.end.clone();
        let thread = match what {
            Serve::Dns => {
                let socket = self.host.exec(move || UdpSocket::bind(at));
                let socket = socket.unwrap_or_else(|e| panic!("bind UDP {at}: {e}"));
                let stop = stop.clone();
                thread::spawn(move || answer_dns(&socket, &stop, &accepted))
            }
            _ => {
                let listener = self.host.exec(move || listen(at, what));
                let listener = listener.unwrap_or_else(|e| panic!("bind TCP {at}: {e}"));
                #[cfg(feature = "tls")]
                let tls = (what == Serve::Https).then(|| tls::config(at.ip()));
                let stop = stop.clone();
                thread::spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        if !readable(&listener, TICK) {
                            continue;
                        }
                        let Ok((s, peer)) = listener.accept() else {
                            continue;
                        };
                        accepted.fetch_add(1, Ordering::Relaxed);
                        if what == Serve::Close {
                            continue; // dropped: closed
                        }
                        if what == Serve::HttpInLoop {
                            let _ = answer_http(s);
                            continue;
                        }
                        let end = end.clone();
                        #[cfg(feature = "tls")]
                        let tls = tls.clone();
                        thread::spawn(move || {
                            let _ = match what {
                                Serve::Echo => {
                                    let deadline = Instant::now() + LIFETIME;
                                    answer_one(&Answer::GreetThenEcho, s, peer, &end, deadline)
                                }
                                Serve::Http => answer_http(s),
                                #[cfg(feature = "tls")]
                                Serve::Https => tls::answer(s, tls.expect("a TLS config")),
                                _ => hold(s, &end),
                            };
                        });
                    }
                    // The listener is closed here; the connections go on.
                })
            }
        };
        running.insert(port, Running { stop, thread });
    }

    /// Stops serving `port`: its listening (or UDP) socket is closed when
    /// this returns; connections it accepted go on. Panics unless served.
    pub fn stop(&self, port: u16) {
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        let r = running
            .remove(&port)
            .unwrap_or_else(|| panic!("backend {} does not serve port {port}", self.index));
        r.stop.store(true, Ordering::Relaxed);
        let _ = r.thread.join();
    }

    /// Connections accepted (for DNS: queries received) on `port` so far,
    /// over every time it was served.
    pub fn accepted(&self, port: u16) -> u64 {
        self.accepted_counter(port).load(Ordering::Relaxed)
    }

    fn accepted_counter(&self, port: u16) -> Arc<AtomicU64> {
        let mut all = self.accepted.lock().unwrap_or_else(|e| e.into_inner());
        all.entry(port).or_default().clone()
    }
}

impl Drop for Backend {
    fn drop(&mut self) {
        self.end.store(true, Ordering::Relaxed);
        let running = std::mem::take(self.running.get_mut().unwrap_or_else(|e| e.into_inner()));
        for r in running.into_values() {
            r.stop.store(true, Ordering::Relaxed);
            let _ = r.thread.join();
        }
    }
}

/// Reads a request's head (up to the empty line) from `s`.
fn read_head(s: &mut impl Read) -> io::Result<()> {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = s.read(&mut buf)?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        head.extend_from_slice(&buf[..n]);
        if head.len() > 64 * 1024 {
            return Err(io::Error::other("request head over 64 KiB"));
        }
    }
    Ok(())
}

/// The response to any request: 200 with the server's address as body.
fn response(addr: IpAddr) -> String {
    let body = format!("{addr}\n");
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// A TCP listener on `at`; for [`Serve::HttpInLoop`] with a queue of
/// 4,096 connections (std's is 128): a burst of checks connects long
/// before it writes its requests, which the loop answers one by one.
fn listen(at: SocketAddr, what: Serve) -> io::Result<TcpListener> {
    if what != Serve::HttpInLoop {
        return TcpListener::bind(at);
    }
    let socket = socket2::Socket::new(
        socket2::Domain::for_address(at),
        socket2::Type::STREAM,
        Some(socket2::Protocol::TCP),
    )?;
    socket.set_reuse_address(true)?;
    socket.bind(&at.into())?;
    socket.listen(4096)?;
    Ok(socket.into())
}

fn answer_http(mut s: TcpStream) -> io::Result<()> {
    s.set_read_timeout(Some(REQUEST_TIMEOUT))?;
    read_head(&mut s)?;
    let addr = s.local_addr()?.ip();
    s.write_all(response(addr).as_bytes())?;
    s.shutdown(std::net::Shutdown::Write)
}

/// Holds a connection without a word until the client closes or the
/// backend ends.
fn hold(mut s: TcpStream, end: &AtomicBool) -> io::Result<()> {
    s.set_read_timeout(Some(TICK))?;
    let mut buf = [0u8; 1024];
    while !end.load(Ordering::Relaxed) {
        match s.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Answers every DNS query on `socket` NOERROR without records (the query
/// sent back with QR and RA set) until `stop`.
fn answer_dns(socket: &UdpSocket, stop: &AtomicBool, accepted: &AtomicU64) {
    let _ = socket.set_read_timeout(Some(TICK));
    let mut buf = [0u8; 4096];
    while !stop.load(Ordering::Relaxed) {
        let Ok((n, from)) = socket.recv_from(&mut buf) else {
            continue;
        };
        if n < 12 {
            continue;
        }
        accepted.fetch_add(1, Ordering::Relaxed);
        let mut reply = buf[..n].to_vec();
        reply[2] |= 0x80; // QR: a response
        reply[3] = 0x80; // RA, RCODE 0 (NOERROR)
        let _ = socket.send_to(&reply, from);
    }
}

#[cfg(feature = "tls")]
mod tls {
    //! The HTTPS server's side: a self-signed certificate, one response.

    use std::io::{self, Write};
    use std::net::{IpAddr, TcpStream};
    use std::sync::Arc;

    use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
    use rustls::{ServerConfig, ServerConnection, StreamOwned};

    use super::{read_head, response, REQUEST_TIMEOUT};

    /// A server configuration with a new self-signed certificate for `ip`.
    pub(super) fn config(ip: IpAddr) -> Arc<ServerConfig> {
        let key = rcgen::KeyPair::generate().expect("a key pair");
        let params = rcgen::CertificateParams::new(vec![ip.to_string()]).expect("names");
        let cert = params.self_signed(&key).expect("a self-signed certificate");
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        // ring, as the agent's checker uses (no C/cmake build of aws-lc).
        #[allow(deprecated)]
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("protocol versions")
            .with_no_client_auth()
            .with_single_cert(vec![cert.der().clone()], key)
            .expect("a server configuration");
        Arc::new(config)
    }

    /// The handshake, one request's head, the response, close_notify.
    pub(super) fn answer(s: TcpStream, config: Arc<ServerConfig>) -> io::Result<()> {
        s.set_read_timeout(Some(REQUEST_TIMEOUT))?;
        let addr = s.local_addr()?.ip();
        let conn = ServerConnection::new(config).map_err(io::Error::other)?;
        let mut tls = StreamOwned::new(conn, s);
        read_head(&mut tls)?;
        tls.write_all(response(addr).as_bytes())?;
        tls.conn.send_close_notify();
        tls.flush()?;
        tls.sock.shutdown(std::net::Shutdown::Write)
    }
}

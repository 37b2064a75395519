//! The forwarding tests' traffic: real servers that report what they
//! received (over TCP, UDP and SCTP), and the client's side.
//!
//! A TCP or SCTP request is an 8-byte big-endian length and that many bytes
//! (SCTP has no half-close, so the length says where the request ends); a
//! UDP request is one datagram. Each is answered with one line,
//! `NAME LEN DIGEST PEER`: the server's name, the length and FNV-1a digest
//! of the bytes it got, and the address it got them from. A TCP connection
//! is closed by the server after its answer; an SCTP association by the
//! client, once it read the answer and its association's counts (which go
//! with the association when it ends).
//!
//! Every socket has read and write timeouts, and every loop a deadline.

use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use socket2::{Domain, Protocol, Socket, Type};

use crate::poll::readable;

/// Timeout of every read, write and connect.
pub const IO_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a server runs at most.
pub(crate) const SERVER_LIFETIME: Duration = Duration::from_secs(120);
/// The largest request a server takes.
const MAX_REQUEST: u64 = 1 << 20;

/// The transport protocols a service can have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proto {
    /// TCP.
    Tcp,
    /// UDP.
    Udp,
    /// SCTP.
    Sctp,
}

/// `len` bytes that depend on `seed` (xorshift64), so that a byte lost,
/// added or moved changes the digest.
pub fn payload(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u8
        })
        .collect()
}

/// 64-bit FNV-1a of `bytes`.
pub fn digest(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// What a real server said it received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// The server's name.
    pub server: String,
    /// Bytes it got.
    pub len: u64,
    /// Their digest.
    pub digest: u64,
    /// Where they came from, as the server saw it.
    pub peer: SocketAddr,
    /// Bytes of the reply itself.
    pub size: u64,
}

impl Reply {
    fn line(name: &str, got: &[u8], peer: SocketAddr) -> String {
        format!("{name} {} {:016x} {peer}\n", got.len(), digest(got))
    }

    fn parse(raw: &[u8]) -> io::Result<Reply> {
        let bad = || io::Error::other(format!("bad reply {:?}", String::from_utf8_lossy(raw)));
        let text = std::str::from_utf8(raw).map_err(|_| bad())?;
        let words: Vec<&str> = text.trim_end_matches('\n').split(' ').collect();
        let [server, len, digest, peer] = words[..] else {
            return Err(bad());
        };
        Ok(Reply {
            server: server.to_string(),
            len: len.parse().map_err(|_| bad())?,
            digest: u64::from_str_radix(digest, 16).map_err(|_| bad())?,
            peer: peer.parse().map_err(|_| bad())?,
            size: raw.len() as u64,
        })
    }

    /// Panics unless this reports exactly `sent`, received from `from`.
    pub fn assert_got(&self, sent: &[u8], from: IpAddr) {
        assert_eq!(
            (self.len, self.digest, self.peer.ip()),
            (sent.len() as u64, digest(sent), from),
            "{} did not get the {} bytes sent from {from} intact: {self:?}",
            self.server,
            sent.len()
        );
    }
}

pub(crate) fn domain(addr: &SocketAddr) -> Domain {
    match addr {
        SocketAddr::V4(_) => Domain::IPV4,
        SocketAddr::V6(_) => Domain::IPV6,
    }
}

pub(crate) fn stream_socket(proto: Proto, addr: &SocketAddr) -> io::Result<Socket> {
    let protocol = match proto {
        Proto::Tcp => Protocol::TCP,
        Proto::Sctp => Protocol::from(libc::IPPROTO_SCTP),
        Proto::Udp => unreachable!("UDP is not a stream"),
    };
    Socket::new(domain(addr), Type::STREAM, Some(protocol))
}

/// Answers one TCP connection or SCTP association (for [`crate::echo::Answer::Digest`]).
pub(crate) fn answer_stream(
    proto: Proto,
    name: &str,
    mut conn: TcpStream,
    peer: SocketAddr,
) -> io::Result<()> {
    conn.set_read_timeout(Some(IO_TIMEOUT))?;
    conn.set_write_timeout(Some(IO_TIMEOUT))?;
    let mut len = [0u8; 8];
    conn.read_exact(&mut len)?;
    let len = u64::from_be_bytes(len);
    if len > MAX_REQUEST {
        return Err(io::Error::other("request too long"));
    }
    let mut got = vec![0u8; len as usize];
    conn.read_exact(&mut got)?;
    conn.write_all(Reply::line(name, &got, peer).as_bytes())?;
    if proto == Proto::Sctp {
        // The client ends the association: wait for its SHUTDOWN.
        let mut rest = Vec::new();
        conn.read_to_end(&mut rest)?;
    }
    Ok(())
}

pub(crate) fn serve_datagrams(name: &str, sock: UdpSocket, stop: &AtomicBool) {
    let deadline = Instant::now() + SERVER_LIFETIME;
    let mut buf = vec![0u8; 65536];
    while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
        if !readable(&sock, Duration::from_millis(100)) {
            continue;
        }
        if let Ok((n, peer)) = sock.recv_from(&mut buf) {
            let _ = sock.send_to(Reply::line(name, &buf[..n], peer).as_bytes(), peer);
        }
    }
}

/// A TCP connection or SCTP association to a service, from `local`.
pub struct Conn(TcpStream);

impl Conn {
    /// Connects from `from` (an address, so an SCTP association has one,
    /// and a port: see [`datagrams`] for why the caller names it).
    pub fn open(proto: Proto, from: SocketAddr, to: SocketAddr) -> io::Result<Conn> {
        let sock = stream_socket(proto, &to)?;
        sock.bind(&from.into())?;
        sock.connect_timeout(&to.into(), IO_TIMEOUT)?;
        let stream: TcpStream = sock.into();
        stream.set_read_timeout(Some(IO_TIMEOUT))?;
        stream.set_write_timeout(Some(IO_TIMEOUT))?;
        Ok(Conn(stream))
    }

    /// Sends `request` and reads the answer (for TCP, until the server
    /// closes; for SCTP, its line, then the client ends the association).
    /// Also returns at most how many bytes the client sent more than once
    /// (the director counts them again): TCP_INFO's `tcpi_bytes_retrans`
    /// for TCP; for SCTP, which counts chunks, not bytes, the association's
    /// retransmitted chunks (`SCTP_GET_ASSOC_STATS`), of at most
    /// [`FULL_PACKET`] each. The server answers only once it has every
    /// byte of the request, and acknowledges them before or with its
    /// answer, so no chunk is sent again after the answer came.
    pub fn exchange(mut self, proto: Proto, request: &[u8]) -> io::Result<(Reply, u64)> {
        let mut framed = (request.len() as u64).to_be_bytes().to_vec();
        framed.extend_from_slice(request);
        self.0.write_all(&framed)?;
        let mut raw = Vec::new();
        let again = match proto {
            Proto::Tcp => {
                self.0.read_to_end(&mut raw)?;
                tcp_bytes_retransmitted(&self.0)?
            }
            Proto::Sctp => {
                let mut buf = [0u8; 512];
                while !raw.ends_with(b"\n") {
                    match self.0.read(&mut buf)? {
                        0 => return Err(io::Error::other("the server ended the association")),
                        n => raw.extend_from_slice(&buf[..n]),
                    }
                }
                sctp_chunks_retransmitted(&self.0)? * FULL_PACKET
            }
            Proto::Udp => unreachable!("UDP is not a stream"),
        };
        Ok((Reply::parse(&raw)?, again))
    }
}

/// The largest packet on the client's link (MTU 1500): no SCTP chunk the
/// client sends is larger.
pub const FULL_PACKET: u64 = 1500;

fn tcp_bytes_retransmitted(sock: &TcpStream) -> io::Result<u64> {
    // SAFETY: tcp_info is plain old data; all-zero is a valid value.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `info`, which
    // lives for the call.
    let rc = unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(info.tcpi_bytes_retrans)
}

/// `SCTP_GET_ASSOC_STATS` (linux/sctp.h), not in the libc crate; its level
/// `SOL_SCTP` is `IPPROTO_SCTP`.
const SCTP_GET_ASSOC_STATS: libc::c_int = 112;

/// `struct sctp_assoc_stats` of linux/sctp.h: the association id, the
/// address of the largest RTO (a `sockaddr_storage`, 8-aligned), then
/// 15 counters, the sixth `sas_rtxchunks`.
#[repr(C)]
struct SctpAssocStats {
    assoc_id: i32,
    rto_addr: libc::sockaddr_storage,
    counters: [u64; 15],
}
const RTX_CHUNKS: usize = 5;
const _: () = assert!(std::mem::size_of::<SctpAssocStats>() == 256);

/// The chunks the association of a one-to-one SCTP socket retransmitted.
fn sctp_chunks_retransmitted(sock: &TcpStream) -> io::Result<u64> {
    // SAFETY: the struct is plain old data; all-zero is a valid value
    // (association id 0, which a one-to-one socket ignores).
    let mut stats: SctpAssocStats = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<SctpAssocStats>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `stats`, which
    // lives for the call.
    let rc = unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            libc::IPPROTO_SCTP,
            SCTP_GET_ASSOC_STATS,
            (&mut stats as *mut SctpAssocStats).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    if len as usize != std::mem::size_of::<SctpAssocStats>() {
        return Err(io::Error::other(format!(
            "SCTP_GET_ASSOC_STATS gave {len} bytes"
        )));
    }
    Ok(stats.counters[RTX_CHUNKS])
}

/// One UDP socket from `from` to `to`: each request a datagram, each
/// answered before the next is sent.
///
/// IPVS keys a connection by protocol and the client's address and port,
/// and keeps it after it closed (UDP 300 s after its last packet, TCP in
/// TIME_WAIT): a flow is a new connection, scheduled anew, only if no
/// earlier one came from the same port, so the caller names the port.
/// Port 0, the kernel's pick at random among the ephemeral range (a closed
/// socket's port included), would give an earlier connection's port once in
/// a few thousand: a UDP flow then joins that connection, a TCP one has it
/// expired.
pub fn datagrams(from: SocketAddr, to: SocketAddr, requests: &[Vec<u8>]) -> io::Result<Vec<Reply>> {
    let sock = UdpSocket::bind(from)?;
    sock.connect(to)?;
    sock.set_read_timeout(Some(IO_TIMEOUT))?;
    let mut buf = vec![0u8; 2048];
    requests
        .iter()
        .map(|r| {
            sock.send(r)?;
            let n = sock.recv(&mut buf)?;
            Reply::parse(&buf[..n])
        })
        .collect()
}

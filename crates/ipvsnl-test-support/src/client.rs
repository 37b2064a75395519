//! The client's side of traffic through a virtual service, from the
//! calling thread's namespace: a held connection to a real server that
//! greets ([`Answer::GreetThenEcho`](crate::echo::Answer::GreetThenEcho)),
//! from a chosen source address; a request and its whole answer; an HTTP
//! GET; a close that resets.
//!
//! ```no_run
//! use ipvsnl_test_support::client::Conn;
//! let mut c = Conn::open("10.10.10.10:80".parse().unwrap(), None);
//! println!("reached {}", c.server());
//! assert_eq!(c.echo(b"ping").unwrap(), b"ping");
//! c.reset();
//! ```

use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr, SocketAddrV4, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::thread;
use std::time::{Duration, Instant};

/// How long a connect, a greeting or an echo may take.
const IO_TIMEOUT: Duration = Duration::from_secs(10);

/// One client connection through a virtual service, and the real server
/// that answered it.
pub struct Conn {
    stream: TcpStream,
    server: IpAddr,
}

impl Conn {
    /// Connects to `to` (from `from`, one of this namespace's local
    /// addresses, or from the address the routing picks) and reads the
    /// real server's greeting.
    pub fn open(to: SocketAddr, from: Option<IpAddr>) -> Conn {
        let mut stream = match from {
            None => TcpStream::connect_timeout(&to, IO_TIMEOUT),
            Some(src) => connect_from(src, to),
        }
        .unwrap_or_else(|e| panic!("connect {to} from {from:?}: {e}"));
        stream.set_read_timeout(Some(IO_TIMEOUT)).expect("timeout");
        let mut line = Vec::new();
        let mut byte = [0u8; 1];
        while byte[0] != b'\n' {
            match stream.read(&mut byte) {
                Ok(1) => line.push(byte[0]),
                other => panic!("greeting through {to} after {line:?}: {other:?}"),
            }
        }
        let text = String::from_utf8_lossy(&line);
        let server = text
            .trim()
            .parse()
            .unwrap_or_else(|e| panic!("greeting {text:?}: {e}"));
        Conn { stream, server }
    }

    /// The real server that answered.
    pub fn server(&self) -> IpAddr {
        self.server
    }

    /// Sends `data` and reads it back.
    pub fn echo(&mut self, data: &[u8]) -> io::Result<Vec<u8>> {
        self.stream.write_all(data)?;
        let mut back = vec![0u8; data.len()];
        self.stream.read_exact(&mut back)?;
        Ok(back)
    }

    /// Ends the connection with a reset (`SO_LINGER` 0): IPVS moves its
    /// entry to CLOSE, which expires in seconds, rather than through
    /// CLOSE_WAIT and TIME_WAIT, which take minutes.
    pub fn reset(self) {
        reset_on_close(&self.stream);
    }
}

/// The real server that a connection from `from` to `to` reaches (the
/// connection is closed at once).
pub fn reached(to: SocketAddr, from: Option<IpAddr>) -> IpAddr {
    Conn::open(to, from).server()
}

/// A `SOL_SOCKET` option of `fd`, set to `value`.
fn set_option<T>(fd: RawFd, name: libc::c_int, value: &T) -> io::Result<()> {
    let len = libc::socklen_t::try_from(std::mem::size_of::<T>()).expect("small option");
    // SAFETY: `value` points to a live, initialised T of `len` bytes for
    // the whole call; the kernel only reads it.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            name,
            (value as *const T).cast::<libc::c_void>(),
            len,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn sockaddr(a: SocketAddrV4) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: a.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(*a.ip()).to_be(),
        },
        sin_zero: [0; 8],
    }
}

/// A TCP connection to `to` bound to source `src` first (std has no
/// bind-before-connect), its connect bounded by [`IO_TIMEOUT`].
fn connect_from(src: IpAddr, to: SocketAddr) -> io::Result<TcpStream> {
    let (IpAddr::V4(src), SocketAddr::V4(to)) = (src, to) else {
        return Err(io::Error::other("IPv4 only"));
    };
    // SAFETY: plain socket(2); the result is checked before use.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a new descriptor that nothing else owns.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    // A blocking connect gives up after SO_SNDTIMEO.
    let limit = libc::timeval {
        tv_sec: IO_TIMEOUT.as_secs() as libc::time_t,
        tv_usec: 0,
    };
    set_option(fd, libc::SO_SNDTIMEO, &limit)?;
    let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    let local = sockaddr(SocketAddrV4::new(src, 0));
    // SAFETY: `local` is a valid sockaddr_in of `len` bytes for the call.
    if unsafe { libc::bind(fd, (&local as *const libc::sockaddr_in).cast(), len) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let remote = sockaddr(to);
    // SAFETY: `remote` is a valid sockaddr_in of `len` bytes for the call.
    if unsafe { libc::connect(fd, (&remote as *const libc::sockaddr_in).cast(), len) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(TcpStream::from(owned))
}

/// SO_LINGER with a zero timeout: closing `s` sends a reset (the director
/// then drops the connection at once instead of keeping it in TIME_WAIT).
pub fn reset_on_close(s: &TcpStream) {
    let abort = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    set_option(s.as_raw_fd(), libc::SO_LINGER, &abort).expect("SO_LINGER 0");
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
        match try_http_get(addr, path) {
            Ok(got) => return got,
            Err(e) if Instant::now() < deadline => {
                let _ = e;
                thread::sleep(Duration::from_millis(100));
            }
            Err(e) => panic!("GET http://{addr}{path}: {e}"),
        }
    }
}

/// `GET path` over HTTP/1.0 from `addr`, once: the status code and the
/// body, or the error (a refused connection, say).
pub fn try_http_get(addr: &str, path: &str) -> std::io::Result<(u16, String)> {
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

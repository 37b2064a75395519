//! Several real servers that say who they are, for the scheduling tests.
//!
//! [`Servers`] is one namespace of its own behind a veth pair (`v0`, the
//! director's end, at 10.9.0.1/24 in the calling thread's namespace; `v1`
//! in the servers' namespace), holding the addresses 10.9.0.2, 10.9.0.3...
//! (one a real server) and a listener on all of them. Every connection is
//! greeted with the address it reached, then echoed until the client
//! closes, so a client knows which real server IPVS picked and can go on
//! talking to it while it holds the connection.
//!
//! [`Conn`] is the client side, in the director's namespace: a connection
//! from a chosen source address (one of a local subnet, for the schedulers
//! that hash the source), held open, echoed through, closed or reset.

use std::io::{self, Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, SocketAddrV4, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use super::traffic::{sh, DIRECTOR_LINK};

/// How long a connect, a greeting or an echo may take.
const IO_TIMEOUT: Duration = Duration::from_secs(10);

/// The longest the servers run, whatever the test does.
const LIFETIME: Duration = Duration::from_secs(300);

/// Held while a veth pair is created.
static VETH_ADD: Mutex<()> = Mutex::new(());

/// The address of real server `i` (from 0): 10.9.0.2, 10.9.0.3, ...
pub fn server_addr(i: usize) -> IpAddr {
    let last = u8::try_from(i + 2).expect("at most 253 real servers");
    IpAddr::V4(Ipv4Addr::new(10, 9, 0, last))
}

/// Real servers 10.9.0.2... on one link, answering on one port. Stops when
/// dropped (held connections are closed then).
pub struct Servers {
    addrs: Vec<IpAddr>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Servers {
    /// Starts `count` real servers listening on `port`; the calling thread
    /// must be in the director's (fresh) namespace.
    pub fn start(port: u16, count: usize) -> Servers {
        let addrs: Vec<IpAddr> = (0..count).map(server_addr).collect();
        let stop = Arc::new(AtomicBool::new(false));
        let (tid_tx, tid_rx) = mpsc::channel::<i64>();
        let (wired_tx, wired_rx) = mpsc::channel::<()>();
        let (ready_tx, ready_rx) = mpsc::channel::<()>();
        let thread = {
            let addrs = addrs.clone();
            let stop = stop.clone();
            thread::spawn(move || {
                super::fresh_netns();
                // SAFETY: gettid has no preconditions.
                tid_tx.send(unsafe { libc::syscall(libc::SYS_gettid) }).ok();
                wired_rx.recv().expect("the director moved v1 here");
                for a in &addrs {
                    sh("ip", &["addr", "add", &format!("{a}/24"), "dev", "v1"]);
                }
                sh("ip", &["link", "set", "v1", "up"]);
                sh("ip", &["route", "add", "default", "via", DIRECTOR_LINK]);
                let listener = TcpListener::bind(("0.0.0.0", port)).expect("bind the servers");
                listener
                    .set_nonblocking(true)
                    .expect("nonblocking listener");
                ready_tx.send(()).ok();
                accept_loop(&listener, &stop);
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
        Servers {
            addrs,
            stop,
            thread: Some(thread),
        }
    }

    /// The real servers' addresses, in order.
    pub fn addrs(&self) -> &[IpAddr] {
        &self.addrs
    }

    /// The index of real server `addr` in [`Servers::addrs`].
    pub fn index(&self, addr: IpAddr) -> usize {
        self.addrs
            .iter()
            .position(|a| *a == addr)
            .unwrap_or_else(|| panic!("{addr} is none of the real servers {:?}", self.addrs))
    }
}

impl Drop for Servers {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Accepts until told to stop (or [`LIFETIME`]), one thread a connection.
fn accept_loop(listener: &TcpListener, stop: &Arc<AtomicBool>) {
    let deadline = Instant::now() + LIFETIME;
    let mut answering = Vec::new();
    while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
        match listener.accept() {
            Ok((s, _)) => {
                let stop = stop.clone();
                answering.push(thread::spawn(move || answer(s, &stop, deadline)));
            }
            Err(_) => thread::sleep(Duration::from_millis(2)),
        }
    }
    stop.store(true, Ordering::Relaxed);
    for t in answering {
        let _ = t.join();
    }
}

/// Greets with the address the connection reached, then echoes until the
/// client closes (or the servers stop).
fn answer(mut s: TcpStream, stop: &AtomicBool, deadline: Instant) {
    let Ok(local) = s.local_addr() else { return };
    let _ = s.set_nonblocking(false);
    if s.write_all(format!("{}\n", local.ip()).as_bytes()).is_err() {
        return;
    }
    // Short reads, so that a stop is seen soon.
    let _ = s.set_read_timeout(Some(Duration::from_millis(100)));
    let mut buf = [0u8; 2048];
    while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
        match s.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => {
                if s.write_all(&buf[..n]).is_err() {
                    return;
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return,
        }
    }
}

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
        let abort = libc::linger {
            l_onoff: 1,
            l_linger: 0,
        };
        set_option(self.stream.as_raw_fd(), libc::SO_LINGER, &abort).expect("SO_LINGER 0");
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
    let l = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: the descriptor is live (owned by `s`) and `l` is a valid
    // linger value for the duration of the call.
    let rc = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            &l as *const libc::linger as *const libc::c_void,
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        )
    };
    assert_eq!(rc, 0, "SO_LINGER: {}", std::io::Error::last_os_error());
}

//! One echo server for every kernel test that sends traffic through a
//! virtual service: one accept loop (a thread a connection, a deadline,
//! stopped when dropped), and the answer each test needs ([`Answer`]).
//!
//! ```no_run
//! use std::net::TcpListener;
//! use std::time::Duration;
//! use ipvsnl_test_support::echo::{Answer, EchoServer};
//!
//! let listener = TcpListener::bind("127.0.0.1:0").unwrap();
//! let _server = EchoServer::start(
//!     listener,
//!     Answer::Lines { prefix: "rs:".to_string() },
//!     Duration::from_secs(60),
//! );
//! ```

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::digest::{self, Proto};
use crate::poll::readable;

/// What the server answers on each connection.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Answer {
    /// Reads until the client half-closes, then answers `reply_len` bytes
    /// (`r`) and closes: traffic of a known size for the counters.
    AfterClose {
        /// Bytes of the answer.
        reply_len: usize,
    },
    /// Greets with the address the connection reached (a line), then
    /// echoes until the client closes: the client knows which real server
    /// IPVS picked and can go on talking to it while it holds the
    /// connection.
    GreetThenEcho,
    /// Answers each line `x` with `PREFIX x` until the client closes or is
    /// silent for 20 s: a connection that lives across a director's
    /// failover.
    Lines {
        /// What each answer starts with (it names the server).
        prefix: String,
    },
    /// A request framed by its length, answered with its length and digest
    /// ([`digest`]): the forwarding tests' check that every byte arrived.
    Digest {
        /// The server's name, first word of each answer.
        name: String,
        /// TCP or SCTP (the server waits for an SCTP client's shutdown).
        proto: Proto,
    },
}

/// A running echo server; stopped (its connections shut down, its threads
/// joined) when dropped.
pub struct EchoServer {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl EchoServer {
    /// Serves `listener` (bound in whichever namespace it was made in) on
    /// a thread of its own, for at most `lifetime`.
    pub fn start(listener: TcpListener, answer: Answer, lifetime: Duration) -> EchoServer {
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let thread = thread::spawn(move || serve(&listener, &answer, &stopping, lifetime));
        EchoServer {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for EchoServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The accept loop, on the calling thread: each connection answered on a
/// thread of its own (a test holds one open while others come and go) and
/// shut down once answered, until `stop` is set or `lifetime` is over. Then it sets `stop`, shuts
/// down the connections still open (one whose client is gone without a
/// word, reset by a director, would otherwise keep its thread to its
/// timeout) and joins their threads.
pub fn serve(listener: &TcpListener, answer: &Answer, stop: &Arc<AtomicBool>, lifetime: Duration) {
    let deadline = Instant::now() + lifetime;
    let mut conns = Vec::new();
    while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
        if !readable(listener, Duration::from_millis(100)) {
            continue;
        }
        let Ok((s, peer)) = listener.accept() else {
            continue;
        };
        let (Ok(mine), Ok(end)) = (s.try_clone(), s.try_clone()) else {
            continue;
        };
        let (answer, stop) = (answer.clone(), stop.clone());
        conns.push((
            mine,
            thread::spawn(move || {
                let _ = answer_one(&answer, s, peer, &stop, deadline);
                // The end of the answer ends the connection (a FIN now,
                // though `mine` keeps the descriptor open a while).
                let _ = end.shutdown(Shutdown::Both);
            }),
        ));
        // Connections answered are closed: a test makes thousands.
        conns.retain(|(_, t)| !t.is_finished());
    }
    stop.store(true, Ordering::Relaxed);
    for (s, t) in conns {
        let _ = s.shutdown(Shutdown::Both);
        let _ = t.join();
    }
}

/// Answers one connection as `answer` says (the accept loops of this
/// crate call it on a thread a connection).
pub(crate) fn answer_one(
    answer: &Answer,
    mut s: TcpStream,
    peer: SocketAddr,
    stop: &AtomicBool,
    deadline: Instant,
) -> io::Result<()> {
    s.set_nonblocking(false)?;
    match answer {
        Answer::AfterClose { reply_len } => {
            s.set_read_timeout(Some(Duration::from_secs(10)))?;
            let mut sink = Vec::new();
            let _ = s.read_to_end(&mut sink);
            s.write_all(&vec![b'r'; *reply_len])
        }
        Answer::GreetThenEcho => greet_then_echo(s, stop, deadline),
        Answer::Lines { prefix } => {
            s.set_read_timeout(Some(Duration::from_secs(20)))?;
            let mut w = &s;
            for line in BufReader::new(&s).lines() {
                let Ok(line) = line else { break };
                w.write_all(format!("{prefix}{line}\n").as_bytes())?;
            }
            Ok(())
        }
        Answer::Digest { name, proto } => digest::answer_stream(*proto, name, s, peer),
    }
}

/// Greets with the address the connection reached, then echoes until the
/// client closes (or the server stops).
fn greet_then_echo(mut s: TcpStream, stop: &AtomicBool, deadline: Instant) -> io::Result<()> {
    let local = s.local_addr()?;
    s.write_all(format!("{}\n", local.ip()).as_bytes())?;
    // Short reads, so that a stop is seen soon.
    s.set_read_timeout(Some(Duration::from_millis(100)))?;
    let mut buf = [0u8; 2048];
    while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
        match s.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => s.write_all(&buf[..n])?,
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

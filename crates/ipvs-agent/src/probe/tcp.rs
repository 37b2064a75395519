//! The TCP check: a connection that opens; the HTTP checks' connection too.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use socket2::{Domain, Protocol, Socket, Type};
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;
use tokio::net::TcpStream;

use crate::check::Outcome;
use crate::probe::failure::io_outcome;

/// Opens a TCP connection to `addr` for a request: with `nodelay`,
/// `TCP_NODELAY` set.
///
/// A plain HTTP check writes its request in one piece on a connection
/// with nothing in flight, which Nagle never holds back: no `nodelay`, one
/// system call less. An HTTPS check's request follows the handshake's
/// last message, which may not be acknowledged yet (the server's delayed
/// ACK): Nagle would hold the request until it is, so `nodelay`.
pub(crate) async fn connect(addr: SocketAddr, nodelay: bool) -> Result<TcpStream, Outcome> {
    let stream = open(addr).await?;
    if nodelay {
        // A failure here changes nothing the check measures.
        let _ = stream.set_nodelay(true);
    }
    Ok(stream)
}

/// Opens a TCP connection to `addr`, nothing set on it.
async fn open(addr: SocketAddr) -> Result<TcpStream, Outcome> {
    TcpStream::connect(addr)
        .await
        .map_err(|e| io_outcome("connect", &e))
}

/// The TCP check: passes when the connection opens; it is closed at once,
/// with a reset (`SO_LINGER` 0), not a FIN.
///
/// Nothing is written, so `TCP_NODELAY` is not set. The reset spares both
/// ends the orderly close (a FIN each way and their ACKs) and the director
/// a TIME_WAIT socket for 60 s a check: under icount, 1,000 services x 4
/// servers checked every second, 88,000 guest instructions a check with a
/// FIN, 80,250 with the reset, one boot (benches/AGENT.md). A real
/// server sees its accepted connection reset, as it would see an orderly
/// close: nothing was sent on it.
pub(crate) async fn check(addr: SocketAddr) -> Outcome {
    match connected(addr).await {
        Ok(()) => Outcome::Pass,
        Err(not) => not,
    }
}

/// Opens a TCP connection to `addr` and closes it (with a reset) once it
/// is open.
///
/// Not tokio's `TcpStream`: its socket asks the poller for readability as
/// well (the server's FIN, which comes before the check closes, woke the
/// poller again), its connect reads `SO_ERROR` after every connect, and
/// `SO_LINGER` costs a system call of its own after it. Here the socket is
/// made non-blocking in the `socket` call, `SO_LINGER` is set before the
/// connect (a socket option either way), the poller is asked for
/// writability only, and `SO_ERROR` is read only when the readiness says
/// the connect failed (`EPOLLERR` or `EPOLLHUP`: tokio's write-closed):
/// five system calls a check (`socket`, `setsockopt`, `connect`, the
/// poller's add and delete) and `close`, where tokio's stream made six and
/// `close`.
async fn connected(addr: SocketAddr) -> Result<(), Outcome> {
    let failed = |e: io::Error| io_outcome("connect", &e);
    let socket = Socket::new(
        Domain::for_address(addr),
        Type::STREAM.nonblocking(),
        Some(Protocol::TCP),
    )
    .map_err(failed)?;
    // A failure leaves the orderly close: the check works anyway.
    let _ = socket.set_linger(Some(Duration::ZERO));
    match socket.connect(&addr.into()) {
        Ok(()) => return Ok(()),
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
        Err(e) => return Err(failed(e)),
    }
    // SAFETY: the socket is owned by the `AsyncFd`: its descriptor stays
    // open, and the same, for as long as the `AsyncFd` lives.
    let socket = unsafe { AsyncFd::register_with_interest(socket, Interest::WRITABLE) }
        .map_err(|e| failed(e.into()))?;
    let ready = socket.writable().await.map_err(failed)?.ready();
    if ready.is_write_closed() {
        if let Some(e) = socket.get_ref().take_error().map_err(failed)? {
            return Err(failed(e));
        }
    }
    Ok(())
}

//! The TCP check: a connection that opens; the HTTP checks' connection too.

use std::net::SocketAddr;

use tokio::net::TcpStream;

use crate::check::{Failure, Outcome};
use crate::probe::failure::io_failure;

/// Opens a TCP connection to `addr` for a request (`TCP_NODELAY` set).
pub(crate) async fn connect(addr: SocketAddr) -> Result<TcpStream, Failure> {
    let stream = open(addr).await?;
    // A check's request is one small write: no reason to wait for Nagle.
    // A failure here changes nothing the check measures.
    let _ = stream.set_nodelay(true);
    Ok(stream)
}

/// Opens a TCP connection to `addr`, nothing set on it.
async fn open(addr: SocketAddr) -> Result<TcpStream, Failure> {
    TcpStream::connect(addr)
        .await
        .map_err(|e| io_failure("connect", &e))
}

/// The TCP check: passes when the connection opens (it is closed at once).
///
/// Nothing is written, so `TCP_NODELAY` is not set: one system call less
/// a check (socket, connect, the poller's add, `SO_ERROR`, its delete,
/// close). Measured with the whole daemon's check path: see
/// `ipvs_agent::probe::net`'s `probe`.
pub(crate) async fn check(addr: SocketAddr) -> Outcome {
    match open(addr).await {
        Ok(_) => Outcome::Pass,
        Err(f) => Outcome::Fail(f),
    }
}

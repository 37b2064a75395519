//! The TCP check: a connection that opens; the HTTP checks' connection too.

use std::net::SocketAddr;

use tokio::net::TcpStream;

use crate::check::{Failure, Outcome};
use crate::probe::failure::io_failure;

/// Opens a TCP connection to `addr`.
pub(crate) async fn connect(addr: SocketAddr) -> Result<TcpStream, Failure> {
    let stream = TcpStream::connect(addr)
        .await
        .map_err(|e| io_failure("connect", &e))?;
    // A check's request is one small write: no reason to wait for Nagle.
    // A failure here changes nothing the check measures.
    let _ = stream.set_nodelay(true);
    Ok(stream)
}

/// The TCP check: passes when the connection opens (it is closed at once).
pub(crate) async fn check(addr: SocketAddr) -> Outcome {
    match connect(addr).await {
        Ok(_) => Outcome::Pass,
        Err(f) => Outcome::Fail(f),
    }
}

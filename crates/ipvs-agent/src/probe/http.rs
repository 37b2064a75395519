//! The HTTP and HTTPS checks: one HTTP/1.1 GET on a connection of its own,
//! its status compared with the one expected and, if asked, its body
//! searched for a string.

use std::future::{poll_fn, Future};
use std::net::{IpAddr, Ipv6Addr};
use std::pin::pin;
use std::task::Poll;

use bytes::Bytes;
use http_body_util::Empty;
use hyper::client::conn::http1;
use hyper::header::{HeaderValue, CONNECTION, HOST, USER_AGENT};
use hyper::Request;
use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::check::{Failure, Outcome};
use crate::config::HttpCheck;
use crate::probe::body;
use crate::probe::failure::{io_failure, io_source};

/// The `User-Agent` of every check's request.
const AGENT: &str = concat!("ipvs-agent/", env!("CARGO_PKG_VERSION"));

/// The `Host` header: the check's `host` or the server's address (an IPv6
/// one in brackets), with the port unless it is the scheme's default.
pub(crate) fn host_header(http: &HttpCheck, server: IpAddr, port: u16) -> String {
    let default_port = if http.tls.is_some() { 443 } else { 80 };
    let host = match &http.host {
        Some(h) if h.parse::<Ipv6Addr>().is_ok() => format!("[{h}]"),
        Some(h) => h.clone(),
        None => match server {
            IpAddr::V4(a) => a.to_string(),
            IpAddr::V6(a) => format!("[{a}]"),
        },
    };
    if port == default_port {
        host
    } else {
        format!("{host}:{port}")
    }
}

/// The name the TLS handshake verifies: the check's `host` (a DNS name,
/// sent as SNI, or an IP address), else the server's address.
pub(crate) fn server_name(
    http: &HttpCheck,
    server: IpAddr,
) -> Result<ServerName<'static>, Failure> {
    match &http.host {
        None => Ok(ServerName::IpAddress(server.into())),
        Some(h) => {
            let bare = h
                .strip_prefix('[')
                .and_then(|h| h.strip_suffix(']'))
                .unwrap_or(h);
            ServerName::try_from(bare.to_string()).map_err(|_| {
                Failure::Other(format!(
                    "`host` \"{h}\" is neither a DNS name nor an IP address to verify the certificate against"
                ))
            })
        }
    }
}

/// One GET over `io` (a TCP or TLS stream), the connection driven beside
/// the request; the connection is closed when the result is known.
pub(crate) async fn get<S>(io: S, http: &HttpCheck, host: &str) -> Outcome
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    // The constant headers' values are not parsed again for each check.
    let request = match Request::get(http.path.as_str())
        .header(HOST, host)
        .header(CONNECTION, HeaderValue::from_static("close"))
        .header(USER_AGENT, HeaderValue::from_static(AGENT))
        .body(Empty::<Bytes>::new())
    {
        Ok(r) => r,
        Err(e) => return Outcome::Fail(Failure::Other(format!("the request: {e}"))),
    };
    let (mut sender, connection) = match http1::handshake(TokioIo::new(io)).await {
        Ok(pair) => pair,
        Err(e) => return Outcome::Fail(hyper_failure(&e)),
    };
    let exchange = async move {
        let response = sender.send_request(request).await?;
        let got = response.status().as_u16();
        if got != http.status {
            return Ok(Outcome::Fail(Failure::Status {
                expected: http.status,
                got,
            }));
        }
        let Some(needle) = &http.body_contains else {
            return Ok(Outcome::Pass);
        };
        Ok(
            if body::contains(response.into_body(), needle.as_bytes()).await? {
                Outcome::Pass
            } else {
                Outcome::Fail(Failure::BodyMismatch)
            },
        )
    };
    match beside(connection, exchange).await {
        Ok(outcome) => outcome,
        Err(e) => Outcome::Fail(hyper_failure(&e)),
    }
}

/// Runs `work` while polling `connection` (which does the socket's I/O),
/// without spawning a task: both end with the check. The connection's
/// error ends the work early; its clean end lets the work finish (the
/// response is then all delivered).
async fn beside<C, W, T>(connection: C, work: W) -> Result<T, hyper::Error>
where
    C: Future<Output = Result<(), hyper::Error>>,
    W: Future<Output = Result<T, hyper::Error>>,
{
    let mut connection = pin!(connection);
    let mut work = pin!(work);
    let mut connection_done = false;
    poll_fn(|cx| {
        if let Poll::Ready(out) = work.as_mut().poll(cx) {
            return Poll::Ready(out);
        }
        if !connection_done {
            match connection.as_mut().poll(cx) {
                Poll::Ready(Ok(())) => {
                    connection_done = true;
                    // The work may now be able to finish.
                    if let Poll::Ready(out) = work.as_mut().poll(cx) {
                        return Poll::Ready(out);
                    }
                }
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => {}
            }
        }
        Poll::Pending
    })
    .await
}

/// hyper's error: the socket's (reset: refused) or the HTTP exchange's.
fn hyper_failure(e: &hyper::Error) -> Failure {
    if let Some(io) = io_source(e) {
        return io_failure("HTTP", io);
    }
    if e.is_incomplete_message() {
        return Failure::Other("HTTP: the connection closed before a complete response".into());
    }
    Failure::Other(format!("HTTP: {e}"))
}

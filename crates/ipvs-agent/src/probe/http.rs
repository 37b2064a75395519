//! The HTTP and HTTPS checks: one HTTP/1.1 GET on a connection of its own,
//! its status compared with the one expected and, if asked, its body
//! searched for a string. The request is written in one piece and the
//! response read by hand ([`http_head`](super::http_head),
//! [`http_body`](super::http_body)) rather than through hyper's client
//! connection: benches/AGENT.md has the instructions a check this saved.

use std::net::{IpAddr, Ipv6Addr};

use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::check::{Failure, Outcome};
use crate::config::check_parse::has_space_or_control;
use crate::config::HttpCheck;
use crate::probe::body::{Scan, Scanner, BODY_CAP};
use crate::probe::failure::io_outcome;
use crate::probe::http_body::Body;
use crate::probe::http_head::{self, MAX_HEAD};

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

/// One GET over `io` (a TCP or TLS stream), written in one piece; the
/// response read until the check knows its result. The caller closes the
/// connection (a TLS one with its close notification).
pub(crate) async fn get<S>(io: &mut S, http: &HttpCheck, host: &str) -> Outcome
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let Some(request) = request(http, host) else {
        return Outcome::Fail(Failure::Other(format!(
            "the request: the path {:?} or the host {host:?} has a space or a control character",
            http.path
        )));
    };
    if let Err(e) = io.write_all(request.as_bytes()).await {
        return io_outcome("HTTP", &e);
    }
    if let Err(e) = io.flush().await {
        return io_outcome("HTTP", &e);
    }
    let mut buf = Vec::with_capacity(READ_SIZE);
    let head = loop {
        match http_head::parse(&buf) {
            Ok(Some(head)) => break head,
            Ok(None) if buf.len() >= MAX_HEAD => {
                return other(format!(
                    "the response's head is over {} KiB",
                    MAX_HEAD / 1024
                ))
            }
            Ok(None) => {}
            Err(e) => return other(e),
        }
        match read(io, &mut buf).await {
            Ok(0) => return other(CUT.into()),
            Ok(_) => {}
            Err(e) => return io_outcome("HTTP", &e),
        }
    };
    if head.status != http.status {
        return Outcome::Fail(Failure::Status {
            expected: http.status,
            got: head.status,
        });
    }
    let Some(needle) = &http.body_contains else {
        return Outcome::Pass;
    };
    let mut scan = Scanner::new(needle.as_bytes(), BODY_CAP);
    let mut body = Body::new(head.framing);
    let mut at = head.body_at;
    loop {
        while at < buf.len() || body.is_done() {
            let step = match body.step(&buf[at..]) {
                Ok(step) => step,
                Err(e) => return other(format!("{e} in the response's body")),
            };
            at += step.used;
            if !step.data.is_empty() {
                match scan.feed(step.data) {
                    Scan::Found => return Outcome::Pass,
                    Scan::Exhausted => return Outcome::Fail(Failure::BodyMismatch),
                    Scan::More => {}
                }
            }
            if step.end {
                return Outcome::Fail(Failure::BodyMismatch);
            }
            if step.used == 0 {
                break;
            }
        }
        // What is left of the buffer is an incomplete line of framing.
        buf.drain(..at);
        at = 0;
        match read(io, &mut buf).await {
            Ok(0) if body.ends_at_close() => return Outcome::Fail(Failure::BodyMismatch),
            Ok(0) => return other(CUT.into()),
            Ok(_) => {}
            Err(e) => return io_outcome("HTTP", &e),
        }
    }
}

/// How much one read asks for.
const READ_SIZE: usize = 4096;
/// A response that ends early.
const CUT: &str = "the connection closed before a complete response";

/// The request: the GET line and its three headers, or `None` if the path
/// or the host would break its lines.
fn request(http: &HttpCheck, host: &str) -> Option<String> {
    if has_space_or_control(&http.path) || has_space_or_control(host) {
        return None;
    }
    Some(format!(
        "GET {} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nUser-Agent: {AGENT}\r\n\r\n",
        http.path
    ))
}

/// One read appended to `buf` (room made for [`READ_SIZE`] more).
async fn read<S: AsyncRead + Unpin>(io: &mut S, buf: &mut Vec<u8>) -> std::io::Result<usize> {
    buf.reserve(READ_SIZE);
    io.read_buf(buf).await
}

fn other(why: String) -> Outcome {
    Outcome::Fail(Failure::Other(format!("HTTP: {why}")))
}

//! Local servers for the probe tests, each on an ephemeral port of
//! 127.0.0.1 and alive as long as the value returned: a port nothing
//! listens on, a server that accepts and never answers, a listener whose
//! queue is full, a tiny HTTP server (plain or TLS) with a scripted reply,
//! a CA and its certificates, a scripted UDP DNS responder.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ipvs_agent::check::Outcome;
use ipvs_agent::config::{parse_str, HealthCheck};
use ipvs_agent::probe::{NetProber, Prober, RootCertStore};
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair, KeyUsagePurpose};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::ServerConfig;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpSocket, TcpStream, UdpSocket};
use tokio_rustls::TlsAcceptor;

const LOCALHOST: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(Ipv4Addr::LOCALHOST), 0);

/// The check a file's `check = { ... }` table (its inner text) becomes.
pub(crate) fn check(table: &str) -> Arc<HealthCheck> {
    let text = format!(
        "[[service]]\nprotocol = \"tcp\"\naddress = \"192.0.2.1\"\nport = 80\n\
         [[service.server]]\naddress = \"127.0.0.1\"\nport = 1\ncheck = {{ {table} }}\n"
    );
    let config = parse_str("probe.toml", &text).unwrap_or_else(|e| panic!("{e}"));
    Arc::new(
        config.services[0].servers[0]
            .check
            .clone()
            .expect("a check"),
    )
}

/// One check of `server` by a prober trusting no CA.
pub(crate) async fn probe(server: SocketAddr, table: &str) -> Outcome {
    NetProber::with_root_certificates(RootCertStore::empty())
        .probe(server, check(table))
        .await
}

/// A TCP port bound but not listening: a connection to it is refused
/// (and no other program can take the port while the socket lives).
pub(crate) fn refusing() -> (TcpSocket, SocketAddr) {
    let s = TcpSocket::new_v4().unwrap();
    s.bind(LOCALHOST).unwrap();
    let addr = s.local_addr().unwrap();
    (s, addr)
}

/// A listener that never accepts: the kernel completes connections (up to
/// its queue), nothing ever answers.
pub(crate) fn silent() -> (std::net::TcpListener, SocketAddr) {
    let l = std::net::TcpListener::bind(LOCALHOST).unwrap();
    let addr = l.local_addr().unwrap();
    (l, addr)
}

/// A listener with a queue of one, full (one connection waits in it,
/// never accepted): the kernel drops further SYNs, so a connect hangs.
pub(crate) async fn full_queue() -> (TcpListener, Vec<TcpStream>, SocketAddr) {
    let s = TcpSocket::new_v4().unwrap();
    s.bind(LOCALHOST).unwrap();
    let l = s.listen(0).unwrap();
    let addr = l.local_addr().unwrap();
    let mut held = Vec::new();
    // A queue of backlog 0 holds one connection; one more attempt makes
    // sure it is full (it hangs, and is given up, when it already is).
    for _ in 0..2 {
        if let Ok(Ok(c)) =
            tokio::time::timeout(Duration::from_millis(500), TcpStream::connect(addr)).await
        {
            held.push(c);
        }
    }
    assert!(!held.is_empty(), "the queue took no connection");
    (l, held, addr)
}

/// What the HTTP server answers.
#[derive(Clone)]
pub(crate) enum Reply {
    /// A response with this status and a chunked body of these chunks (each
    /// written and flushed on its own).
    Chunked(u16, Vec<Vec<u8>>),
    /// These bytes, then the connection is closed.
    Raw(Vec<u8>),
    /// The connection is reset (RST) once the request is read.
    Reset,
}

/// A tiny HTTP/1.1 server (each connection: one request read, the reply
/// written, closed), keeping the head of every request it read.
pub(crate) struct HttpServer {
    pub(crate) addr: SocketAddr,
    heads: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl HttpServer {
    /// Plain HTTP.
    pub(crate) async fn start(reply: Reply) -> Self {
        Self::start_with(reply, None).await
    }

    /// HTTPS with this server configuration.
    pub(crate) async fn start_tls(reply: Reply, tls: ServerConfig) -> Self {
        Self::start_with(reply, Some(TlsAcceptor::from(Arc::new(tls)))).await
    }

    async fn start_with(reply: Reply, tls: Option<TlsAcceptor>) -> Self {
        let listener = TcpListener::bind(LOCALHOST).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let heads = Arc::new(Mutex::new(Vec::new()));
        let seen = heads.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    return;
                };
                let reply = reply.clone();
                let seen = seen.clone();
                let tls = tls.clone();
                tokio::spawn(async move {
                    match tls {
                        None => serve(tcp, reply, seen).await,
                        Some(acceptor) => {
                            // A failed handshake is the client's to report.
                            if let Ok(s) = acceptor.accept(tcp).await {
                                serve(s, reply, seen).await;
                            }
                        }
                    }
                });
            }
        });
        HttpServer { addr, heads, task }
    }

    /// The heads of the requests read so far, lowercased.
    pub(crate) fn heads(&self) -> Vec<String> {
        self.heads.lock().unwrap().clone()
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve<S>(mut s: S, reply: Reply, seen: Arc<Mutex<Vec<String>>>)
where
    S: AsyncRead + AsyncWrite + Unpin + ResetSocket,
{
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.ends_with(b"\r\n\r\n") {
        match s.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    seen.lock()
        .unwrap()
        .push(String::from_utf8_lossy(&head).to_lowercase());
    match reply {
        Reply::Chunked(status, chunks) => {
            let start = format!(
                "HTTP/1.1 {status} Whatever\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n"
            );
            if s.write_all(start.as_bytes()).await.is_err() || s.flush().await.is_err() {
                return;
            }
            for c in chunks {
                let mut frame = format!("{:x}\r\n", c.len()).into_bytes();
                frame.extend_from_slice(&c);
                frame.extend_from_slice(b"\r\n");
                if s.write_all(&frame).await.is_err() || s.flush().await.is_err() {
                    return;
                }
            }
            let _ = s.write_all(b"0\r\n\r\n").await;
            let _ = s.shutdown().await;
        }
        Reply::Raw(bytes) => {
            let _ = s.write_all(&bytes).await;
            let _ = s.shutdown().await;
        }
        Reply::Reset => s.reset(),
    }
}

/// Closing with a reset (`SO_LINGER` 0) where the stream is TCP.
pub(crate) trait ResetSocket {
    fn reset(self);
}

impl ResetSocket for TcpStream {
    fn reset(self) {
        self.set_zero_linger().unwrap();
        drop(self);
    }
}

impl ResetSocket for tokio_rustls::server::TlsStream<TcpStream> {
    fn reset(self) {
        self.into_inner().0.reset();
    }
}

/// A response with a status and a body of these chunks.
pub(crate) fn chunked(status: u16, chunks: &[&str]) -> Reply {
    Reply::Chunked(
        status,
        chunks.iter().map(|c| c.as_bytes().to_vec()).collect(),
    )
}

/// A certificate authority of the tests' own.
pub(crate) struct Ca {
    issuer: CertifiedIssuer<'static, KeyPair>,
}

impl Ca {
    /// A CA named `name` (two CAs of one name would pass for each
    /// other's issuer, and fail on the signature instead).
    pub(crate) fn new(name: &str) -> Self {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, name);
        let issuer = CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap();
        Ca { issuer }
    }

    /// A store trusting this CA only.
    pub(crate) fn roots(&self) -> RootCertStore {
        let mut roots = RootCertStore::empty();
        roots.add(self.issuer.der().clone()).unwrap();
        roots
    }

    /// A server configuration with a certificate for `names` (DNS names
    /// or IP addresses) signed by this CA; `expired`: valid in 2020 only.
    pub(crate) fn server(&self, names: &[&str], expired: bool) -> ServerConfig {
        let mut params =
            CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
                .unwrap();
        if expired {
            params.not_before = rcgen::date_time_ymd(2020, 1, 1);
            params.not_after = rcgen::date_time_ymd(2020, 12, 31);
        }
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        server_config(vec![cert.der().clone(), self.issuer.der().clone()], &key)
    }
}

/// A server configuration with a self-signed certificate for `names`.
pub(crate) fn self_signed(names: &[&str]) -> ServerConfig {
    let params =
        CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).unwrap();
    let key = KeyPair::generate().unwrap();
    let cert = params.self_signed(&key).unwrap();
    server_config(vec![cert.der().clone()], &key)
}

fn server_config(chain: Vec<CertificateDer<'static>>, key: &KeyPair) -> ServerConfig {
    #[allow(deprecated)] // ring's provider: see src/probe/tls.rs
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap()
}

/// A UDP DNS responder: for each datagram received, the datagrams
/// `script` returns are sent back, in order; it keeps every query.
pub(crate) struct DnsServer {
    pub(crate) addr: SocketAddr,
    queries: Arc<Mutex<Vec<Vec<u8>>>>,
    task: tokio::task::JoinHandle<()>,
}

impl DnsServer {
    pub(crate) async fn start<F>(script: F) -> Self
    where
        F: Fn(&[u8]) -> Vec<Vec<u8>> + Send + 'static,
    {
        let socket = UdpSocket::bind(LOCALHOST).await.unwrap();
        let addr = socket.local_addr().unwrap();
        let queries = Arc::new(Mutex::new(Vec::new()));
        let seen = queries.clone();
        let task = tokio::spawn(async move {
            let mut buf = vec![0u8; 65_535];
            loop {
                let Ok((n, from)) = socket.recv_from(&mut buf).await else {
                    return;
                };
                seen.lock().unwrap().push(buf[..n].to_vec());
                for d in script(&buf[..n]) {
                    let _ = socket.send_to(&d, from).await;
                }
            }
        });
        DnsServer {
            addr,
            queries,
            task,
        }
    }

    /// The queries received so far.
    pub(crate) fn queries(&self) -> Vec<Vec<u8>> {
        self.queries.lock().unwrap().clone()
    }
}

impl Drop for DnsServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The reply to `query` with response code `rcode` and no records: the
/// query's header and question, QR and RA set.
pub(crate) fn dns_reply(query: &[u8], rcode: u8) -> Vec<u8> {
    let mut r = query.to_vec();
    r[2] |= 0x80; // QR
    r[3] = 0x80 | (rcode & 0x0f); // RA, RCODE
    r
}

/// A UDP port no one receives on (bound, then closed): a query to it is
/// answered by ICMP port unreachable.
pub(crate) async fn closed_udp_port() -> SocketAddr {
    let s = UdpSocket::bind(LOCALHOST).await.unwrap();
    s.local_addr().unwrap()
}

/// Asserts that a server's read after the check ended saw a reset, not
/// an orderly close (a read gives 0 for a FIN).
pub(crate) fn assert_reset(read: std::io::Result<usize>) {
    let kind = read.as_ref().map_err(std::io::Error::kind);
    assert_eq!(
        kind.err(),
        Some(std::io::ErrorKind::ConnectionReset),
        "{read:?}"
    );
}

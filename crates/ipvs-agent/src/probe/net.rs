//! The prober of real servers over the network: every check kind, each
//! bounded by its check's timeout.

use std::net::SocketAddr;
use std::sync::Arc;

use rustls::RootCertStore;
use tokio::io::AsyncWriteExt;

use crate::check::{Failure, Outcome};
use crate::config::{CheckKind, HealthCheck, HttpCheck};
use crate::probe::lingering::Lingering;
use crate::probe::tls::{self, TlsConfigs};
use crate::probe::{command, dns, http, tcp, ProbeFuture, Prober};

/// The [`Prober`] the daemon runs: TCP connect, HTTP and HTTPS GET, a DNS
/// query over UDP and a command, each check bounded by its `timeout`
/// ([`Failure::Timeout`]), everything it opened closed when its outcome is
/// known. A check's own `port` overrides the server's.
///
/// Cheap to clone (the TLS configurations, built once, are shared). Its
/// futures run on a tokio runtime with I/O and time enabled (the command
/// check's child processes need its I/O driver too).
///
/// ```no_run
/// use std::sync::Arc;
/// use ipvs_agent::config::parse_str;
/// use ipvs_agent::probe::{NetProber, Prober};
///
/// # async fn run() {
/// let config = parse_str(
///     "agent.toml",
///     r#"
/// [[service]]
/// protocol = "tcp"
/// address = "192.0.2.1"
/// port = 80
/// check = { kind = "http", path = "/healthz", body_contains = "ok" }
/// [[service.server]]
/// address = "127.0.0.1"
/// port = 8080
/// "#,
/// )
/// .expect("a valid file");
/// let service = &config.services[0];
/// let check = Arc::new(service.servers[0].check.clone().expect("its check"));
/// let server = "127.0.0.1:8080".parse().unwrap();
/// let outcome = NetProber::new().probe(server, check).await;
/// println!("{outcome:?}");
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct NetProber {
    tls: Arc<TlsConfigs>,
    /// Command checks killed at their timeout and not yet reaped.
    lingering: Arc<Lingering>,
}

impl NetProber {
    /// A prober whose verified HTTPS checks trust the system's certificate
    /// store (read once, here; certificates it cannot parse are skipped).
    pub fn new() -> Self {
        Self::with_root_certificates(tls::native_roots())
    }

    /// A prober whose verified HTTPS checks trust `roots` only (a private
    /// CA, a test's).
    pub fn with_root_certificates(roots: RootCertStore) -> Self {
        NetProber {
            tls: Arc::new(TlsConfigs::new(roots)),
            lingering: Arc::default(),
        }
    }

    async fn run(&self, server: SocketAddr, check: &HealthCheck) -> Outcome {
        let at = |port: &Option<u16>| SocketAddr::new(server.ip(), port.unwrap_or(server.port()));
        match &check.kind {
            CheckKind::Tcp { port } => tcp::check(at(port)).await,
            CheckKind::Http(h) => self.http(at(&h.port), h).await,
            CheckKind::Dns(d) => dns::check(at(&d.port), d).await,
            CheckKind::Command { argv } => {
                command::check(server, argv, check.timeout, &self.lingering).await
            }
        }
    }

    async fn http(&self, to: SocketAddr, h: &HttpCheck) -> Outcome {
        let Some(t) = h.tls else {
            return plain_http(to, h).await;
        };
        let host = http::host_header(h, to.ip(), to.port());
        let name = match http::server_name(h, to.ip()) {
            Ok(n) => n,
            Err(f) => return Outcome::Fail(f),
        };
        let stream = match tcp::connect(to, true).await {
            Ok(s) => s,
            Err(not) => return not,
        };
        match tls::handshake(self.tls.get(t.verify), name, stream).await {
            Ok(mut tls) => {
                let outcome = http::get(&mut tls, h, &host).await;
                // The close notification; the check's deadline bounds it.
                let _ = tls.shutdown().await;
                outcome
            }
            Err(not) => not,
        }
    }
}

/// A plain HTTP check: its GET on a connection of its own, closed with a
/// reset (`SO_LINGER` 0) once the result is known, as the TCP check's is:
/// the response has been read (or is not wanted), and the reset spares
/// both ends the orderly close: under icount, 1,000 services x 4 servers
/// checked every second, 113,500 guest instructions a check with a FIN,
/// 105,625 with the reset, one boot (benches/AGENT.md). Not for HTTPS: a
/// reset would discard a close notification still queued.
async fn plain_http(to: SocketAddr, h: &HttpCheck) -> Outcome {
    let host = http::host_header(h, to.ip(), to.port());
    let mut stream = match tcp::connect(to, false).await {
        Ok(s) => s,
        Err(not) => return not,
    };
    let outcome = http::get(&mut stream, h, &host).await;
    // A failure leaves the orderly close: the check's result stands.
    let _ = stream.set_zero_linger();
    outcome
}

impl Default for NetProber {
    fn default() -> Self {
        Self::new()
    }
}

impl Prober for NetProber {
    fn probe_untimed(&self, server: SocketAddr, check: &Arc<HealthCheck>) -> Option<ProbeFuture> {
        let at = |port: &Option<u16>| SocketAddr::new(server.ip(), port.unwrap_or(server.port()));
        match &check.kind {
            // Dropped, it closes its socket.
            CheckKind::Tcp { port } => Some(Box::pin(tcp::check(at(port)))),
            // A future of its own, the size of plain HTTP's state: the
            // one of `run` holds the HTTPS check's too (TLS), which every
            // HTTP check would allocate and copy (host, callgrind,
            // `examples/check_cost.rs --http`: benches/AGENT.md).
            CheckKind::Http(h) if h.tls.is_none() => {
                let (check, to) = (Arc::clone(check), at(&h.port));
                Some(Box::pin(async move {
                    let CheckKind::Http(h) = &check.kind else {
                        unreachable!("matched as HTTP above")
                    };
                    plain_http(to, h).await
                }))
            }
            // Their sockets and TLS sessions too.
            CheckKind::Http(_) | CheckKind::Dns(_) => {
                let (prober, check) = (self.clone(), Arc::clone(check));
                Some(Box::pin(async move { prober.run(server, &check).await }))
            }
            // It kills the command's process group and reaps it first.
            CheckKind::Command { .. } => None,
        }
    }

    fn probe(&self, server: SocketAddr, check: Arc<HealthCheck>) -> ProbeFuture {
        let timeout = check.timeout;
        match &check.kind {
            // A future of its own, boxed at its own size: the one for
            // every kind holds the HTTPS check's state (TLS; hyper's connection then), which
            // every TCP check would allocate and copy (host, callgrind,
            // 1,000 checks a second: 16,640 user-space instructions a TCP
            // check before, 13,091 after; benches/AGENT.md).
            CheckKind::Tcp { port } => {
                let to = SocketAddr::new(server.ip(), port.unwrap_or(server.port()));
                Box::pin(async move {
                    match tokio::time::timeout(timeout, tcp::check(to)).await {
                        Ok(outcome) => outcome,
                        Err(_) => Outcome::Fail(Failure::Timeout),
                    }
                })
            }
            _ => {
                let prober = self.clone();
                Box::pin(async move {
                    if let CheckKind::Command { argv } = &check.kind {
                        // Its own timeout: the process group killed and
                        // the command reaped before the outcome.
                        return command::check(server, argv, timeout, &prober.lingering).await;
                    }
                    match tokio::time::timeout(timeout, prober.run(server, &check)).await {
                        Ok(outcome) => outcome,
                        Err(_) => Outcome::Fail(Failure::Timeout),
                    }
                })
            }
        }
    }
}

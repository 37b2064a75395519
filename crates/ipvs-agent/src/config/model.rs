//! The validated configuration: the agent's settings, its virtual services
//! (as the library's [`Service`]) and their real servers (as the library's
//! [`Destination`]), each with its health check.

use std::time::Duration;

use ipvsnl::{Destination, Service, ServiceKey};

/// A whole validated configuration file.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Config {
    /// Settings of the agent itself (`[agent]`).
    pub agent: AgentSettings,
    /// The virtual services (`[[service]]`), in the file's order.
    pub services: Vec<VirtualService>,
}

impl Config {
    /// The service of a key, if the file has it.
    pub fn service(&self, key: &ServiceKey) -> Option<&VirtualService> {
        self.services.iter().find(|s| s.service.key == *key)
    }
}

/// The `[agent]` table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct AgentSettings {
    /// How often the kernel's table is read back and repaired (`resync`,
    /// default 30 s).
    pub resync: Duration,
    /// The longest a removed real server drains before it is deleted anyway
    /// (`drain_max`, default 5 min): used for servers of services with
    /// `remove_after_drain` and for servers a reload removes.
    pub drain_max: Duration,
    /// At start, the longest a service waits for its servers' first check
    /// results before it is synced anyway (`start_wait`, default 3 s): a
    /// server still without a result then is written as the kernel holds
    /// it, or as its check's `start` says when the kernel does not.
    pub start_wait: Duration,
    /// A reload that would remove more than half of the running services
    /// is refused (`reload_guard`, default on): a file cut short while
    /// being written is valid TOML at every `[[service]]`. The new file's
    /// setting counts, so a file that removes them on purpose says
    /// `reload_guard = false`.
    pub reload_guard: bool,
}

impl Default for AgentSettings {
    fn default() -> Self {
        AgentSettings {
            resync: Duration::from_secs(30),
            drain_max: Duration::from_secs(300),
            start_wait: Duration::from_secs(3),
            reload_guard: true,
        }
    }
}

/// One virtual service and what keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct VirtualService {
    /// A name for logs (`name`), if given.
    pub name: Option<String>,
    /// The service as the kernel gets it: key, scheduler, flags, persistence.
    pub service: Service,
    /// Its real servers, in the file's order.
    pub servers: Vec<RealServer>,
    /// The server that takes the traffic when the healthy weight is below
    /// the quorum (`sorry_server`).
    pub sorry: Option<Destination>,
    /// The least healthy weight it runs on, and what happens below it.
    pub quorum: Quorum,
    /// A failing server is removed once drained (`remove_after_drain`), not
    /// only set to weight 0.
    pub remove_after_drain: bool,
}

/// A real server: the destination as configured (its weight is the weight
/// it has when healthy) and its check.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RealServer {
    /// Address, port, forwarding method, configured weight, thresholds.
    pub destination: Destination,
    /// Its health check (the server's own, else the service's), or none:
    /// then it is always taken as healthy.
    pub check: Option<HealthCheck>,
}

/// The least healthy weight a service runs on (`quorum`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Quorum {
    /// The least sum of the configured weights of the healthy servers
    /// (`min_weight`, default 1: at least one healthy server of weight > 0).
    pub min_weight: u64,
    /// What happens below it (`below`, default keep).
    pub below: Below,
}

impl Default for Quorum {
    fn default() -> Self {
        Quorum {
            min_weight: 1,
            below: Below::Keep,
        }
    }
}

/// What a service below its quorum becomes (when it has no sorry server,
/// which takes precedence).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Below {
    /// The service stays, with whatever servers are healthy (`"keep"`).
    Keep,
    /// The service is taken out of the kernel (`"withdraw"`): clients get
    /// no answer rather than too few servers.
    Withdraw,
}

/// A health check: what is probed, and how often its results move the
/// server between healthy and failing.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HealthCheck {
    /// What is probed.
    pub kind: CheckKind,
    /// Time between the starts of two checks (`interval`, default 2 s).
    pub interval: Duration,
    /// Longest a check may take before it counts as failed (`timeout`,
    /// default 1 s; at most the interval).
    pub timeout: Duration,
    /// Consecutive successes that bring a failing server back (`rise`,
    /// default 2).
    pub rise: u32,
    /// Consecutive failures that take a healthy server out (`fall`,
    /// default 3).
    pub fall: u32,
    /// Up to this much is added to each interval, spread per server
    /// (`jitter`, default 0; less than the interval).
    pub jitter: Duration,
    /// The state before the first result (`start`, default up).
    pub start: StartState,
}

/// A server's state before its first check result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StartState {
    /// Taken as healthy, provisionally: the first failure takes it out
    /// (`"up"`). An agent restart then changes no weight in the kernel.
    Up,
    /// Taken as failing until `rise` successes (`"down"`).
    Down,
}

/// What a check probes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CheckKind {
    /// A TCP connection that opens (`kind = "tcp"`).
    Tcp {
        /// The port probed (default: the server's).
        port: Option<u16>,
    },
    /// An HTTP or HTTPS GET (`kind = "http"` / `"https"`).
    Http(HttpCheck),
    /// A DNS query over UDP (`kind = "dns"`).
    Dns(DnsCheck),
    /// A command run with the server's address and port in its environment
    /// (`kind = "command"`); success is exit status 0 within the timeout.
    Command {
        /// Program and arguments (`command`), run without a shell.
        argv: Vec<String>,
    },
}

/// An HTTP or HTTPS GET.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpCheck {
    /// HTTPS (`kind = "https"`), and whether the certificate is verified
    /// (`tls_verify`, default true); `None` for plain HTTP.
    pub tls: Option<Tls>,
    /// The port probed (default: the server's).
    pub port: Option<u16>,
    /// The request's path (`path`, default `/`).
    pub path: String,
    /// The `Host` header (`host`, default the server's address).
    pub host: Option<String>,
    /// The status expected (`status`, default 200).
    pub status: u16,
    /// A string the body must contain (`body_contains`), if any.
    pub body_contains: Option<String>,
}

/// TLS settings of an HTTPS check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Tls {
    /// Whether the server's certificate is verified.
    pub verify: bool,
}

/// A DNS query over UDP.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DnsCheck {
    /// The port probed (default: the server's).
    pub port: Option<u16>,
    /// The name asked (`query`).
    pub name: String,
    /// The record type asked (`type`, default `A`), as its number.
    pub qtype: u16,
    /// The response code expected (`rcode`, default `NOERROR`), as its number.
    pub rcode: u8,
}

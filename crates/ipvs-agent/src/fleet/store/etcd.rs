//! A connection to etcd: the client, the endpoints it was given (errors
//! name them), and every request bounded by a timeout, so that an etcd
//! that does not answer is an error, not a hang.

use std::future::Future;
use std::time::Duration;

use etcd_client::{Client, ConnectOptions};

use crate::fleet::errors::FleetError;

/// How long one request may take by default.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

/// A client of an etcd cluster.
#[derive(Clone)]
pub struct Etcd {
    client: Client,
    endpoints: String,
    timeout: Duration,
}

impl std::fmt::Debug for Etcd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Etcd")
            .field("endpoints", &self.endpoints)
            .finish()
    }
}

impl Etcd {
    /// A client of the cluster at `endpoints` (`http://HOST:PORT`, as many
    /// as there are members). The connection is made by the first request;
    /// HTTP/2 keepalives find a dead connection within seconds.
    pub async fn connect(endpoints: &[String]) -> Result<Etcd, FleetError> {
        let joined = endpoints.join(",");
        let options = ConnectOptions::new()
            .with_connect_timeout(Duration::from_secs(2))
            .with_keep_alive(Duration::from_secs(5), Duration::from_secs(5))
            .with_keep_alive_while_idle(true);
        let connect = Client::connect(endpoints, Some(options));
        let client = match tokio::time::timeout(REQUEST_TIMEOUT, connect).await {
            Ok(Ok(c)) => c,
            Ok(Err(e)) => return Err(classify(&joined, "connect", e)),
            Err(_) => return Err(timed_out(&joined, "connect")),
        };
        Ok(Etcd {
            client,
            endpoints: joined,
            timeout: REQUEST_TIMEOUT,
        })
    }

    /// The endpoints, comma-separated.
    pub fn endpoints(&self) -> &str {
        &self.endpoints
    }

    /// The underlying client (cheap to clone).
    pub fn client(&self) -> Client {
        self.client.clone()
    }

    /// Runs one request, bounded by the timeout; its error named by `operation`.
    pub(crate) async fn call<T>(
        &self,
        operation: &'static str,
        request: impl Future<Output = Result<T, etcd_client::Error>>,
    ) -> Result<T, FleetError> {
        match tokio::time::timeout(self.timeout, request).await {
            Ok(Ok(t)) => Ok(t),
            Ok(Err(e)) => Err(classify(&self.endpoints, operation, e)),
            Err(_) => Err(timed_out(&self.endpoints, operation)),
        }
    }
}

fn timed_out(endpoints: &str, operation: &'static str) -> FleetError {
    FleetError::Unreachable {
        endpoints: endpoints.to_string(),
        operation,
        message: format!("no answer within {} s", REQUEST_TIMEOUT.as_secs()),
    }
}

/// An etcd client error as a [`FleetError`]: the transport's, and gRPC's
/// "unavailable" and "deadline exceeded", are unreachability.
pub(crate) fn classify(
    endpoints: &str,
    operation: &'static str,
    e: etcd_client::Error,
) -> FleetError {
    use etcd_client::Error as E;
    let unreachable = match &e {
        E::TransportError(_) | E::IoError(_) => true,
        // gRPC's codes: 2 unknown (a connection lost mid-call), 4 deadline
        // exceeded, 14 unavailable.
        E::GRpcStatus(s) => matches!(s.code() as i32, 2 | 4 | 14),
        _ => false,
    };
    let message = match &e {
        E::GRpcStatus(s) => s.message().to_string(),
        other => other.to_string(),
    };
    if unreachable {
        FleetError::Unreachable {
            endpoints: endpoints.to_string(),
            operation,
            message,
        }
    } else {
        FleetError::Etcd { operation, message }
    }
}

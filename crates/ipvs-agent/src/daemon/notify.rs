//! systemd's readiness protocol (`Type=notify`): one datagram to the
//! socket named by `$NOTIFY_SOCKET` for each state, `READY=1` once every
//! service is synced at start, `RELOADING=1` then `READY=1` around a reload, `STOPPING=1`
//! at exit. Without `$NOTIFY_SOCKET` nothing is sent.

use std::io;
use std::os::unix::net::UnixDatagram;
use std::path::PathBuf;

/// Where the service manager listens.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Address {
    /// A socket file.
    Path(PathBuf),
    /// A Linux abstract socket (`@NAME` in the variable).
    Abstract(Vec<u8>),
}

/// Sends state changes to the service manager.
///
/// ```
/// use ipvs_agent::daemon::Notifier;
/// assert!(Notifier::from_value("").is_none());
/// assert!(Notifier::from_value("/run/systemd/notify").is_some());
/// assert!(Notifier::from_value("@/org/freedesktop/systemd1/notify/123").is_some());
/// assert!(Notifier::from_value("relative").is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notifier {
    address: Address,
}

impl Notifier {
    /// The notifier `$NOTIFY_SOCKET` names, if it is set.
    pub fn from_env() -> Option<Self> {
        Notifier::from_value(&std::env::var("NOTIFY_SOCKET").ok()?)
    }

    /// The notifier of a `$NOTIFY_SOCKET` value: an absolute path or
    /// `@NAME` (abstract); anything else is none.
    pub fn from_value(value: &str) -> Option<Self> {
        let address = if let Some(name) = value.strip_prefix('@') {
            Address::Abstract(name.as_bytes().to_vec())
        } else if value.starts_with('/') {
            Address::Path(PathBuf::from(value))
        } else {
            return None;
        };
        Some(Notifier { address })
    }

    /// Sends `state` (`READY=1`, ...; lines of `KEY=VALUE`).
    pub fn send(&self, state: &str) -> io::Result<()> {
        let socket = UnixDatagram::unbound()?;
        match &self.address {
            Address::Path(p) => socket.send_to(state.as_bytes(), p)?,
            Address::Abstract(name) => {
                use std::os::linux::net::SocketAddrExt;
                let addr = std::os::unix::net::SocketAddr::from_abstract_name(name)?;
                socket.send_to_addr(state.as_bytes(), &addr)?
            }
        };
        Ok(())
    }

    /// [`Notifier::send`], a failure logged (the service manager may be
    /// gone; the agent goes on).
    pub(crate) fn tell(&self, state: &str) {
        if let Err(e) = self.send(state) {
            tracing::warn!(state, error = %e, "cannot notify the service manager");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_reach_a_socket_file_and_an_abstract_socket() {
        let dir = std::env::temp_dir().join(format!("ipvs-agent-notify-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("notify");
        let _ = std::fs::remove_file(&path);
        let listener = UnixDatagram::bind(&path).unwrap();
        let n = Notifier::from_value(path.to_str().unwrap()).unwrap();
        n.send("READY=1").unwrap();
        let mut buf = [0u8; 64];
        let len = listener.recv(&mut buf).unwrap();
        assert_eq!(&buf[..len], b"READY=1");

        use std::os::linux::net::SocketAddrExt;
        let name = format!("ipvs-agent-test-{}", std::process::id());
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        let abstract_listener = UnixDatagram::bind_addr(&addr).unwrap();
        Notifier::from_value(&format!("@{name}"))
            .unwrap()
            .send("STOPPING=1")
            .unwrap();
        let len = abstract_listener.recv(&mut buf).unwrap();
        assert_eq!(&buf[..len], b"STOPPING=1");
        let _ = std::fs::remove_file(&path);
    }
}

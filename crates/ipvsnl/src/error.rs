//! The one error type of the crate.

use std::io;
use std::path::PathBuf;
use std::time::Duration;

use crate::RequestKind;

/// Everything that can go wrong, with the errno kept where the kernel gave
/// one and the failed operation named in words.
///
/// ```
/// use ipvsnl::{Error, RequestKind};
/// let e = Error::kernel(RequestKind::AddService, "TCP 10.0.0.1:80", libc::EEXIST);
/// assert_eq!(e.errno(), Some(libc::EEXIST));
/// assert!(e.is_already_exists());
/// assert_eq!(
///     e.to_string(),
///     "add service TCP 10.0.0.1:80: service already exists (EEXIST)"
/// );
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The kernel refused a request.
    #[error("{kind} {}: {} ({})", shown_target(*kind, *errno, target), kernel_reason(*kind, *errno, target), errno_name(*errno))]
    Kernel {
        /// What was asked.
        kind: RequestKind,
        /// What it was asked of (a service, a destination, a daemon...).
        target: String,
        /// The positive errno.
        errno: i32,
    },
    /// The IPVS generic-netlink family is not registered in this kernel.
    #[error(
        "IPVS is not available in this kernel: ip_vs module not loaded (no \"IPVS\" generic netlink family; try `modprobe ip_vs`)"
    )]
    Unavailable,
    /// Input the kernel would refuse or misread; nothing was sent.
    #[error("invalid {what}: {why}")]
    InvalidInput {
        /// What was wrong.
        what: &'static str,
        /// Why.
        why: String,
    },
    /// The socket failed.
    #[error("netlink socket error during {kind}: {source}")]
    Io {
        /// What was being done.
        kind: RequestKind,
        /// The system error.
        #[source]
        source: io::Error,
    },
    /// The kernel's reply could not be understood.
    #[error("malformed reply from the kernel to {kind}: {detail}")]
    Decode {
        /// What was being done.
        kind: RequestKind,
        /// What was wrong with the reply.
        detail: String,
    },
    /// No reply came in time.
    #[error("no reply from the kernel to {kind} within {timeout:?}")]
    Timeout {
        /// What was being done.
        kind: RequestKind,
        /// The receive timeout in force.
        timeout: Duration,
    },
    /// A network namespace could not be entered.
    #[error("cannot enter network namespace {}: {source}", path.display())]
    Namespace {
        /// The namespace file.
        path: PathBuf,
        /// The system error.
        #[source]
        source: io::Error,
    },
}

impl Error {
    /// A kernel refusal.
    pub fn kernel(kind: RequestKind, target: impl Into<String>, errno: i32) -> Self {
        Error::Kernel {
            kind,
            target: target.into(),
            errno: errno.abs(),
        }
    }

    /// Bad input, refused before anything was sent.
    pub fn invalid(what: &'static str, why: impl Into<String>) -> Self {
        Error::InvalidInput {
            what,
            why: why.into(),
        }
    }

    /// The errno behind this error, if there is one.
    pub fn errno(&self) -> Option<i32> {
        match self {
            Error::Kernel { errno, .. } => Some(*errno),
            Error::Io { source, .. } | Error::Namespace { source, .. } => source.raw_os_error(),
            Error::Unavailable => Some(libc::ENOENT),
            Error::Timeout { .. } => Some(libc::ETIMEDOUT),
            _ => None,
        }
    }

    /// IPVS is not there (family not registered).
    pub fn is_unavailable(&self) -> bool {
        matches!(self, Error::Unavailable)
    }

    /// The caller lacks CAP_NET_ADMIN in the initial user namespace.
    pub fn is_permission_denied(&self) -> bool {
        self.errno() == Some(libc::EPERM) && !matches!(self, Error::Unavailable)
    }

    /// What was added exists already.
    pub fn is_already_exists(&self) -> bool {
        matches!(self, Error::Kernel { errno, .. } if *errno == libc::EEXIST)
    }

    /// The service, destination or daemon named does not exist.
    pub fn is_not_found(&self) -> bool {
        match self {
            Error::Kernel { kind, errno, .. } => {
                *errno == libc::ESRCH
                    || (*errno == libc::ENOENT
                        && matches!(
                            kind,
                            RequestKind::EditDestination | RequestKind::DeleteDestination
                        ))
            }
            _ => false,
        }
    }

    /// Bad input refused locally.
    pub fn is_invalid_input(&self) -> bool {
        matches!(self, Error::InvalidInput { .. })
    }
}

/// The target as shown: a service add or edit carries its scheduler and
/// engine names for the "not found" hint, and only that error shows them.
fn shown_target(kind: RequestKind, errno: i32, target: &str) -> &str {
    match kind {
        RequestKind::AddService | RequestKind::EditService if errno != libc::ENOENT => {
            target.split(" scheduler ").next().unwrap_or(target)
        }
        _ => target,
    }
}

/// The human reason for a kernel errno, as precise as the operation allows.
fn kernel_reason(kind: RequestKind, errno: i32, target: &str) -> String {
    use RequestKind as K;
    let service_op = matches!(
        kind,
        K::AddService | K::EditService | K::DeleteService | K::GetService | K::Zero
    );
    let dest_op = matches!(
        kind,
        K::AddDestination | K::EditDestination | K::DeleteDestination | K::ListDestinations
    );
    match errno {
        libc::EPERM => "permission denied: needs CAP_NET_ADMIN in the initial user namespace".into(),
        libc::EEXIST if kind == K::AddService => "service already exists".into(),
        libc::EEXIST if kind == K::AddDestination => "destination already exists".into(),
        libc::EEXIST if kind == K::StartDaemon => "a sync daemon already runs in that role".into(),
        libc::ESRCH if kind == K::StopDaemon => "no sync daemon runs in that role".into(),
        libc::ESRCH if service_op || dest_op => "no such service".into(),
        libc::ENOENT if matches!(kind, K::AddService | K::EditService) => {
            scheduler_hint(target)
        }
        libc::ENOENT if matches!(kind, K::EditDestination | K::DeleteDestination) => {
            "no such destination".into()
        }
        libc::ERANGE if dest_op => {
            "weight out of range, or lower threshold above upper threshold".into()
        }
        libc::EINVAL if kind == K::AddDestination => {
            "invalid destination: address not unicast (is lo up in this namespace?), family differs from the service's without tunnelling, or GUE without a port".into()
        }
        libc::EINVAL if dest_op => {
            "invalid destination: family differs from the service's without tunnelling, or GUE without a port".into()
        }
        libc::EINVAL if kind == K::StartDaemon => {
            "invalid sync daemon settings: bad multicast group, or a destination of another address family exists".into()
        }
        libc::EINVAL => "invalid request (a malformed attribute, or a module of another version)".into(),
        libc::ENODEV => "no such network interface".into(),
        libc::EAFNOSUPPORT => "address family not supported (is IPv6 enabled?)".into(),
        libc::EOPNOTSUPP => "operation not supported by this kernel".into(),
        libc::ENOMEM => "the kernel is out of memory".into(),
        libc::ENOPROTOOPT => "protocol not available".into(),
        _ => io::Error::from_raw_os_error(errno).to_string(),
    }
}

/// ENOENT on a service add or edit: the scheduler (or engine) is missing.
/// `target` ends with ` scheduler NAME` (and ` pe NAME`) for these requests.
fn scheduler_hint(target: &str) -> String {
    let word_after = |key: &str| {
        target
            .split(key)
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .map(str::to_owned)
    };
    match (word_after(" scheduler "), word_after(" pe ")) {
        (Some(s), Some(pe)) => format!(
            "scheduler {s} or persistence engine {pe} not found: are ip_vs_{s} and ip_vs_pe_{pe} loaded?"
        ),
        (Some(s), None) => format!("scheduler not found: is ip_vs_{s} loaded?"),
        _ => "scheduler or persistence engine not found".into(),
    }
}

/// The symbolic name of an errno.
fn errno_name(errno: i32) -> String {
    let name = match errno {
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::ESRCH => "ESRCH",
        libc::EEXIST => "EEXIST",
        libc::EINVAL => "EINVAL",
        libc::ERANGE => "ERANGE",
        libc::ENODEV => "ENODEV",
        libc::ENOMEM => "ENOMEM",
        libc::EBUSY => "EBUSY",
        libc::ENOBUFS => "ENOBUFS",
        libc::EAFNOSUPPORT => "EAFNOSUPPORT",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::ENOPROTOOPT => "ENOPROTOOPT",
        libc::EMSGSIZE => "EMSGSIZE",
        libc::EFAULT => "EFAULT",
        _ => return format!("errno {errno}"),
    };
    name.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_say_what_failed_per_operation() {
        let e = Error::kernel(
            RequestKind::AddService,
            "TCP 10.0.0.1:80 scheduler foo",
            -libc::ENOENT,
        );
        assert_eq!(e.errno(), Some(libc::ENOENT));
        assert!(e.to_string().contains("is ip_vs_foo loaded?"), "{e}");
        let e = Error::kernel(
            RequestKind::AddService,
            "TCP 10.0.0.1:80 scheduler rr",
            libc::EEXIST,
        );
        assert_eq!(
            e.to_string(),
            "add service TCP 10.0.0.1:80: service already exists (EEXIST)"
        );
        let e = Error::kernel(RequestKind::DeleteDestination, "x", libc::ENOENT);
        assert!(e.to_string().contains("no such destination"), "{e}");
        assert!(e.is_not_found());
        let e = Error::kernel(RequestKind::ListServices, "", libc::EPERM);
        assert!(e.to_string().contains("CAP_NET_ADMIN"), "{e}");
        assert!(e.is_permission_denied());
        let e = Error::kernel(RequestKind::AddDestination, "d", libc::ERANGE);
        assert!(e.to_string().contains("threshold"), "{e}");
        let e = Error::kernel(RequestKind::Flush, "", 9999);
        assert!(e.to_string().contains("errno 9999"), "{e}");
        assert!(Error::Unavailable
            .to_string()
            .contains("ip_vs module not loaded"));
        assert!(!Error::Unavailable.is_permission_denied());
    }
}

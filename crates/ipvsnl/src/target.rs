//! What a failed call was about, structured: the request's kind and the
//! object it named, so an error can be matched on without reading its
//! text.

use std::fmt;
use std::net::{IpAddr, SocketAddr};

use crate::{DaemonRole, RequestKind, ServiceKey};

/// The object a request named.
///
/// ```
/// use ipvsnl::{Object, ServiceKey};
/// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
/// let o = Object::Destination { service: key, addr: "10.0.1.1".parse().unwrap(), port: 8080 };
/// assert_eq!(o.service(), Some(&key));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Object {
    /// No one object: the whole table (flush, zero all, a listing of
    /// every service), the timeouts, the info.
    Table,
    /// A service.
    Service(ServiceKey),
    /// A destination of a service.
    Destination {
        /// Its service.
        service: ServiceKey,
        /// Its address.
        addr: IpAddr,
        /// Its port.
        port: u16,
    },
    /// The sync daemon of a role (with the interface it was to run on,
    /// when starting one).
    Daemon {
        /// Master or backup.
        role: DaemonRole,
        /// The interface, for a start.
        interface: Option<String>,
    },
    /// The IPVS generic-netlink family (its lookup).
    Family,
}

impl Object {
    /// The service this object is or belongs to.
    pub fn service(&self) -> Option<&ServiceKey> {
        match self {
            Object::Service(k) | Object::Destination { service: k, .. } => Some(k),
            _ => None,
        }
    }
}

/// What a failed call was: the kind of request and its object, and for a
/// service add or edit the scheduler and persistence engine it named (the
/// kernel answers `ENOENT` when their module is missing).
///
/// ```
/// use ipvsnl::{Object, RequestKind, ServiceKey, Target};
/// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
/// let t = Target::new(RequestKind::DeleteService, Object::Service(key));
/// assert_eq!(t.to_string(), "delete service TCP 10.0.0.1:80");
/// assert_eq!(t.object.service(), Some(&key));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Target {
    /// What was asked.
    pub kind: RequestKind,
    /// Of what.
    pub object: Object,
    /// For a service add or edit: its scheduler's name.
    pub scheduler: Option<String>,
    /// For a service add or edit: its persistence engine's name.
    pub engine: Option<String>,
}

impl Target {
    /// A request of `kind` about `object`.
    pub fn new(kind: RequestKind, object: Object) -> Self {
        Target {
            kind,
            object,
            scheduler: None,
            engine: None,
        }
    }

    /// The same, naming the scheduler and engine of a service add or edit.
    #[must_use]
    pub fn with_modules(mut self, scheduler: &str, engine: Option<&str>) -> Self {
        self.scheduler = Some(scheduler.to_owned());
        self.engine = engine.map(str::to_owned);
        self
    }

    /// The object in words, as error messages show it (empty for
    /// [`Object::Table`]); a destination is `to` its service when added,
    /// `from` it when deleted.
    pub fn object_text(&self) -> String {
        match &self.object {
            Object::Destination {
                service,
                addr,
                port,
            } => {
                let word = match self.kind {
                    RequestKind::AddDestination => "to",
                    RequestKind::DeleteDestination => "from",
                    _ => "of",
                };
                format!("{} {word} {service}", SocketAddr::new(*addr, *port))
            }
            other => other.to_string(),
        }
    }
}

impl fmt::Display for Object {
    /// The object in words: nothing for [`Object::Table`], the family's
    /// name, a service key, `10.0.1.1:8080 of TCP 10.0.0.1:80`,
    /// `master on eth0`.
    ///
    /// ```
    /// use ipvsnl::{DaemonRole, Object};
    /// let o = Object::Daemon { role: DaemonRole::Backup, interface: Some("eth1".into()) };
    /// assert_eq!(o.to_string(), "backup on eth1");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Object::Table => Ok(()),
            Object::Family => f.write_str(ipvsnl_wire::IPVS_GENL_NAME),
            Object::Service(k) => write!(f, "{k}"),
            Object::Destination {
                service,
                addr,
                port,
            } => write!(f, "{} of {service}", SocketAddr::new(*addr, *port)),
            Object::Daemon { role, interface } => match interface {
                Some(i) => write!(f, "{role} on {i}"),
                None => write!(f, "{role}"),
            },
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let object = self.object_text();
        if object.is_empty() {
            write!(f, "{}", self.kind)
        } else {
            write!(f, "{} {object}", self.kind)
        }
    }
}

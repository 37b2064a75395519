//! What a failed call was about, structured: the request's kind and the
//! object it named, so an error can be matched on without reading its
//! text.

use std::fmt;
use std::net::IpAddr;

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
    pub fn with_modules(mut self, scheduler: &str, engine: Option<&str>) -> Self {
        self.scheduler = Some(scheduler.to_owned());
        self.engine = engine.map(str::to_owned);
        self
    }

    /// The object in words, as error messages show it (empty for
    /// [`Object::Table`]).
    pub fn object_text(&self) -> String {
        match &self.object {
            Object::Table => String::new(),
            Object::Family => ipvsnl_wire::IPVS_GENL_NAME.to_owned(),
            Object::Service(k) => k.to_string(),
            Object::Destination {
                service,
                addr,
                port,
            } => {
                let dest = match addr {
                    IpAddr::V4(a) => format!("{a}:{port}"),
                    IpAddr::V6(a) => format!("[{a}]:{port}"),
                };
                let word = match self.kind {
                    RequestKind::AddDestination => "to",
                    RequestKind::DeleteDestination => "from",
                    _ => "of",
                };
                format!("{dest} {word} {service}")
            }
            Object::Daemon { role, interface } => match interface {
                Some(i) => format!("{role:?} on {i}"),
                None => format!("{role:?}"),
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

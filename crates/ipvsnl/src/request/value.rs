//! The request type: what it changes, of what, and the checks before it
//! is sent.

use std::fmt;
use std::net::IpAddr;

use ipvsnl_wire::IpvsCommand;

use super::kind::RequestKind;
use crate::{
    DaemonRole, Destination, Error, Object, Service, ServiceKey, SyncDaemon, Target, Timeouts,
};

/// One change to the kernel's IPVS state, made with its constructor
/// ([`Request::add_service`], [`Request::add_destination`], ...).
///
/// ```
/// use ipvsnl::{Destination, Request, Service, ServiceKey};
/// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
/// let ops = vec![
///     Request::add_service(Service::new(key)),
///     Request::add_destination(key, Destination::new("10.0.1.1".parse().unwrap(), 80)),
/// ];
/// assert!(ops.iter().all(|r| r.validate().is_ok()));
/// assert_eq!(ops[1].to_string(), "add destination 10.0.1.1:80 to TCP 10.0.0.1:80");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Request {
    /// Add a service. Boxed, like the edit: a service is larger than any
    /// other request's payload, and unboxed it made every request of a
    /// plan 96 bytes instead of 72 (a cold create of 100,000 services x 10
    /// destinations: 177 bytes of desired state plus plan per destination
    /// before, 158 after; `benches/SCALE.md`).
    AddService(Box<Service>),
    /// Replace a service's settings (scheduler, flags, persistence).
    EditService(Box<Service>),
    /// Delete a service and its destinations.
    DeleteService(ServiceKey),
    /// Add a destination to a service.
    AddDestination(ServiceKey, Destination),
    /// Replace a destination's settings.
    EditDestination(ServiceKey, Destination),
    /// Delete a destination (by address and port).
    DeleteDestination(ServiceKey, IpAddr, u16),
    /// Zero the counters of one service, or of everything.
    Zero(Option<ServiceKey>),
    /// Delete every service.
    Flush,
    /// Set the connection timeouts (0 leaves one unchanged).
    SetTimeouts(Timeouts),
    /// Start a sync daemon.
    StartDaemon(SyncDaemon),
    /// Stop the sync daemon of a role.
    StopDaemon(DaemonRole),
}

impl Request {
    /// The service this request is about (`None` for one about no single
    /// service: a flush, a zero of everything, timeouts, the daemon).
    ///
    /// ```
    /// use ipvsnl::{Request, ServiceKey};
    /// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
    /// assert_eq!(Request::DeleteService(key).service_key(), Some(key));
    /// assert_eq!(Request::Flush.service_key(), None);
    /// ```
    pub fn service_key(&self) -> Option<ServiceKey> {
        match self {
            Request::AddService(s) | Request::EditService(s) => Some(s.key),
            Request::DeleteService(k)
            | Request::AddDestination(k, _)
            | Request::EditDestination(k, _)
            | Request::DeleteDestination(k, _, _) => Some(*k),
            _ => None,
        }
    }

    /// The kind of request.
    pub fn kind(&self) -> RequestKind {
        match self {
            Request::AddService(_) => RequestKind::AddService,
            Request::EditService(_) => RequestKind::EditService,
            Request::DeleteService(_) => RequestKind::DeleteService,
            Request::AddDestination(..) => RequestKind::AddDestination,
            Request::EditDestination(..) => RequestKind::EditDestination,
            Request::DeleteDestination(..) => RequestKind::DeleteDestination,
            Request::Zero(_) => RequestKind::Zero,
            Request::Flush => RequestKind::Flush,
            Request::SetTimeouts(_) => RequestKind::SetTimeouts,
            Request::StartDaemon(_) => RequestKind::StartDaemon,
            Request::StopDaemon(_) => RequestKind::StopDaemon,
        }
    }

    /// What the request is, of what: the target its errors name.
    pub fn target(&self) -> Target {
        let kind = self.kind();
        let dest = |service: &ServiceKey, addr: IpAddr, port: u16| Object::Destination {
            service: *service,
            addr,
            port,
        };
        match self {
            Request::AddService(s) | Request::EditService(s) => {
                Target::new(kind, Object::Service(s.key))
                    .with_modules(&s.scheduler.to_string(), s.persistence_engine.as_deref())
            }
            Request::DeleteService(k) | Request::Zero(Some(k)) => {
                Target::new(kind, Object::Service(*k))
            }
            Request::AddDestination(k, d) | Request::EditDestination(k, d) => {
                Target::new(kind, dest(k, d.addr, d.port))
            }
            Request::DeleteDestination(k, a, p) => Target::new(kind, dest(k, *a, *p)),
            Request::Zero(None) | Request::Flush | Request::SetTimeouts(_) => {
                Target::new(kind, Object::Table)
            }
            Request::StartDaemon(d) => Target::new(
                kind,
                Object::Daemon {
                    role: d.role,
                    interface: Some(d.interface.clone()),
                },
            ),
            Request::StopDaemon(r) => Target::new(
                kind,
                Object::Daemon {
                    role: *r,
                    interface: None,
                },
            ),
        }
    }

    /// Checks the request as the kernel would, before anything is sent.
    pub fn validate(&self) -> Result<(), Error> {
        Ok(match self {
            Request::AddService(s) | Request::EditService(s) => s.validate(),
            Request::DeleteService(k) | Request::Zero(Some(k)) => k.validate(),
            Request::AddDestination(k, d) | Request::EditDestination(k, d) => {
                k.validate()?;
                d.validate_for(k)
            }
            Request::DeleteDestination(k, _, _) => k.validate(),
            Request::Zero(None) | Request::Flush | Request::StopDaemon(_) => Ok(()),
            // The kernel's bound is INT_MAX / HZ seconds, and HZ is the
            // kernel's own: it is the only one that can check that. What
            // is above INT_MAX it reads as a negative int and refuses
            // whatever its HZ: that much is checked here.
            Request::SetTimeouts(t) => t.validate(),
            Request::StartDaemon(d) => d.validate(),
        }?)
    }

    /// The IPVS command of this request.
    pub(super) fn command(&self) -> IpvsCommand {
        use IpvsCommand as C;
        match self {
            Request::AddService(_) => C::NewService,
            Request::EditService(_) => C::SetService,
            Request::DeleteService(_) => C::DelService,
            Request::AddDestination(..) => C::NewDest,
            Request::EditDestination(..) => C::SetDest,
            Request::DeleteDestination(..) => C::DelDest,
            Request::Zero(_) => C::Zero,
            Request::Flush => C::Flush,
            Request::SetTimeouts(_) => C::SetConfig,
            Request::StartDaemon(_) => C::NewDaemon,
            Request::StopDaemon(_) => C::DelDaemon,
        }
    }
}

impl fmt::Display for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.target(), f)
    }
}

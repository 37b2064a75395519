//! The constructors of [`Request`]: one per kind of change, so a request
//! is made without spelling its representation (the boxed services).

use std::net::IpAddr;

use super::value::Request;
use crate::{DaemonRole, Destination, Service, ServiceKey, SyncDaemon, Timeouts};

impl Request {
    /// Add `service`.
    ///
    /// ```
    /// use ipvsnl::{Request, RequestKind, Service, ServiceKey};
    /// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
    /// let r = Request::add_service(Service::new(key));
    /// assert_eq!(r.kind(), RequestKind::AddService);
    /// assert_eq!(r.service_key(), Some(key));
    /// ```
    pub fn add_service(service: Service) -> Self {
        Request::AddService(Box::new(service))
    }

    /// Replace the settings (scheduler, flags, persistence) of the service
    /// of `service`'s key with `service`'s.
    ///
    /// ```
    /// use ipvsnl::{Request, Scheduler, Service, ServiceKey};
    /// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
    /// let r = Request::edit_service(Service::new(key).with_scheduler(Scheduler::WeightedRoundRobin));
    /// assert_eq!(r.to_string(), "edit service TCP 10.0.0.1:80");
    /// ```
    pub fn edit_service(service: Service) -> Self {
        Request::EditService(Box::new(service))
    }

    /// Delete the service of `key` and its destinations.
    ///
    /// ```
    /// use ipvsnl::{Request, ServiceKey};
    /// let key = ServiceKey::udp("10.0.0.1".parse().unwrap(), 53);
    /// assert_eq!(Request::delete_service(key), Request::DeleteService(key));
    /// ```
    pub fn delete_service(key: ServiceKey) -> Self {
        Request::DeleteService(key)
    }

    /// Add `destination` to the service of `key`.
    ///
    /// ```
    /// use ipvsnl::{Destination, Request, ServiceKey};
    /// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
    /// let r = Request::add_destination(key, Destination::new("10.0.1.1".parse().unwrap(), 80));
    /// assert_eq!(r.to_string(), "add destination 10.0.1.1:80 to TCP 10.0.0.1:80");
    /// ```
    pub fn add_destination(key: ServiceKey, destination: Destination) -> Self {
        Request::AddDestination(key, destination)
    }

    /// Replace the settings of the destination of `destination`'s address
    /// and port, of the service of `key`, with `destination`'s.
    ///
    /// ```
    /// use ipvsnl::{Destination, Request, RequestKind, ServiceKey};
    /// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
    /// let d = Destination::new("10.0.1.1".parse().unwrap(), 80).with_weight(5);
    /// assert_eq!(Request::edit_destination(key, d).kind(), RequestKind::EditDestination);
    /// ```
    pub fn edit_destination(key: ServiceKey, destination: Destination) -> Self {
        Request::EditDestination(key, destination)
    }

    /// Delete the destination `addr`:`port` of the service of `key`.
    ///
    /// ```
    /// use ipvsnl::{Request, ServiceKey};
    /// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
    /// let r = Request::delete_destination(key, "10.0.1.1".parse().unwrap(), 80);
    /// assert_eq!(r.to_string(), "delete destination 10.0.1.1:80 from TCP 10.0.0.1:80");
    /// ```
    pub fn delete_destination(key: ServiceKey, addr: IpAddr, port: u16) -> Self {
        Request::DeleteDestination(key, addr, port)
    }

    /// Zero the counters of the service of `key`.
    ///
    /// ```
    /// use ipvsnl::{Request, ServiceKey};
    /// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
    /// assert_eq!(Request::zero_service(key).to_string(), "zero counters TCP 10.0.0.1:80");
    /// ```
    pub fn zero_service(key: ServiceKey) -> Self {
        Request::Zero(Some(key))
    }

    /// Zero every counter: the services', the destinations' and the
    /// totals.
    ///
    /// ```
    /// use ipvsnl::Request;
    /// assert_eq!(Request::zero_all().service_key(), None);
    /// ```
    pub fn zero_all() -> Self {
        Request::Zero(None)
    }

    /// Delete every service.
    ///
    /// ```
    /// use ipvsnl::Request;
    /// assert_eq!(Request::flush().to_string(), "flush");
    /// ```
    pub fn flush() -> Self {
        Request::Flush
    }

    /// Set the connection timeouts (0 leaves one unchanged).
    ///
    /// ```
    /// use ipvsnl::{Request, Timeouts};
    /// assert!(Request::set_timeouts(Timeouts::new(900, 0, 0)).validate().is_ok());
    /// ```
    pub fn set_timeouts(timeouts: Timeouts) -> Self {
        Request::SetTimeouts(timeouts)
    }

    /// Start the sync daemon `daemon`.
    ///
    /// ```
    /// use ipvsnl::{DaemonRole, Request, RequestKind, SyncDaemon};
    /// let r = Request::start_daemon(SyncDaemon::new(DaemonRole::Master, "eth0"));
    /// assert_eq!(r.kind(), RequestKind::StartDaemon);
    /// ```
    pub fn start_daemon(daemon: SyncDaemon) -> Self {
        Request::StartDaemon(daemon)
    }

    /// Stop the sync daemon of `role`.
    ///
    /// ```
    /// use ipvsnl::{DaemonRole, Request, RequestKind};
    /// assert_eq!(Request::stop_daemon(DaemonRole::Backup).kind(), RequestKind::StopDaemon);
    /// ```
    pub fn stop_daemon(role: DaemonRole) -> Self {
        Request::StopDaemon(role)
    }
}

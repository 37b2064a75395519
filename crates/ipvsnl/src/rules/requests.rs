//! Requests as rules: the printer of `ipvsadm -S` lines applied to every
//! command a rules text can hold (`-A -E -D -a -e -d -C -Z`).

use super::save::{destination_line, service_line, service_rule_label};
use super::style::{addr_port, lookup_protocol};
use super::Names;
use crate::Request;

/// One request as one ipvsadm rule (no newline), printed exactly as
/// `ipvsadm -S` prints a service or destination: `-E` and `-e` are `-A`
/// and `-a` with the command changed, `-D`, `-d` and `-Z` name the service
/// the same way. Connection thresholds are not part of a rule (ipvsadm's
/// save leaves them out), so they are not shown.
///
/// A request that has no rule form (timeouts, sync daemons, family
/// resolution) is shown as a `#` comment naming it.
///
/// ```
/// use ipvsnl::rules::{request_rule, Numeric};
/// use ipvsnl::{AddressFamily, Destination, Request, ServiceKey};
/// let key = ServiceKey::fwmark(3_000_000_000, AddressFamily::Inet);
/// let d = Destination::new("10.0.1.1".parse().unwrap(), 0).with_weight(2);
/// assert_eq!(
///     request_rule(&Request::EditDestination(key, d), &Numeric),
///     "-e -f -1294967296 -r 10.0.1.1:0 -m -w 2"
/// );
/// assert_eq!(request_rule(&Request::DeleteService(key), &Numeric), "-D -f -1294967296");
/// assert_eq!(request_rule(&Request::Flush, &Numeric), "-C");
/// ```
pub fn request_rule(request: &Request, names: &dyn Names) -> String {
    match request {
        Request::AddService(s) => service_line("-A", s, names),
        Request::EditService(s) => service_line("-E", s, names),
        Request::DeleteService(k) => format!("-D {}", service_rule_label(k, names)),
        Request::AddDestination(k, d) => destination_line("-a", k, d, names),
        Request::EditDestination(k, d) => destination_line("-e", k, d, names),
        Request::DeleteDestination(k, addr, port) => format!(
            "-d {} -r {}",
            service_rule_label(k, names),
            addr_port(addr, *port, lookup_protocol(k), names)
        ),
        Request::Flush => "-C".to_owned(),
        Request::Zero(None) => "-Z".to_owned(),
        Request::Zero(Some(k)) => format!("-Z {}", service_rule_label(k, names)),
        other => format!("# {other}"),
    }
}

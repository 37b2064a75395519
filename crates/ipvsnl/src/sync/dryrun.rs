//! A plan shown as ipvsadm rules (the `-R` input format), printed by the
//! rules printer of `ipvsadm -S` ([`crate::rules::request_rule`]).

use crate::rules::{request_rule, Numeric};
use crate::Request;

/// The requests as ipvsadm rules, one a line. Requests that have no
/// ipvsadm rule form (none the planner makes) are shown as comments.
pub(crate) fn rules(requests: &[Request]) -> String {
    let mut out = String::with_capacity(requests.len() * 48);
    for r in requests {
        out.push_str(&request_rule(r, &Numeric));
        out.push('\n');
    }
    out
}

/// One request as one ipvsadm rule (no newline), numeric, exactly as
/// `ipvsadm -S -n` prints it: [`crate::rules::request_rule`] with
/// [`Numeric`] names.
///
/// ```
/// use ipvsnl::sync::rule;
/// use ipvsnl::{Destination, Request, ServiceKey};
/// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
/// let r = Request::AddDestination(key, Destination::new("172.16.0.1".parse().unwrap(), 80));
/// assert_eq!(rule(&r), "-a -t 10.0.0.1:80 -r 172.16.0.1:80 -m -w 1");
/// ```
pub fn rule(request: &Request) -> String {
    request_rule(request, &Numeric)
}

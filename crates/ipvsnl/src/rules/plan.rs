//! A sync plan shown as ipvsadm rules (the `-R` input format): the dry run
//! of [`Syncer::plan`](crate::sync::Syncer::plan), printed by the printer of
//! `ipvsadm -S -n` ([`request_rule`] with [`Numeric`] names).
//!
//! It lives here, not in `sync/`, so that the sync engine does not depend
//! on the rules format (the rules format reads and writes
//! [`Table`](crate::sync::Table)s).

use std::fmt;

use super::requests::request_rule;
use super::Numeric;
use crate::sync::Plan;

impl Plan {
    /// The plan as ipvsadm rules (`-A`, `-E`, `-D`, `-a`, `-e`, `-d`), one a
    /// line: a dry run that `ipvsadm -R` would also apply. Each request is
    /// printed by the printer of `ipvsadm -S -n` ([`request_rule`]), so a
    /// line is byte for byte what a save of the same service or destination
    /// shows; like a save, it leaves connection thresholds out. Requests
    /// that have no ipvsadm rule form (none the planner makes) are shown as
    /// comments.
    ///
    /// ```
    /// use ipvsnl::sync::{plan, DrainLedger, PlanOptions, Table};
    /// use ipvsnl::{Destination, Service, ServiceKey};
    /// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
    /// let mut want = Table::new();
    /// want.insert(Service::new(key), [Destination::new("172.16.0.1".parse().unwrap(), 80)]);
    /// let p = plan(&Table::new(), &want, &PlanOptions::default(), &DrainLedger::new(), std::time::Instant::now());
    /// assert_eq!(p.to_rules(), "-A -t 10.0.0.1:80 -s wlc\n-a -t 10.0.0.1:80 -r 172.16.0.1:80 -m -w 1\n");
    /// assert_eq!(p.to_string(), p.to_rules());
    /// ```
    pub fn to_rules(&self) -> String {
        // Each request made as it is printed: none kept (`Plan::iter`).
        let mut out = String::with_capacity(self.len() * 48);
        for r in self {
            out.push_str(&request_rule(&r, &Numeric));
            out.push('\n');
        }
        out
    }
}

/// The plan as ipvsadm rules ([`Plan::to_rules`]).
impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_rules())
    }
}

//! When a drain begins: the ledger records a destination's drain only once
//! its weight is known to be 0 in the kernel, so that the time it has
//! drained is never counted from an edit that did not go through.

use crate::sync::ledger::DrainLedger;
use crate::Request;

/// The drains of a plan (`planned`, from [`Plan::draining`]) that have
/// begun once its `requests` went out (`done(i)`: request `i` is known
/// applied): those found
/// at weight 0 already (the plan sent them nothing), and those whose
/// weight-0 edit was done. A drain whose edit failed, was not sent, or
/// whose outcome is unknown (or was superseded by a new plan, which
/// records its own) is left out: the next sync finds the destination at
/// its old weight and begins the drain then.
///
/// [`Plan::draining`]: crate::sync::Plan::draining
pub(crate) fn confirmed_drains(
    planned: &DrainLedger,
    requests: &[Request],
    done: impl Fn(usize) -> bool,
) -> DrainLedger {
    let mut ledger = planned.clone();
    if ledger.is_empty() {
        return ledger;
    }
    for (i, r) in requests.iter().enumerate() {
        if let Request::EditDestination(k, d) = r {
            let id = (*k, d.addr, d.port);
            if d.weight == 0 && !done(i) {
                ledger.forget(&id);
            }
        }
    }
    ledger
}

#[cfg(test)]
mod tests {
    use std::net::IpAddr;
    use std::time::Instant;

    use super::*;
    use crate::sync::fates::{Fate, Fates};
    use crate::{Destination, Error, ServiceKey};

    fn confirmed(planned: &DrainLedger, requests: &[Request], o: &Fates) -> DrainLedger {
        confirmed_drains(planned, requests, |i| matches!(o.get(i), Fate::Done))
    }

    #[test]
    fn a_drain_begins_only_with_its_edit_done() {
        let k = ServiceKey::tcp(IpAddr::from([10, 0, 0, 1]), 80);
        let d = |i: u8| Destination::new(IpAddr::from([172, 16, 0, i]), 80);
        let now = Instant::now();
        // 1 and 2 get their weight-0 edits; 3 was at weight 0 already.
        let planned: DrainLedger = [1, 2, 3]
            .into_iter()
            .map(|i| ((k, d(i).addr, 80), now))
            .collect();
        let requests = vec![
            Request::EditDestination(k, d(1).with_weight(0)),
            Request::EditDestination(k, d(2).with_weight(0)),
            Request::EditDestination(k, d(4).with_weight(5)),
        ];
        let mut outcomes = Fates::all_done(3);
        let all = confirmed(&planned, &requests, &outcomes);
        assert_eq!(all, planned);
        outcomes.set(1, Fate::Failed(Error::invalid("edit", "refused")));
        let some = confirmed(&planned, &requests, &outcomes);
        let mut ids: Vec<IpAddr> = some.destinations().map(|id| id.1).collect();
        ids.sort();
        assert_eq!(ids, [d(1).addr, d(3).addr]);
        outcomes.set(0, Fate::Superseded);
        assert_eq!(confirmed(&planned, &requests, &outcomes).len(), 1);
    }
}

//! After an apply: reading back what the view cannot know, settling the
//! requests whose replies were never seen, and repairing what the listing
//! missed.
//!
//! Only a service the view may now show wrongly is read back: one with a
//! request sent whose reply was never seen, or one the kernel refused in a
//! way that says the view was wrong (`EEXIST`: it was there; `ESRCH` or
//! `ENOENT` for a destination: it was not). A request never sent, or
//! refused for another reason, left the kernel as the view shows it. A
//! read-back that fails (the kernel stalled, say) ends the reading: each
//! further one would wait as long, and the view is dropped anyway (the next
//! sync lists).

use std::collections::HashSet;

use crate::client_core::ClientCore;
use crate::sync::drains::confirmed_drains;
use crate::sync::fates::{Fate, Fates};
use crate::sync::ledger::DrainLedger;
use crate::sync::plan::{plan, PlanOptions};
use crate::sync::report::{Found, Unknown};
use crate::sync::table::Table;
use crate::sync::view::{apply_to, holds, refresh, request_key, result_fate};
use crate::transport::Transport;
use crate::{ApplyOptions, Error, Request, ServiceKey};

/// Whether the kernel's answer leaves the view unsure of the request's
/// service: sent and not answered, refused as if the view were wrong, or
/// answered as under a stale family id, which may be either.
pub(crate) fn unsure(e: &Error) -> bool {
    e.is_unknown_outcome()
        || e.is_already_exists()
        || e.is_not_found()
        || matches!(e, Error::FamilyUnconfirmed { .. })
}

/// Reads back into `view` the services of the requests whose outcomes
/// leave it unsure, each once, in request order. Returns the services not
/// read: from the first read-back that failed on, all of them.
pub(crate) async fn read_back<T: Transport>(
    core: &mut ClientCore<T>,
    view: &mut Table,
    requests: &[Request],
    outcomes: &Fates,
) -> HashSet<ServiceKey> {
    let mut keys: Vec<ServiceKey> = Vec::new();
    let mut seen: HashSet<ServiceKey> = HashSet::new();
    for (i, o) in outcomes.exceptions() {
        if let Fate::Failed(e) = o {
            match request_key(&requests[i]) {
                Some(k) if unsure(e) && seen.insert(k) => keys.push(k),
                _ => {}
            }
        }
    }
    read_keys(core, view, keys).await
}

/// Reads `keys` back in order, stopping at the first failure; returns those
/// not read.
async fn read_keys<T: Transport>(
    core: &mut ClientCore<T>,
    view: &mut Table,
    keys: Vec<ServiceKey>,
) -> HashSet<ServiceKey> {
    let mut keys = keys.into_iter();
    let mut unread = HashSet::new();
    for key in keys.by_ref() {
        if refresh(core, view, &key).await.is_err() {
            unread.insert(key);
            break;
        }
    }
    unread.extend(keys);
    unread
}

/// A sync's requests with their outcomes, appended to as it goes on.
pub(crate) type RequestLog<'a> = (&'a mut Vec<Request>, &'a mut Fates);

/// What settling a sync's requests needs of its syncer, borrowed for the
/// sync: the planner options and batch tuning to plan and apply again
/// with, and the drain ledger it keeps up to date.
pub(crate) struct Settler<'a> {
    pub(crate) options: &'a PlanOptions,
    pub(crate) apply: &'a ApplyOptions,
    pub(crate) ledger: &'a mut DrainLedger,
}

impl Settler<'_> {
    /// The requests whose replies were never seen: their services were
    /// read back (unless in `unread`). Those found applied are done (and a
    /// drain whose weight-0 edit it was begins: `drains` are the plan's);
    /// the services of the others are planned again and corrected in this
    /// sync, the requests that do it appended to the report.
    pub(crate) async fn settle_unknown<T: Transport>(
        &mut self,
        core: &mut ClientCore<T>,
        current: &mut Table,
        desired: &Table,
        (requests, outcomes): RequestLog<'_>,
        drains: &DrainLedger,
        unread: &mut HashSet<ServiceKey>,
    ) -> Vec<Unknown> {
        let mut found = Vec::new();
        let mut again: HashSet<ServiceKey> = HashSet::new();
        for (i, o) in outcomes.exceptions() {
            let Fate::Failed(Error::Unknown { cause, .. }) = o else {
                continue;
            };
            let key = request_key(&requests[i]);
            let state = match key {
                Some(k) if unread.contains(&k) => Found::Unread,
                _ if holds(current, &requests[i]) => Found::Applied,
                Some(k) => {
                    again.insert(k);
                    Found::Replanned
                }
                None => Found::Unread,
            };
            found.push(Unknown {
                index: i,
                cause: *cause,
                found: state,
            });
        }
        if found.is_empty() {
            return found;
        }
        for u in &found {
            match u.found {
                Found::Applied => outcomes.set(u.index, Fate::Done),
                Found::Replanned => outcomes.set(u.index, Fate::Superseded),
                _ => {}
            }
        }
        *self.ledger =
            confirmed_drains(drains, requests, |i| matches!(outcomes.get(i), Fate::Done));
        // Destinations skipped for an add whose outcome is now settled by
        // the new plan are settled with it.
        outcomes.supersede_where(|i, o| {
            matches!(o, Fate::Skipped { .. })
                && request_key(&requests[i]).is_some_and(|k| again.contains(&k))
        });
        self.replan(core, current, desired, &again, (requests, outcomes), unread)
            .await;
        found
    }

    /// Services the kernel refused to add because they exist (the listing
    /// missed them): read back already, planned again and corrected.
    pub(crate) async fn repair<T: Transport>(
        &mut self,
        core: &mut ClientCore<T>,
        current: &mut Table,
        desired: &Table,
        (requests, outcomes): RequestLog<'_>,
        unread: &mut HashSet<ServiceKey>,
    ) {
        let mut missed: HashSet<ServiceKey> = HashSet::new();
        for (i, o) in outcomes.exceptions() {
            if let (Request::AddService(svc), Fate::Failed(e)) = (&requests[i], o) {
                if e.is_already_exists() {
                    missed.insert(svc.key);
                }
            }
        }
        if missed.is_empty() {
            return;
        }
        outcomes.supersede_where(|i, o| match (&requests[i], o) {
            (Request::AddService(s), Fate::Failed(_)) => missed.contains(&s.key),
            (Request::AddDestination(k, _), Fate::Skipped { .. }) => missed.contains(k),
            _ => false,
        });
        self.replan(
            core,
            current,
            desired,
            &missed,
            (requests, outcomes),
            unread,
        )
        .await;
    }

    /// Plans the services `keys` again from the view (read back) and
    /// applies the plan, appending its requests and outcomes; what it
    /// leaves unsure is read back too (into `unread` if it cannot be).
    async fn replan<T: Transport>(
        &mut self,
        core: &mut ClientCore<T>,
        current: &mut Table,
        desired: &Table,
        keys: &HashSet<ServiceKey>,
        (requests, outcomes): RequestLog<'_>,
        unread: &mut HashSet<ServiceKey>,
    ) {
        if keys.is_empty() {
            return;
        }
        let mut cur = Table::new();
        let mut want = Table::new();
        for key in keys {
            if let Some(t) = current.get(key) {
                cur.put(t.clone());
            }
            if let Some(t) = desired.get(key) {
                want.put(t.clone());
            }
        }
        let p = plan(
            &cur,
            &want,
            self.options,
            self.ledger,
            self.options.clock.now(),
        );
        let (extra, _, drains) = p.into_parts();
        let results = core
            .apply_failures(&extra, self.apply)
            .await
            .into_results(extra.len());
        let at = requests.len();
        let mut unsure_keys: Vec<ServiceKey> = Vec::new();
        for (r, res) in extra.into_iter().zip(results) {
            let o = result_fate(res);
            match &o {
                Fate::Done => apply_to(current, &r),
                Fate::Failed(e) if unsure(e) => {
                    if let Some(k) = request_key(&r).filter(|k| !unsure_keys.contains(k)) {
                        unsure_keys.push(k);
                    }
                }
                _ => {}
            }
            requests.push(r);
            outcomes.push(o);
        }
        let done = |i: usize| matches!(outcomes.get(at + i), Fate::Done);
        self.ledger
            .extend(confirmed_drains(&drains, &requests[at..], done));
        unread.extend(read_keys(core, current, unsure_keys).await);
    }
}

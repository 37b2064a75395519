//! The [`Syncer`]: lists (or remembers) the kernel's table, plans, applies
//! the plan pipelined and reports every request's outcome. The steps it
//! runs live beside it (`apply`, `settle`, `cached`, `view`) and know
//! nothing of it.

use std::collections::BTreeSet;

use crate::block_on::block_on;
use crate::client_core::ClientCore;
use crate::decode::Detail;
use crate::sync::apply::apply_plan;
use crate::sync::cached::{plan_part, Origin, Synced};
use crate::sync::drains::confirmed_drains;
use crate::sync::fates::Fate;
use crate::sync::ledger::DrainLedger;
use crate::sync::plan::{plan, PlanOptions, Scope};
use crate::sync::planned::Plan;
use crate::sync::report::Report;
use crate::sync::settle::{read_back, Settler};
use crate::sync::table::Table;
use crate::sync::view::{apply_done, refresh};
use crate::transport::Transport;
use crate::{ApplyOptions, Client, Error, Request, ServiceKey};

/// Keeps one manager's services of one namespace converged to a desired
/// [`Table`].
///
/// [`Syncer::sync`] lists the kernel's table (the services in scope with
/// their destinations), plans and applies. After a sync it knows the table
/// it left: [`Syncer::sync_cached`] plans from that view instead of a
/// listing, for a caller that promises no one else writes its services.
/// What was done is applied to the view; a service is read back from the
/// kernel only where the view may be wrong: a request's reply was never
/// seen, or the kernel refused it as if the view were (`EEXIST`, `ESRCH`,
/// `ENOENT` for a destination). A request refused otherwise or never sent
/// left the kernel as the view shows it (its service is planned again by
/// the next cached sync). The first read-back that fails (a stalled
/// kernel) ends the reading and the view is dropped: the next sync lists.
///
/// The cost of a cached sync grows with the change, not the table, when
/// the desired table descends from the one last synced (the same table
/// changed in place, or a clone of it changed): a [`Table`] keeps a
/// journal of the services changed in it, and only those (with any left
/// unsettled or draining) are planned. A table built anew is planned
/// whole.
///
/// A view is trusted only for the table it shows: each cached sync looks
/// the IPVS family up (one round trip) and lists instead when the id is
/// not the one seen before the view was listed (the `ip_vs` module was
/// reloaded: its tables began again empty), or when the client talks to
/// another network namespace than the one the view is of (family ids are
/// the same in every namespace). A namespace is known by its namespace
/// file (device, inode and the inode's change time, which tells a new
/// namespace from a freed one whose inode number it got); a client whose
/// namespace cannot be told (no `/proc`) always lists. A sync whose
/// family id changed under it (a reload between its listing and its
/// apply) keeps no view.
///
/// ```no_run
/// use ipvsnl::sync::{PlanOptions, Scope, Syncer, Table};
/// use ipvsnl::{Client, Destination, Service, ServiceKey};
/// let mut ipvs = Client::new()?;
/// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
/// let mut want = Table::new();
/// want.insert(Service::new(key), [Destination::new("172.16.0.1".parse().unwrap(), 80)]);
/// let mut syncer = Syncer::new(PlanOptions::new(Scope::keys([key])));
/// print!("{}", syncer.plan(&mut ipvs, &want)?); // dry run: ipvsadm rules
/// let report = syncer.sync(&mut ipvs, &want)?;
/// assert!(report.is_complete(), "{report}");
/// # Ok::<(), ipvsnl::Error>(())
/// ```
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct Syncer {
    pub(crate) options: PlanOptions,
    pub(crate) apply: ApplyOptions,
    pub(crate) cache: Option<Table>,
    pub(crate) synced: Option<Synced>,
    pub(crate) ledger: DrainLedger,
}

impl Syncer {
    /// A syncer with these planner options and no cached view.
    pub fn new(options: PlanOptions) -> Self {
        Syncer {
            options,
            ..Syncer::default()
        }
    }

    /// Batch tuning for the applier.
    #[must_use]
    pub fn with_apply_options(mut self, apply: ApplyOptions) -> Self {
        self.apply = apply;
        self
    }

    /// The planner options.
    pub fn options(&self) -> &PlanOptions {
        &self.options
    }

    /// Changes the planner options (the scope, the drain) of a syncer in
    /// use, as a daemon that reloads its configuration does. Destinations
    /// draining are kept draining, from when they began (those now out of
    /// scope are forgotten). The cached view is kept when one set of keys
    /// ([`Scope::Keys`]) replaces another and none of the keys entering is
    /// a service the view holds (the next [`Syncer::sync_cached`] plans
    /// the keys entering); otherwise a change of scope drops it (the next
    /// sync lists, since the view holds no destinations of services that
    /// were out of scope).
    ///
    /// ```
    /// use std::time::Duration;
    /// use ipvsnl::sync::{Drain, PlanOptions, Scope, Syncer};
    /// use ipvsnl::ServiceKey;
    /// let a = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
    /// let b = ServiceKey::tcp("10.0.0.2".parse().unwrap(), 80);
    /// let mut syncer = Syncer::new(PlanOptions::new(Scope::keys([a])));
    /// syncer.set_options(PlanOptions::new(Scope::keys([a, b])).with_drain(Drain::new(Duration::from_secs(60))));
    /// assert!(syncer.options().scope.contains(&b));
    /// assert_eq!(syncer.options().drain.map(|d| d.max), Some(Duration::from_secs(60)));
    /// ```
    pub fn set_options(&mut self, options: PlanOptions) {
        if !same_scope(&self.options.scope, &options.scope) {
            self.rescope(&options.scope);
        }
        self.ledger.retain(|key| options.scope.contains(key));
        self.options = options;
    }

    /// Keeps the cached view across a change of scope from one set of
    /// keys to another, where it stays true: a key entering the scope that
    /// the view does not hold names a service the listing did not find,
    /// and the next cached sync plans it (its add fails with `EEXIST` if
    /// someone else created it since, and is corrected as any such add
    /// is). A key entering that the view holds is a service of someone
    /// else's, listed without its destinations: then, and for any other
    /// change of scope, the view is dropped (the next sync lists). Keys
    /// leaving the scope stay in the view as they were; the plans leave
    /// them alone. The cost is the scope's size, not the table's listing.
    fn rescope(&mut self, scope: &Scope) {
        let (Scope::Keys(old), Scope::Keys(new), Some(view), Some(synced)) = (
            &self.options.scope,
            scope,
            self.cache.as_ref(),
            self.synced.as_mut(),
        ) else {
            self.forget();
            return;
        };
        let entering: Vec<ServiceKey> = new.iter().filter(|k| !old.contains(k)).copied().collect();
        if entering.iter().any(|k| view.get(k).is_some()) {
            self.forget();
            return;
        }
        synced.unsettle(entering);
    }

    /// The table as this syncer last left it (services out of scope are
    /// listed without destinations), if it has synced.
    pub fn cached(&self) -> Option<&Table> {
        self.cache.as_ref()
    }

    /// Forgets the cached view: the next [`Syncer::sync_cached`] lists.
    pub fn forget(&mut self) {
        self.cache = None;
        self.synced = None;
    }

    /// Destinations draining, with the time their drain began.
    pub fn draining(&self) -> &DrainLedger {
        &self.ledger
    }

    /// Lists the kernel's table as the planner needs it: every service,
    /// and the destinations (with connection counts) of those in scope.
    ///
    /// The listing is whole as [`Client::table`] says (one pass, checked:
    /// every service that existed for the whole listing is in it). An IPv6
    /// service no earlier listing of this client saw can still be missed,
    /// rarely: it is found when adding it fails (`EEXIST`) and corrected in
    /// the same sync.
    pub fn list(&self, client: &mut Client) -> Result<Table, Error> {
        block_on(self.list_in(&mut client.core))
    }

    /// Dry run: lists the table and plans, applying nothing.
    pub fn plan(&self, client: &mut Client, desired: &Table) -> Result<Plan, Error> {
        block_on(self.plan_in(&mut client.core, desired))
    }

    /// Lists the kernel's table, plans and applies. `Err` only when the
    /// family lookup or the listing fails; every request's outcome is in
    /// the report. The view it leaves is remembered only if the `ip_vs`
    /// module was not reloaded meanwhile and the client's namespace can be
    /// told.
    pub fn sync(&mut self, client: &mut Client, desired: &Table) -> Result<Report, Error> {
        block_on(self.sync_in(&mut client.core, desired))
    }

    /// Plans from the cached view (listing only if there is none) and
    /// applies. For a caller that promises no one else writes the services
    /// in scope. With a drain, the services with destinations draining or
    /// leaving are read back first, for their live connection counts.
    pub fn sync_cached(&mut self, client: &mut Client, desired: &Table) -> Result<Report, Error> {
        block_on(self.sync_cached_in(&mut client.core, desired))
    }

    /// [`Syncer::list`] over any transport.
    pub(crate) async fn list_in<T: Transport>(
        &self,
        core: &mut ClientCore<T>,
    ) -> Result<Table, Error> {
        // Settings and connection counts are all the planner reads; the
        // listing is whole (one pass, checked), see `Client::table`.
        let scope = &self.options.scope;
        let entries = core
            .list_entries(Detail::Settings, |k| scope.contains(k))
            .await?;
        Ok(Table::from_entries(entries))
    }

    /// [`Syncer::plan`] over any transport.
    pub(crate) async fn plan_in<T: Transport>(
        &self,
        core: &mut ClientCore<T>,
        desired: &Table,
    ) -> Result<Plan, Error> {
        let current = self.list_in(core).await?;
        Ok(plan(
            &current,
            desired,
            &self.options,
            &self.ledger,
            self.options.clock.now(),
        ))
    }

    /// [`Syncer::sync`] over any transport.
    pub(crate) async fn sync_in<T: Transport>(
        &mut self,
        core: &mut ClientCore<T>,
        desired: &Table,
    ) -> Result<Report, Error> {
        let origin = Origin::now(core).await?;
        self.sync_listed(core, desired, origin).await
    }

    /// Lists the table of `origin` (its namespace and family id, seen just
    /// before), plans and applies.
    pub(crate) async fn sync_listed<T: Transport>(
        &mut self,
        core: &mut ClientCore<T>,
        desired: &Table,
        origin: Origin,
    ) -> Result<Report, Error> {
        // The view of an earlier sync goes first: this one may change the
        // table and be dropped before it remembers what it left.
        self.forget();
        let current = self.list_in(core).await?;
        let p = plan(
            &current,
            desired,
            &self.options,
            &self.ledger,
            self.options.clock.now(),
        );
        Ok(self.run(core, origin, current, desired, p, true).await)
    }

    /// Applies `p`, planned from `current` (or from the part of it holding
    /// the services that may have changed) to `desired`, keeps the view
    /// true and remembers what it converged to.
    pub(crate) async fn run<T: Transport>(
        &mut self,
        core: &mut ClientCore<T>,
        origin: Origin,
        mut current: Table,
        desired: &Table,
        p: Plan,
        listed: bool,
    ) -> Report {
        let conflicts = p.conflicts().to_vec();
        let (requests, phase, drains) = p.into_parts();
        // The ledger is not touched until the weight-0 edits are known
        // applied: a sync dropped before that leaves it as it was.
        let mut outcomes = apply_plan(core, &requests, phase, &self.apply).await;
        self.ledger = confirmed_drains(&drains, &requests, |i| {
            matches!(outcomes.get(i), Fate::Done)
        });

        // Bring the view up to date: what was done is applied to it; the
        // services of requests whose outcome is unknown, or whose refusal
        // says the view was wrong, are read back.
        let all_done = conflicts.is_empty() && outcomes.all_plain_done();
        if all_done && requests.len().saturating_mul(4) >= desired.len() {
            // A big change that fully went through (a cold create, say):
            // the view is the desired table plus what the plan left alone
            // (services out of scope, destinations still draining). Cloning
            // it is cheaper than replaying every request.
            current = self.converged_view(&current, desired);
        } else {
            apply_done(&mut current, &requests, &outcomes);
        }
        let mut unread = read_back(core, &mut current, &requests, &outcomes).await;
        let mut requests = requests;
        let mut settler = Settler {
            options: &self.options,
            apply: &self.apply,
            ledger: &mut self.ledger,
        };
        let unknown = settler
            .settle_unknown(
                core,
                &mut current,
                desired,
                (&mut requests, &mut outcomes),
                &drains,
                &mut unread,
            )
            .await;
        // The listing can miss services (the kernel's dump resumes by a
        // position counted over every namespace's services): adding one
        // then fails with EEXIST. It was read back above; plan it again
        // and apply, once.
        if unread.is_empty() {
            settler
                .repair(
                    core,
                    &mut current,
                    desired,
                    (&mut requests, &mut outcomes),
                    &mut unread,
                )
                .await;
        }
        let view = unread.is_empty().then_some(current);
        let kept = Synced::remember(
            core, origin, view, desired, &requests, &outcomes, &conflicts,
        );
        (self.cache, self.synced) = kept.unzip();
        Report {
            requests,
            outcomes,
            conflicts,
            listed,
            unknown,
        }
    }

    /// [`Syncer::sync_cached`] over any transport. Dropped unfinished, it
    /// leaves no cached view: the next sync lists.
    pub(crate) async fn sync_cached_in<T: Transport>(
        &mut self,
        core: &mut ClientCore<T>,
        desired: &Table,
    ) -> Result<Report, Error> {
        let Some(mut current) = self.cache.take() else {
            return self.sync_in(core, desired).await;
        };
        // One round trip says whether the view can still be true: a
        // reloaded module emptied the table under it, and a client of
        // another namespace talks to another table.
        let origin = Origin::now(core).await?;
        if !self.synced.as_ref().is_some_and(|s| s.trusts(&origin)) {
            self.synced = None;
            return self.sync_listed(core, desired, origin).await;
        }
        let keys = self
            .synced
            .as_ref()
            .and_then(|s| s.to_plan(desired, &self.ledger));
        // Connection counts in the view are as old as its listing: read
        // back the services whose destinations drain or are about to be
        // removed (a drain decides by the live count).
        let mut reread: BTreeSet<ServiceKey> = self.ledger.services().collect();
        if self.options.drain.is_some() {
            let pre = plan_part(
                &current,
                desired,
                keys.as_ref(),
                &self.options,
                &self.ledger,
            );
            reread.extend(pre.draining().services());
            reread.extend(pre.requests().iter().filter_map(|r| match r {
                Request::DeleteDestination(k, _, _) => Some(*k),
                _ => None,
            }));
        }
        for key in &reread {
            if let Err(e) = refresh(core, &mut current, key).await {
                self.cache = Some(current);
                return Err(e);
            }
        }
        let p = plan_part(
            &current,
            desired,
            keys.as_ref(),
            &self.options,
            &self.ledger,
        );
        Ok(self.run(core, origin, current, desired, p, false).await)
    }

    /// The table after a plan fully applied: `desired`, the services of
    /// `current` out of scope, and the destinations still draining.
    fn converged_view(&self, current: &Table, desired: &Table) -> Table {
        let mut view = desired.clone();
        for key in current.keys() {
            if !self.options.scope.contains(key) {
                view.put_shared(current, key);
            }
        }
        for (key, addr, port) in self.ledger.destinations() {
            let found = current.get(key).and_then(|t| t.destination(addr, *port));
            if let (Some(found), Some(entry)) = (found, view.get_mut(key)) {
                let mut d = *found;
                d.destination.weight = 0;
                entry.upsert(d);
            }
        }
        view
    }
}

/// Whether two scopes are known to hold the same keys (two predicates
/// never are, unless they are the same one).
fn same_scope(a: &Scope, b: &Scope) -> bool {
    match (a, b) {
        (Scope::All, Scope::All) => true,
        (Scope::Keys(x), Scope::Keys(y)) => x == y,
        (Scope::Predicate(f), Scope::Predicate(g)) => std::sync::Arc::ptr_eq(f, g),
        _ => false,
    }
}

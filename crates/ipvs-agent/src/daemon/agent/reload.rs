//! The loop's reloads: a file read off the loop and guarded
//! (`daemon/reloading.rs`), a configuration given whole (fleet mode), each
//! applied as a diff of what it changes.

use std::collections::HashSet;
use std::sync::Arc;

use ipvsnl::sync::{PlanOptions, Scope};
use tokio::sync::oneshot;
use tokio::time::Instant;

use super::Looping;
use crate::check::Reconciled;
use crate::config::{self, Config};
use crate::daemon::changes::diff;
use crate::daemon::options::AgentOptions;
use crate::daemon::reloading::{removes_most, Reloading};
use crate::desired::plan_options;

impl Looping {
    /// A reload asked for (SIGHUP, the watch, the handle): the file is read
    /// off the loop; one asked while a read runs reads it once more after.
    pub(super) fn reload(&mut self, options: &AgentOptions, answer: oneshot::Sender<bool>) {
        let Some(path) = &options.config_path else {
            tracing::error!("reload refused: the agent has no configuration file");
            self.shared.metrics().reload(false);
            let _ = answer.send(false);
            return;
        };
        if let Some(r) = &mut self.reloading {
            r.again.push(answer);
            return;
        }
        if let Some(n) = &options.notifier {
            n.tell("RELOADING=1");
        }
        self.reloading = Some(Reloading::start(path.clone(), answer));
    }

    /// The file of a reload is read: applied, or refused (with errors, or
    /// by the reload guard) with the running configuration kept.
    pub(super) fn reloaded(
        &mut self,
        loaded: Result<Config, config::LoadError>,
        reloading: Reloading,
        options: &AgentOptions,
    ) {
        let file = options
            .config_path
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let ok = match loaded {
            Ok(new) => match removes_most(&self.config, &new) {
                Some((removed, running)) if new.agent.reload_guard => {
                    tracing::error!(
                        file,
                        removed,
                        running,
                        "reload refused by the guard: it would remove most of the services \
                         (a file cut short?); a file that means it says \
                         `reload_guard = false` in [agent]"
                    );
                    self.shared.metrics().reload_guarded();
                    false
                }
                _ => {
                    self.apply(new);
                    true
                }
            },
            Err(e) => {
                for line in e.to_string().lines() {
                    tracing::error!(file, error = line, "reload refused");
                }
                false
            }
        };
        if !ok {
            tracing::error!(file, "reload refused: the running configuration stays");
        }
        self.shared.metrics().reload(ok);
        if let Some(n) = &options.notifier {
            n.tell("READY=1");
        }
        let again = reloading.answer(ok);
        let mut again = again.into_iter();
        if let Some(first) = again.next() {
            self.reload(options, first);
            if let Some(r) = &mut self.reloading {
                r.again.extend(again);
            }
        }
    }

    /// Applies a configuration given whole, as a reload applies a file.
    pub(super) fn apply_given(&mut self, new: Config, options: &AgentOptions) {
        if let Some(n) = &options.notifier {
            n.tell("RELOADING=1");
        }
        self.apply(new);
        self.shared.metrics().reload(true);
        if let Some(n) = &options.notifier {
            n.tell("READY=1");
        }
    }

    /// Applies a new configuration: kept servers keep their health and
    /// schedule; services the file no longer has stay in the syncer's
    /// scope until a complete sync removed them. Only the services added,
    /// removed or changed are reconciled (the health book, the checks, the
    /// metrics, the desired table) and planned; the scope is computed
    /// again only when services were added or removed, or the settings
    /// changed.
    fn apply(&mut self, new: Config) {
        let now = Instant::now();
        let d = diff(&self.config, &self.positions, &new);
        let mut r = Reconciled::default();
        for c in &d.changed {
            let (old_vs, new_vs) = c.services(&self.config, &new);
            self.book.reconcile_service(old_vs, new_vs, &mut r);
            self.checks.reconcile_service(old_vs, new_vs, now);
            let book = &self.book;
            self.shared
                .metrics()
                .reconcile_service(old_vs, new_vs, |id| book.health(id));
        }
        for id in r.removed.iter().chain(&r.added).chain(&r.retuned) {
            self.changed.remove(id);
        }
        let removed = d.changed.iter().filter(|c| c.new.is_none()).count();
        self.generation += 1;
        if d.keys_changed() || new.agent != self.config.agent {
            let old: HashSet<_> = self.config.services.iter().map(|s| s.service.key).collect();
            let kept: HashSet<_> = new.services.iter().map(|s| s.service.key).collect();
            let narrow = plan_options(&new);
            let mut wide = PlanOptions::new(Scope::keys(old.union(&kept).copied()));
            wide.drain = narrow.drain;
            self.syncing.widen(wide, narrow, self.generation);
        }
        self.syncing.request(false);
        self.resync_at = self.resync_at.min(now + new.agent.resync);
        tracing::info!(
            services = new.services.len(),
            services_changed = d.changed.len(),
            services_removed = removed,
            servers_added = r.added.len(),
            servers_removed = r.removed.len(),
            servers_changed = r.retuned.len(),
            servers_unchanged = self.book.len() - r.added.len() - r.retuned.len(),
            "reloaded"
        );
        self.retiring.keep_only_outside(&new);
        let old = std::mem::replace(&mut self.config, Arc::new(new));
        if let Some(p) = d.positions {
            self.positions = p;
        }
        // At start, the services the reload changes are settled.
        if let Some(s) = self.startup.as_mut() {
            let (o, n) = (&old.services, &self.config.services);
            s.settle_all(d.changed.iter().flat_map(|c| {
                let old = c.old.map(|at| o[at].service.key);
                old.into_iter().chain(c.new.map(|at| n[at].service.key))
            }));
        }
        self.startup = self.startup.take().filter(|s| !s.is_over());
        for c in &d.changed {
            match (c.old, c.new) {
                (_, Some(at)) => self.redecide(at),
                (Some(at), None) => {
                    self.table.remove(&old.services[at].service.key);
                }
                (None, None) => {}
            }
        }
    }
}

//! The soak's figures: what was synced, what failed and why, what the
//! unknown outcomes turned out to be, what the checks found, the memory
//! at two points; printed at the end as a small Markdown table with a
//! verdict line.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use ipvsnl::proto::Cause;
use ipvsnl::sync::{Found, Report};
use ipvsnl::Error;

use crate::churn::ChurnFigures;
use crate::memory::Memory;
use ipvsnl_test_support::errno::errno_name;

/// Live heap growth under this many bytes counts as flat whatever the
/// ratio (a few buffers' worth).
const FLAT_BYTES: i64 = 64 << 10;
/// Otherwise growth within this fraction counts as flat.
const FLAT_RATIO: f64 = 0.05;

/// Which kind of sync a report came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SyncKind {
    /// Churner paused, `Syncer::sync`, normal client, then checked.
    Quiet,
    /// With the churner running (`sync` or `sync_cached`).
    Noisy,
}

/// Every counter of the run.
#[derive(Debug, Default)]
pub(crate) struct Figures {
    pub(crate) rounds: u64,
    pub(crate) quiet: u64,
    pub(crate) listed: u64,
    pub(crate) cached: u64,
    pub(crate) tiny: u64,
    pub(crate) requests: u64,
    pub(crate) failures: BTreeMap<String, u64>,
    pub(crate) sync_errors: BTreeMap<String, u64>,
    pub(crate) unknown: u64,
    pub(crate) applied: u64,
    pub(crate) replanned: u64,
    pub(crate) unread: u64,
    pub(crate) enobufs: u64,
    pub(crate) cache_drops: u64,
    pub(crate) bursts: u64,
    pub(crate) quiet_incomplete: u64,
    pub(crate) divergences: u64,
    pub(crate) out_of_scope: u64,
    pub(crate) cotenant_touched: u64,
    pub(crate) panics: u64,
    pub(crate) churn_failures: u64,
    pub(crate) churn: ChurnFigures,
    /// Memory with an empty table after the first thousand syncs (or a
    /// quarter of the run, if sooner), and the sync count then.
    pub(crate) first_memory: Option<(u64, Memory)>,
    /// The same at the end.
    pub(crate) last_memory: Option<(u64, Memory)>,
    /// The first few problems, described.
    pub(crate) notes: Vec<String>,
}

impl Figures {
    /// All syncs so far.
    pub(crate) fn syncs(&self) -> u64 {
        self.quiet + self.listed + self.cached
    }

    /// Records a problem's description (the first 20 are kept).
    pub(crate) fn note(&mut self, line: String) {
        eprintln!("soak: {line}");
        if self.notes.len() < 20 {
            self.notes.push(line);
        }
    }

    /// Counts one sync's report.
    pub(crate) fn report(&mut self, r: &Report, kind: SyncKind, tiny: bool) {
        match (kind, r.listed()) {
            (SyncKind::Quiet, _) => self.quiet += 1,
            (SyncKind::Noisy, true) => self.listed += 1,
            (SyncKind::Noisy, false) => self.cached += 1,
        }
        self.tiny += u64::from(tiny);
        self.requests += r.requests().len() as u64;
        for (_, e) in r.failures() {
            *self.failures.entry(errno_name(e.errno())).or_default() += 1;
        }
        for u in r.unknown() {
            self.unknown += 1;
            match u.found {
                Found::Applied => self.applied += 1,
                Found::Replanned => self.replanned += 1,
                _ => self.unread += 1,
            }
            if u.cause == Cause::RepliesDropped {
                self.enobufs += 1;
            }
        }
    }

    /// Counts a sync that returned an error (its listing failed).
    pub(crate) fn sync_error(&mut self, e: &Error, kind: SyncKind, tiny: bool) {
        match kind {
            SyncKind::Quiet => self.quiet += 1,
            SyncKind::Noisy => self.listed += 1,
        }
        self.tiny += u64::from(tiny);
        if e.errno() == Some(libc::ENOBUFS) {
            self.enobufs += 1;
        }
        *self.sync_errors.entry(errno_name(e.errno())).or_default() += 1;
    }

    /// Whether the live heap at the end is within a few percent (or a
    /// few KiB) of the first reading; `None` without both readings.
    pub(crate) fn memory_flat(&self) -> Option<bool> {
        let ((_, a), (_, b)) = (self.first_memory?, self.last_memory?);
        let growth = b.heap - a.heap;
        Some(growth <= FLAT_BYTES || (growth as f64) <= FLAT_RATIO * a.heap as f64)
    }

    /// Whether the run passed: no divergence, no panic, our requests never
    /// out of scope, the co-tenant untouched, the churner alive.
    pub(crate) fn passed(&self) -> bool {
        self.divergences == 0
            && self.panics == 0
            && self.out_of_scope == 0
            && self.cotenant_touched == 0
            && self.churn_failures == 0
            && self.quiet > 0
    }

    /// The Markdown table and the verdict line.
    pub(crate) fn render(&self, elapsed: Duration, header: &str) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "{header}\n");
        let _ = writeln!(s, "| figure | value |\n|---|---|");
        let mut row = |k: &str, v: String| {
            let _ = writeln!(s, "| {k} | {v} |");
        };
        let counts = |m: &BTreeMap<String, u64>| {
            if m.is_empty() {
                "none".to_owned()
            } else {
                m.iter()
                    .map(|(k, v)| format!("{k} {v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        };
        row("duration", format!("{:.0} s", elapsed.as_secs_f64()));
        row("rounds (desired tables)", self.rounds.to_string());
        row(
            "syncs: quiet / listed / cached",
            format!(
                "{} ({} / {} / {})",
                self.syncs(),
                self.quiet,
                self.listed,
                self.cached
            ),
        );
        row(
            "syncs through the tiny-buffer client",
            self.tiny.to_string(),
        );
        row("requests sent", self.requests.to_string());
        row("failed requests by errno", counts(&self.failures));
        row(
            "syncs whose listing failed, by errno",
            counts(&self.sync_errors),
        );
        row(
            "unknown outcomes: applied / replanned / unread",
            format!(
                "{} ({} / {} / {})",
                self.unknown, self.applied, self.replanned, self.unread
            ),
        );
        row("ENOBUFS seen (replies dropped)", self.enobufs.to_string());
        row("cache drops (`forget`)", self.cache_drops.to_string());
        row(
            "stale-view bursts (churner deletes dozens, then a cached tiny-buffer sync edits all)",
            self.bursts.to_string(),
        );
        row(
            "churner: ipvsadm changes run (refused) / listings",
            format!(
                "{} ({}) / {}",
                self.churn.commands, self.churn.refused, self.churn.listings
            ),
        );
        row(
            "quiet syncs not complete (a request failed)",
            self.quiet_incomplete.to_string(),
        );
        row("divergences", self.divergences.to_string());
        row("our requests out of scope", self.out_of_scope.to_string());
        row(
            "co-tenant changed by a quiet sync",
            self.cotenant_touched.to_string(),
        );
        row("panics", self.panics.to_string());
        let mem = |m: Option<(u64, Memory)>| match m {
            Some((n, m)) => format!(
                "after {n} syncs: heap {:.1} KiB, VmRSS {} KiB, VmHWM {} KiB",
                m.heap as f64 / 1024.0,
                m.rss_kib,
                m.hwm_kib
            ),
            None => "not taken".to_owned(),
        };
        row("memory, empty table, first", mem(self.first_memory));
        row("memory, empty table, last", mem(self.last_memory));
        let flat = match self.memory_flat() {
            Some(true) => "flat",
            Some(false) => "GROWING",
            None => "not measured",
        };
        let _ = writeln!(
            s,
            "\nVerdict: {} ({} divergences, {} panics, heap {flat}).",
            if self.passed() { "PASS" } else { "FAIL" },
            self.divergences,
            self.panics
        );
        for n in &self.notes {
            let _ = writeln!(s, "- {n}");
        }
        s
    }
}

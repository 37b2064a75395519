//! The settings a checker takes from its `real_server` and its
//! `virtual_server` unless it sets its own (keepalived's cascade):
//! `delay_loop`, `connect_timeout`, `retry`, `delay_before_retry`,
//! `warmup`, `alpha` and `virtualhost`; and the check's timing written
//! from them.

use std::time::Duration;

use crate::import::numbers::{show, timer, uint};
use crate::import::output::{Table, Val};
use crate::import::report::{NoteKind, Place, Report};
use crate::import::tree::Node;

/// keepalived's `delay_loop` when none is set.
const DELAY_LOOP: Duration = Duration::from_secs(60);
/// keepalived's `connect_timeout` when none is set.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The cascading settings, each with its line.
#[derive(Debug, Clone, Default)]
pub(crate) struct Timing {
    pub(crate) delay_loop: Option<(Duration, Place)>,
    pub(crate) connect_timeout: Option<(Duration, Place)>,
    pub(crate) retry: Option<(u64, Place)>,
    pub(crate) warmup: Option<(Duration, Place)>,
    pub(crate) alpha: Option<Place>,
    pub(crate) virtualhost: Option<(String, Place)>,
}

impl Timing {
    /// Takes `node` if it is one of the cascading settings (its notes
    /// made once, here); whether it was.
    pub(crate) fn take(&mut self, node: &Node, report: &mut Report) -> bool {
        let at = node.at().clone();
        match node.name() {
            "delay_loop" => {
                report.mapped(&at);
                if let Some(d) = timer(node, report) {
                    self.delay_loop = Some((d, at));
                }
            }
            "connect_timeout" => {
                report.mapped(&at);
                if let Some(d) = timer(node, report) {
                    self.connect_timeout = Some((d, at));
                }
            }
            "retry" | "nb_get_retry" => {
                if let Some(n) = uint(node, 0, 0, 999, report) {
                    report.note(
                        &at,
                        NoteKind::Changed,
                        format!(
                            "`{} {n}`: keepalived retries {n} times after a failure, so the \
                             server goes after {} failures in a row: `fall = {}`, each check \
                             at `interval` (keepalived's retries wait `delay_before_retry`)",
                            node.name(),
                            n + 1,
                            n + 1
                        ),
                    );
                    self.retry = Some((n, at));
                }
            }
            "delay_before_retry" => {
                if timer(node, report).is_some() {
                    report.note(
                        &at,
                        NoteKind::NotSupported,
                        "`delay_before_retry`: the agent runs every check at its `interval`, \
                         a retry too",
                    );
                }
            }
            "warmup" => {
                if let Some(d) = timer(node, report) {
                    report.note(
                        &at,
                        NoteKind::Changed,
                        "`warmup` becomes `jitter`: keepalived delays a server's first check \
                         by up to this much, the agent adds it to every interval",
                    );
                    self.warmup = Some((d, at));
                }
            }
            "alpha" => {
                report.mapped(&at);
                self.alpha = Some(at);
            }
            "virtualhost" => match node.arg(0) {
                Some(h) => {
                    report.mapped(&at);
                    self.virtualhost = Some((h.to_string(), at));
                }
                None => report.error(&at, "`virtualhost` needs a host name"),
            },
            _ => return false,
        }
        true
    }

    /// Writes the check's `interval`, `timeout`, `rise`, `fall`, `jitter`
    /// and `start` into `t`; `timeout` is `own_timeout` when the checker
    /// has one of its own (MISC_CHECK's `misc_timeout`), else
    /// `connect_timeout`. `default_retry` is the checker's own default.
    pub(crate) fn write(
        &self,
        t: &mut Table,
        own_timeout: Option<(Duration, Place)>,
        default_retry: u64,
        at: &Place,
        report: &mut Report,
    ) {
        let interval = self.delay_loop.as_ref().map_or(DELAY_LOOP, |d| d.0);
        match &self.delay_loop {
            Some((_, p)) => t.set_noted(
                "interval",
                Val::Str(show(interval)),
                format!("delay_loop, {p}"),
            ),
            None => t.set_noted(
                "interval",
                Val::Str(show(interval)),
                "keepalived's default delay_loop",
            ),
        }
        let (timeout, from) = match (&own_timeout, &self.connect_timeout) {
            (Some((d, p)), _) => (*d, Some(format!("misc_timeout, {p}"))),
            (None, Some((d, p))) => (*d, Some(format!("connect_timeout, {p}"))),
            (None, None) => (CONNECT_TIMEOUT.min(interval), None),
        };
        if timeout > interval {
            let p = match (&own_timeout, &self.connect_timeout) {
                (Some((_, p)), _) | (None, Some((_, p))) => p.clone(),
                (None, None) => at.clone(),
            };
            report.note(
                &p,
                NoteKind::Changed,
                format!(
                    "a timeout of {} is longer than the interval {}: the agent's check must \
                     end before the next starts, so `timeout = \"{}\"`",
                    show(timeout),
                    show(interval),
                    show(interval)
                ),
            );
        }
        let timeout = timeout.min(interval);
        match from {
            Some(p) => t.set_noted("timeout", Val::Str(show(timeout)), p),
            None => t.set_noted(
                "timeout",
                Val::Str(show(timeout)),
                "keepalived's default connect_timeout",
            ),
        }
        t.set_noted(
            "rise",
            Val::Int(1),
            "keepalived brings a server back on one success",
        );
        let retry = self.retry.as_ref().map_or(default_retry, |r| r.0);
        match &self.retry {
            Some((_, p)) => t.set_noted(
                "fall",
                Val::Int(retry + 1),
                format!("retry {retry} + 1 ({p}): changed meaning"),
            ),
            None => t.set_noted(
                "fall",
                Val::Int(retry + 1),
                format!("keepalived's default retry {retry}, + 1"),
            ),
        }
        if let Some((w, p)) = &self.warmup {
            let j = (*w).min(interval.saturating_sub(Duration::from_millis(1)));
            if !j.is_zero() {
                t.set_noted(
                    "jitter",
                    Val::Str(show(j)),
                    format!("warmup, {p}: changed meaning"),
                );
            }
        }
        if let Some(p) = &self.alpha {
            t.set_noted("start", Val::Str("down".into()), format!("alpha, {p}"));
        }
    }
}

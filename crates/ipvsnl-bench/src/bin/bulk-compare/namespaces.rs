//! Fresh network namespaces for each contestant: leaving the old one
//! (flushed), the pause after entering the new one and what the machine
//! did meanwhile, and the report line about it.

use super::*;

/// What the pauses saw after leaving namespaces.
#[derive(Default)]
pub(crate) struct TeardownLog {
    /// Per leave: how long after leaving the machine became quiet (the
    /// start of the first [`QUIET_SAMPLES`] quiet samples in a row).
    pub(crate) settled: Vec<f64>,
    /// Leaves after which the machine had not become quiet by the end of
    /// the pause.
    pub(crate) late: usize,
    /// The speed probe's time before each timed run of the rounds.
    pub(crate) probes: Vec<f64>,
    /// The slowest synchronous flush before leaving, and how many flushes.
    pub(crate) max_flush: f64,
    pub(crate) flushes: usize,
    /// The scale run: how long each [`Bench::settle`] waited after the pause.
    pub(crate) settle_waits: Vec<f64>,
}

/// The pause after entering a fresh namespace. Measured on 6.1 under TCG
/// with 10000 x 5 tables: after leaving one, flushed first or not, the
/// machine is busy for 0.2-0.35 s (freeing the table), then quiet; 1 s
/// leaves a margin, and the report says if it ever was not enough.
pub(crate) const DEFAULT_PAUSE: Duration = Duration::from_millis(1000);
/// How often the pause samples the machine's busy time.
pub(crate) const SAMPLE: Duration = Duration::from_millis(50);
/// Busy ticks (USER_HZ, all CPUs) in one sample that still count as quiet.
pub(crate) const QUIET_TICKS: u64 = 1;
/// Quiet samples in a row that make the machine quiet (isolated blips of
/// a tick or two come and go all the time in the VM).
pub(crate) const QUIET_SAMPLES: usize = 4;

/// Busy time of the whole machine so far, in USER_HZ ticks (every CPU's
/// user, nice, system, irq, softirq and steal from `/proc/stat`).
pub(crate) fn busy_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let line = stat.lines().next().unwrap_or("");
    line.split_whitespace()
        .skip(1)
        .take(8)
        .enumerate()
        .filter(|(i, _)| *i != 3 && *i != 4) // idle, iowait
        .filter_map(|(_, v)| v.parse::<u64>().ok())
        .sum()
}

impl Bench {
    /// Flushes the namespace `c` belongs to (untimed), then closes `c`:
    /// leaving the namespace afterwards leaves its teardown little to do.
    pub(crate) fn leave(&mut self, mut c: Client) {
        if self.opts.flush {
            let t = Instant::now();
            c.flush().expect("flush");
            let took = t.elapsed().as_secs_f64();
            progress(format_args!("flushed in {took:.3} s"));
            self.teardown.max_flush = self.teardown.max_flush.max(took);
            self.teardown.flushes += 1;
        }
        drop(c);
    }

    /// A fresh namespace for the next contestant (the old one, left with
    /// no socket in it, is torn down in the background), then the pause,
    /// watching the machine's busy time.
    pub(crate) fn next_namespace(&mut self) {
        netns::enter_fresh_netns().expect("new network namespace");
        let start = Instant::now();
        let mut before = busy_ticks();
        let mut settled = None;
        let mut quiet_since = 0.0;
        let mut quiet_run = 0;
        let mut trace = String::new();
        while start.elapsed() < self.opts.pause {
            std::thread::sleep(SAMPLE);
            let now = busy_ticks();
            let ticks = now.saturating_sub(before);
            let at = start.elapsed().as_secs_f64();
            if ticks > QUIET_TICKS {
                quiet_run = 0;
            } else {
                if quiet_run == 0 {
                    quiet_since = at - SAMPLE.as_secs_f64();
                }
                quiet_run += 1;
                if quiet_run == QUIET_SAMPLES && settled.is_none() {
                    settled = Some(quiet_since.max(0.0));
                }
            }
            trace.push_str(&format!(" {ticks}"));
            before = now;
        }
        progress(format_args!(
            "namespace left: quiet after {settled:.2?} s; busy ticks per {} ms:{trace}",
            SAMPLE.as_millis()
        ));
        match settled {
            Some(t) => self.teardown.settled.push(t),
            None => {
                self.teardown.settled.push(self.opts.pause.as_secs_f64());
                self.teardown.late += 1;
            }
        }
    }

    /// After [`Bench::next_namespace`]'s pause: if the machine was not
    /// quiet by its end (a big table's namespace still being torn down),
    /// waits until it is ([`QUIET_SAMPLES`] quiet samples in a row), at
    /// most `max`. Returns how long it waited.
    pub(crate) fn settle(&mut self, max: Duration) -> f64 {
        let start = Instant::now();
        let mut before = busy_ticks();
        let mut quiet_run = 0;
        while quiet_run < QUIET_SAMPLES && start.elapsed() < max {
            std::thread::sleep(SAMPLE);
            let now = busy_ticks();
            if now.saturating_sub(before) > QUIET_TICKS {
                quiet_run = 0;
            } else {
                quiet_run += 1;
            }
            before = now;
        }
        let waited = start.elapsed().as_secs_f64();
        self.teardown.settle_waits.push(waited);
        progress(format_args!("settled after {waited:.2} s more"));
        waited
    }

    pub(crate) fn teardown_line(&mut self) {
        let t = &self.teardown;
        if t.settled.is_empty() {
            return;
        }
        let mut s = t.settled.clone();
        s.sort_by(f64::total_cmp);
        let flush = if self.opts.flush {
            format!(
                "each flushed first ({} flushes, the slowest {:.3} s)",
                t.flushes, t.max_flush
            )
        } else {
            "not flushed (--no-flush)".to_string()
        };
        let line = format!(
            "{} namespaces left, {flush}; the machine was quiet again (< {} % of a CPU for {} ms) {:.2} s (median) / {:.2} s (max) after leaving one; pause {:.2} s; not quiet by the end of the pause: {} times",
            s.len(),
            (QUIET_TICKS + 1) * 100 / (SAMPLE.as_millis() as u64 / 10),
            QUIET_SAMPLES as u128 * SAMPLE.as_millis(),
            s[(s.len() - 1) / 2],
            s[s.len() - 1],
            self.opts.pause.as_secs_f64(),
            t.late
        );
        let line = if t.settle_waits.is_empty() {
            line
        } else {
            let mut w = t.settle_waits.clone();
            w.sort_by(f64::total_cmp);
            format!(
                "{line}; the scale run then waited until the machine was quiet: {:.2} s (median) / {:.2} s (max) more",
                w[(w.len() - 1) / 2],
                w[w.len() - 1]
            )
        };
        let ok = t.late == 0 || !t.settle_waits.is_empty();
        let probes = t.probes.clone();
        self.note(format!("teardown: {line}"), ok);
        if !probes.is_empty() {
            let mut p = probes;
            p.sort_by(f64::total_cmp);
            let (lo, mid, hi) = (p[0], p[(p.len() - 1) / 2], p[p.len() - 1]);
            let spread = hi / lo.max(1e-9);
            let line = format!(
                "VM speed: a fixed user-space loop run just before each of the {} timed runs of the rounds took {:.1} ms (median), {:.1}-{:.1} ms (min-max, {spread:.2}x): {}",
                p.len(),
                mid * 1e3,
                lo * 1e3,
                hi * 1e3,
                if spread <= 1.2 {
                    "steady"
                } else {
                    "the host was busy at times (its cores are shared): compare within rounds"
                }
            );
            self.note(line, spread <= 1.2);
        }
    }
}

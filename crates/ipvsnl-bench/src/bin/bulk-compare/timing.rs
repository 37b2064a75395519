//! Times of runs: wall, user and sys of this process, the runs of one
//! contestant over the rounds, and the speed probe.

use super::*;

#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Times {
    pub(crate) wall: f64,
    pub(crate) user: f64,
    pub(crate) sys: f64,
}

pub(crate) fn rusage(who: i32) -> (f64, f64) {
    // SAFETY: rusage is plain data; getrusage fills it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid `who` and a pointer to a live rusage.
    unsafe { libc::getrusage(who, &mut ru) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (secs(ru.ru_utime), secs(ru.ru_stime))
}

/// Times `f` in this process.
pub(crate) fn timed<T>(f: impl FnOnce() -> T) -> (T, Times) {
    let (u0, s0) = rusage(libc::RUSAGE_SELF);
    let t = Instant::now();
    let out = f();
    let wall = t.elapsed().as_secs_f64();
    let (u1, s1) = rusage(libc::RUSAGE_SELF);
    (
        out,
        Times {
            wall,
            user: u1 - u0,
            sys: s1 - s0,
        },
    )
}

/// The timed runs of one contestant, in round order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Runs(pub(crate) Vec<Times>);

impl Runs {
    pub(crate) fn one(t: Times) -> Self {
        Runs(vec![t])
    }

    /// The run with the median wall time (the lower middle one of an even
    /// number), so user and sys come from a real run.
    pub(crate) fn median(&self) -> Times {
        let mut v = self.0.clone();
        v.sort_by(|a, b| a.wall.total_cmp(&b.wall));
        v.get(v.len().saturating_sub(1) / 2)
            .copied()
            .unwrap_or_default()
    }

    pub(crate) fn range(&self) -> (f64, f64) {
        let walls = self.0.iter().map(|t| t.wall);
        let min = walls.clone().fold(f64::INFINITY, f64::min);
        (min, walls.fold(0.0, f64::max))
    }

    /// User time over user + sys, summed over every run.
    pub(crate) fn user_share(&self) -> f64 {
        let user: f64 = self.0.iter().map(|t| t.user).sum();
        let sys: f64 = self.0.iter().map(|t| t.sys).sum();
        user / (user + sys).max(1e-9)
    }

    /// This contestant's wall over `other`'s round by round (the two ran
    /// next to each other in each round): (min, median, max).
    pub(crate) fn paired_ratios(&self, other: &Runs) -> (f64, f64, f64) {
        let mut r: Vec<f64> = self
            .0
            .iter()
            .zip(&other.0)
            .map(|(a, b)| a.wall / b.wall.max(1e-9))
            .collect();
        r.sort_by(f64::total_cmp);
        match r.len() {
            0 => (0.0, 0.0, 0.0),
            n => (r[0], r[(n - 1) / 2], r[n - 1]),
        }
    }
}

/// A fixed user-space loop: its time just before a timed run says how fast
/// the VM was running then (qemu shares the host's cores with whatever
/// else runs there).
pub(crate) fn speed_probe() -> f64 {
    let t = Instant::now();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..(1 << 23) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x = black_box(x);
    }
    black_box(x);
    t.elapsed().as_secs_f64()
}

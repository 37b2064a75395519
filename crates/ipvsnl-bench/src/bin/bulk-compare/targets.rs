//! The targets of the issue, met or not.

use super::*;

impl Bench {
    pub(crate) fn find(&self, layout: Layout, services: u32, dests: u32) -> Option<&Measured> {
        self.measured
            .iter()
            .find(|m| m.layout == Some(layout) && m.services == services && m.dests == dests)
    }

    /// One line per target of the issue, met or not.
    pub(crate) fn targets(&self) {
        const RATIO: f64 = 1.15;
        const USER_SHARE: f64 = 0.10;
        const CHURN_SPEEDUP: f64 = 20.0;
        const MEMORY_MIB: f64 = 32.0;
        let verdict = |met: bool| if met { "met" } else { "NOT met" };
        let sizes = [
            (Layout::Spread, 5_000, 4, "5000 x 4"),
            (Layout::Spread, 10_000, 5, "10000 x 5"),
            (Layout::OneBucket, 10_000, 5, "10000 x 5 one bucket"),
        ];
        let ratio_line = |what: &str, a: &Runs, b: &Runs| {
            let r = a.median().wall / b.median().wall.max(1e-9);
            let (lo, mid, hi) = a.paired_ratios(b);
            println!(
                "- {what}: {r:.2}x (round by round: median {mid:.2}x, {lo:.2}-{hi:.2}x; target <= {RATIO:.2}x): {}",
                verdict(r <= RATIO)
            );
        };
        println!(
            "Targets (ratios of median wall times over {} rounds):",
            self.opts.rounds
        );
        for (layout, s, d, label) in sizes {
            match self.find(layout, s, d) {
                Some(m) => {
                    ratio_line(
                        &format!("cold create {label}, Syncer::sync / plain client"),
                        &m.create_sync,
                        &m.create_plain,
                    );
                    ratio_line(
                        &format!("cold create {label}, Client::apply / plain client"),
                        &m.create_apply,
                        &m.create_plain,
                    );
                }
                None => println!("- cold create {label}: not measured (size not run)"),
            }
        }
        for (layout, s, d, label) in &sizes[..2] {
            match self.find(*layout, *s, *d) {
                Some(m) => ratio_line(
                    &format!("full listing {label}, Client::table / plain listing"),
                    &m.list_ours,
                    &m.list_plain,
                ),
                None => println!("- full listing {label}: not measured (size not run)"),
            }
        }
        match self.find(Layout::Spread, 10_000, 5) {
            Some(m) if !m.cli_restore.is_empty() && !m.cli_save.is_empty() => {
                let invalid = if self.invalid {
                    " (INVALID: see the checks)"
                } else {
                    ""
                };
                ratio_line(
                    &format!(
                        "whole process 10000 x 5, ours ipvsadm -R / plain-client restore{invalid}"
                    ),
                    &m.cli_restore[1],
                    &m.cli_restore[0],
                );
                ratio_line(
                    &format!(
                        "whole process 10000 x 5, ours ipvsadm -S -n / plain-client save{invalid}"
                    ),
                    &m.cli_save[1],
                    &m.cli_save[0],
                );
                for (what, runs) in [("-R", &m.cli_restore), ("-S -n", &m.cli_save)] {
                    let ours = runs[1].median().wall;
                    let debian = runs[2].median().wall;
                    println!(
                        "- for reference, whole process 10000 x 5 {what}: Debian's ipvsadm {:.2}x the plain client, ours {:.2}x Debian's",
                        debian / runs[0].median().wall.max(1e-9),
                        ours / debian.max(1e-9)
                    );
                }
            }
            _ => println!(
                "- whole process 10000 x 5, ipvsadm -R and -S -n / plain client: not measured"
            ),
        }
        for (layout, s, d, label) in &sizes[..2] {
            let Some(m) = self.find(*layout, *s, *d) else {
                println!("- user share {label}: not measured (size not run)");
                continue;
            };
            for (what, ours, plain) in [
                ("cold create, Syncer::sync", &m.create_sync, &m.create_plain),
                ("full listing, Client::table", &m.list_ours, &m.list_plain),
            ] {
                let share = ours.user_share();
                println!(
                    "- user share {label}, {what}: {:.1} % of user + sys over all rounds (the plain one: {:.1} %; target <= {:.0} %): {}",
                    share * 100.0,
                    plain.user_share() * 100.0,
                    USER_SHARE * 100.0,
                    verdict(share <= USER_SHARE)
                );
            }
        }
        for (layout, s, d, label) in &sizes[..2] {
            match self.find(*layout, *s, *d).and_then(|m| m.churn) {
                Some((full, cached)) => {
                    let speedup = full.wall / cached.wall.max(1e-9);
                    println!(
                        "- 1 % churn {label}: the cached view {speedup:.0}x faster than the full resync ({:.3} s vs {:.3} s, one run; target >= {CHURN_SPEEDUP:.0}x): {}",
                        cached.wall,
                        full.wall,
                        verdict(speedup >= CHURN_SPEEDUP)
                    );
                }
                None => println!("- 1 % churn {label}: not measured (size not run)"),
            }
        }
        if let Some(peak) = self.memory_peak {
            println!(
                "- memory, 10000 x 5 desired state + plan from empty: peak {peak:.1} MiB (target < {MEMORY_MIB:.0} MiB): {}",
                verdict(peak < MEMORY_MIB)
            );
        }
    }
}

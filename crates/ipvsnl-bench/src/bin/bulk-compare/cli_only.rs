//! `--cli-only`: the whole-process rows alone (`ipvsadm -R` and
//! `ipvsadm -S -n`, ours, Debian's and the plain client's, see `cli.rs`),
//! for each size, without the cold-create, listing and resync rows: the
//! table the saves list is created once, untimed, by our client. Its
//! targets: ours within 1.05x of the plain client at 10,000 x 5, within
//! 1.10x at every other size (issue 27).

use super::*;
use crate::cli::CLI;

impl Bench {
    /// The whole-process rows of one workload.
    pub(crate) fn cli_workload(&mut self, layout: Layout, services: u32, dests: u32) {
        let name = format!("{services} x {dests}");
        progress(format_args!("{name}: preparing"));
        let want = desired(layout, services, dests);
        let from_empty = plan_from_empty(&want);
        let rules = from_empty.to_rules();
        let mut rows = Vec::new();
        self.next_namespace();
        let mut client = ready_client();
        let created = client
            .apply(from_empty.requests())
            .iter()
            .all(Result::is_ok);
        self.check(
            format!("{name}: the table for the saves created (untimed)"),
            created,
        );
        let cli_save = self.cli_save(&name, &want, &mut rows);
        self.leave(client);
        let cli_restore = self.cli_restore(&name, &want, &rules, &mut rows);
        rows::print(&name, &rows);
        self.measured.push(contest::Measured {
            layout: Some(layout),
            services,
            dests,
            cli_restore,
            cli_save,
            ..contest::Measured::default()
        });
    }

    /// The targets of the whole-process rows, per size.
    pub(crate) fn cli_targets(&self) {
        println!(
            "Targets (ratios of median wall times over {} rounds; ours / plain client):",
            self.opts.cli_rounds
        );
        for m in &self.measured {
            let target = if (m.services, m.dests) == (10_000, 5) {
                1.05
            } else {
                1.10
            };
            for (what, runs) in [("-R", &m.cli_restore), ("-S -n", &m.cli_save)] {
                if runs.len() < 3 {
                    println!("- {} x {} {what}: not run", m.services, m.dests);
                    continue;
                }
                let (plain, ours, debian) = (&runs[0], &runs[1], &runs[2]);
                let r = ours.median().wall / plain.median().wall.max(1e-9);
                let (lo, mid, hi) = ours.paired_ratios(plain);
                let user = |r: &Runs| r.median().user;
                println!(
                    "- {} x {} {what}, {} / {}: {r:.3}x (round by round: median {mid:.3}x, {lo:.3}-{hi:.3}x; user {:.3} s vs {:.3} s; target <= {target:.2}x): {}; {} {:.2}x the plain client",
                    m.services,
                    m.dests,
                    CLI[1],
                    CLI[0],
                    user(ours),
                    user(plain),
                    if r <= target { "met" } else { "NOT met" },
                    CLI[2],
                    debian.median().wall / plain.median().wall.max(1e-9),
                );
            }
        }
    }
}

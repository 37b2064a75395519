//! One workload: the in-process contestants (cold create in rounds, the
//! listings, the resyncs), each in a fresh namespace, and its rows.

use super::*;

/// What one workload measured, for the targets.
#[derive(Default)]
pub(crate) struct Measured {
    pub(crate) layout: Option<Layout>,
    pub(crate) services: u32,
    pub(crate) dests: u32,
    pub(crate) create_sync: Runs,
    pub(crate) create_apply: Runs,
    pub(crate) create_plain: Runs,
    pub(crate) list_ours: Runs,
    pub(crate) list_plain: Runs,
    /// 1 % churn: (full listed resync, from the cached view).
    pub(crate) churn: Option<(Times, Times)>,
    /// The whole-process restores, in [`cli::CLI`] order (empty if not run).
    pub(crate) cli_restore: Vec<Runs>,
    /// The whole-process saves, in [`cli::CLI`] order (empty if not run).
    pub(crate) cli_save: Vec<Runs>,
}

/// The three fast cold-create contestants, in their rotation order.
pub(crate) const CREATE: [&str; 3] = [
    "ours, Syncer::sync",
    "ours, Client::apply of the planned requests",
    "plain client (pre-encoded, 64 KiB per sendmsg, 1 ACK per batch)",
];

impl Bench {
    pub(crate) fn workload(&mut self, layout: Layout, services: u32, dests: u32, full: bool) {
        let rounds = self.opts.rounds;
        let name = format!(
            "{services} x {dests}{}",
            if layout == Layout::OneBucket {
                " one bucket"
            } else {
                ""
            }
        );
        progress(format_args!("{name}: preparing"));
        let want = desired(layout, services, dests);
        let from_empty = plan_from_empty(&want);
        let rules = from_empty.to_rules();
        // Generic netlink family ids are global: resolved once.
        let family = ready_client().family_id().expect("family");
        let batches = Batches::encode(from_empty.requests(), family);
        let mut m = Measured {
            layout: Some(layout),
            services,
            dests,
            ..Measured::default()
        };
        let mut rows = Vec::new();

        // Cold create: rounds of the three fast contestants, rotated, each
        // in a fresh namespace. The last one's namespace stays for the
        // listings.
        let mut runs: [Runs; 3] = Default::default();
        let mut ok = [true; 3];
        let mut refused = 0;
        let mut keep = None;
        for r in 0..rounds {
            for k in 0..3 {
                let which = (r + k) % 3;
                self.next_namespace();
                let mut c = ready_client();
                let probe = speed_probe();
                self.teardown.probes.push(probe);
                let (done, t) = match which {
                    0 => {
                        let mut syncer = Syncer::new(PlanOptions::default());
                        let (rep, t) = timed(|| syncer.sync(&mut c, &want).expect("sync"));
                        (rep.is_complete(), t)
                    }
                    1 => {
                        let (outcomes, t) = timed(|| c.apply(from_empty.requests()));
                        (outcomes.iter().all(Result::is_ok), t)
                    }
                    _ => {
                        let (n, t) = plain_create(&batches);
                        refused += n;
                        (n == 0, t)
                    }
                };
                runs[which].0.push(t);
                ok[which] &= done && listed(&mut c).same_settings(&want);
                progress(format_args!(
                    "{name}: round {} cold create {}: {:.3} s (speed probe {:.1} ms)",
                    r + 1,
                    CREATE[which],
                    t.wall,
                    probe * 1e3
                ));
                if r + 1 == rounds && k == 2 {
                    keep = Some(c);
                } else {
                    self.leave(c);
                }
            }
        }
        let [sync, apply, plain] = runs;
        for (who, good) in CREATE.iter().zip(ok) {
            self.check(
                format!("{name}: {who} created the table in each of {rounds} rounds"),
                good,
            );
        }
        if refused > 0 {
            self.check(
                format!("{name}: the plain client had {refused} requests refused"),
                false,
            );
        }
        rows.push(row("cold create", CREATE[2], &plain));
        rows.push(row("cold create", CREATE[0], &sync).vs("plain", &plain));
        rows.push(row("cold create", CREATE[1], &apply).vs("plain", &plain));

        // Full listing, in the namespace the last contestant filled:
        // the plain listing and ours alternate.
        let client = keep.expect("a namespace holding the table");
        let mut list_ours = Runs::default();
        let mut list_plain = Runs::default();
        let mut counts_ok = true;
        std::thread::sleep(self.opts.pause);
        for r in 0..rounds {
            for k in 0..2 {
                let took = if (r + k) % 2 == 0 {
                    self.teardown.probes.push(speed_probe());
                    let (t, took) = plain_listing(family);
                    counts_ok &=
                        t.services.len() == want.len() && t.dests.len() == want.destination_count();
                    list_plain.0.push(took);
                    took
                } else {
                    let mut c = ready_client();
                    self.teardown.probes.push(speed_probe());
                    let (t, took) = timed(|| c.table().expect("list"));
                    let d: usize = t.iter().map(|e| e.destinations.len()).sum();
                    counts_ok &= t.len() == want.len() && d == want.destination_count();
                    list_ours.0.push(took);
                    took
                };
                progress(format_args!(
                    "{name}: round {} listing {}: {:.3} s",
                    r + 1,
                    if (r + k) % 2 == 0 { "plain" } else { "ours" },
                    took.wall
                ));
            }
        }
        self.check(
            format!(
                "{name}: the plain listing and Client::table each found {} services / {} destinations in every round",
                want.len(),
                want.destination_count()
            ),
            counts_ok,
        );
        rows.push(row(
            "full listing",
            "plain listing (raw socket, 4 KiB buffer)",
            &list_plain,
        ));
        rows.push(row("full listing", "ours, Client::table", &list_ours).vs("plain", &list_plain));
        if full {
            for size in [16 << 10, 32 << 10] {
                let mut c = Client::with_options(ClientOptions::default().with_recv_buffer(size))
                    .expect("client");
                c.family_id().expect("family");
                let (_, t) = timed(|| c.table().expect("list"));
                rows.push(
                    row(
                        "full listing",
                        format!("ours, {} KiB buffer", size >> 10),
                        &Runs::one(t),
                    )
                    .vs("ours", &list_ours),
                );
            }
        }
        // The whole-process -S -n rows, in this namespace holding the table.
        m.cli_save = self.cli_save(&name, &want, &mut rows);

        // Resyncs (one run each).
        let mut client = client;
        if full {
            progress(format_args!("{name}: resyncs"));
            let mut syncer = Syncer::new(PlanOptions::default());
            let (r, t) = timed(|| syncer.sync(&mut client, &want).expect("sync"));
            rows.push(row("no-op resync", "ours, listed", &Runs::one(t)));
            self.check(
                format!("{name}: no-op resync sends nothing"),
                r.requests().is_empty(),
            );
            let (r, t) = timed(|| syncer.sync_cached(&mut client, &want).expect("sync"));
            rows.push(row("no-op resync", "ours, cached view", &Runs::one(t)));
            self.check(
                format!("{name}: cached no-op sends nothing"),
                r.requests().is_empty(),
            );
            let churn = churn(&want, layout, services, dests, 1);
            let (r, t_full) = timed(|| syncer.sync(&mut client, &churn).expect("sync"));
            let listed_runs = Runs::one(t_full);
            rows.push(row("1 % churn resync", "ours, listed", &listed_runs));
            self.check(
                format!("{name}: 1 % churn, listed: {} requests", r.requests().len()),
                r.is_complete(),
            );
            let after_full = listed(&mut client);
            self.leave(client);
            // From the cached view, in a namespace of its own holding the
            // same table.
            self.next_namespace();
            let mut client = ready_client();
            let mut syncer = Syncer::new(PlanOptions::default());
            assert!(syncer.sync(&mut client, &want).expect("sync").is_complete());
            let (r, t_inc) = timed(|| syncer.sync_cached(&mut client, &churn).expect("sync"));
            rows.push(
                row("1 % churn resync", "ours, cached view", &Runs::one(t_inc))
                    .vs("listed", &listed_runs),
            );
            let after_inc = listed(&mut client);
            self.check(
                format!(
                    "{name}: 1 % churn, cached: {} requests, same end state",
                    r.requests().len()
                ),
                r.is_complete()
                    && after_inc.same_settings(&after_full)
                    && after_inc.same_settings(&churn),
            );
            m.churn = Some((t_full, t_inc));
            self.leave(client);
        } else {
            self.leave(client);
        }

        // The whole-process -R rows, each in a fresh namespace.
        m.cli_restore = self.cli_restore(&name, &want, &rules, &mut rows);

        rows::print(&name, &rows);
        m.create_sync = sync;
        m.create_apply = apply;
        m.create_plain = plain;
        m.list_ours = list_ours;
        m.list_plain = list_plain;
        self.measured.push(m);
    }
}

/// The plain listing in the caller's namespace (socket opened before the
/// clock).
pub(crate) fn plain_listing(family: u16) -> (PlainTable, Times) {
    let mut d = PlainDumper::new(family).expect("plain socket");
    timed(|| listing::list(&mut d).expect("plain listing"))
}

/// The plain client's cold create: a new socket in the caller's namespace
/// (opened before the clock), every batch sent; the refusals counted.
pub(crate) fn plain_create(batches: &Batches) -> (usize, Times) {
    let sock = socket::open().expect("plain socket");
    timed(|| batches.send(&sock).expect("plain client"))
}

//! The planner's work per destination on the host (not a timed run:
//! `scripts/measure/plan-cost` runs it under valgrind and prints instructions and
//! data accesses per destination, the `none` workload's subtracted).
//!
//! `plan-cost WORKLOAD SERVICES` builds the scale bench's desired table
//! (`SERVICES` x 10, spread) and its churned copies (0 % and 10 %, as the
//! criterion bench `sync_plan`), then runs `WORKLOAD` once:
//!
//! * `none`: nothing more (what the others are measured against);
//! * `plan`: `plan` from an empty table (a cold start's plan);
//! * `written`: the same, then its requests written out
//!   ([`Plan::requests`]): what `Syncer::sync` holds before it sends them;
//! * `rules`: the same, then printed as ipvsadm rules
//!   ([`Plan::to_rules`], a dry run);
//! * `churn0`, `churn10`: `plan` from the desired table to its copy with
//!   0 % (equal, but no entry shared) or 10 % of its services changed.

use std::hint::black_box;
use std::process::ExitCode;
use std::time::Instant;

use ipvsnl::sync::{plan, DrainLedger, Plan, PlanOptions, Table};
use ipvsnl_test_support::workload::{churned, desired, Layout};

fn from_empty(want: &Table) -> Plan {
    from(&Table::new(), want)
}

fn from(current: &Table, want: &Table) -> Plan {
    plan(
        current,
        want,
        &PlanOptions::default(),
        &DrainLedger::new(),
        Instant::now(),
    )
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(workload), Some(services)) = (
        args.first(),
        args.get(1).and_then(|n| n.parse::<u32>().ok()),
    ) else {
        eprintln!("usage: plan-cost none|plan|written|rules|churn0|churn10 SERVICES");
        return ExitCode::from(2);
    };
    let want = desired(Layout::Spread, services, 10);
    let churn = [0, 10].map(|percent| churned(Layout::Spread, services, 10, percent));
    match workload.as_str() {
        "none" => {}
        "plan" => drop(black_box(from_empty(black_box(&want)))),
        "written" => {
            let p = from_empty(black_box(&want));
            black_box(p.requests());
        }
        "rules" => drop(black_box(from_empty(black_box(&want)).to_rules())),
        "churn0" => drop(black_box(from(black_box(&want), &churn[0]))),
        "churn10" => drop(black_box(from(black_box(&want), &churn[1]))),
        other => {
            eprintln!(
                "plan-cost: no workload {other:?} (none, plan, written, rules, churn0, churn10)"
            );
            return ExitCode::from(2);
        }
    }
    drop(black_box((want, churn)));
    ExitCode::SUCCESS
}

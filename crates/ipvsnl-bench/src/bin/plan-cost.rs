//! The planner's work per destination on the host (not a timed run:
//! `.ci/plan-cost` runs it under valgrind and prints instructions and
//! data accesses per destination, the `none` workload's subtracted).
//!
//! `plan-cost WORKLOAD SERVICES` builds the scale bench's desired table
//! (`SERVICES` x 10, spread) and then runs `WORKLOAD` once:
//!
//! * `none`: nothing more (what the others are measured against);
//! * `plan`: `plan` from an empty table (a cold start's plan);
//! * `written`: the same, then its requests written out
//!   ([`Plan::requests`]): what `Syncer::sync` holds before it sends them;
//! * `rules`: the same, then printed as ipvsadm rules
//!   ([`Plan::to_rules`], a dry run).

use std::hint::black_box;
use std::process::ExitCode;
use std::time::Instant;

use ipvsnl::sync::{plan, DrainLedger, Plan, PlanOptions, Table};
use ipvsnl_test_support::workload::{desired, Layout};

fn from_empty(want: &Table) -> Plan {
    plan(
        &Table::new(),
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
        eprintln!("usage: plan-cost none|plan|written|rules SERVICES");
        return ExitCode::from(2);
    };
    let want = desired(Layout::Spread, services, 10);
    match workload.as_str() {
        "none" => {}
        "plan" => drop(black_box(from_empty(black_box(&want)))),
        "written" => {
            let p = from_empty(black_box(&want));
            black_box(p.requests());
        }
        "rules" => drop(black_box(from_empty(black_box(&want)).to_rules())),
        other => {
            eprintln!("plan-cost: no workload {other:?} (none, plan, written, rules)");
            return ExitCode::from(2);
        }
    }
    drop(black_box(want));
    ExitCode::SUCCESS
}

//! The diagnosis itself: reads the module files, loads what is asked for,
//! probes, reads again, and assesses the result.

use std::path::Path;

use crate::assess::assess;
use crate::load::{locate_modprobe, run_modprobe};
use crate::options::Options;
use crate::parse;
use crate::probe::{NetlinkProbe, Probe};
use crate::report::{ModuleReport, ModulesTree, Privileges, ProbeOutcome, Report};
use crate::snapshot::{module_report, Snapshot};
use crate::sysctls::read_sysctls;

fn read_privileges(proc_root: &Path) -> Privileges {
    let status = std::fs::read_to_string(proc_root.join("self/status")).ok();
    let cap_eff = status.as_deref().and_then(parse::parse_cap_eff);
    let uid_map = std::fs::read_to_string(proc_root.join("self/uid_map")).ok();
    Privileges {
        euid: status.as_deref().and_then(parse::parse_effective_uid),
        cap_eff,
        cap_net_admin: cap_eff.map(parse::has_cap_net_admin),
        initial_user_namespace: uid_map.as_deref().map(parse::is_initial_uid_map),
    }
}

fn list_releases(modules_root: &Path) -> Vec<String> {
    let mut releases: Vec<String> = std::fs::read_dir(modules_root)
        .map(|entries| {
            entries
                .flatten()
                .filter(|entry| entry.path().is_dir())
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    releases.sort();
    releases
}

/// Inspects the host (or namespace) described by `options`, probing IPVS
/// over generic netlink with the `ipvsnl` client.
pub fn diagnose(options: &Options) -> Report {
    diagnose_with(options, &NetlinkProbe)
}

/// Inspects with a given probe (tests pass a fake one).
///
/// The order matters: `/proc/modules` is read first, then `--load` runs,
/// then the probe (which may auto-load `ip_vs`), then everything is read
/// again so the report shows the final state and what changed it.
pub fn diagnose_with(options: &Options, probe: &dyn Probe) -> Report {
    let roots = &options.roots;
    let release = roots.release().unwrap_or_default();
    let release_dir = roots.modules_root.join(&release);
    let mut snapshot = Snapshot::read(roots, &release_dir);
    let ip_vs_loaded_at_start = snapshot.is_loaded("ip_vs");

    let mut wanted: Vec<String> = vec!["ip_vs".to_string()];
    wanted.extend(options.schedulers.iter().cloned());
    wanted.push("nf_conntrack".to_string());

    let mut load_attempts = Vec::new();
    let mut loaded_by_doctor = Vec::new();
    if options.load {
        let modprobe = options.modprobe.clone().unwrap_or_else(locate_modprobe);
        for name in &wanted {
            if snapshot.is_builtin(name) || snapshot.is_loaded(name) {
                continue;
            }
            let mut attempt = run_modprobe(&modprobe, name);
            snapshot.reread_loaded(roots);
            let now_present = snapshot.is_loaded(name) || snapshot.is_builtin(name);
            attempt.success = attempt.exit_status == Some(0) && now_present;
            if now_present {
                loaded_by_doctor.push(name.clone());
            }
            load_attempts.push(attempt);
        }
    }

    let ip_vs_before_probe = snapshot.is_loaded("ip_vs");
    let outcome = if options.probe {
        probe.probe(options.netns.as_deref())
    } else {
        ProbeOutcome::Skipped
    };
    snapshot.reread_loaded(roots);
    let ip_vs_loaded_by_probe = options.probe && !ip_vs_before_probe && snapshot.is_loaded("ip_vs");

    let mut reports: Vec<ModuleReport> = wanted
        .iter()
        .map(|name| {
            let mut report = module_report(&mut snapshot, name, &release);
            report.loaded_by_doctor = loaded_by_doctor.contains(name);
            report
        })
        .collect();
    let nf_conntrack = reports
        .pop()
        .unwrap_or_else(|| module_report(&mut snapshot, "nf_conntrack", &release));
    let mut ip_vs = if reports.is_empty() {
        module_report(&mut snapshot, "ip_vs", &release)
    } else {
        reports.remove(0)
    };
    ip_vs.loaded_by_probe = ip_vs_loaded_by_probe;
    let schedulers = reports;

    let mut foreign: Vec<String> = Vec::new();
    for module in std::iter::once(&ip_vs)
        .chain(schedulers.iter())
        .chain(std::iter::once(&nf_conntrack))
    {
        let built_for = module
            .file
            .as_ref()
            .and_then(|f| f.vermagic.as_deref())
            .and_then(parse::vermagic_release);
        if let Some(built_for) = built_for {
            if built_for != release && !foreign.iter().any(|r| r == built_for) {
                foreign.push(built_for.to_string());
            }
        }
    }
    let modules_tree = ModulesTree {
        root: roots.modules_root.clone(),
        release_dir: release_dir.clone(),
        release_dir_exists: !release.is_empty() && release_dir.is_dir(),
        releases_present: list_releases(&roots.modules_root),
        has_modules_dep: snapshot.deps.is_some(),
        has_modules_builtin: snapshot.has_builtin_list,
        foreign_vermagic_releases: foreign,
    };

    let (sysctls, namespace_error) = read_sysctls(options, &release, &snapshot);
    let mut report = Report {
        kernel_release: release,
        namespace: options.netns.clone(),
        namespace_error,
        modules_tree,
        proc_modules_readable: snapshot.loaded.is_some(),
        ip_vs,
        schedulers,
        nf_conntrack,
        ip_vs_loaded_at_start,
        sysctls,
        privileges: read_privileges(&roots.proc_root),
        probe: outcome,
        load_attempts,
        problems: Vec::new(),
    };
    report.problems = assess(&report);
    report
}

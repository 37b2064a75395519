//! The inspection layer run against fixture host trees (proc, sys and
//! lib/modules laid out under a scratch directory), with a fake probe.

mod host_tree {
    mod access_and_settings;
    pub(crate) mod tree;
}

use std::path::Path;
use std::sync::atomic::Ordering;

use ipvsnl_doctor::{
    diagnose_with, ModuleState, Probe, ProbeOutcome, ProblemKind, Report, Severity, SysctlValue,
};

use host_tree::tree::*;

#[test]
fn everything_loaded_is_usable() {
    let tree = Tree::new();
    tree.full_modules();
    tree.load(&["ip_vs_sh", "ip_vs_wrr", "ip_vs_rr", "ip_vs", "nf_conntrack"]);
    tree.vs_sysctls("1", "1", "1");
    tree.write("proc/sys/net/bridge/bridge-nf-call-iptables", "1\n");
    let probe = FakeProbe::reachable();
    let report = diagnose_with(&tree.options(), &probe);

    assert_eq!(report.kernel_release, RELEASE);
    assert!(report.usable(), "{report}");
    assert_eq!(report.exit_code(), 0);
    assert!(report.problems.is_empty(), "{:?}", kinds(&report));
    assert_eq!(probe.calls.load(Ordering::SeqCst), 1);
    assert_eq!(report.ip_vs.state, ModuleState::Loaded);
    assert!(!report.ip_vs.loaded_by_probe);
    assert!(report.ip_vs_loaded_at_start);
    let names: Vec<&str> = report.schedulers.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["ip_vs_rr", "ip_vs_wrr", "ip_vs_sh"]);
    for module in report.modules() {
        assert_eq!(module.state, ModuleState::Loaded, "{}", module.name);
        let file = module.file.as_ref().expect("file found");
        assert_eq!(file.matches_kernel, Some(true));
    }
    assert!(report.modules_tree.matches_kernel());
    assert_eq!(report.modules_tree.releases_present, [RELEASE]);
    assert_eq!(report.privileges.cap_net_admin, Some(true));
    assert_eq!(report.privileges.initial_user_namespace, Some(true));
    assert_eq!(report.privileges.euid, Some(0));
    let values: Vec<(&str, &SysctlValue)> = report
        .sysctls
        .iter()
        .map(|s| (s.name.as_str(), &s.value))
        .collect();
    assert_eq!(values.len(), 5);
    for (name, value) in values {
        assert_eq!(value, &SysctlValue::Value("1".to_string()), "{name}");
    }
    // The human text and the JSON carry the verdict.
    let text = report.to_string();
    assert!(text.contains("Verdict: IPVS is USABLE"), "{text}");
    let json = report.to_json();
    assert!(json.starts_with("{\n  \"usable\": true,"), "{json}");
    // Programs read the JSON back as the type.
    assert_eq!(serde_json::from_str::<Report>(&json).unwrap(), report);
    assert!(json.contains("\"state\": \"loaded\""));
    assert!(json.contains("\"result\": \"reachable\""));
}

#[test]
fn on_disk_not_loaded_without_probe() {
    let tree = Tree::new();
    tree.full_modules();
    let probe = FakeProbe::reachable();
    let report = diagnose_with(&tree.options().with_probe(false), &probe);

    assert_eq!(probe.calls.load(Ordering::SeqCst), 0, "probe must not run");
    assert_eq!(report.probe, ProbeOutcome::Skipped);
    assert_eq!(report.ip_vs.state, ModuleState::OnDisk);
    let file = report.ip_vs.file.as_ref().unwrap();
    assert_eq!(file.compression.as_str(), "xz");
    assert_eq!(
        file.vermagic.as_deref(),
        Some("6.1.0-test-amd64 SMP preempt mod_unload modversions ")
    );
    assert_eq!(report.ip_vs.depends_on, ["nf_conntrack"]);
    assert!(report.ip_vs.missing_dependencies.is_empty());
    for s in &report.schedulers {
        assert_eq!(s.state, ModuleState::OnDisk);
        assert!(s.usable());
    }
    assert_eq!(
        kinds(&report),
        [(
            ProblemKind::IpvsNotLoaded,
            Severity::Warning,
            "ip_vs".to_string()
        )]
    );
    assert!(report.usable(), "loadable on demand counts as usable");
    let conntrack = report
        .sysctls
        .iter()
        .find(|s| s.name == "net.ipv4.vs.conntrack")
        .unwrap();
    match &conntrack.value {
        SysctlValue::Absent(why) => assert!(why.contains("ip_vs is not loaded"), "{why}"),
        other => panic!("expected absent, got {other:?}"),
    }
}

#[test]
fn probe_that_loads_ip_vs_is_reported() {
    // The fake probe "loads" ip_vs by rewriting proc/modules, as the kernel's
    // family auto-load would.
    struct LoadingProbe<'a>(&'a Tree);
    impl Probe for LoadingProbe<'_> {
        fn probe(&self, _netns: Option<&Path>) -> ProbeOutcome {
            self.0.load(&["ip_vs", "nf_conntrack"]);
            ProbeOutcome::Reachable {
                version: "1.2.1".to_string(),
                conn_tab_size: 4096,
            }
        }
    }
    let tree = Tree::new();
    tree.full_modules();
    let report = diagnose_with(&tree.options(), &LoadingProbe(&tree));
    assert!(!report.ip_vs_loaded_at_start);
    assert_eq!(report.ip_vs.state, ModuleState::Loaded);
    assert!(report.ip_vs.loaded_by_probe);
    assert!(report.usable());
    assert!(report
        .to_string()
        .contains("resolving the IPVS family made the kernel load it"));
}

#[test]
fn missing_scheduler_makes_it_unusable() {
    let tree = Tree::new();
    tree.full_modules();
    tree.load(&["ip_vs", "ip_vs_rr", "ip_vs_wrr", "ip_vs_sh", "nf_conntrack"]);
    tree.vs_sysctls("1", "1", "1");
    let report = diagnose_with(
        &tree.options().with_scheduler("nosuch").with_scheduler("mh"),
        &FakeProbe::reachable(),
    );
    assert!(!report.usable());
    assert_eq!(report.exit_code(), 1);
    assert_eq!(
        report.scheduler("nosuch").unwrap().state,
        ModuleState::Missing
    );
    assert_eq!(
        report.scheduler("ip_vs_mh").unwrap().state,
        ModuleState::OnDisk
    );
    assert_eq!(errors(&report), [ProblemKind::SchedulerUnavailable]);
    let problem = report
        .problems_of(ProblemKind::SchedulerUnavailable)
        .next()
        .unwrap();
    assert_eq!(problem.subject, "ip_vs_nosuch");
    assert!(
        problem.fix.contains("modprobe ip_vs_nosuch"),
        "{}",
        problem.fix
    );
}

#[test]
fn builtin_schedulers_count() {
    let tree = Tree::new();
    tree.full_modules();
    tree.load(&["ip_vs", "ip_vs_rr", "ip_vs_wrr", "ip_vs_sh", "nf_conntrack"]);
    // tests/fixtures/modules.builtin lists ip_vs_wlc.
    let report = diagnose_with(
        &tree.options().with_scheduler("wlc"),
        &FakeProbe::reachable(),
    );
    assert_eq!(report.scheduler("wlc").unwrap().state, ModuleState::BuiltIn);
    assert!(report.usable(), "{:?}", kinds(&report));
}

#[test]
fn modules_only_for_another_release() {
    // A container mounting the host's /lib/modules, the host running another
    // kernel: only OTHER's directory exists.
    let tree = Tree::new();
    tree.module(OTHER, "ip_vs.ko.zst", "modules/ipvs-6.12.ko.zst");
    let report = diagnose_with(
        &tree.options(),
        &FakeProbe::new(ProbeOutcome::NotRegistered),
    );
    assert!(!report.usable());
    assert!(!report.modules_tree.release_dir_exists);
    assert_eq!(report.modules_tree.releases_present, [OTHER]);
    assert_eq!(report.ip_vs.state, ModuleState::Missing);
    let errs = errors(&report);
    assert!(errs.contains(&ProblemKind::ModulesDirMissing), "{errs:?}");
    assert!(errs.contains(&ProblemKind::IpvsUnavailable), "{errs:?}");
    assert!(errs.contains(&ProblemKind::FamilyNotRegistered), "{errs:?}");
    let dir = report
        .problems_of(ProblemKind::ModulesDirMissing)
        .next()
        .unwrap();
    assert!(dir.summary.contains("Exec format error"), "{}", dir.summary);
    assert!(dir.summary.contains(OTHER), "{}", dir.summary);
    assert!(dir.fix.contains(RELEASE), "{}", dir.fix);
}

#[test]
fn module_files_built_for_another_kernel() {
    // The right directory, but the files inside come from OTHER.
    let tree = Tree::new();
    tree.full_modules();
    tree.module(RELEASE, "ip_vs.ko.xz", "modules/ipvs-6.12.ko");
    tree.module(RELEASE, "ip_vs_rr.ko.xz", "modules/ipvs-6.12.ko.zst");
    let report = diagnose_with(&tree.options().with_probe(false), &FakeProbe::reachable());
    assert!(!report.usable());
    assert_eq!(report.modules_tree.foreign_vermagic_releases, [OTHER]);
    assert!(!report.modules_tree.matches_kernel());
    assert!(report.ip_vs.built_for_other_kernel());
    assert!(!report.ip_vs.usable());
    // The name says .xz but the bytes are plain / zstd: sniffed, not trusted.
    assert_eq!(
        report
            .scheduler("rr")
            .unwrap()
            .file
            .as_ref()
            .unwrap()
            .matches_kernel,
        Some(false)
    );
    let subjects: Vec<String> = report
        .problems_of(ProblemKind::ModuleForOtherKernel)
        .map(|p| p.subject.clone())
        .collect();
    assert_eq!(subjects, ["ip_vs", "ip_vs_rr"]);
    let p = report
        .problems_of(ProblemKind::ModuleForOtherKernel)
        .next()
        .unwrap();
    assert_eq!(p.severity, Severity::Error);
    assert!(p.summary.contains("Exec format error"), "{}", p.summary);
    assert!(!report.has_problem(ProblemKind::IpvsNotLoaded));
}

#[test]
fn missing_dependency() {
    let tree = Tree::new();
    tree.full_modules();
    std::fs::remove_file(tree.path(&format!(
        "lib/modules/{RELEASE}/kernel/net/netfilter/nf_conntrack.ko.xz"
    )))
    .unwrap();
    let report = diagnose_with(&tree.options().with_probe(false), &FakeProbe::reachable());
    assert_eq!(report.ip_vs.missing_dependencies, ["nf_conntrack"]);
    assert_eq!(report.nf_conntrack.state, ModuleState::Missing);
    assert!(!report.usable());
    assert!(report.has_problem(ProblemKind::DependencyMissing));
    assert!(report.has_problem(ProblemKind::ConntrackUnavailable));
}

#[test]
fn no_modules_dep_falls_back_to_walking_the_tree() {
    let tree = Tree::new();
    tree.full_modules();
    std::fs::remove_file(tree.path(&format!("lib/modules/{RELEASE}/modules.dep"))).unwrap();
    let report = diagnose_with(&tree.options().with_probe(false), &FakeProbe::reachable());
    assert_eq!(report.ip_vs.state, ModuleState::OnDisk);
    assert!(report.ip_vs.file.is_some());
    assert!(!report.modules_tree.has_modules_dep);
    let p = report
        .problems_of(ProblemKind::ModulesDepMissing)
        .next()
        .unwrap();
    assert_eq!(p.severity, Severity::Error);
    assert!(p.fix.contains("depmod"), "{}", p.fix);
}

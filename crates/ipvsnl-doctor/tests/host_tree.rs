//! The inspection layer run against fixture host trees (proc, sys and
//! lib/modules laid out under a scratch directory), with a fake probe.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use ipvsnl_doctor::{
    diagnose_with, HostRoots, ModuleState, Options, Probe, ProbeOutcome, ProblemKind, Report,
    Severity, SysctlValue,
};

const RELEASE: &str = "6.1.0-test-amd64";
const OTHER: &str = "6.12.0-test-amd64";
const IPVS_DIR: &str = "kernel/net/netfilter/ipvs";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// A scratch host tree.
struct Tree {
    root: PathBuf,
}

impl Tree {
    /// A tree for a privileged process on kernel RELEASE with sane sysctls
    /// and nothing loaded.
    fn new() -> Tree {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "doctor-tree-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&root);
        let tree = Tree { root };
        tree.write("proc/sys/kernel/osrelease", &format!("{RELEASE}\n"));
        tree.write("proc/modules", "");
        tree.copy("proc/self/status", "status-root.txt");
        tree.copy("proc/self/uid_map", "uid_map-initial.txt");
        tree.write("proc/sys/net/ipv4/ip_forward", "1\n");
        tree
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    fn write(&self, rel: &str, contents: &str) {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
    }

    fn copy(&self, rel: &str, fixture_name: &str) {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::copy(fixture(fixture_name), path).unwrap();
    }

    /// Places a module file (a fixture image) in the modules tree of
    /// `release`, at kernel/net/netfilter/ipvs/NAME.
    fn module(&self, release: &str, file_name: &str, fixture_name: &str) {
        self.copy(
            &format!("lib/modules/{release}/{IPVS_DIR}/{file_name}"),
            fixture_name,
        );
    }

    /// A modules tree for RELEASE with ip_vs, the default schedulers and
    /// nf_conntrack as .ko.xz files of the right vermagic, and a modules.dep.
    fn full_modules(&self) {
        let mut dep = String::new();
        for name in ["ip_vs", "ip_vs_rr", "ip_vs_wrr", "ip_vs_sh", "ip_vs_mh"] {
            self.module(RELEASE, &format!("{name}.ko.xz"), "modules/ipvs-6.1.ko.xz");
            let deps = if name == "ip_vs" {
                "kernel/net/netfilter/nf_conntrack.ko.xz".to_string()
            } else {
                format!("{IPVS_DIR}/ip_vs.ko.xz kernel/net/netfilter/nf_conntrack.ko.xz")
            };
            dep.push_str(&format!("{IPVS_DIR}/{name}.ko.xz: {deps}\n"));
        }
        self.copy(
            &format!("lib/modules/{RELEASE}/kernel/net/netfilter/nf_conntrack.ko.xz"),
            "modules/ipvs-6.1.ko.xz",
        );
        dep.push_str("kernel/net/netfilter/nf_conntrack.ko.xz:\n");
        self.write(&format!("lib/modules/{RELEASE}/modules.dep"), &dep);
        self.copy(
            &format!("lib/modules/{RELEASE}/modules.builtin"),
            "modules.builtin",
        );
    }

    fn load(&self, names: &[&str]) {
        let text: String = names
            .iter()
            .map(|n| format!("{n} 12288 0 - Live 0x0000000000000000\n"))
            .collect();
        self.write("proc/modules", &text);
    }

    fn vs_sysctls(&self, conntrack: &str, reuse: &str, expire: &str) {
        self.write("proc/sys/net/ipv4/vs/conntrack", conntrack);
        self.write("proc/sys/net/ipv4/vs/conn_reuse_mode", reuse);
        self.write("proc/sys/net/ipv4/vs/expire_nodest_conn", expire);
    }

    fn options(&self) -> Options {
        Options::new().with_roots(HostRoots::under(&self.root))
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// A probe that returns a fixed outcome and counts its calls.
struct FakeProbe {
    outcome: ProbeOutcome,
    calls: AtomicUsize,
}

impl FakeProbe {
    fn new(outcome: ProbeOutcome) -> FakeProbe {
        FakeProbe {
            outcome,
            calls: AtomicUsize::new(0),
        }
    }

    fn reachable() -> FakeProbe {
        FakeProbe::new(ProbeOutcome::Reachable {
            version: "1.2.1".to_string(),
            conn_tab_size: 4096,
        })
    }
}

impl Probe for FakeProbe {
    fn probe(&self, _netns: Option<&Path>) -> ProbeOutcome {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.outcome.clone()
    }
}

fn kinds(report: &Report) -> Vec<(ProblemKind, Severity, String)> {
    report
        .problems
        .iter()
        .map(|p| (p.kind, p.severity, p.subject.clone()))
        .collect()
}

fn errors(report: &Report) -> Vec<ProblemKind> {
    report.errors().map(|p| p.kind).collect()
}

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

#[test]
fn unprivileged_in_a_user_namespace() {
    let tree = Tree::new();
    tree.full_modules();
    tree.load(&["ip_vs", "ip_vs_rr", "ip_vs_wrr", "ip_vs_sh", "nf_conntrack"]);
    tree.copy("proc/self/status", "status-nobody.txt");
    tree.copy("proc/self/uid_map", "uid_map-userns.txt");
    let report = diagnose_with(
        &tree.options(),
        &FakeProbe::new(ProbeOutcome::PermissionDenied),
    );
    assert!(!report.usable());
    assert_eq!(report.privileges.euid, Some(65534));
    assert_eq!(report.privileges.cap_net_admin, Some(false));
    assert_eq!(report.privileges.initial_user_namespace, Some(false));
    assert_eq!(
        errors(&report),
        [
            ProblemKind::NoCapNetAdmin,
            ProblemKind::NotInitialUserNamespace
        ]
    );
    assert!(report
        .to_json()
        .contains("\"result\": \"permission_denied\""));
}

#[test]
fn eperm_despite_capabilities_is_explained() {
    let tree = Tree::new();
    tree.full_modules();
    tree.load(&["ip_vs", "ip_vs_rr", "ip_vs_wrr", "ip_vs_sh", "nf_conntrack"]);
    let report = diagnose_with(
        &tree.options(),
        &FakeProbe::new(ProbeOutcome::PermissionDenied),
    );
    assert_eq!(errors(&report), [ProblemKind::PermissionDenied]);
}

#[test]
fn sysctl_values_are_warnings() {
    let tree = Tree::new();
    tree.full_modules();
    tree.load(&["ip_vs", "ip_vs_rr", "ip_vs_wrr", "ip_vs_sh", "nf_conntrack"]);
    tree.write("proc/sys/net/ipv4/ip_forward", "0\n");
    tree.vs_sysctls("0", "1", "0");
    let report = diagnose_with(&tree.options(), &FakeProbe::reachable());
    assert!(report.usable());
    let subjects: Vec<String> = report
        .problems_of(ProblemKind::SysctlValue)
        .map(|p| p.subject.clone())
        .collect();
    assert_eq!(
        subjects,
        [
            "net.ipv4.ip_forward",
            "net.ipv4.vs.conntrack",
            "net.ipv4.vs.expire_nodest_conn"
        ]
    );
    for p in report.problems_of(ProblemKind::SysctlValue) {
        assert_eq!(p.severity, Severity::Warning);
        assert!(p.fix.starts_with("sysctl -w "), "{}", p.fix);
    }
    let bridge = report
        .sysctls
        .iter()
        .find(|s| s.name == "net.bridge.bridge-nf-call-iptables")
        .unwrap();
    assert!(matches!(&bridge.value, SysctlValue::Absent(why) if why.contains("br_netfilter")));
}

#[test]
fn conn_reuse_mode_advice_depends_on_the_kernel() {
    let tree = Tree::new();
    tree.write("proc/sys/kernel/osrelease", "5.4.0-old\n");
    tree.vs_sysctls("1", "1", "1");
    let report = diagnose_with(&tree.options().with_probe(false), &FakeProbe::reachable());
    let reuse = report
        .sysctls
        .iter()
        .find(|s| s.name == "net.ipv4.vs.conn_reuse_mode")
        .unwrap();
    assert_eq!(reuse.recommended.as_deref(), Some("0"));
    assert!(report
        .problems_of(ProblemKind::SysctlValue)
        .any(|p| p.subject == "net.ipv4.vs.conn_reuse_mode"));
}

#[test]
fn load_failure_is_reported_with_errno() {
    // A stand-in modprobe that fails the way busybox does on a module built
    // for another kernel.
    let tree = Tree::new();
    tree.full_modules();
    let script = tree.path("fake-modprobe");
    std::fs::write(
        &script,
        "#!/bin/sh\necho \"modprobe: can't load module $1 (kernel/net/netfilter/ipvs/$1.ko): invalid module format\" >&2\nexit 1\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let report = diagnose_with(
        &tree
            .options()
            .with_load(true)
            .with_probe(false)
            .with_modprobe(&script),
        &FakeProbe::reachable(),
    );
    let modules: Vec<&str> = report
        .load_attempts
        .iter()
        .map(|a| a.module.as_str())
        .collect();
    assert_eq!(
        modules,
        ["ip_vs", "ip_vs_rr", "ip_vs_wrr", "ip_vs_sh", "nf_conntrack"]
    );
    let first = &report.load_attempts[0];
    assert!(!first.success);
    assert_eq!(first.exit_status, Some(1));
    assert_eq!(first.errno, Some(libc::ENOEXEC));
    assert!(first.output.contains("invalid module format"));
    assert!(!report.usable());
    let p = report.problems_of(ProblemKind::LoadFailed).next().unwrap();
    assert_eq!(p.subject, "ip_vs");
    assert!(p.summary.contains("ENOEXEC"), "{}", p.summary);
    assert!(p.fix.contains("another kernel"), "{}", p.fix);
    let json = report.to_json();
    assert!(json.contains("\"errno_name\": \"ENOEXEC\""), "{json}");
    assert_eq!(serde_json::from_str::<Report>(&json).unwrap(), report);
    // The output contains quotes and parentheses; the JSON stays well formed.
    assert!(json_is_well_formed(&json), "{json}");
}

#[test]
fn load_success_marks_modules() {
    let tree = Tree::new();
    tree.full_modules();
    let script = tree.path("fake-modprobe");
    let modules = tree.path("proc/modules");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"$1 12288 0 - Live 0x0\" >> '{}'\nexit 0\n",
            modules.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let report = diagnose_with(
        &tree.options().with_load(true).with_modprobe(&script),
        &FakeProbe::reachable(),
    );
    assert!(report.load_attempts.iter().all(|a| a.success));
    assert!(report
        .modules()
        .all(|m| m.state == ModuleState::Loaded && m.loaded_by_doctor));
    assert!(report.usable());
}

#[test]
fn empty_root_does_not_panic() {
    let tree = Tree::new();
    std::fs::remove_dir_all(&tree.root).unwrap();
    let report = diagnose_with(
        &tree.options(),
        &FakeProbe::new(ProbeOutcome::NotRegistered),
    );
    assert!(!report.usable());
    assert!(report.has_problem(ProblemKind::UnknownRelease));
    assert!(!report.proc_modules_readable);
    let _ = report.to_string();
    assert!(json_is_well_formed(&report.to_json()));
}

#[test]
fn namespace_that_cannot_be_entered() {
    let tree = Tree::new();
    tree.full_modules();
    tree.write("not-a-netns", "");
    let report = diagnose_with(
        &tree.options().with_netns(tree.path("not-a-netns")),
        &FakeProbe::reachable(),
    );
    assert!(report.namespace_error.is_some());
    assert!(report.has_problem(ProblemKind::NamespaceUnreadable));
    assert!(!report.usable());
}

#[test]
fn json_escapes_odd_paths() {
    let tree = Tree::new();
    tree.write("proc/sys/kernel/osrelease", "6.1.0-\"quoted\"\\x\u{1}\n");
    let report = diagnose_with(&tree.options().with_probe(false), &FakeProbe::reachable());
    let json = report.to_json();
    assert!(
        json.contains(r#""kernel_release": "6.1.0-\"quoted\"\\x\u0001""#),
        "{json}"
    );
    assert_eq!(serde_json::from_str::<Report>(&json).unwrap(), report);
    assert!(json_is_well_formed(&json));
}

/// Whether `text` is one well-formed JSON document.
fn json_is_well_formed(text: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(text).is_ok()
}

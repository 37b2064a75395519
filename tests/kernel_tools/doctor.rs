//! ipvs-doctor against real kernels, in the normally booted VM (IPVS modules
//! preloaded): everything loaded, a scheduler that does not exist, another
//! network namespace, an unprivileged user.
//!
//! The situations that need a VM booted without preloaded modules (ip_vs on
//! disk only, a deleted scheduler, modules of another kernel) are in
//! kernel_doctor_scenarios.rs, run by `.ci/doctor-tests`.
//!
//! Run with `.ci/kernel-tests`; a plain `cargo test` skips them.

use crate::common;

use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::mpsc;

use common::*;
use ipvsnl_doctor::{
    diagnose, ModuleState, Options, ProbeOutcome, ProblemKind, Report, Severity, SysctlValue,
};

fn sysctl<'a>(report: &'a Report, name: &str) -> &'a SysctlValue {
    &report
        .sysctls
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("sysctl {name} not in the report"))
        .value
}

fn error_kinds(report: &Report) -> Vec<ProblemKind> {
    report.errors().map(|p| p.kind).collect()
}

fn modprobe_ok(module: &str) {
    let out = run("modprobe", &[module]);
    assert!(
        out.status.success(),
        "modprobe {module}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn doctor_everything_loaded() {
    fresh_netns();
    for module in ["ip_vs", "ip_vs_rr", "ip_vs_wrr", "ip_vs_sh"] {
        modprobe_ok(module);
    }
    let report = diagnose(&Options::new());
    eprintln!("{report}");
    assert!(report.usable(), "errors: {:?}", error_kinds(&report));
    assert_eq!(report.exit_code(), 0);
    assert_eq!(report.kernel_release, kernel_release());
    match &report.probe {
        ProbeOutcome::Reachable {
            version,
            conn_tab_size,
        } => {
            assert_eq!(version, "1.2.1");
            assert!(*conn_tab_size > 0);
        }
        other => panic!("probe: {other:?}"),
    }
    assert!(report.ip_vs_loaded_at_start);
    assert!(!report.ip_vs.loaded_by_probe);
    for module in report.modules() {
        assert_eq!(module.state, ModuleState::Loaded, "{}", module.name);
        let file = module
            .file
            .as_ref()
            .unwrap_or_else(|| panic!("{}: no file found", module.name));
        assert!(
            file.path
                .starts_with(format!("/lib/modules/{}", kernel_release())),
            "{}",
            file.path.display()
        );
        assert_eq!(file.matches_kernel, Some(true), "{:?}", file.vermagic);
    }
    let tree = &report.modules_tree;
    assert!(tree.release_dir_exists && tree.has_modules_dep && tree.has_modules_builtin);
    assert!(tree.matches_kernel());
    assert_eq!(tree.releases_present, [kernel_release()]);
    assert_eq!(report.privileges.euid, Some(0));
    assert_eq!(report.privileges.cap_net_admin, Some(true));
    assert_eq!(report.privileges.initial_user_namespace, Some(true));
    // A fresh namespace has the kernel's defaults.
    assert_eq!(
        sysctl(&report, "net.ipv4.vs.conntrack"),
        &SysctlValue::Value("0".into())
    );
    assert_eq!(
        sysctl(&report, "net.ipv4.vs.conn_reuse_mode"),
        &SysctlValue::Value("1".into())
    );
    assert_eq!(
        sysctl(&report, "net.ipv4.vs.expire_nodest_conn"),
        &SysctlValue::Value("0".into())
    );
    assert!(matches!(
        sysctl(&report, "net.ipv4.ip_forward"),
        SysctlValue::Value(v) if v == "0" || v == "1"
    ));
    // The VM has no br_netfilter.
    assert!(matches!(
        sysctl(&report, "net.bridge.bridge-nf-call-iptables"),
        SysctlValue::Absent(why) if why.contains("br_netfilter")
    ));
    // conntrack=0 and expire_nodest_conn=0 are what kube-proxy changes.
    let warned: Vec<&str> = report
        .problems_of(ProblemKind::SysctlValue)
        .map(|p| p.subject.as_str())
        .collect();
    assert!(warned.contains(&"net.ipv4.vs.conntrack"), "{warned:?}");
    assert!(
        warned.contains(&"net.ipv4.vs.expire_nodest_conn"),
        "{warned:?}"
    );
    assert!(report.to_json().contains("\"usable\": true"));
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn doctor_nonexistent_scheduler() {
    fresh_netns();
    modprobe_ok("ip_vs");
    let report = diagnose(
        &Options::new()
            .with_scheduler("nosuch")
            .with_scheduler("lc")
            .with_load(true),
    );
    eprintln!("{report}");
    assert!(!report.usable());
    assert_eq!(report.exit_code(), 1);
    let nosuch = report.scheduler("nosuch").expect("nosuch in the report");
    assert_eq!(nosuch.state, ModuleState::Missing);
    assert!(nosuch.file.is_none());
    // lc exists: loaded (preload) or loaded now by --load.
    assert_eq!(report.scheduler("lc").unwrap().state, ModuleState::Loaded);
    let attempt = report
        .load_attempts
        .iter()
        .find(|a| a.module == "ip_vs_nosuch")
        .expect("a load attempt for ip_vs_nosuch");
    assert!(!attempt.success);
    assert_ne!(attempt.exit_status, Some(0));
    assert!(!attempt.output.is_empty());
    assert_eq!(attempt.errno, Some(libc::ENOENT), "{}", attempt.output);
    let errors = error_kinds(&report);
    assert!(
        errors.contains(&ProblemKind::SchedulerUnavailable),
        "{errors:?}"
    );
    assert!(errors.contains(&ProblemKind::LoadFailed), "{errors:?}");
    for p in &report.problems {
        if p.severity == Severity::Error {
            assert_eq!(p.subject, "ip_vs_nosuch", "unexpected error: {}", p.summary);
        }
        assert!(!p.fix.is_empty());
    }
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn doctor_other_network_namespace() {
    fresh_netns();
    // A helper thread moves into a namespace of its own, changes a sysctl
    // there, and stays alive while the doctor looks at it.
    let (tx, rx) = mpsc::channel();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let helper = std::thread::spawn(move || {
        fresh_netns();
        std::fs::write("/proc/sys/net/ipv4/vs/expire_nodest_conn", "1\n").unwrap();
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::gettid() };
        tx.send(tid).unwrap();
        let _ = done_rx.recv();
    });
    let tid = rx.recv().expect("helper thread started");
    let path = format!("/proc/{}/task/{tid}/ns/net", std::process::id());

    let own = std::fs::read_to_string("/proc/sys/net/ipv4/vs/expire_nodest_conn").unwrap();
    assert_eq!(own.trim(), "0", "this thread's namespace keeps the default");
    let report = diagnose(&Options::new().with_netns(&path));
    done_tx.send(()).unwrap();
    helper.join().unwrap();
    eprintln!("{report}");

    assert_eq!(
        report.namespace.as_deref(),
        Some(std::path::Path::new(&path))
    );
    assert_eq!(report.namespace_error, None);
    assert!(report.probe.reachable(), "{:?}", report.probe);
    assert_eq!(
        sysctl(&report, "net.ipv4.vs.expire_nodest_conn"),
        &SysctlValue::Value("1".into()),
        "the sysctls must come from the namespace asked for"
    );
    assert!(!report
        .problems_of(ProblemKind::SysctlValue)
        .any(|p| p.subject == "net.ipv4.vs.expire_nodest_conn"));
    assert!(report.usable(), "errors: {:?}", error_kinds(&report));
}

/// What the child process (the same test binary, as nobody) prints.
const CHILD_MARK: &str = "IPVSNL-DOCTOR-CHILD";

/// Not a test of its own: when the environment asks for it, runs the doctor
/// and prints a summary line for `doctor_unprivileged`.
#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn doctor_child_process() {
    if std::env::var_os("IPVSNL_DOCTOR_CHILD").is_none() {
        return;
    }
    let report = diagnose(&Options::new());
    let probe = match &report.probe {
        ProbeOutcome::Reachable { .. } => "reachable",
        ProbeOutcome::PermissionDenied => "permission_denied",
        ProbeOutcome::NotRegistered => "not_registered",
        ProbeOutcome::Skipped => "skipped",
        _ => "failed",
    };
    let errors: Vec<&str> = error_kinds(&report).iter().map(|k| k.as_str()).collect();
    println!(
        "{CHILD_MARK} usable={} euid={:?} cap_net_admin={:?} initial_userns={:?} probe={probe} ip_vs={} errors={}",
        report.usable(),
        report.privileges.euid,
        report.privileges.cap_net_admin,
        report.privileges.initial_user_namespace,
        report.ip_vs.state.as_str(),
        errors.join(","),
    );
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn doctor_unprivileged() {
    require_root();
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(&exe)
        .args([
            "--ignored",
            "--exact",
            &test_name(module_path!(), "doctor_child_process"),
            "--nocapture",
            "--test-threads=1",
        ])
        .env("IPVSNL_DOCTOR_CHILD", "1")
        .uid(NOBODY)
        .gid(NOBODY)
        .output()
        .expect("run the test binary as nobody");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "child failed:\n{stdout}\n{stderr}");
    let line = stdout
        .lines()
        .find_map(|l| l.split_once(CHILD_MARK).map(|(_, rest)| rest))
        .unwrap_or_else(|| panic!("no summary from the child:\n{stdout}\n{stderr}"));
    eprintln!("child:{line}");
    let field = |key: &str| -> String {
        line.split_whitespace()
            .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
            .unwrap_or_else(|| panic!("no {key} in {line}"))
            .to_string()
    };
    assert_eq!(field("usable"), "false");
    assert_eq!(field("euid"), "Some(65534)");
    assert_eq!(field("cap_net_admin"), "Some(false)");
    assert_eq!(field("initial_userns"), "Some(true)");
    // The family resolves for anyone; GET_INFO needs CAP_NET_ADMIN.
    assert_eq!(field("probe"), "permission_denied");
    assert_eq!(field("ip_vs"), "loaded");
    assert_eq!(field("errors"), "no_cap_net_admin");

    // The ipvs-doctor binary says the same, with exit status 1.
    let bin = tool("ipvs-doctor");
    if !bin.is_file() {
        eprintln!("{} not staged; binary check skipped", bin.display());
        return;
    }
    let out = Command::new(&bin)
        .arg("--json")
        .uid(NOBODY)
        .gid(NOBODY)
        .output()
        .expect("run ipvs-doctor as nobody");
    let json = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{json}");
    assert!(json.contains("\"usable\": false"), "{json}");
    assert!(json.contains("\"result\": \"permission_denied\""), "{json}");
    assert!(json.contains("\"kind\": \"no_cap_net_admin\""), "{json}");
}

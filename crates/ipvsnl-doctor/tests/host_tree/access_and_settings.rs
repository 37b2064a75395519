//! Privileges, sysctls, a load through the probe, and odd hosts: an
//! empty root, a namespace that cannot be entered, paths JSON must escape.

use ipvsnl_doctor::{
    diagnose_with, ModuleState, ProbeOutcome, ProblemKind, Report, Severity, SysctlValue,
};

use super::tree::*;

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

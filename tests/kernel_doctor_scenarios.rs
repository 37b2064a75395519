//! ipvs-doctor scenarios that change the VM's module state, so they need a
//! VM of their own booted without preloaded modules. `.ci/doctor-tests`
//! boots one per scenario and runs these tests there one by one, in order,
//! with `IPVSNL_DOCTOR_SCENARIO` set:
//!
//! * `fresh`: ip_vs on disk but not loaded (then loaded by the probe); a
//!   scheduler module deleted from the tree; the binary run as nobody.
//! * `foreign`: the ipvs modules of the *other* Debian kernel (staged by the
//!   script in `$IPVSNL_DOCTOR_FOREIGN`) copied over the running kernel's,
//!   so loading fails for real with ENOEXEC; then only the other kernel's
//!   modules directory.
//!
//! Anywhere else (`.ci/kernel-tests`, a plain `cargo test --ignored`) they
//! return at once without touching anything.

mod common;

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use ipvsnl_doctor::{
    diagnose, ModuleState, Options, ProbeOutcome, ProblemKind, Report, Severity, SysctlValue,
};

const IPVS_DIR: &str = "kernel/net/netfilter/ipvs";

/// Whether this is the VM boot for `scenario`; prints why not otherwise.
fn in_scenario(scenario: &str) -> bool {
    let current = std::env::var("IPVSNL_DOCTOR_SCENARIO").unwrap_or_default();
    if current == scenario && in_vm() {
        require_root();
        true
    } else {
        eprintln!("skipped: needs the '{scenario}' VM boot of .ci/doctor-tests");
        false
    }
}

fn loaded(module: &str) -> bool {
    std::fs::read_to_string("/proc/modules")
        .unwrap()
        .lines()
        .any(|l| l.split_whitespace().next() == Some(module))
}

fn release_dir() -> PathBuf {
    PathBuf::from(format!("/lib/modules/{}", kernel_release()))
}

fn error_kinds(report: &Report) -> Vec<ProblemKind> {
    report.errors().map(|p| p.kind).collect()
}

/// The ipvs-doctor binary, when the script staged it.
fn doctor_bin() -> Option<PathBuf> {
    std::env::var_os("IPVS_DOCTOR_BIN")
        .map(PathBuf::from)
        .filter(|p| p.is_file())
}

/// Runs the ipvs-doctor binary; returns (exit code, stdout).
fn run_doctor(args: &[&str], as_nobody: bool) -> Option<(i32, String)> {
    let bin = doctor_bin()?;
    let mut cmd = Command::new(&bin);
    cmd.args(args);
    if as_nobody {
        cmd.uid(NOBODY).gid(NOBODY);
    }
    let out = cmd.output().expect("run ipvs-doctor");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    eprintln!(
        "$ ipvs-doctor {}{} -> {:?}\n{stdout}{}",
        args.join(" "),
        if as_nobody { " (as nobody)" } else { "" },
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    Some((out.status.code().unwrap_or(-1), stdout))
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn scenario_fresh_1_ip_vs_on_disk_not_loaded() {
    if !in_scenario("fresh") {
        return;
    }
    assert!(!loaded("ip_vs"), "this boot must not preload ip_vs");

    // Without the probe nothing is loaded, and the report says ip_vs is on disk.
    let report = diagnose(&Options::new().with_probe(false));
    eprintln!("{report}");
    assert!(
        !loaded("ip_vs"),
        "the doctor without probe must not load ip_vs"
    );
    assert_eq!(report.ip_vs.state, ModuleState::OnDisk);
    let file = report.ip_vs.file.as_ref().expect("ip_vs file");
    assert_eq!(file.path, release_dir().join(IPVS_DIR).join("ip_vs.ko"));
    assert_eq!(file.matches_kernel, Some(true));
    assert!(report
        .ip_vs
        .depends_on
        .contains(&"nf_conntrack".to_string()));
    assert!(report.ip_vs.missing_dependencies.is_empty());
    for s in &report.schedulers {
        assert_eq!(s.state, ModuleState::OnDisk, "{}", s.name);
    }
    assert!(report.has_problem(ProblemKind::IpvsNotLoaded));
    assert!(report.usable(), "errors: {:?}", error_kinds(&report));
    assert!(matches!(
        report.sysctls.iter().find(|s| s.name == "net.ipv4.vs.conntrack").unwrap().value,
        SysctlValue::Absent(ref why) if why.contains("not loaded")
    ));

    // The probe resolves the IPVS family, and the kernel loads ip_vs for it.
    let report = diagnose(&Options::new());
    eprintln!("{report}");
    assert!(loaded("ip_vs"));
    assert!(!report.ip_vs_loaded_at_start);
    assert!(report.probe.reachable(), "{:?}", report.probe);
    assert_eq!(report.ip_vs.state, ModuleState::Loaded);
    assert!(report.ip_vs.loaded_by_probe);
    for s in &report.schedulers {
        assert_eq!(s.state, ModuleState::OnDisk, "{}", s.name);
    }
    assert!(report.usable(), "errors: {:?}", error_kinds(&report));
    // Now the vs sysctls exist.
    assert_eq!(
        report
            .sysctls
            .iter()
            .find(|s| s.name == "net.ipv4.vs.conntrack")
            .unwrap()
            .value,
        SysctlValue::Value("0".into())
    );
    if let Some((code, stdout)) = run_doctor(&["--json"], false) {
        assert_eq!(code, 0);
        assert!(stdout.contains("\"usable\": true"));
    }
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn scenario_fresh_2_scheduler_deleted() {
    if !in_scenario("fresh") {
        return;
    }
    assert!(
        !loaded("ip_vs_sh"),
        "ip_vs_sh must not be loaded in this boot"
    );
    let sh = release_dir().join(IPVS_DIR).join("ip_vs_sh.ko");
    std::fs::remove_file(&sh).unwrap_or_else(|e| panic!("remove {}: {e}", sh.display()));

    let report = diagnose(&Options::new().with_load(true));
    eprintln!("{report}");
    assert!(!report.usable());
    let sh_report = report.scheduler("sh").unwrap();
    assert_eq!(sh_report.state, ModuleState::Missing);
    // The others were loaded by --load.
    for name in ["rr", "wrr"] {
        let s = report.scheduler(name).unwrap();
        assert_eq!(s.state, ModuleState::Loaded, "{name}");
        assert!(s.loaded_by_doctor, "{name}");
    }
    let attempt = report
        .load_attempts
        .iter()
        .find(|a| a.module == "ip_vs_sh")
        .expect("a load attempt for ip_vs_sh");
    assert!(!attempt.success);
    assert_ne!(attempt.exit_status, Some(0));
    assert_eq!(attempt.errno, Some(libc::ENOENT), "{}", attempt.output);
    assert_eq!(
        error_kinds(&report),
        [ProblemKind::SchedulerUnavailable, ProblemKind::LoadFailed]
    );
    for p in &report.problems {
        if p.severity == Severity::Error {
            assert_eq!(p.subject, "ip_vs_sh");
        }
    }
    if let Some((code, stdout)) = run_doctor(&[], false) {
        assert_eq!(code, 1);
        assert!(
            stdout.contains("scheduler module ip_vs_sh is not built in"),
            "{stdout}"
        );
    }
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn scenario_fresh_3_binary_as_nobody() {
    if !in_scenario("fresh") {
        return;
    }
    let Some((code, stdout)) = run_doctor(&["--scheduler", "rr"], true) else {
        panic!("IPVS_DOCTOR_BIN is not set: .ci/doctor-tests stages the binary");
    };
    assert_eq!(code, 1);
    assert!(stdout.contains("lacks CAP_NET_ADMIN"), "{stdout}");
    assert!(stdout.contains("effective uid 65534"), "{stdout}");
    assert!(stdout.contains("refused us (EPERM)"), "{stdout}");
    // Bad arguments: exit 2 with a message naming the problem.
    let bin = doctor_bin().unwrap();
    let out = Command::new(&bin).arg("--scheduler").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("a value is required for '--scheduler"),
        "{said}"
    );
}

/// The other kernel's module files staged by the script, and its release.
fn foreign() -> (PathBuf, String) {
    let dir = PathBuf::from(
        std::env::var_os("IPVSNL_DOCTOR_FOREIGN").expect("IPVSNL_DOCTOR_FOREIGN is set"),
    );
    let release = std::fs::read_to_string(dir.join("release"))
        .expect("foreign/release")
        .trim()
        .to_string();
    assert_ne!(release, kernel_release());
    (dir, release)
}

fn dmesg_tail() -> String {
    let out = Command::new("dmesg").output();
    out.map(|o| {
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(8)..].join("\n")
    })
    .unwrap_or_default()
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn scenario_foreign_1_modules_of_another_kernel() {
    if !in_scenario("foreign") {
        return;
    }
    assert!(!loaded("ip_vs"), "this boot must not preload ip_vs");
    let (dir, other) = foreign();
    let target = release_dir().join(IPVS_DIR);
    let mut copied = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "ko") {
            std::fs::copy(&path, target.join(path.file_name().unwrap())).unwrap();
            copied += 1;
        }
    }
    assert!(
        copied >= 4,
        "only {copied} module files staged in {}",
        dir.display()
    );

    // Read-only look: the files are recognised as another kernel's.
    let report = diagnose(&Options::new().with_probe(false));
    eprintln!("{report}");
    assert!(!report.usable());
    assert_eq!(
        report.modules_tree.foreign_vermagic_releases,
        [other.as_str()]
    );
    assert!(report.ip_vs.built_for_other_kernel());
    let vermagic = report
        .ip_vs
        .file
        .as_ref()
        .unwrap()
        .vermagic
        .clone()
        .unwrap();
    assert!(vermagic.starts_with(&format!("{other} ")), "{vermagic}");
    let subjects: Vec<&str> = report
        .problems_of(ProblemKind::ModuleForOtherKernel)
        .map(|p| p.subject.as_str())
        .collect();
    assert_eq!(subjects, ["ip_vs", "ip_vs_rr", "ip_vs_wrr", "ip_vs_sh"]);
    // nf_conntrack is still the running kernel's own.
    assert_eq!(
        report.nf_conntrack.file.as_ref().unwrap().matches_kernel,
        Some(true)
    );

    // --load: modprobe fails for real, and the kernel says why.
    let report = diagnose(&Options::new().with_probe(false).with_load(true));
    eprintln!("{report}");
    eprintln!("dmesg:\n{}", dmesg_tail());
    assert!(!loaded("ip_vs"));
    let attempt = report
        .load_attempts
        .iter()
        .find(|a| a.module == "ip_vs")
        .expect("a load attempt for ip_vs");
    assert!(!attempt.success);
    assert_ne!(attempt.exit_status, Some(0));
    assert_eq!(attempt.errno, Some(libc::ENOEXEC), "{}", attempt.output);
    let load = report
        .problems_of(ProblemKind::LoadFailed)
        .find(|p| p.subject == "ip_vs")
        .expect("LoadFailed for ip_vs");
    assert!(load.summary.contains("ENOEXEC"), "{}", load.summary);
    assert!(load.fix.contains("another kernel"), "{}", load.fix);
    // Its dependency, the running kernel's own nf_conntrack, loaded fine.
    assert!(loaded("nf_conntrack"));

    // The probe: the family's auto-load fails the same way.
    let report = diagnose(&Options::new());
    assert_eq!(report.probe, ProbeOutcome::NotRegistered);
    assert!(report.has_problem(ProblemKind::FamilyNotRegistered));
    assert!(!loaded("ip_vs"));

    if let Some((code, stdout)) = run_doctor(&["--load", "--json"], false) {
        assert_eq!(code, 1);
        assert!(stdout.contains("\"errno_name\": \"ENOEXEC\""), "{stdout}");
        assert!(stdout.contains("\"kind\": \"module_for_other_kernel\""));
    }
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn scenario_foreign_2_only_another_release_dir() {
    if !in_scenario("foreign") {
        return;
    }
    let (_, other) = foreign();
    // As in a container that mounts the /lib/modules of a host running
    // another kernel: only the other release's directory is there.
    let other_dir = Path::new("/lib/modules").join(&other);
    std::fs::rename(release_dir(), &other_dir).unwrap();

    let report = diagnose(&Options::new().with_load(true));
    eprintln!("{report}");
    assert!(!report.usable());
    assert!(!report.modules_tree.release_dir_exists);
    assert_eq!(report.modules_tree.releases_present, [other.as_str()]);
    let p = report
        .problems_of(ProblemKind::ModulesDirMissing)
        .next()
        .expect("ModulesDirMissing");
    assert_eq!(p.severity, Severity::Error);
    assert!(p.summary.contains(&other), "{}", p.summary);
    assert!(p.summary.contains("Exec format error"), "{}", p.summary);
    assert_eq!(report.ip_vs.state, ModuleState::Missing);
    let attempt = report
        .load_attempts
        .iter()
        .find(|a| a.module == "ip_vs")
        .expect("a load attempt for ip_vs");
    assert!(!attempt.success);
    assert!(!attempt.output.is_empty());
    assert_eq!(report.probe, ProbeOutcome::NotRegistered);
    if let Some((code, _)) = run_doctor(&[], false) {
        assert_eq!(code, 1);
    }
}

//! Turning the facts into problems, each with one line saying what to do.
//! Pure: works on a [`Report`] whose `problems` are not filled in yet.

use crate::load::errno_name;
use crate::report::{
    ModuleReport, ModuleState, ProbeOutcome, Problem, ProblemKind, Report, Severity, SysctlValue,
};

fn problem(
    kind: ProblemKind,
    severity: Severity,
    subject: &str,
    summary: String,
    fix: String,
) -> Problem {
    Problem {
        kind,
        severity,
        subject: subject.to_string(),
        summary,
        fix,
    }
}

fn present(module: &ModuleReport) -> bool {
    matches!(module.state, ModuleState::BuiltIn | ModuleState::Loaded)
}

/// The advice for getting a module that is not there.
fn install_fix(release: &str, module: &str) -> String {
    format!(
        "install the modules package for kernel {release} (Debian/Ubuntu: linux-image-{release} or linux-modules-extra-{release}; RHEL: kernel-modules), or in a container run `modprobe {module}` on the host"
    )
}

/// Computes the problems of a report, errors first.
pub(crate) fn assess(report: &Report) -> Vec<Problem> {
    let mut problems = Vec::new();
    let release = report.kernel_release.as_str();
    let tree = &report.modules_tree;

    if release.is_empty() {
        problems.push(problem(
            ProblemKind::UnknownRelease,
            Severity::Error,
            "",
            "cannot tell the running kernel's release".to_string(),
            "mount /proc (the doctor reads /proc/sys/kernel/osrelease, which `uname -r` prints)"
                .to_string(),
        ));
    }

    if let Some(err) = &report.namespace_error {
        problems.push(problem(
            ProblemKind::NamespaceUnreadable,
            Severity::Error,
            "",
            format!("cannot inspect the network namespace: {err}"),
            "run as root (entering a namespace needs CAP_SYS_ADMIN) and pass a bound namespace such as /var/run/netns/NAME or /proc/PID/ns/net".to_string(),
        ));
    }

    let needed: Vec<&ModuleReport> = std::iter::once(&report.ip_vs)
        .chain(report.schedulers.iter())
        .collect();
    let ipvs_answered = report.probe.reachable();
    // Modules that must still come from the disk.
    let needs_disk = needed
        .iter()
        .any(|m| !(present(m) || (m.name == "ip_vs" && ipvs_answered)));

    if !release.is_empty() && !tree.release_dir_exists {
        let others: Vec<&str> = tree
            .releases_present
            .iter()
            .map(String::as_str)
            .filter(|r| *r != release)
            .collect();
        let summary = if !report.proc_modules_readable && others.is_empty() {
            format!(
                "this kernel ({release}) shows no /proc/modules and has no modules tree: it cannot load modules, so IPVS must be built in"
            )
        } else if others.is_empty() {
            format!(
                "no modules tree for the running kernel {release}: {} does not exist",
                tree.release_dir.display()
            )
        } else {
            format!(
                "no modules for the running kernel {release} in {}, which holds only {}: modules built for another kernel are refused with \"Exec format error\" (a container that mounts the modules of a host running another kernel, or a kernel upgraded without a reboot)",
                tree.root.display(),
                others.join(", ")
            )
        };
        let fix = if !report.proc_modules_readable && others.is_empty() {
            "use a kernel built with IPVS and its schedulers (CONFIG_IP_VS=y, CONFIG_IP_VS_RR=y, ...), or one with module support and its modules package".to_string()
        } else {
            format!(
                "make /lib/modules/{release} visible (mount the host's /lib/modules read-only) or load the modules on the host: modprobe -a {}",
                needed.iter().map(|m| m.name.as_str()).collect::<Vec<_>>().join(" ")
            )
        };
        problems.push(problem(
            ProblemKind::ModulesDirMissing,
            if needs_disk {
                Severity::Error
            } else {
                Severity::Warning
            },
            "",
            summary,
            fix,
        ));
    } else if tree.release_dir_exists && !tree.has_modules_dep {
        problems.push(problem(
            ProblemKind::ModulesDepMissing,
            if needs_disk {
                Severity::Error
            } else {
                Severity::Warning
            },
            "",
            format!(
                "{} has no modules.dep, so modprobe cannot find modules",
                tree.release_dir.display()
            ),
            format!("run `depmod -a {release}`"),
        ));
    }

    for module in std::iter::once(&report.ip_vs)
        .chain(report.schedulers.iter())
        .chain(std::iter::once(&report.nf_conntrack))
    {
        let Some(file) = &module.file else { continue };
        if file.matches_kernel != Some(false) {
            continue;
        }
        let built_for = file
            .vermagic
            .as_deref()
            .and_then(crate::parse::vermagic_release)
            .unwrap_or("another kernel");
        let loaded = present(module) || (module.name == "ip_vs" && ipvs_answered);
        let summary = if loaded {
            format!(
                "{} is loaded, but the file {} on disk was built for {built_for}, not the running {release}: the visible modules tree belongs to another kernel",
                module.name,
                file.path.display()
            )
        } else {
            format!(
                "{} was built for {built_for}, not the running kernel {release}: loading it fails with \"Exec format error\" (ENOEXEC)",
                file.path.display()
            )
        };
        problems.push(problem(
            ProblemKind::ModuleForOtherKernel,
            if loaded { Severity::Warning } else { Severity::Error },
            &module.name,
            summary,
            format!(
                "give this system the modules of kernel {release} (mount the host's own /lib/modules/{release}), or load {} on the host",
                module.name
            ),
        ));
    }

    // ip_vs itself.
    let ip_vs = &report.ip_vs;
    if !ipvs_answered && !present(ip_vs) {
        match ip_vs.state {
            ModuleState::Missing => problems.push(problem(
                ProblemKind::IpvsUnavailable,
                Severity::Error,
                "ip_vs",
                format!(
                    "ip_vs is not built in, not loaded, and not in {}",
                    tree.release_dir.display()
                ),
                install_fix(release, "ip_vs"),
            )),
            ModuleState::OnDisk if !ip_vs.missing_dependencies.is_empty() => {}
            ModuleState::OnDisk if ip_vs.built_for_other_kernel() => {}
            ModuleState::OnDisk if report.probe == ProbeOutcome::Skipped => problems.push(problem(
                ProblemKind::IpvsNotLoaded,
                Severity::Warning,
                "ip_vs",
                "ip_vs is on disk but not loaded; the first IPVS request should load it"
                    .to_string(),
                "run `modprobe ip_vs` (or rerun with the probe to see whether it loads)"
                    .to_string(),
            )),
            _ => {}
        }
    }
    if report.probe == ProbeOutcome::NotRegistered {
        let summary = match ip_vs.state {
            ModuleState::OnDisk => "the IPVS generic-netlink family is not registered, and resolving it did not load ip_vs".to_string(),
            _ => "the IPVS generic-netlink family is not registered: the kernel has no IPVS".to_string(),
        };
        problems.push(problem(
            ProblemKind::FamilyNotRegistered,
            Severity::Error,
            "ip_vs",
            summary,
            "run `modprobe ip_vs` and read its error (in a container, on the host); `--load` does this and reports it".to_string(),
        ));
    }

    for module in needed.iter().chain(std::iter::once(&&report.nf_conntrack)) {
        if module.state == ModuleState::OnDisk && !module.missing_dependencies.is_empty() {
            let is_conntrack = module.name == "nf_conntrack";
            problems.push(problem(
                ProblemKind::DependencyMissing,
                if is_conntrack {
                    Severity::Warning
                } else {
                    Severity::Error
                },
                &module.name,
                format!(
                    "{} needs {}, which {} not available",
                    module.name,
                    module.missing_dependencies.join(", "),
                    if module.missing_dependencies.len() == 1 {
                        "is"
                    } else {
                        "are"
                    }
                ),
                install_fix(release, &module.name),
            ));
        }
    }

    for module in &report.schedulers {
        if module.state == ModuleState::Missing {
            problems.push(problem(
                ProblemKind::SchedulerUnavailable,
                Severity::Error,
                &module.name,
                format!(
                    "scheduler module {} is not built in, not loaded, and not in {}",
                    module.name,
                    tree.release_dir.display()
                ),
                install_fix(release, &module.name),
            ));
        }
    }

    if report.nf_conntrack.state == ModuleState::Missing {
        problems.push(problem(
            ProblemKind::ConntrackUnavailable,
            Severity::Warning,
            "nf_conntrack",
            "nf_conntrack is not available: IPVS balances, but masquerading and net.ipv4.vs.conntrack=1 (kube-proxy) need it".to_string(),
            install_fix(release, "nf_conntrack"),
        ));
    }

    let privileges = &report.privileges;
    if privileges.cap_net_admin == Some(false) {
        let mask = privileges
            .cap_eff
            .map(|m| format!(" (CapEff {m:016x})"))
            .unwrap_or_default();
        problems.push(problem(
            ProblemKind::NoCapNetAdmin,
            Severity::Error,
            "",
            format!("this process lacks CAP_NET_ADMIN{mask}; every IPVS netlink request, reads included, needs it"),
            "run as root, or grant CAP_NET_ADMIN (containers: --cap-add NET_ADMIN; binaries: setcap cap_net_admin+ep)".to_string(),
        ));
    }
    if privileges.initial_user_namespace == Some(false) {
        problems.push(problem(
            ProblemKind::NotInitialUserNamespace,
            Severity::Error,
            "",
            "this process runs in a user namespace: IPVS checks CAP_NET_ADMIN in the initial user namespace, so even root here gets EPERM".to_string(),
            "run in the host's user namespace (a privileged container, not a rootless or user-namespace-remapped one)".to_string(),
        ));
    }

    match &report.probe {
        ProbeOutcome::PermissionDenied if privileges.sufficient() => problems.push(problem(
            ProblemKind::PermissionDenied,
            Severity::Error,
            "",
            "the kernel refused the IPVS request with EPERM although CAP_NET_ADMIN looks granted".to_string(),
            "check the security policy in force (seccomp, SELinux, AppArmor) and that the process runs in the initial user namespace".to_string(),
        )),
        ProbeOutcome::Failed { errno, message } => {
            let errno = errno
                .map(|e| format!(" ({})", errno_name(e).map(str::to_string).unwrap_or_else(|| format!("errno {e}"))))
                .unwrap_or_default();
            problems.push(problem(
                ProblemKind::ProbeFailed,
                Severity::Error,
                "",
                format!("the IPVS netlink probe failed{errno}: {message}"),
                "check that netlink sockets are allowed here (a seccomp profile may block them) and that --netns names a network namespace".to_string(),
            ))
        }
        _ => {}
    }

    for attempt in &report.load_attempts {
        if attempt.success {
            continue;
        }
        let still_missing = !report
            .modules()
            .any(|m| m.name == attempt.module && present(m));
        let errno_text = attempt.errno.map(|e| {
            errno_name(e)
                .map(str::to_string)
                .unwrap_or_else(|| format!("errno {e}"))
        });
        let mut how = Vec::new();
        if let Some(code) = attempt.exit_status {
            how.push(format!("exit {code}"));
        }
        if let Some(name) = &errno_text {
            how.push(name.clone());
        }
        let first_line = attempt.output.lines().next().unwrap_or("no message");
        let fix = match attempt.errno {
            Some(libc::ENOEXEC) => format!("the module file was built for another kernel (dmesg says which check refused it: version magic, module_layout or struct module size): install the modules of {release}, or load {} on the host", attempt.module),
            Some(libc::ENOENT) => install_fix(release, &attempt.module),
            Some(libc::EPERM) | Some(libc::EACCES) => "loading modules needs CAP_SYS_MODULE in the initial user namespace: run modprobe as root on the host".to_string(),
            Some(libc::ENOSYS) => "this kernel has no loadable-module support: use a kernel with IPVS built in".to_string(),
            Some(libc::EKEYREJECTED) | Some(libc::ENOKEY) => "the kernel requires signed modules: install the distribution's signed modules package".to_string(),
            _ => "read the kernel log (dmesg) for the kernel's reason".to_string(),
        };
        problems.push(problem(
            ProblemKind::LoadFailed,
            if still_missing {
                Severity::Error
            } else {
                Severity::Warning
            },
            &attempt.module,
            format!(
                "`{}` failed ({}): {first_line}",
                attempt.command,
                how.join(", ")
            ),
            fix,
        ));
    }

    for sysctl in &report.sysctls {
        let (SysctlValue::Value(value), Some(wanted)) = (&sysctl.value, &sysctl.recommended) else {
            continue;
        };
        if value != wanted {
            problems.push(problem(
                ProblemKind::SysctlValue,
                Severity::Warning,
                &sysctl.name,
                format!(
                    "{} = {value}, kube-proxy's IPVS mode wants {wanted}: {}",
                    sysctl.name, sysctl.why
                ),
                format!(
                    "sysctl -w {}={wanted} (kube-proxy sets it itself when it may write /proc/sys)",
                    sysctl.name
                ),
            ));
        }
    }

    problems.sort_by_key(|p| match p.severity {
        Severity::Error => 0,
        Severity::Warning => 1,
    });
    problems
}

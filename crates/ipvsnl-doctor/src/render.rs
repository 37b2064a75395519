//! Rendering a [`Report`] for people ([`std::fmt::Display`]). Programs
//! get JSON (`json.rs`).

use std::fmt;

use crate::load::errno_name;
use crate::report::{ModuleReport, ModuleState, ProbeOutcome, Report, Severity, SysctlValue};

fn module_line(f: &mut fmt::Formatter<'_>, module: &ModuleReport) -> fmt::Result {
    let mut state = match module.state {
        ModuleState::BuiltIn => "built in".to_string(),
        ModuleState::Loaded => "loaded".to_string(),
        ModuleState::OnDisk => "on disk, not loaded".to_string(),
        ModuleState::Missing => "MISSING".to_string(),
    };
    if module.loaded_by_probe {
        state.push_str(" (by the netlink probe)");
    }
    if module.loaded_by_doctor {
        state.push_str(" (by --load)");
    }
    write!(f, "  {:<14} {state}", module.name)?;
    if let Some(file) = &module.file {
        write!(
            f,
            "\n  {:<14} file {} ({})",
            "",
            file.path.display(),
            file.compression.as_str()
        )?;
        match (&file.vermagic, file.matches_kernel) {
            (Some(v), Some(false)) => write!(
                f,
                "\n  {:<14} built for {} (NOT the running kernel)",
                "",
                v.trim()
            )?,
            (Some(_), _) => {}
            (None, _) => write!(
                f,
                "\n  {:<14} vermagic unreadable: {}",
                "",
                file.vermagic_error.as_deref().unwrap_or("unknown reason")
            )?,
        }
    }
    if !module.missing_dependencies.is_empty() {
        write!(
            f,
            "\n  {:<14} missing dependencies: {}",
            "",
            module.missing_dependencies.join(", ")
        )?;
    }
    writeln!(f)
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let errors = self
            .problems
            .iter()
            .filter(|p| p.severity == Severity::Error)
            .count();
        let warnings = self.problems.len() - errors;
        let release = if self.kernel_release.is_empty() {
            "unknown"
        } else {
            &self.kernel_release
        };
        write!(f, "IPVS doctor: kernel {release}")?;
        if let Some(ns) = &self.namespace {
            write!(f, ", network namespace {}", ns.display())?;
        }
        writeln!(f)?;
        writeln!(
            f,
            "Verdict: {} ({errors} error{}, {warnings} warning{})",
            if self.usable() {
                "IPVS is USABLE"
            } else {
                "IPVS is NOT USABLE"
            },
            if errors == 1 { "" } else { "s" },
            if warnings == 1 { "" } else { "s" },
        )?;
        writeln!(f)?;

        let probe = match &self.probe {
            ProbeOutcome::Skipped => "not probed (--no-probe)".to_string(),
            ProbeOutcome::Reachable {
                version,
                conn_tab_size,
            } => format!(
                "registered; IPVS {version} answered, connection table size {conn_tab_size}"
            ),
            ProbeOutcome::NotRegistered => "NOT registered".to_string(),
            ProbeOutcome::PermissionDenied => {
                "registered, but the kernel refused us (EPERM)".to_string()
            }
            ProbeOutcome::Failed { errno, message } => match errno.and_then(errno_name) {
                Some(name) => format!("probe failed ({name}): {message}"),
                None => format!("probe failed: {message}"),
            },
        };
        writeln!(f, "IPVS netlink family: {probe}")?;
        if self.ip_vs.loaded_by_probe {
            writeln!(
                f,
                "  note: ip_vs was not loaded before; resolving the IPVS family made the kernel load it"
            )?;
        }
        writeln!(f)?;

        let tree = &self.modules_tree;
        writeln!(f, "Modules tree: {}", tree.release_dir.display())?;
        if !tree.release_dir_exists {
            writeln!(f, "  does NOT exist for the running kernel")?;
        }
        if !tree.releases_present.is_empty() {
            writeln!(
                f,
                "  releases present: {}",
                tree.releases_present.join(", ")
            )?;
        }
        if !tree.foreign_vermagic_releases.is_empty() {
            writeln!(
                f,
                "  module files built for another kernel: {}",
                tree.foreign_vermagic_releases.join(", ")
            )?;
        } else if tree.release_dir_exists {
            writeln!(f, "  matches the running kernel")?;
        }
        if !self.proc_modules_readable {
            writeln!(f, "  /proc/modules is not readable (no module support?)")?;
        }
        writeln!(f)?;

        writeln!(f, "Modules:")?;
        for module in self.modules() {
            module_line(f, module)?;
        }
        writeln!(f)?;

        writeln!(f, "Privileges:")?;
        let p = &self.privileges;
        let yes_no = |v: Option<bool>| match v {
            Some(true) => "yes",
            Some(false) => "NO",
            None => "unknown",
        };
        match p.euid {
            Some(uid) => writeln!(f, "  effective uid {uid}")?,
            None => writeln!(f, "  effective uid unknown")?,
        }
        writeln!(f, "  CAP_NET_ADMIN: {}", yes_no(p.cap_net_admin))?;
        writeln!(
            f,
            "  initial user namespace: {}",
            yes_no(p.initial_user_namespace)
        )?;
        writeln!(f)?;

        writeln!(f, "Sysctls:")?;
        for sysctl in &self.sysctls {
            let value = match &sysctl.value {
                SysctlValue::Value(v) => v.clone(),
                SysctlValue::Absent(why) => format!("absent ({why})"),
                SysctlValue::Unreadable(why) => format!("unreadable ({why})"),
            };
            write!(f, "  {} = {value}", sysctl.name)?;
            if let Some(wanted) = &sysctl.recommended {
                write!(f, "   [kube-proxy wants {wanted}]")?;
            }
            writeln!(f)?;
            writeln!(f, "      {}", sysctl.why)?;
        }

        if !self.load_attempts.is_empty() {
            writeln!(f)?;
            writeln!(f, "Load attempts:")?;
            for a in &self.load_attempts {
                let status = match a.exit_status {
                    Some(code) => format!("exit {code}"),
                    None => "did not run".to_string(),
                };
                let errno = a
                    .errno
                    .map(|e| match errno_name(e) {
                        Some(name) => format!(", {name}"),
                        None => format!(", errno {e}"),
                    })
                    .unwrap_or_default();
                writeln!(
                    f,
                    "  {}: {} ({status}{errno})",
                    a.command,
                    if a.success { "ok" } else { "FAILED" }
                )?;
                for line in a.output.lines() {
                    writeln!(f, "      {line}")?;
                }
            }
        }

        writeln!(f)?;
        if self.problems.is_empty() {
            writeln!(f, "No problems found.")?;
        } else {
            writeln!(f, "Problems:")?;
            for problem in &self.problems {
                writeln!(f, "  [{}] {}", problem.severity.as_str(), problem.summary)?;
                writeln!(f, "      fix: {}", problem.fix)?;
            }
        }
        Ok(())
    }
}

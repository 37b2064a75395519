//! Rendering a [`Report`] for people ([`std::fmt::Display`]) and for
//! programs ([`Report::to_json`]).

use std::fmt::{self, Write as _};

use crate::load::errno_name;
use crate::report::{
    ModuleFile, ModuleReport, ModuleState, ProbeOutcome, Report, Severity, SysctlValue,
};

/// A JSON value, just enough to write the report.
enum Json {
    Null,
    Bool(bool),
    Int(i64),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(&'static str, Json)>),
}

impl Json {
    fn str(s: impl Into<String>) -> Json {
        Json::Str(s.into())
    }

    fn opt_str(s: Option<impl Into<String>>) -> Json {
        s.map_or(Json::Null, |s| Json::Str(s.into()))
    }

    fn opt_int(n: Option<i64>) -> Json {
        n.map_or(Json::Null, Json::Int)
    }

    fn opt_bool(b: Option<bool>) -> Json {
        b.map_or(Json::Null, Json::Bool)
    }

    fn write(&self, out: &mut String, indent: usize) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Int(n) => {
                let _ = write!(out, "{n}");
            }
            Json::Str(s) => write_json_string(out, s),
            Json::Arr(items) if items.is_empty() => out.push_str("[]"),
            Json::Arr(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    newline(out, indent + 1);
                    item.write(out, indent + 1);
                }
                newline(out, indent);
                out.push(']');
            }
            Json::Obj(fields) if fields.is_empty() => out.push_str("{}"),
            Json::Obj(fields) => {
                out.push('{');
                for (i, (key, value)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    newline(out, indent + 1);
                    write_json_string(out, key);
                    out.push_str(": ");
                    value.write(out, indent + 1);
                }
                newline(out, indent);
                out.push('}');
            }
        }
    }
}

fn newline(out: &mut String, indent: usize) {
    out.push('\n');
    for _ in 0..indent {
        out.push_str("  ");
    }
}

/// Writes `s` as a JSON string literal: quotes, backslashes and every
/// control character escaped.
pub(crate) fn write_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0C}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || c == '\u{2028}' || c == '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn file_json(file: &ModuleFile) -> Json {
    Json::Obj(vec![
        ("path", Json::str(file.path.display().to_string())),
        ("compression", Json::str(file.compression.as_str())),
        ("vermagic", Json::opt_str(file.vermagic.clone())),
        ("vermagic_error", Json::opt_str(file.vermagic_error.clone())),
        ("matches_kernel", Json::opt_bool(file.matches_kernel)),
    ])
}

fn strings(items: &[String]) -> Json {
    Json::Arr(items.iter().map(|s| Json::str(s.clone())).collect())
}

fn module_json(module: &ModuleReport) -> Json {
    Json::Obj(vec![
        ("name", Json::str(module.name.clone())),
        ("state", Json::str(module.state.as_str())),
        ("usable", Json::Bool(module.usable())),
        ("file", module.file.as_ref().map_or(Json::Null, file_json)),
        ("depends_on", strings(&module.depends_on)),
        (
            "missing_dependencies",
            strings(&module.missing_dependencies),
        ),
        ("loaded_by_probe", Json::Bool(module.loaded_by_probe)),
        ("loaded_by_doctor", Json::Bool(module.loaded_by_doctor)),
    ])
}

fn probe_json(probe: &ProbeOutcome) -> Json {
    let (result, mut extra): (&str, Vec<(&'static str, Json)>) = match probe {
        ProbeOutcome::Skipped => ("skipped", vec![]),
        ProbeOutcome::Reachable {
            version,
            conn_tab_size,
        } => (
            "reachable",
            vec![
                ("version", Json::str(version.clone())),
                ("conn_tab_size", Json::Int(i64::from(*conn_tab_size))),
            ],
        ),
        ProbeOutcome::NotRegistered => ("not_registered", vec![]),
        ProbeOutcome::PermissionDenied => ("permission_denied", vec![]),
        ProbeOutcome::Failed { errno, message } => (
            "failed",
            vec![
                ("errno", Json::opt_int(errno.map(i64::from))),
                ("message", Json::str(message.clone())),
            ],
        ),
    };
    let mut fields = vec![
        ("result", Json::str(result)),
        (
            "family_registered",
            match probe {
                ProbeOutcome::Reachable { .. } | ProbeOutcome::PermissionDenied => Json::Bool(true),
                ProbeOutcome::NotRegistered => Json::Bool(false),
                _ => Json::Null,
            },
        ),
    ];
    fields.append(&mut extra);
    Json::Obj(fields)
}

fn sysctl_value_json(value: &SysctlValue) -> (Json, Json) {
    match value {
        SysctlValue::Value(v) => (Json::str(v.clone()), Json::Null),
        SysctlValue::Absent(why) => (Json::Null, Json::str(format!("absent: {why}"))),
        SysctlValue::Unreadable(why) => (Json::Null, Json::str(format!("unreadable: {why}"))),
    }
}

impl Report {
    /// The report as a JSON document (pretty-printed, ending in a newline).
    pub fn to_json(&self) -> String {
        let tree = &self.modules_tree;
        let privileges = &self.privileges;
        let doc = Json::Obj(vec![
            ("usable", Json::Bool(self.usable())),
            ("kernel_release", Json::str(self.kernel_release.clone())),
            (
                "namespace",
                Json::opt_str(self.namespace.as_ref().map(|p| p.display().to_string())),
            ),
            (
                "namespace_error",
                Json::opt_str(self.namespace_error.clone()),
            ),
            ("probe", probe_json(&self.probe)),
            (
                "modules_tree",
                Json::Obj(vec![
                    ("root", Json::str(tree.root.display().to_string())),
                    (
                        "release_dir",
                        Json::str(tree.release_dir.display().to_string()),
                    ),
                    ("release_dir_exists", Json::Bool(tree.release_dir_exists)),
                    ("releases_present", strings(&tree.releases_present)),
                    ("has_modules_dep", Json::Bool(tree.has_modules_dep)),
                    ("has_modules_builtin", Json::Bool(tree.has_modules_builtin)),
                    (
                        "foreign_vermagic_releases",
                        strings(&tree.foreign_vermagic_releases),
                    ),
                    ("matches_kernel", Json::Bool(tree.matches_kernel())),
                ]),
            ),
            (
                "proc_modules_readable",
                Json::Bool(self.proc_modules_readable),
            ),
            (
                "ip_vs_loaded_at_start",
                Json::Bool(self.ip_vs_loaded_at_start),
            ),
            ("ip_vs", module_json(&self.ip_vs)),
            (
                "schedulers",
                Json::Arr(self.schedulers.iter().map(module_json).collect()),
            ),
            ("nf_conntrack", module_json(&self.nf_conntrack)),
            (
                "sysctls",
                Json::Arr(
                    self.sysctls
                        .iter()
                        .map(|s| {
                            let (value, note) = sysctl_value_json(&s.value);
                            Json::Obj(vec![
                                ("name", Json::str(s.name.clone())),
                                ("value", value),
                                ("note", note),
                                ("recommended", Json::opt_str(s.recommended.clone())),
                                ("why", Json::str(s.why.clone())),
                            ])
                        })
                        .collect(),
                ),
            ),
            (
                "privileges",
                Json::Obj(vec![
                    ("euid", Json::opt_int(privileges.euid.map(i64::from))),
                    (
                        "cap_eff",
                        Json::opt_str(privileges.cap_eff.map(|m| format!("{m:016x}"))),
                    ),
                    ("cap_net_admin", Json::opt_bool(privileges.cap_net_admin)),
                    (
                        "initial_user_namespace",
                        Json::opt_bool(privileges.initial_user_namespace),
                    ),
                ]),
            ),
            (
                "load_attempts",
                Json::Arr(
                    self.load_attempts
                        .iter()
                        .map(|a| {
                            Json::Obj(vec![
                                ("module", Json::str(a.module.clone())),
                                ("command", Json::str(a.command.clone())),
                                ("exit_status", Json::opt_int(a.exit_status.map(i64::from))),
                                ("success", Json::Bool(a.success)),
                                ("errno", Json::opt_int(a.errno.map(i64::from))),
                                ("errno_name", Json::opt_str(a.errno.and_then(errno_name))),
                                ("output", Json::str(a.output.clone())),
                            ])
                        })
                        .collect(),
                ),
            ),
            (
                "problems",
                Json::Arr(
                    self.problems
                        .iter()
                        .map(|p| {
                            Json::Obj(vec![
                                ("kind", Json::str(p.kind.as_str())),
                                ("severity", Json::str(p.severity.as_str())),
                                ("subject", Json::str(p.subject.clone())),
                                ("summary", Json::str(p.summary.clone())),
                                ("fix", Json::str(p.fix.clone())),
                            ])
                        })
                        .collect(),
                ),
            ),
        ]);
        let mut out = String::new();
        doc.write(&mut out, 0);
        out.push('\n');
        out
    }
}

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

#[cfg(test)]
mod tests {
    use super::write_json_string;

    #[test]
    fn json_escaping() {
        let mut out = String::new();
        write_json_string(&mut out, "a\"b\\c\nd\u{1}\u{7f}é\u{2028}");
        assert_eq!(out, "\"a\\\"b\\\\c\\nd\\u0001\u{7f}é\\u2028\"");
    }
}

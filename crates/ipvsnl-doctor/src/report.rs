//! The structured report the doctor returns.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::modfile::Compression;

/// Where a kernel module stands on this host.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ModuleState {
    /// Compiled into the kernel (`modules.builtin`).
    BuiltIn,
    /// Loaded (`/proc/modules`).
    Loaded,
    /// Not loaded, but a file for it is in the modules tree of the running
    /// kernel's release.
    OnDisk,
    /// Neither built in, loaded, nor found on disk.
    Missing,
}

impl ModuleState {
    /// A short lowercase name: `built-in`, `loaded`, `on-disk`, `missing`.
    pub fn as_str(self) -> &'static str {
        match self {
            ModuleState::BuiltIn => "built-in",
            ModuleState::Loaded => "loaded",
            ModuleState::OnDisk => "on-disk",
            ModuleState::Missing => "missing",
        }
    }
}

/// A module file found in the modules tree.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModuleFile {
    /// Full path of the file.
    #[serde(serialize_with = "crate::json::path_text")]
    pub path: PathBuf,
    /// How it is compressed.
    pub compression: Compression,
    /// Its vermagic string, when it could be read.
    pub vermagic: Option<String>,
    /// Why the vermagic could not be read, when it could not.
    pub vermagic_error: Option<String>,
    /// Whether the vermagic names the running kernel's release; `None` when
    /// the vermagic could not be read.
    pub matches_kernel: Option<bool>,
}

/// What the doctor found about one kernel module.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ModuleReport {
    /// Module name (`ip_vs_rr`).
    pub name: String,
    /// Its state, after any `--load` attempt and the netlink probe.
    pub state: ModuleState,
    /// The file in the modules tree, if one was found.
    pub file: Option<ModuleFile>,
    /// The modules it needs, from `modules.dep`.
    pub depends_on: Vec<String>,
    /// Needed modules that are neither built in, loaded nor on disk.
    pub missing_dependencies: Vec<String>,
    /// Whether the module was loaded as a side effect of the netlink probe
    /// (resolving the "IPVS" family auto-loads `ip_vs`).
    pub loaded_by_probe: bool,
    /// Whether the module was loaded by a `--load` attempt.
    pub loaded_by_doctor: bool,
}

impl ModuleReport {
    /// Whether the module can be used: built in, loaded, or on disk with a
    /// file built for the running kernel (or whose vermagic could not be
    /// read) and no missing dependency.
    pub fn usable(&self) -> bool {
        match self.state {
            ModuleState::BuiltIn | ModuleState::Loaded => true,
            ModuleState::OnDisk => {
                self.missing_dependencies.is_empty()
                    && self
                        .file
                        .as_ref()
                        .map_or(true, |file| file.matches_kernel != Some(false))
            }
            ModuleState::Missing => false,
        }
    }

    /// Whether a file exists for this module but was built for another kernel.
    pub fn built_for_other_kernel(&self) -> bool {
        self.file
            .as_ref()
            .is_some_and(|file| file.matches_kernel == Some(false))
    }
}

/// The visible modules tree compared with the running kernel.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ModulesTree {
    /// The root holding one directory per kernel release (`/lib/modules`).
    pub root: PathBuf,
    /// The directory for the running kernel (`/lib/modules/$(uname -r)`).
    pub release_dir: PathBuf,
    /// Whether that directory exists.
    pub release_dir_exists: bool,
    /// The release directories that exist under the root.
    pub releases_present: Vec<String>,
    /// Whether `modules.dep` exists for the running kernel.
    pub has_modules_dep: bool,
    /// Whether `modules.builtin` (or `modules.builtin.modinfo`) exists.
    pub has_modules_builtin: bool,
    /// Kernel releases, other than the running one, named by the vermagic of
    /// the IPVS-related module files that were read.
    pub foreign_vermagic_releases: Vec<String>,
}

impl ModulesTree {
    /// Whether the tree fits the running kernel: its directory exists and no
    /// module file read names another release.
    pub fn matches_kernel(&self) -> bool {
        self.release_dir_exists && self.foreign_vermagic_releases.is_empty()
    }
}

/// The value of one sysctl.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SysctlValue {
    /// The file's contents, trimmed.
    Value(String),
    /// The sysctl does not exist here, and why.
    Absent(String),
    /// The sysctl exists but could not be read.
    Unreadable(String),
}

/// One sysctl that IPVS users care about.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "crate::json::SysctlJson")]
pub struct Sysctl {
    /// Dotted name, `net.ipv4.vs.conntrack`.
    pub name: String,
    /// Its value in the inspected namespace.
    pub value: SysctlValue,
    /// The value kube-proxy in IPVS mode wants, if there is one.
    pub recommended: Option<String>,
    /// Why it matters, in one sentence.
    pub why: String,
}

/// Whether this process can talk to IPVS.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Privileges {
    /// Effective user id.
    pub euid: Option<u32>,
    /// The effective capability mask (`CapEff`).
    #[serde(with = "crate::json::hex_mask")]
    pub cap_eff: Option<u64>,
    /// Whether `CAP_NET_ADMIN` (bit 12) is in the effective set.
    pub cap_net_admin: Option<bool>,
    /// Whether the process is in the initial user namespace (its `uid_map`
    /// is `0 0 4294967295`). IPVS checks `CAP_NET_ADMIN` there, for reads too.
    pub initial_user_namespace: Option<bool>,
}

impl Privileges {
    /// Whether the privileges look sufficient (unknown counts as sufficient;
    /// the netlink probe has the last word).
    pub fn sufficient(&self) -> bool {
        self.cap_net_admin != Some(false) && self.initial_user_namespace != Some(false)
    }
}

/// The result of asking the kernel over generic netlink.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum ProbeOutcome {
    /// The probe was not run.
    Skipped,
    /// GET_INFO answered.
    Reachable {
        /// IPVS version, as the kernel reports it (`1.2.1`).
        version: String,
        /// Size of the connection hash table.
        conn_tab_size: u32,
    },
    /// The "IPVS" generic-netlink family is not registered.
    NotRegistered,
    /// The kernel refused: no `CAP_NET_ADMIN` in the initial user namespace.
    PermissionDenied,
    /// Any other failure.
    Failed {
        /// The errno, when there was one.
        errno: Option<i32>,
        /// What went wrong.
        message: String,
    },
}

impl ProbeOutcome {
    /// Whether the IPVS family answered.
    pub fn reachable(&self) -> bool {
        matches!(self, ProbeOutcome::Reachable { .. })
    }
}

/// One `modprobe` run made by `--load`.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct LoadAttempt {
    /// The module asked for.
    pub module: String,
    /// The command line that was run.
    pub command: String,
    /// Exit status, `None` when it did not run or was killed by a signal.
    pub exit_status: Option<i32>,
    /// Whether it succeeded (exit 0 and the module is now present).
    pub success: bool,
    /// What it printed (stderr, then stdout), trimmed.
    pub output: String,
    /// The errno its message names, when one could be recognised
    /// (`ENOEXEC` for "Exec format error" / "invalid module format").
    pub errno: Option<i32>,
}

/// How bad a problem is.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// IPVS cannot be used until this is fixed.
    Error,
    /// IPVS works, but something around it is likely wrong.
    Warning,
}

impl Severity {
    /// `error` or `warning`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// The kind of a problem, for programs that act on the report.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProblemKind {
    /// The kernel release could not be determined.
    UnknownRelease,
    /// No modules directory for the running kernel.
    ModulesDirMissing,
    /// `modules.dep` is missing for the running kernel.
    ModulesDepMissing,
    /// A needed module file was built for another kernel release.
    ModuleForOtherKernel,
    /// `ip_vs` is not built in, loaded, or loadable.
    IpvsUnavailable,
    /// `ip_vs` is on disk but not loaded (the probe was skipped).
    IpvsNotLoaded,
    /// The "IPVS" generic-netlink family is not registered.
    FamilyNotRegistered,
    /// A required scheduler module is not available.
    SchedulerUnavailable,
    /// A needed module's dependency is not available.
    DependencyMissing,
    /// `nf_conntrack` is not available.
    ConntrackUnavailable,
    /// No `CAP_NET_ADMIN` in the effective set.
    NoCapNetAdmin,
    /// Not in the initial user namespace.
    NotInitialUserNamespace,
    /// The kernel answered EPERM to the probe.
    PermissionDenied,
    /// The probe failed for another reason.
    ProbeFailed,
    /// A `--load` attempt failed.
    LoadFailed,
    /// The given network namespace could not be entered.
    NamespaceUnreadable,
    /// A sysctl has a value kube-proxy does not want.
    SysctlValue,
}

impl ProblemKind {
    /// A stable identifier in snake case (`scheduler_unavailable`).
    pub fn as_str(self) -> &'static str {
        match self {
            ProblemKind::UnknownRelease => "unknown_release",
            ProblemKind::ModulesDirMissing => "modules_dir_missing",
            ProblemKind::ModulesDepMissing => "modules_dep_missing",
            ProblemKind::ModuleForOtherKernel => "module_for_other_kernel",
            ProblemKind::IpvsUnavailable => "ipvs_unavailable",
            ProblemKind::IpvsNotLoaded => "ipvs_not_loaded",
            ProblemKind::FamilyNotRegistered => "family_not_registered",
            ProblemKind::SchedulerUnavailable => "scheduler_unavailable",
            ProblemKind::DependencyMissing => "dependency_missing",
            ProblemKind::ConntrackUnavailable => "conntrack_unavailable",
            ProblemKind::NoCapNetAdmin => "no_cap_net_admin",
            ProblemKind::NotInitialUserNamespace => "not_initial_user_namespace",
            ProblemKind::PermissionDenied => "permission_denied",
            ProblemKind::ProbeFailed => "probe_failed",
            ProblemKind::LoadFailed => "load_failed",
            ProblemKind::NamespaceUnreadable => "namespace_unreadable",
            ProblemKind::SysctlValue => "sysctl_value",
        }
    }
}

/// A problem found, with what to do about it.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    /// What kind of problem.
    pub kind: ProblemKind,
    /// How bad.
    pub severity: Severity,
    /// The module or sysctl concerned, or empty.
    pub subject: String,
    /// What is wrong.
    pub summary: String,
    /// One line saying what to do.
    pub fix: String,
}

/// Everything the doctor found, and its verdict.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Report {
    /// The running kernel's release (`uname -r`).
    pub kernel_release: String,
    /// The network namespace inspected, when not the caller's own.
    pub namespace: Option<PathBuf>,
    /// Why that namespace could not be entered, when it could not.
    pub namespace_error: Option<String>,
    /// The modules tree compared with the running kernel.
    pub modules_tree: ModulesTree,
    /// Whether `/proc/modules` could be read (a kernel without module
    /// support has none).
    pub proc_modules_readable: bool,
    /// `ip_vs` itself.
    pub ip_vs: ModuleReport,
    /// The scheduler modules required (`ip_vs_rr`, `ip_vs_wrr`, `ip_vs_sh` and
    /// any asked for).
    pub schedulers: Vec<ModuleReport>,
    /// `nf_conntrack`.
    pub nf_conntrack: ModuleReport,
    /// Whether `ip_vs` was loaded before the doctor did anything.
    pub ip_vs_loaded_at_start: bool,
    /// The sysctls IPVS users need.
    pub sysctls: Vec<Sysctl>,
    /// The process's privileges.
    pub privileges: Privileges,
    /// The netlink probe's result.
    pub probe: ProbeOutcome,
    /// `--load` attempts, in order.
    pub load_attempts: Vec<LoadAttempt>,
    /// Problems found, errors first.
    pub problems: Vec<Problem>,
}

impl Report {
    /// The verdict: IPVS is usable here with the required schedulers (no
    /// problem of severity [`Severity::Error`]).
    pub fn usable(&self) -> bool {
        self.errors().next().is_none()
    }

    /// The problems that make IPVS unusable (severity [`Severity::Error`]).
    pub fn errors(&self) -> impl Iterator<Item = &Problem> {
        self.problems
            .iter()
            .filter(|problem| problem.severity == Severity::Error)
    }

    /// Whether a problem of this kind was found.
    pub fn has_problem(&self, kind: ProblemKind) -> bool {
        self.problems.iter().any(|problem| problem.kind == kind)
    }

    /// The problems of one kind.
    pub fn problems_of(&self, kind: ProblemKind) -> impl Iterator<Item = &Problem> {
        self.problems
            .iter()
            .filter(move |problem| problem.kind == kind)
    }

    /// The report on one scheduler module, by module name (`ip_vs_rr`) or
    /// scheduler name (`rr`).
    pub fn scheduler(&self, name: &str) -> Option<&ModuleReport> {
        let wanted = crate::scheduler_module_name(name);
        self.schedulers.iter().find(|module| module.name == wanted)
    }

    /// Every module report: `ip_vs`, the schedulers, `nf_conntrack`.
    pub fn modules(&self) -> impl Iterator<Item = &ModuleReport> {
        std::iter::once(&self.ip_vs)
            .chain(self.schedulers.iter())
            .chain(std::iter::once(&self.nf_conntrack))
    }

    /// The exit status `ipvs-doctor` uses: 0 usable, 1 not.
    pub fn exit_code(&self) -> i32 {
        if self.usable() {
            0
        } else {
            1
        }
    }
}

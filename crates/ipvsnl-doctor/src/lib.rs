//! Why can (or can't) this host use IPVS?
//!
//! `ipvsnl-doctor` inspects a Linux host, or one of its network namespaces,
//! and returns a structured [`Report`]: whether the IPVS generic-netlink
//! family answers; whether `ip_vs`, the scheduler modules and `nf_conntrack`
//! are built in, loaded, on disk or missing; whether the visible modules tree
//! belongs to the running kernel (a container that mounts another kernel's
//! `/lib/modules` gets "Exec format error"); the sysctls IPVS users need;
//! whether the process holds `CAP_NET_ADMIN` in the initial user namespace;
//! and, on request, what `modprobe` says when asked to load what is missing.
//! Every problem comes with one line saying what to do, and the report ends
//! in a verdict ([`Report::usable`]).
//!
//! The crate is layered so most of it is testable without a kernel:
//! - [`parse`] and [`modfile`] are pure parsers (`/proc/modules`,
//!   `modules.builtin`, `modules.dep`, the vermagic in a module's ELF
//!   `.modinfo` section, plain, xz or zstd compressed);
//! - [`HostRoots`] says where `/proc`, `/sys` and `/lib/modules` are, so the
//!   inspection can run on a fixture tree;
//! - [`Probe`] is the netlink check, [`NetlinkProbe`] the real one (through
//!   the `ipvsnl` client).
//!
//! ```no_run
//! let report = ipvsnl_doctor::diagnose(&ipvsnl_doctor::Options::new().with_scheduler("mh"));
//! print!("{report}");
//! std::process::exit(report.exit_code());
//! ```
//!
//! Note that the probe can itself load `ip_vs`: resolving the "IPVS" family
//! makes the kernel run `modprobe ip_vs`. The doctor reads `/proc/modules`
//! first and reports when that happened ([`ModuleReport::loaded_by_probe`]).

#![deny(missing_docs)]

// It reads /proc and /sys, enters namespaces with setns(2) and asks the
// kernel's IPVS family over netlink: all Linux.
#[cfg(not(target_os = "linux"))]
compile_error!(
    "ipvsnl-doctor builds only for target_os = \"linux\": it inspects the Linux kernel's \
     modules, sysctls and IPVS netlink family"
);

mod assess;
pub mod cli;
mod inspect;
mod json;
pub mod load;
pub mod modfile;
mod options;
pub mod parse;
mod probe;
mod render;
mod report;
mod roots;
mod snapshot;
mod sysctls;

pub use inspect::{diagnose, diagnose_with};
pub use options::Options;
pub use probe::{NetlinkProbe, Probe};
pub use report::{
    LoadAttempt, ModuleFile, ModuleReport, ModuleState, ModulesTree, Privileges, ProbeOutcome,
    Problem, ProblemKind, Report, Severity, Sysctl, SysctlValue,
};
pub use roots::HostRoots;

/// The scheduler modules kube-proxy's IPVS mode needs: round robin,
/// weighted round robin, source hashing.
pub const DEFAULT_SCHEDULERS: [&str; 3] = ["ip_vs_rr", "ip_vs_wrr", "ip_vs_sh"];

/// The module name for a scheduler name: `rr` becomes `ip_vs_rr`;
/// `ip_vs_rr` (or `ip-vs-rr`) stays `ip_vs_rr`.
pub fn scheduler_module_name(name: &str) -> String {
    let name = parse::normalize_module_name(name);
    if name.starts_with("ip_vs_") {
        name
    } else {
        format!("ip_vs_{name}")
    }
}

/// The crate README's examples, compiled as doctests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

//! The fixture host tree (proc, sys and lib/modules under a scratch
//! directory) and the fake probe the tests inspect it with.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use ipvsnl_doctor::{HostRoots, Options, Probe, ProbeOutcome, ProblemKind, Report, Severity};

pub(crate) const RELEASE: &str = "6.1.0-test-amd64";
pub(crate) const OTHER: &str = "6.12.0-test-amd64";
pub(crate) const IPVS_DIR: &str = "kernel/net/netfilter/ipvs";

pub(crate) fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// A scratch host tree.
pub(crate) struct Tree {
    pub root: PathBuf,
}

impl Tree {
    /// A tree for a privileged process on kernel RELEASE with sane sysctls
    /// and nothing loaded.
    pub(crate) fn new() -> Tree {
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

    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    pub(crate) fn write(&self, rel: &str, contents: &str) {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
    }

    pub(crate) fn copy(&self, rel: &str, fixture_name: &str) {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::copy(fixture(fixture_name), path).unwrap();
    }

    /// Places a module file (a fixture image) in the modules tree of
    /// `release`, at kernel/net/netfilter/ipvs/NAME.
    pub(crate) fn module(&self, release: &str, file_name: &str, fixture_name: &str) {
        self.copy(
            &format!("lib/modules/{release}/{IPVS_DIR}/{file_name}"),
            fixture_name,
        );
    }

    /// A modules tree for RELEASE with ip_vs, the default schedulers and
    /// nf_conntrack as .ko.xz files of the right vermagic, and a modules.dep.
    pub(crate) fn full_modules(&self) {
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

    pub(crate) fn load(&self, names: &[&str]) {
        let text: String = names
            .iter()
            .map(|n| format!("{n} 12288 0 - Live 0x0000000000000000\n"))
            .collect();
        self.write("proc/modules", &text);
    }

    pub(crate) fn vs_sysctls(&self, conntrack: &str, reuse: &str, expire: &str) {
        self.write("proc/sys/net/ipv4/vs/conntrack", conntrack);
        self.write("proc/sys/net/ipv4/vs/conn_reuse_mode", reuse);
        self.write("proc/sys/net/ipv4/vs/expire_nodest_conn", expire);
    }

    pub(crate) fn options(&self) -> Options {
        Options::new().with_roots(HostRoots::under(&self.root))
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// A probe that returns a fixed outcome and counts its calls.
pub(crate) struct FakeProbe {
    pub outcome: ProbeOutcome,
    pub calls: AtomicUsize,
}

impl FakeProbe {
    pub(crate) fn new(outcome: ProbeOutcome) -> FakeProbe {
        FakeProbe {
            outcome,
            calls: AtomicUsize::new(0),
        }
    }

    pub(crate) fn reachable() -> FakeProbe {
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

pub(crate) fn kinds(report: &Report) -> Vec<(ProblemKind, Severity, String)> {
    report
        .problems
        .iter()
        .map(|p| (p.kind, p.severity, p.subject.clone()))
        .collect()
}

pub(crate) fn errors(report: &Report) -> Vec<ProblemKind> {
    report.errors().map(|p| p.kind).collect()
}

//! The host-inspection layer: reads the files the parsers understand, from
//! roots that tests can point at a fixture tree.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::assess::assess;
use crate::load::{locate_modprobe, run_modprobe};
use crate::modfile::{read_vermagic, Compression};
use crate::parse::{self, DepEntry, LoadedModule};
use crate::probe::{NetlinkProbe, Probe};
use crate::report::{
    ModuleFile, ModuleReport, ModuleState, ModulesTree, Privileges, ProbeOutcome, Report, Sysctl,
    SysctlValue,
};
use crate::DEFAULT_SCHEDULERS;

/// Where the doctor looks. [`HostRoots::host`] is the real host; tests use
/// [`HostRoots::under`] with a fixture tree.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostRoots {
    /// The proc file system (`/proc`).
    pub proc_root: PathBuf,
    /// The sys file system (`/sys`).
    pub sys_root: PathBuf,
    /// The directory holding one modules tree per release (`/lib/modules`).
    pub modules_root: PathBuf,
    /// The running kernel's release; `None` reads it from
    /// `<proc>/sys/kernel/osrelease` (what `uname -r` prints).
    pub kernel_release: Option<String>,
}

impl Default for HostRoots {
    fn default() -> Self {
        HostRoots::host()
    }
}

impl HostRoots {
    /// The real host: `/proc`, `/sys`, `/lib/modules`.
    pub fn host() -> HostRoots {
        HostRoots {
            proc_root: PathBuf::from("/proc"),
            sys_root: PathBuf::from("/sys"),
            modules_root: PathBuf::from("/lib/modules"),
            kernel_release: None,
        }
    }

    /// A tree laid out like a host under `root`: `root/proc`, `root/sys`,
    /// `root/lib/modules`.
    pub fn under(root: impl AsRef<Path>) -> HostRoots {
        let root = root.as_ref();
        HostRoots {
            proc_root: root.join("proc"),
            sys_root: root.join("sys"),
            modules_root: root.join("lib/modules"),
            kernel_release: None,
        }
    }

    /// Uses this modules root instead.
    pub fn with_modules_root(mut self, modules_root: impl Into<PathBuf>) -> HostRoots {
        self.modules_root = modules_root.into();
        self
    }

    /// Uses this kernel release instead of reading it.
    pub fn with_kernel_release(mut self, release: impl Into<String>) -> HostRoots {
        self.kernel_release = Some(release.into());
        self
    }

    /// The running kernel's release: the override, else
    /// `<proc>/sys/kernel/osrelease`, else `uname(2)` when the proc root is the
    /// real one.
    pub fn release(&self) -> Option<String> {
        if let Some(release) = &self.kernel_release {
            return Some(release.clone());
        }
        if let Ok(text) = std::fs::read_to_string(self.proc_root.join("sys/kernel/osrelease")) {
            let release = text.trim();
            if !release.is_empty() {
                return Some(release.to_string());
            }
        }
        if self.proc_root == Path::new("/proc") {
            return uname_release();
        }
        None
    }
}

fn uname_release() -> Option<String> {
    // SAFETY: utsname is plain old data; uname fills it in.
    let mut uts: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: uts is a valid, writable utsname.
    if unsafe { libc::uname(&mut uts) } != 0 {
        return None;
    }
    let bytes: Vec<u8> = uts
        .release
        .iter()
        .take_while(|c| **c != 0)
        .map(|c| *c as u8)
        .collect();
    String::from_utf8(bytes).ok().filter(|s| !s.is_empty())
}

/// What to inspect and how.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Where to look.
    pub roots: HostRoots,
    /// Scheduler modules required, normalised (`ip_vs_rr`), defaults first.
    pub schedulers: Vec<String>,
    /// A network namespace to inspect (`/var/run/netns/NAME`,
    /// `/proc/PID/ns/net`) instead of the caller's.
    pub netns: Option<PathBuf>,
    /// Run `modprobe` for modules that are not loaded.
    pub load: bool,
    /// Ask the kernel over netlink (may auto-load `ip_vs`).
    pub probe: bool,
    /// The `modprobe` to run; `None` finds it on `PATH`, `/sbin`, `/usr/sbin`.
    pub modprobe: Option<PathBuf>,
}

impl Default for Options {
    fn default() -> Self {
        Options::new()
    }
}

impl Options {
    /// The real host, the default schedulers, the probe on, no loading.
    pub fn new() -> Options {
        Options {
            roots: HostRoots::host(),
            schedulers: DEFAULT_SCHEDULERS.iter().map(|s| s.to_string()).collect(),
            netns: None,
            load: false,
            probe: true,
            modprobe: None,
        }
    }

    /// Inspects these roots instead of the host's.
    pub fn with_roots(mut self, roots: HostRoots) -> Options {
        self.roots = roots;
        self
    }

    /// Also requires this scheduler (`mh` or `ip_vs_mh`).
    pub fn with_scheduler(mut self, name: &str) -> Options {
        let module = crate::scheduler_module_name(name);
        if !self.schedulers.contains(&module) {
            self.schedulers.push(module);
        }
        self
    }

    /// Inspects the network namespace bound at this path.
    pub fn with_netns(mut self, path: impl Into<PathBuf>) -> Options {
        self.netns = Some(path.into());
        self
    }

    /// Runs `modprobe` for what is not loaded, or not.
    pub fn with_load(mut self, load: bool) -> Options {
        self.load = load;
        self
    }

    /// Runs the netlink probe, or not.
    pub fn with_probe(mut self, probe: bool) -> Options {
        self.probe = probe;
        self
    }

    /// Runs this `modprobe` binary.
    pub fn with_modprobe(mut self, modprobe: impl Into<PathBuf>) -> Options {
        self.modprobe = Some(modprobe.into());
        self
    }
}

/// The module-related files, read once.
struct Snapshot {
    /// `/proc/modules`, `None` when unreadable.
    loaded: Option<Vec<LoadedModule>>,
    builtin: Vec<String>,
    has_builtin_list: bool,
    deps: Option<Vec<DepEntry>>,
    release_dir: PathBuf,
    sys_root: PathBuf,
    /// Module files found by walking the tree, built on first need.
    walked: Option<HashMap<String, PathBuf>>,
}

impl Snapshot {
    fn read(roots: &HostRoots, release_dir: &Path) -> Snapshot {
        let mut snapshot = Snapshot {
            loaded: None,
            builtin: Vec::new(),
            has_builtin_list: false,
            deps: std::fs::read_to_string(release_dir.join("modules.dep"))
                .ok()
                .map(|text| parse::parse_modules_dep(&text)),
            release_dir: release_dir.to_path_buf(),
            sys_root: roots.sys_root.clone(),
            walked: None,
        };
        if let Ok(text) = std::fs::read_to_string(release_dir.join("modules.builtin")) {
            snapshot.has_builtin_list = true;
            snapshot.builtin = parse::parse_modules_builtin(&text);
        }
        if let Ok(bytes) = std::fs::read(release_dir.join("modules.builtin.modinfo")) {
            snapshot.has_builtin_list = true;
            for name in parse::parse_builtin_modinfo(&bytes) {
                if !snapshot.builtin.contains(&name) {
                    snapshot.builtin.push(name);
                }
            }
        }
        snapshot.reread_loaded(roots);
        snapshot
    }

    fn reread_loaded(&mut self, roots: &HostRoots) {
        self.loaded = std::fs::read_to_string(roots.proc_root.join("modules"))
            .ok()
            .map(|text| parse::parse_proc_modules(&text));
    }

    fn sys_initstate(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.sys_root.join("module").join(name).join("initstate"))
            .ok()
            .map(|s| s.trim().to_string())
    }

    fn is_builtin(&self, name: &str) -> bool {
        if self.builtin.iter().any(|b| b == name) {
            return true;
        }
        // A built-in module with parameters has /sys/module/NAME but no
        // initstate; a loaded one has initstate.
        !self.has_builtin_list
            && self.sys_root.join("module").join(name).is_dir()
            && self.sys_initstate(name).is_none()
    }

    fn is_loaded(&self, name: &str) -> bool {
        match &self.loaded {
            Some(loaded) => loaded.iter().any(|m| m.name == name),
            None => self.sys_initstate(name).as_deref() == Some("live"),
        }
    }

    fn dep_entry(&self, name: &str) -> Option<&DepEntry> {
        self.deps.as_ref()?.iter().find(|entry| entry.name == name)
    }

    fn walk(&mut self) -> &HashMap<String, PathBuf> {
        let release_dir = self.release_dir.clone();
        self.walked.get_or_insert_with(|| walk_tree(&release_dir))
    }

    fn find_file(&mut self, name: &str) -> Option<PathBuf> {
        if let Some(entry) = self.dep_entry(name) {
            let path = self.release_dir.join(&entry.path);
            if path.is_file() {
                return Some(path);
            }
        }
        self.walk().get(name).cloned()
    }

    fn dep_available(&self, dep_path: &str) -> bool {
        let Some(name) = parse::module_name_from_path(dep_path) else {
            return true;
        };
        self.is_builtin(&name) || self.is_loaded(&name) || self.release_dir.join(dep_path).is_file()
    }
}

/// Every module file under a release directory, by module name. Bounded in
/// depth and count; symlinks (`build`, `source`) are not followed.
fn walk_tree(release_dir: &Path) -> HashMap<String, PathBuf> {
    const MAX_DEPTH: usize = 16;
    const MAX_ENTRIES: usize = 500_000;
    let mut found = HashMap::new();
    let mut seen = 0usize;
    let mut stack = vec![(release_dir.to_path_buf(), 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                return found;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() {
                if depth < MAX_DEPTH {
                    stack.push((path, depth + 1));
                }
            } else if kind.is_file() {
                let file_name = entry.file_name();
                if let Some(name) = parse::module_name_from_path(&file_name.to_string_lossy()) {
                    found.entry(name).or_insert(path);
                }
            }
        }
    }
    found
}

fn module_file(path: PathBuf, release: &str) -> ModuleFile {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let compression = Compression::from_file_name(&name).unwrap_or(Compression::None);
    let (vermagic, vermagic_error) = match read_vermagic(&path) {
        Ok(v) => (Some(v), None),
        Err(err) => (None, Some(err.to_string())),
    };
    let matches_kernel = vermagic
        .as_deref()
        .and_then(parse::vermagic_release)
        .map(|built_for| built_for == release);
    ModuleFile {
        path,
        compression,
        vermagic,
        vermagic_error,
        matches_kernel,
    }
}

fn module_report(snapshot: &mut Snapshot, name: &str, release: &str) -> ModuleReport {
    let builtin = snapshot.is_builtin(name);
    let loaded = snapshot.is_loaded(name);
    let file = if builtin {
        None
    } else {
        snapshot
            .find_file(name)
            .map(|path| module_file(path, release))
    };
    let entry = snapshot.dep_entry(name).cloned();
    let depends_on = entry.as_ref().map(DepEntry::dep_names).unwrap_or_default();
    let missing_dependencies = match &entry {
        Some(entry) if !builtin && !loaded => entry
            .deps
            .iter()
            .filter(|dep| !snapshot.dep_available(dep))
            .filter_map(|dep| parse::module_name_from_path(dep))
            .collect(),
        _ => Vec::new(),
    };
    let state = if builtin {
        ModuleState::BuiltIn
    } else if loaded {
        ModuleState::Loaded
    } else if file.is_some() {
        ModuleState::OnDisk
    } else {
        ModuleState::Missing
    };
    ModuleReport {
        name: name.to_string(),
        state,
        file,
        depends_on,
        missing_dependencies,
        loaded_by_probe: false,
        loaded_by_doctor: false,
    }
}

/// Sysctl path under `/proc/sys` for a dotted name.
fn sysctl_path(proc_root: &Path, name: &str) -> PathBuf {
    proc_root.join("sys").join(name.replace('.', "/"))
}

/// The sysctls the doctor reports, with why each matters.
fn sysctl_specs(release: &str) -> Vec<(&'static str, Option<&'static str>, String)> {
    // kube-proxy sets conn_reuse_mode=0 on kernels 4.1..5.9, where mode 1
    // with conntrack=1 delays reused connections by a second; 5.9 fixed it.
    let reuse_recommended = match parse::kernel_version(release) {
        Some(v) if v < (5, 9) => Some("0"),
        _ => None,
    };
    vec![
        (
            "net.ipv4.ip_forward",
            Some("1"),
            "IPVS masquerading (NAT) and kube-proxy forward packets to the real servers; with 0 the host drops them.".to_string(),
        ),
        (
            "net.ipv4.vs.conntrack",
            Some("1"),
            "Keeps netfilter conntrack entries for IPVS connections; iptables SNAT/masquerade rules (kube-proxy's) need them.".to_string(),
        ),
        (
            "net.ipv4.vs.conn_reuse_mode",
            reuse_recommended,
            "1 reschedules a new connection that reuses a port in TIME_WAIT; before kernel 5.9 that, with conntrack=1, delays such connections by a second (kube-proxy sets 0 there).".to_string(),
        ),
        (
            "net.ipv4.vs.expire_nodest_conn",
            Some("1"),
            "1 drops the connections of a removed real server at their next packet, so clients fail fast instead of hanging.".to_string(),
        ),
        (
            "net.bridge.bridge-nf-call-iptables",
            Some("1"),
            "Bridged traffic (pods on a Linux bridge) passes iptables only with 1; kube-proxy's masquerade rules need it.".to_string(),
        ),
    ]
}

/// Reads sysctl files, in the given network namespace if there is one
/// (`/proc/sys/net` shows the reader's namespace, so a thread enters it).
fn read_sysctl_files(
    proc_root: &Path,
    names: &[&str],
    netns: Option<&Path>,
) -> Result<Vec<Result<String, std::io::Error>>, String> {
    let paths: Vec<PathBuf> = names.iter().map(|n| sysctl_path(proc_root, n)).collect();
    let read_all = move |paths: Vec<PathBuf>| -> Vec<Result<String, std::io::Error>> {
        paths.iter().map(std::fs::read_to_string).collect()
    };
    let Some(netns) = netns else {
        return Ok(read_all(paths));
    };
    let netns = netns.to_path_buf();
    let worker = std::thread::spawn(move || -> Result<Vec<_>, String> {
        enter_netns(&netns)?;
        Ok(read_all(paths))
    });
    worker
        .join()
        .map_err(|_| "the namespace reader thread failed".to_string())?
}

/// Moves the calling thread into the network namespace bound at `path`.
fn enter_netns(path: &Path) -> Result<(), String> {
    use std::os::fd::AsRawFd;
    let file = std::fs::File::open(path)
        .map_err(|err| format!("cannot open {}: {err}", path.display()))?;
    // SAFETY: setns on a valid descriptor; it affects only this thread.
    let rc = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
    if rc != 0 {
        let err = std::io::Error::last_os_error();
        return Err(format!(
            "cannot enter network namespace {}: {err}",
            path.display()
        ));
    }
    Ok(())
}

fn read_sysctls(
    options: &Options,
    release: &str,
    snapshot: &Snapshot,
) -> (Vec<Sysctl>, Option<String>) {
    let specs = sysctl_specs(release);
    let names: Vec<&str> = specs.iter().map(|(name, _, _)| *name).collect();
    let results = read_sysctl_files(&options.roots.proc_root, &names, options.netns.as_deref());
    let ip_vs_present = snapshot.is_builtin("ip_vs") || snapshot.is_loaded("ip_vs");
    let br_netfilter_present =
        snapshot.is_builtin("br_netfilter") || snapshot.is_loaded("br_netfilter");
    let (values, ns_error) = match results {
        Ok(values) => (values.into_iter().map(Some).collect::<Vec<_>>(), None),
        Err(err) => (names.iter().map(|_| None).collect(), Some(err)),
    };
    let sysctls = specs
        .into_iter()
        .zip(values)
        .map(|((name, recommended, why), result)| {
            let value = match result {
                None => SysctlValue::Unreadable(
                    ns_error.clone().unwrap_or_else(|| "not read".to_string()),
                ),
                Some(Ok(text)) => SysctlValue::Value(text.trim().to_string()),
                Some(Err(err)) if err.kind() == std::io::ErrorKind::NotFound => {
                    SysctlValue::Absent(absent_reason(name, ip_vs_present, br_netfilter_present))
                }
                Some(Err(err)) => SysctlValue::Unreadable(err.to_string()),
            };
            Sysctl {
                name: name.to_string(),
                value,
                recommended: recommended.map(str::to_string),
                why,
            }
        })
        .collect();
    (sysctls, ns_error)
}

fn absent_reason(name: &str, ip_vs_present: bool, br_netfilter_present: bool) -> String {
    if name.starts_with("net.ipv4.vs.") {
        if ip_vs_present {
            "ip_vs is loaded but does not export its sysctls here (a network namespace owned by a non-initial user namespace)".to_string()
        } else {
            "ip_vs is not loaded; its sysctls appear when it is".to_string()
        }
    } else if name.starts_with("net.bridge.") {
        if br_netfilter_present {
            "br_netfilter is loaded but the sysctl is not visible here".to_string()
        } else {
            "br_netfilter is not loaded; it matters only when pods sit on a Linux bridge"
                .to_string()
        }
    } else {
        "not present in this kernel".to_string()
    }
}

fn read_privileges(proc_root: &Path) -> Privileges {
    let status = std::fs::read_to_string(proc_root.join("self/status")).ok();
    let cap_eff = status.as_deref().and_then(parse::parse_cap_eff);
    let uid_map = std::fs::read_to_string(proc_root.join("self/uid_map")).ok();
    Privileges {
        euid: status.as_deref().and_then(parse::parse_effective_uid),
        cap_eff,
        cap_net_admin: cap_eff.map(parse::has_cap_net_admin),
        initial_user_namespace: uid_map.as_deref().map(parse::is_initial_uid_map),
    }
}

fn list_releases(modules_root: &Path) -> Vec<String> {
    let mut releases: Vec<String> = std::fs::read_dir(modules_root)
        .map(|entries| {
            entries
                .flatten()
                .filter(|entry| entry.path().is_dir())
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    releases.sort();
    releases
}

/// Inspects the host (or namespace) described by `options`, probing IPVS
/// over generic netlink with the `ipvsnl` client.
pub fn diagnose(options: &Options) -> Report {
    diagnose_with(options, &NetlinkProbe)
}

/// Inspects with a given probe (tests pass a fake one).
///
/// The order matters: `/proc/modules` is read first, then `--load` runs,
/// then the probe (which may auto-load `ip_vs`), then everything is read
/// again so the report shows the final state and what changed it.
pub fn diagnose_with(options: &Options, probe: &dyn Probe) -> Report {
    let roots = &options.roots;
    let release = roots.release().unwrap_or_default();
    let release_dir = roots.modules_root.join(&release);
    let mut snapshot = Snapshot::read(roots, &release_dir);
    let ip_vs_loaded_at_start = snapshot.is_loaded("ip_vs");

    let mut wanted: Vec<String> = vec!["ip_vs".to_string()];
    wanted.extend(options.schedulers.iter().cloned());
    wanted.push("nf_conntrack".to_string());

    let mut load_attempts = Vec::new();
    let mut loaded_by_doctor = Vec::new();
    if options.load {
        let modprobe = options.modprobe.clone().unwrap_or_else(locate_modprobe);
        for name in &wanted {
            if snapshot.is_builtin(name) || snapshot.is_loaded(name) {
                continue;
            }
            let mut attempt = run_modprobe(&modprobe, name);
            snapshot.reread_loaded(roots);
            let now_present = snapshot.is_loaded(name) || snapshot.is_builtin(name);
            attempt.success = attempt.exit_status == Some(0) && now_present;
            if now_present {
                loaded_by_doctor.push(name.clone());
            }
            load_attempts.push(attempt);
        }
    }

    let ip_vs_before_probe = snapshot.is_loaded("ip_vs");
    let outcome = if options.probe {
        probe.probe(options.netns.as_deref())
    } else {
        ProbeOutcome::Skipped
    };
    snapshot.reread_loaded(roots);
    let ip_vs_loaded_by_probe = options.probe && !ip_vs_before_probe && snapshot.is_loaded("ip_vs");

    let mut reports: Vec<ModuleReport> = wanted
        .iter()
        .map(|name| {
            let mut report = module_report(&mut snapshot, name, &release);
            report.loaded_by_doctor = loaded_by_doctor.contains(name);
            report
        })
        .collect();
    let nf_conntrack = reports
        .pop()
        .unwrap_or_else(|| module_report(&mut snapshot, "nf_conntrack", &release));
    let mut ip_vs = if reports.is_empty() {
        module_report(&mut snapshot, "ip_vs", &release)
    } else {
        reports.remove(0)
    };
    ip_vs.loaded_by_probe = ip_vs_loaded_by_probe;
    let schedulers = reports;

    let mut foreign: Vec<String> = Vec::new();
    for module in std::iter::once(&ip_vs)
        .chain(schedulers.iter())
        .chain(std::iter::once(&nf_conntrack))
    {
        let built_for = module
            .file
            .as_ref()
            .and_then(|f| f.vermagic.as_deref())
            .and_then(parse::vermagic_release);
        if let Some(built_for) = built_for {
            if built_for != release && !foreign.iter().any(|r| r == built_for) {
                foreign.push(built_for.to_string());
            }
        }
    }
    let modules_tree = ModulesTree {
        root: roots.modules_root.clone(),
        release_dir: release_dir.clone(),
        release_dir_exists: !release.is_empty() && release_dir.is_dir(),
        releases_present: list_releases(&roots.modules_root),
        has_modules_dep: snapshot.deps.is_some(),
        has_modules_builtin: snapshot.has_builtin_list,
        foreign_vermagic_releases: foreign,
    };

    let (sysctls, namespace_error) = read_sysctls(options, &release, &snapshot);
    let mut report = Report {
        kernel_release: release,
        namespace: options.netns.clone(),
        namespace_error,
        modules_tree,
        proc_modules_readable: snapshot.loaded.is_some(),
        ip_vs,
        schedulers,
        nf_conntrack,
        ip_vs_loaded_at_start,
        sysctls,
        privileges: read_privileges(&roots.proc_root),
        probe: outcome,
        load_attempts,
        problems: Vec::new(),
    };
    report.problems = assess(&report);
    report
}

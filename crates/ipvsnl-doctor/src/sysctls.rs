//! The sysctls IPVS users need: which ones, why each matters, and reading
//! them in the caller's network namespace or another one.

use std::path::{Path, PathBuf};

use crate::options::Options;
use crate::parse;
use crate::report::{Sysctl, SysctlValue};
use crate::snapshot::Snapshot;

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

pub(crate) fn read_sysctls(
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

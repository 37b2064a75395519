//! The outside tools some tests run (promtool, node_exporter): where
//! `.ci/setup` unpacks them, and what a test does without one.

use std::path::PathBuf;

/// `$env` if set, else `usr/bin/<name>` under the VM cache's `tools/`
/// (`${IPVSNL_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ipvsnl-vm}`), if
/// it is there.
pub(crate) fn find(env: &str, name: &str) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(env) {
        return Some(PathBuf::from(p));
    }
    let var = |v: &str| std::env::var_os(v).map(PathBuf::from);
    let cache = var("IPVSNL_VM_CACHE")
        .or_else(|| var("XDG_CACHE_HOME").map(|x| x.join("ipvsnl-vm")))
        .or_else(|| var("HOME").map(|h| h.join(".cache/ipvsnl-vm")))?;
    let p = cache.join("tools/usr/bin").join(name);
    p.is_file().then_some(p)
}

/// A missing tool: a failure under CI (`CI=true`), a skip note elsewhere.
/// `package` is the Debian package `.ci/setup` unpacks it from.
pub(crate) fn missing(name: &str, package: &str, env: &str) {
    let how = format!(
        "{name} not found: run .ci/setup (it unpacks Debian's {package} package \
         into the VM cache's tools/) or set {env}"
    );
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{how}");
    eprintln!("skipped: {how}");
}

//! Pure parsers for the text files the doctor reads.
//!
//! Nothing here touches the file system: every function takes the text (or
//! bytes) of a file and returns what it found. Malformed lines are skipped,
//! never a panic, so a truncated or odd file still yields what can be read.

/// Normalises a module name the way the kernel and modprobe do: `-` and `_`
/// are the same character in module names, and the kernel uses `_`.
pub fn normalize_module_name(name: &str) -> String {
    name.trim().replace('-', "_")
}

/// The module name for a path such as `kernel/net/netfilter/ipvs/ip_vs_rr.ko.xz`.
///
/// Returns `None` when the last path component does not end in `.ko`,
/// `.ko.xz`, `.ko.zst` or `.ko.gz`.
pub fn module_name_from_path(path: &str) -> Option<String> {
    let base = path.trim().rsplit('/').next()?;
    let stem = [".ko", ".ko.xz", ".ko.zst", ".ko.gz"]
        .iter()
        .find_map(|suffix| base.strip_suffix(suffix))?;
    if stem.is_empty() {
        return None;
    }
    Some(normalize_module_name(stem))
}

/// What `/proc/modules` says about one module's life cycle.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadState {
    /// Fully loaded and running (`Live`).
    Live,
    /// Its init function is still running (`Loading`).
    Loading,
    /// Being removed (`Unloading`).
    Unloading,
    /// A state this parser does not know, as written.
    Other(String),
}

impl LoadState {
    fn parse(word: &str) -> LoadState {
        match word {
            "Live" => LoadState::Live,
            "Loading" => LoadState::Loading,
            "Unloading" => LoadState::Unloading,
            other => LoadState::Other(other.to_string()),
        }
    }

    /// The word `/proc/modules` uses for this state.
    pub fn as_str(&self) -> &str {
        match self {
            LoadState::Live => "Live",
            LoadState::Loading => "Loading",
            LoadState::Unloading => "Unloading",
            LoadState::Other(word) => word,
        }
    }
}

/// One line of `/proc/modules`.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedModule {
    /// Module name (as the kernel writes it, with `_`).
    pub name: String,
    /// Size of the module's memory image in bytes.
    pub size: u64,
    /// Reference count; `None` when the kernel prints `-` (no unload support).
    pub refcount: Option<u64>,
    /// Modules that use this one.
    pub used_by: Vec<String>,
    /// Life-cycle state.
    pub state: LoadState,
}

/// Parses `/proc/modules`.
///
/// Each line reads `name size refcount users state address [taints]`, for
/// example `ip_vs_rr 12288 1 - Live 0x0000000000000000`. Lines with fewer than
/// five fields or a non-numeric size are skipped.
pub fn parse_proc_modules(text: &str) -> Vec<LoadedModule> {
    text.lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let name = fields.next()?;
            let size = fields.next()?.parse::<u64>().ok()?;
            let refcount = fields.next()?;
            let users = fields.next()?;
            let state = fields.next()?;
            let used_by = users
                .split(',')
                .map(str::trim)
                .filter(|user| !user.is_empty() && *user != "-")
                .map(str::to_string)
                .collect();
            Some(LoadedModule {
                name: normalize_module_name(name),
                size,
                refcount: refcount.parse::<u64>().ok(),
                used_by,
                state: LoadState::parse(state),
            })
        })
        .collect()
}

/// Parses `modules.builtin`: one module path per line
/// (`kernel/net/netfilter/ipvs/ip_vs.ko`). Returns the module names.
pub fn parse_modules_builtin(text: &str) -> Vec<String> {
    text.lines().filter_map(module_name_from_path).collect()
}

/// Parses `modules.builtin.modinfo`: NUL-separated `module.key=value` records
/// for every built-in module. Returns each module name once, in first-seen
/// order.
pub fn parse_builtin_modinfo(bytes: &[u8]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for record in bytes.split(|b| *b == 0) {
        let Ok(record) = std::str::from_utf8(record) else {
            continue;
        };
        let Some((key, _value)) = record.split_once('=') else {
            continue;
        };
        let Some((module, _field)) = key.split_once('.') else {
            continue;
        };
        if module.is_empty() {
            continue;
        }
        let module = normalize_module_name(module);
        if !names.contains(&module) {
            names.push(module);
        }
    }
    names
}

/// One line of `modules.dep`.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DepEntry {
    /// Path of the module file, relative to `/lib/modules/<release>`.
    pub path: String,
    /// Module name derived from the path.
    pub name: String,
    /// Paths of the modules it needs, in the order modprobe loads them last
    /// to first.
    pub deps: Vec<String>,
}

impl DepEntry {
    /// Names of the modules this one needs.
    pub fn dep_names(&self) -> Vec<String> {
        self.deps
            .iter()
            .filter_map(|path| module_name_from_path(path))
            .collect()
    }
}

/// Parses `modules.dep`: `path: dep-path dep-path ...` per line.
pub fn parse_modules_dep(text: &str) -> Vec<DepEntry> {
    text.lines()
        .filter_map(|line| {
            let (path, deps) = line.split_once(':')?;
            let path = path.trim();
            let name = module_name_from_path(path)?;
            Some(DepEntry {
                path: path.to_string(),
                name,
                deps: deps.split_whitespace().map(str::to_string).collect(),
            })
        })
        .collect()
}

/// Reads a hexadecimal capability mask such as the `CapEff:` line of
/// `/proc/self/status`.
fn parse_hex_u64(text: &str) -> Option<u64> {
    u64::from_str_radix(text.trim(), 16).ok()
}

/// The effective capability set (`CapEff:`) from the text of
/// `/proc/<pid>/status`.
pub fn parse_cap_eff(status: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|line| line.strip_prefix("CapEff:"))
        .and_then(parse_hex_u64)
}

/// The effective user id (second number of `Uid:`) from the text of
/// `/proc/<pid>/status`.
pub fn parse_effective_uid(status: &str) -> Option<u32> {
    status
        .lines()
        .find_map(|line| line.strip_prefix("Uid:"))
        .and_then(|rest| rest.split_whitespace().nth(1))
        .and_then(|uid| uid.parse().ok())
}

/// Capability number of `CAP_NET_ADMIN`.
pub const CAP_NET_ADMIN: u32 = 12;

/// Whether a capability mask holds `CAP_NET_ADMIN`.
pub fn has_cap_net_admin(cap_eff: u64) -> bool {
    cap_eff & (1u64 << CAP_NET_ADMIN) != 0
}

/// Whether the text of `/proc/<pid>/uid_map` is the initial user namespace's
/// identity map, `0 0 4294967295` on a single line.
pub fn is_initial_uid_map(uid_map: &str) -> bool {
    let lines: Vec<Vec<&str>> = uid_map
        .lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        .filter(|fields| !fields.is_empty())
        .collect();
    matches!(lines.as_slice(), [only] if only.as_slice() == ["0", "0", "4294967295"])
}

/// The kernel release a vermagic string was built for: its first word, as in
/// `6.1.0-37-cloud-amd64 SMP preempt mod_unload modversions `.
pub fn vermagic_release(vermagic: &str) -> Option<&str> {
    vermagic.split_whitespace().next()
}

/// Major and minor version numbers of a kernel release such as
/// `6.12.38+deb13-cloud-amd64`.
pub fn kernel_version(release: &str) -> Option<(u32, u32)> {
    let mut parts = release.trim().split(|c: char| !c.is_ascii_digit());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// Reads the single integer value of a sysctl file (`1\n`).
pub fn parse_sysctl_int(text: &str) -> Option<i64> {
    text.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_from_paths() {
        assert_eq!(
            module_name_from_path("kernel/net/netfilter/ipvs/ip_vs_rr.ko.zst").as_deref(),
            Some("ip_vs_rr")
        );
        assert_eq!(
            module_name_from_path("a/nf-conntrack.ko").as_deref(),
            Some("nf_conntrack")
        );
        assert_eq!(module_name_from_path("a/b.txt"), None);
        assert_eq!(module_name_from_path(".ko"), None);
        assert_eq!(module_name_from_path(""), None);
    }

    #[test]
    fn uid_maps() {
        assert!(is_initial_uid_map("         0          0 4294967295\n"));
        assert!(!is_initial_uid_map("0 100000 65536\n"));
        assert!(!is_initial_uid_map(""));
        assert!(!is_initial_uid_map("0 0 4294967295\n1 1 1\n"));
    }

    #[test]
    fn versions() {
        assert_eq!(kernel_version("6.12.38+deb13-cloud-amd64"), Some((6, 12)));
        assert_eq!(kernel_version("5.4.0"), Some((5, 4)));
        assert_eq!(kernel_version("x"), None);
        assert_eq!(
            vermagic_release("6.1.0-37-cloud-amd64 SMP mod_unload "),
            Some("6.1.0-37-cloud-amd64")
        );
        assert_eq!(vermagic_release("  "), None);
    }

    #[test]
    fn capabilities() {
        let status = "Name:\tx\nUid:\t0\t65534\t0\t0\nCapEff:\t0000000000001000\n";
        assert_eq!(parse_cap_eff(status), Some(0x1000));
        assert!(has_cap_net_admin(0x1000));
        assert!(!has_cap_net_admin(0x0fff));
        assert_eq!(parse_effective_uid(status), Some(65534));
        assert_eq!(parse_cap_eff("CapEff:\tzz\n"), None);
    }
}

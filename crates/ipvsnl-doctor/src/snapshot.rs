//! The module-related files of one release (`/proc/modules`,
//! `modules.builtin`, `modules.dep`, the module files themselves), read once,
//! and the per-module report built from them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::modfile::{read_vermagic, Compression};
use crate::parse::{self, DepEntry, LoadedModule};
use crate::report::{ModuleFile, ModuleReport, ModuleState};
use crate::roots::HostRoots;

/// The module-related files, read once.
pub(crate) struct Snapshot {
    /// `/proc/modules`, `None` when unreadable.
    pub(crate) loaded: Option<Vec<LoadedModule>>,
    builtin: Vec<String>,
    pub(crate) has_builtin_list: bool,
    pub(crate) deps: Option<Vec<DepEntry>>,
    release_dir: PathBuf,
    sys_root: PathBuf,
    /// Module files found by walking the tree, built on first need.
    walked: Option<HashMap<String, PathBuf>>,
}

impl Snapshot {
    pub(crate) fn read(roots: &HostRoots, release_dir: &Path) -> Snapshot {
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

    pub(crate) fn reread_loaded(&mut self, roots: &HostRoots) {
        self.loaded = std::fs::read_to_string(roots.proc_root.join("modules"))
            .ok()
            .map(|text| parse::parse_proc_modules(&text));
    }

    fn sys_initstate(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.sys_root.join("module").join(name).join("initstate"))
            .ok()
            .map(|s| s.trim().to_string())
    }

    pub(crate) fn is_builtin(&self, name: &str) -> bool {
        if self.builtin.iter().any(|b| b == name) {
            return true;
        }
        // A built-in module with parameters has /sys/module/NAME but no
        // initstate; a loaded one has initstate.
        !self.has_builtin_list
            && self.sys_root.join("module").join(name).is_dir()
            && self.sys_initstate(name).is_none()
    }

    pub(crate) fn is_loaded(&self, name: &str) -> bool {
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

pub(crate) fn module_report(snapshot: &mut Snapshot, name: &str, release: &str) -> ModuleReport {
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

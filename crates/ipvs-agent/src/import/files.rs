//! Where an import reads its files: the disk ([`DiskFiles`]), or a
//! test's or a fuzzer's map of names to texts ([`MemFiles`]).

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use crate::import::glob::matches;

/// The files an import reads: the one given and its `include`s.
pub trait Files {
    /// The text of the file `path`.
    fn read(&self, path: &Path) -> io::Result<String>;
    /// The files `pattern` (a path whose last parts may hold `*`, `?`
    /// and `[...]`) names, in order; a pattern without those names
    /// itself, whether it exists or not.
    fn glob(&self, pattern: &Path) -> io::Result<Vec<PathBuf>>;
    /// A name that is the same for every path of one file (to find a
    /// file that includes itself).
    fn identity(&self, path: &Path) -> PathBuf;
}

/// The files on disk.
#[derive(Debug, Default, Clone, Copy)]
#[non_exhaustive]
pub struct DiskFiles;

impl Files for DiskFiles {
    fn read(&self, path: &Path) -> io::Result<String> {
        std::fs::read_to_string(path)
    }

    fn glob(&self, pattern: &Path) -> io::Result<Vec<PathBuf>> {
        let mut found = vec![PathBuf::new()];
        for part in pattern.components() {
            let part = part.as_os_str().to_string_lossy().into_owned();
            let wild = part.contains(['*', '?', '[']);
            let mut next = Vec::new();
            for base in found {
                if !wild {
                    next.push(base.join(&part));
                    continue;
                }
                let dir = if base.as_os_str().is_empty() {
                    PathBuf::from(".")
                } else {
                    base.clone()
                };
                let Ok(entries) = std::fs::read_dir(&dir) else {
                    continue;
                };
                let mut names: Vec<String> = entries
                    .filter_map(Result::ok)
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| !n.starts_with('.') && matches(&part, n))
                    .collect();
                names.sort();
                next.extend(names.into_iter().map(|n| base.join(n)));
            }
            found = next;
        }
        Ok(found)
    }

    fn identity(&self, path: &Path) -> PathBuf {
        std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
    }
}

/// Files held in memory, by name (a fuzzer's, a test's).
#[derive(Debug, Default, Clone)]
#[non_exhaustive]
pub struct MemFiles {
    /// The texts, by path.
    pub files: BTreeMap<PathBuf, String>,
}

impl Files for MemFiles {
    fn read(&self, path: &Path) -> io::Result<String> {
        self.files
            .get(path)
            .cloned()
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
    }

    fn glob(&self, pattern: &Path) -> io::Result<Vec<PathBuf>> {
        let p = pattern.to_string_lossy();
        if !p.contains(['*', '?', '[']) {
            return Ok(vec![pattern.to_path_buf()]);
        }
        Ok(self
            .files
            .keys()
            .filter(|k| matches(&p, &k.to_string_lossy()))
            .cloned()
            .collect())
    }

    fn identity(&self, path: &Path) -> PathBuf {
        path.to_path_buf()
    }
}

//! The record, on disk, of the VIPs this agent added: written (whole, by
//! a rename) before each address is added and after each is removed, so
//! that an agent killed while it held them leaves a list its next run
//! removes ([`Vips::remove_recorded`](crate::fleet::vip::addresses::Vips::remove_recorded)),
//! and an address another tool added is never on it.
//!
//! One line a VIP, `INTERFACE ADDR/PREFIX`, in `STATE_DIR/vips`
//! (`--state-dir`, `/run/ipvs-agent` by default: gone at a reboot, like
//! the addresses).
//!
//! ```
//! use ipvs_agent::fleet::vip::record::VipState;
//! let dir = std::env::temp_dir().join(format!("vip-state-doc-{}", std::process::id()));
//! let state = VipState::new(&dir);
//! use ipvs_agent::fleet::vip::addresses::Vip;
//! assert!(state.load::<Vip>().unwrap().is_empty());
//! state.store(&[("eth0".to_string(), "192.0.2.10/32".parse::<Vip>().unwrap())]).unwrap();
//! assert_eq!(std::fs::read_to_string(dir.join("vips")).unwrap(), "eth0 192.0.2.10/32\n");
//! assert_eq!(state.load::<Vip>().unwrap()[0].1.to_string(), "192.0.2.10/32");
//! # std::fs::remove_dir_all(&dir).unwrap();
//! ```

use std::fmt::Display;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// The default `--state-dir`.
pub const DEFAULT_DIR: &str = "/run/ipvs-agent";

/// Where the record is kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VipState {
    dir: PathBuf,
}

impl VipState {
    /// The record in `dir` (made when first stored).
    pub fn new(dir: impl Into<PathBuf>) -> VipState {
        VipState { dir: dir.into() }
    }

    /// The record's file.
    pub fn path(&self) -> PathBuf {
        self.dir.join("vips")
    }

    /// The recorded VIPs (a [`Vip`](crate::fleet::vip::addresses::Vip)) with their
    /// interfaces; none if there is no file. A line that is not
    /// `INTERFACE ADDR/PREFIX` is an error naming it.
    pub fn load<V: FromStr>(&self) -> io::Result<Vec<(String, V)>> {
        let path = self.path();
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(named(&path, e)),
        };
        let mut out = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let parsed = line
                .split_once(' ')
                .and_then(|(i, v)| Some((i.to_string(), v.parse::<V>().ok()?)))
                .filter(|(i, _)| !i.is_empty());
            let entry = parsed.ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "{} line {}: `{line}` is not `INTERFACE ADDR/PREFIX`",
                        path.display(),
                        n + 1
                    ),
                )
            })?;
            out.push(entry);
        }
        Ok(out)
    }

    /// Makes the record `vips`: written to a temporary file, synced, and
    /// renamed over the record (a reader sees the old list or the new).
    pub fn store<V: Display>(&self, vips: &[(String, V)]) -> io::Result<()> {
        std::fs::create_dir_all(&self.dir).map_err(|e| named(&self.dir, e))?;
        let path = self.path();
        let temporary = self.dir.join(".vips.new");
        let mut text = String::new();
        for (interface, vip) in vips {
            text.push_str(&format!("{interface} {vip}\n"));
        }
        let mut file = std::fs::File::create(&temporary).map_err(|e| named(&temporary, e))?;
        file.write_all(text.as_bytes())
            .and_then(|()| file.sync_all())
            .map_err(|e| named(&temporary, e))?;
        std::fs::rename(&temporary, &path).map_err(|e| named(&path, e))
    }
}

fn named(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

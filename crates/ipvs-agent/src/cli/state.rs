//! The agent's ownership record from the command line: the services this
//! agent created, in `STATE_DIR/services` (`--state-dir`, `/run/ipvs-agent`
//! by default, in fleet mode too, beside the record of the VIPs); with
//! `--netns PATH`, `STATE_DIR/services@PATH` (its `/` as `_`), so that
//! agents of several namespaces share the default directory.
//!
//! `/run` is a tmpfs: the record is gone at a reboot, like the kernel's
//! table it describes, so a record can never claim a service another tool
//! created after a reboot. Its owner's name is the host, the boot and the
//! network namespace (`host=... boot=... netns=DEV:INODE`): a record
//! copied from another host, left from another boot or of another
//! namespace is not taken for this agent's. Such a record, or one cut
//! short or changed, is logged and replaced (this run then owns only its
//! file's services: at worst a service removed while it was down stays,
//! never is one of another tool's removed). A record another agent holds
//! (two agents with one `--state-dir`) or a directory that cannot be made
//! stops the start, exit 1.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use ipvsnl::sync::{Ownership, OwnershipError};

/// The default `--state-dir`.
pub(crate) const DEFAULT_STATE_DIR: &str = "/run/ipvs-agent";

/// The record's file in `state_dir` for the agent of `netns` (its own
/// namespace without).
pub(crate) fn record_path(state_dir: &Path, netns: Option<&Path>) -> PathBuf {
    match netns {
        None => state_dir.join("services"),
        Some(p) => {
            let name = p.to_string_lossy().replace('/', "_");
            state_dir.join(format!("services@{name}"))
        }
    }
}

/// Opens the record in `state_dir` for the agent keeping the namespace
/// at `netns` (its own without), or says why it cannot.
pub(crate) fn open_record(state_dir: &Path, netns: Option<&Path>) -> Result<Ownership, String> {
    std::fs::create_dir_all(state_dir)
        .map_err(|e| format!("--state-dir {}: {e}", state_dir.display()))?;
    let path = record_path(state_dir, netns);
    let owner = owner_name(netns);
    match Ownership::open(&path, &owner) {
        Ok(record) => Ok(record),
        Err(e @ (OwnershipError::Corrupt { .. } | OwnershipError::OtherOwner { .. })) => {
            tracing::warn!(
                error = %e,
                "the ownership record is not this agent's: replaced (a service removed from \
                 the file while the agent was down, if any, stays in the kernel)"
            );
            Ownership::empty(&path, &owner).map_err(|e| e.to_string())
        }
        Err(e) => Err(e.to_string()),
    }
}

/// `host=NAME boot=ID netns=DEV:INODE`, each `?` if it cannot be read.
fn owner_name(netns: Option<&Path>) -> String {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "?".into())
    };
    let ns = netns.unwrap_or(Path::new("/proc/thread-self/ns/net"));
    let ns = std::fs::metadata(ns)
        .map(|m| format!("{}:{}", m.dev(), m.ino()))
        .unwrap_or_else(|_| "?".into());
    format!(
        "ipvs-agent host={} boot={} netns={ns}",
        read("/proc/sys/kernel/hostname"),
        read("/proc/sys/kernel/random/boot_id")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_of_another_owner_is_replaced_and_a_held_one_refused() {
        let dir = std::env::temp_dir().join(format!("ipvs-agent-state-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let key = ipvsnl::ServiceKey::tcp("192.0.2.1".parse().unwrap(), 80);
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(
            record_path(&dir, Some(Path::new("/run/netns/blue"))),
            dir.join("services@_run_netns_blue")
        );
        let mut r = Ownership::open(record_path(&dir, None), "elsewhere").unwrap();
        r.claim([key]).unwrap();
        drop(r);
        let mine = open_record(&dir, None).unwrap();
        assert!(mine.keys().is_empty());
        assert!(
            mine.owner().starts_with("ipvs-agent host="),
            "{}",
            mine.owner()
        );
        let e = open_record(&dir, None).unwrap_err();
        assert!(e.contains("held by another process"), "{e}");
        drop(mine);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

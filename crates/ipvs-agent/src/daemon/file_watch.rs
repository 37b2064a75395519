//! `--watch PERIOD`: the configuration file reloaded when it changes, as a
//! SIGHUP would.
//!
//! The file's metadata is read once a period (one `stat`, no crate, no
//! inotify watch to re-arm when an editor or a configuration manager
//! replaces the file by a rename): a change is a new device, inode, size,
//! modification or status-change time. A change is reloaded once it has
//! held for one more period, so a file still being written is not read
//! half-way; a missing file (between an unlink and a rename) is waited
//! for, never taken as an empty configuration. What a reload then does (a
//! file with errors refused whole, the running configuration kept) is the
//! reload's, not the watcher's.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::time::MissedTickBehavior;

use crate::daemon::control::Handle;

/// A version of the file, taken before it is loaded: a change made
/// between that load and the watch's start is then a change like any
/// other, reloaded, not taken as the version loaded.
///
/// ```no_run
/// use ipvs_agent::daemon::FileVersion;
/// let version = FileVersion::of("/etc/ipvs-agent/agent.toml");
/// let config = ipvs_agent::config::load("/etc/ipvs-agent/agent.toml".as_ref());
/// // ... start the agent, then `watch_file(path, period, handle, version)`.
/// # let _ = (version, config);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileVersion(Option<Fingerprint>);

impl FileVersion {
    /// The version of the file at `path` now (a missing file is a version
    /// too: the first one to appear is a change).
    pub fn of(path: impl AsRef<Path>) -> Self {
        FileVersion(fingerprint(path.as_ref()))
    }
}

/// What tells one version of a file from another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fingerprint {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

/// The file's fingerprint, `None` while it cannot be read (missing).
fn fingerprint(path: &Path) -> Option<Fingerprint> {
    let m = std::fs::metadata(path).ok()?;
    Some(Fingerprint {
        dev: m.dev(),
        ino: m.ino(),
        len: m.len(),
        mtime: (m.mtime(), m.mtime_nsec()),
        ctime: (m.ctime(), m.ctime_nsec()),
    })
}

/// What the watcher does at a tick.
#[derive(Debug, PartialEq, Eq)]
enum Step {
    /// Nothing changed, or a change has not held for a period yet.
    Wait,
    /// A change held for a period: reload.
    Reload,
}

/// The watcher's memory: the version last reloaded (or started with), and
/// a newer one seen at the last tick.
#[derive(Debug)]
struct Seen {
    loaded: Option<Fingerprint>,
    pending: Option<Fingerprint>,
}

impl Seen {
    fn tick(&mut self, now: Option<Fingerprint>) -> Step {
        let Some(now) = now else {
            // Missing: wait for the file to come back.
            self.pending = None;
            return Step::Wait;
        };
        if Some(now) == self.loaded {
            self.pending = None;
            return Step::Wait;
        }
        if self.pending == Some(now) {
            self.loaded = Some(now);
            self.pending = None;
            return Step::Reload;
        }
        self.pending = Some(now);
        Step::Wait
    }
}

/// Reloads the agent of `handle` whenever `path` changes from `loaded`
/// (the version taken before the agent's configuration was read from it),
/// checking every `period` (at least 10 ms), until the agent stops.
pub async fn watch_file(path: PathBuf, period: Duration, handle: Handle, loaded: FileVersion) {
    let period = period.max(Duration::from_millis(10));
    let mut seen = Seen {
        loaded: loaded.0,
        pending: None,
    };
    let mut ticks = tokio::time::interval(period);
    ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
    ticks.tick().await;
    loop {
        ticks.tick().await;
        if handle.commands.is_closed() {
            return;
        }
        if seen.tick(fingerprint(&path)) == Step::Reload {
            tracing::info!(file = %path.display(), "the configuration file changed: reloading");
            handle.reload().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version(len: u64) -> Option<Fingerprint> {
        Some(Fingerprint {
            dev: 1,
            ino: 2,
            len,
            mtime: (3, 0),
            ctime: (3, 0),
        })
    }

    #[test]
    fn a_change_is_reloaded_once_it_held_for_a_period() {
        let mut s = Seen {
            loaded: version(1),
            pending: None,
        };
        assert_eq!(s.tick(version(1)), Step::Wait);
        assert_eq!(s.tick(version(2)), Step::Wait);
        assert_eq!(s.tick(version(2)), Step::Reload);
        assert_eq!(s.tick(version(2)), Step::Wait);
    }

    #[test]
    fn a_file_still_changing_waits_and_a_missing_one_is_waited_for() {
        let mut s = Seen {
            loaded: version(1),
            pending: None,
        };
        assert_eq!(s.tick(version(2)), Step::Wait);
        assert_eq!(s.tick(version(3)), Step::Wait);
        assert_eq!(s.tick(None), Step::Wait);
        assert_eq!(s.tick(version(3)), Step::Wait);
        assert_eq!(s.tick(version(3)), Step::Reload);
        // Back to what was loaded before the change settled: nothing.
        assert_eq!(s.tick(version(4)), Step::Wait);
        assert_eq!(s.tick(version(3)), Step::Wait);
        assert_eq!(s.tick(version(3)), Step::Wait);
    }
}

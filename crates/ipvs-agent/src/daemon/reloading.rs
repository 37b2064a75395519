//! A reload of the configuration file under way: read and checked on a
//! blocking thread, not on the loop's (a 5 MB file takes the parser about
//! a second, and the loop's checks, syncs and `/healthz` go on meanwhile),
//! then guarded against a file cut short before the loop applies it.

use std::path::PathBuf;

use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::config::{self, Config, LoadError};

/// The file being read, and who waits for the result.
pub(crate) struct Reloading {
    task: JoinHandle<Result<Config, LoadError>>,
    /// Answered once the file read now is applied or refused.
    answers: Vec<oneshot::Sender<bool>>,
    /// Asked again while this read ran (the file may have changed since
    /// it was opened): read once more when it ends.
    pub(crate) again: Vec<oneshot::Sender<bool>>,
}

impl Reloading {
    /// Starts reading `path`, for `answer`.
    pub(crate) fn start(path: PathBuf, answer: oneshot::Sender<bool>) -> Self {
        Reloading {
            task: tokio::task::spawn_blocking(move || config::load(&path)),
            answers: vec![answer],
            again: Vec::new(),
        }
    }

    /// The result of the read under way (pending while none is); the
    /// reload is over then, and its waiters are handed back with it.
    pub(crate) async fn done(
        this: &mut Option<Reloading>,
    ) -> (Result<Config, LoadError>, Reloading) {
        let Some(r) = this.as_mut() else {
            return std::future::pending().await;
        };
        let loaded = match (&mut r.task).await {
            Ok(loaded) => loaded,
            Err(e) => Err(LoadError::Read {
                file: String::new(),
                source: std::io::Error::other(format!("the reading thread failed: {e}")),
            }),
        };
        let r = this.take().expect("checked above");
        (loaded, r)
    }

    /// Tells every waiter of this read the result.
    pub(crate) fn answer(self, ok: bool) -> Vec<oneshot::Sender<bool>> {
        for a in self.answers {
            let _ = a.send(ok);
        }
        self.again
    }
}

/// Services of `old` that `new` lacks, when they are more than half of
/// `old`'s: `Some((removed, running))`, what the reload guard refuses.
pub(crate) fn removes_most(old: &Config, new: &Config) -> Option<(usize, usize)> {
    let kept: std::collections::HashSet<_> = new.services.iter().map(|vs| vs.service.key).collect();
    let removed = old
        .services
        .iter()
        .filter(|vs| !kept.contains(&vs.service.key))
        .count();
    (removed > 0 && removed * 2 > old.services.len()).then_some((removed, old.services.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse_str;

    fn services(ports: &[u16]) -> Config {
        let mut text = String::new();
        for p in ports {
            text += &format!(
                "[[service]]\nprotocol = \"tcp\"\naddress = \"192.0.2.1\"\nport = {p}\n\
                 [[service.server]]\naddress = \"10.0.0.1\"\n"
            );
        }
        parse_str("t.toml", &text).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn more_than_half_removed_is_most() {
        let four = services(&[1, 2, 3, 4]);
        assert_eq!(removes_most(&four, &services(&[1, 2])), None);
        assert_eq!(removes_most(&four, &services(&[1])), Some((3, 4)));
        // Replaced rather than kept: removed all the same.
        assert_eq!(removes_most(&four, &services(&[5, 6, 7, 8])), Some((4, 4)));
        assert_eq!(removes_most(&services(&[1]), &services(&[2])), Some((1, 1)));
        assert_eq!(removes_most(&services(&[1, 2]), &services(&[1])), None);
    }
}

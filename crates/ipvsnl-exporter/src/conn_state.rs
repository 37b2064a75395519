//! What one connection is doing and since when (the phase its timeouts
//! are measured from), and whether the server has decided to close it
//! (the reason, and a wake-up for the task that serves it).

use std::sync::Mutex;
use std::time::Instant;

use tokio::sync::Notify;

use crate::Limits;

/// What a connection is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Waiting for a request's headers: since the accept, or on a
    /// kept-alive connection since the request's first byte.
    Headers { since: Instant },
    /// Kept alive, no request yet: since the end of the last response.
    Idle { since: Instant },
    /// Answering a request, since its headers came in; `listing` is the
    /// id of the listing a scrape's response is sent from.
    Answering {
        since: Instant,
        listing: Option<u64>,
    },
}

/// Why the server closed a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cut {
    /// Its request's headers did not come within the header timeout.
    HeaderTimeout,
    /// Kept alive and idle for the idle timeout.
    IdleTimeout,
    /// Its response was not taken within the response timeout.
    ResponseTimeout,
    /// Waiting for a request when a new connection needed its place.
    Evicted,
    /// Sending a listing older than the newest `max_listings`.
    Superseded,
}

impl Cut {
    /// Every reason, in the order the metrics list them.
    pub(crate) const ALL: [Cut; 5] = [
        Cut::HeaderTimeout,
        Cut::IdleTimeout,
        Cut::ResponseTimeout,
        Cut::Evicted,
        Cut::Superseded,
    ];

    /// The `reason` label's value.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Cut::HeaderTimeout => "header_timeout",
            Cut::IdleTimeout => "idle_timeout",
            Cut::ResponseTimeout => "response_timeout",
            Cut::Evicted => "evicted",
            Cut::Superseded => "superseded",
        }
    }
}

#[derive(Debug)]
struct Inner {
    phase: Phase,
    cut: Option<Cut>,
}

/// One connection's phase and fate, shared by the task serving it, its
/// I/O, its responses' bodies, the connection table and the listings.
#[derive(Debug)]
pub(crate) struct ConnState {
    inner: Mutex<Inner>,
    /// Wakes the serving task when the connection is cut from outside.
    wake: Notify,
}

impl ConnState {
    /// A connection accepted at `now`, waiting for its first request.
    pub(crate) fn new(now: Instant) -> Self {
        ConnState {
            inner: Mutex::new(Inner {
                phase: Phase::Headers { since: now },
                cut: None,
            }),
            wake: Notify::new(),
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut Inner) -> T) -> T {
        // A panic elsewhere while the lock was held leaves a phase that is
        // still one of the three: go on with it.
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut inner)
    }

    /// The phase now.
    pub(crate) fn phase(&self) -> Phase {
        self.with(|i| i.phase)
    }

    /// Bytes came in at `now`: an idle connection starts a request.
    pub(crate) fn bytes_arrived(&self, now: Instant) {
        self.with(|i| {
            if let Phase::Idle { .. } = i.phase {
                i.phase = Phase::Headers { since: now };
            }
        });
    }

    /// A request's headers came in at `now`: its answer begins.
    pub(crate) fn answering(&self, now: Instant) {
        self.with(|i| {
            i.phase = Phase::Answering {
                since: now,
                listing: None,
            }
        });
    }

    /// The answer being made is sent from listing `id`.
    pub(crate) fn sending_listing(&self, id: u64) {
        self.with(|i| {
            if let Phase::Answering { listing, .. } = &mut i.phase {
                *listing = Some(id);
            }
        });
    }

    /// The response's body ended (or was dropped) at `now`: idle until the
    /// next request.
    pub(crate) fn answered(&self, now: Instant) {
        self.with(|i| {
            if let Phase::Answering { .. } = i.phase {
                i.phase = Phase::Idle { since: now };
            }
        });
    }

    /// Decides to close the connection for `why` (the first reason
    /// stands) and wakes its task; whether this call decided it.
    pub(crate) fn cut(&self, why: Cut) -> bool {
        let decided = self.with(|i| i.cut.is_none() && i.cut.replace(why).is_none());
        if decided {
            self.wake.notify_one();
        }
        decided
    }

    /// Cuts the connection for `why` if it is sending listing `id`.
    pub(crate) fn cut_if_sending(&self, id: u64, why: Cut) -> bool {
        let sending = matches!(self.phase(), Phase::Answering { listing: Some(l), .. } if l == id);
        sending && self.cut(why)
    }

    /// Why the connection is to be closed, once decided.
    pub(crate) fn cut_reason(&self) -> Option<Cut> {
        self.with(|i| i.cut)
    }

    /// When the wait for a request started, if the connection is waiting
    /// for one (and not cut already): what an eviction picks by.
    pub(crate) fn waiting_since(&self) -> Option<Instant> {
        self.with(|i| match (i.phase, i.cut) {
            (_, Some(_)) | (Phase::Answering { .. }, None) => None,
            (Phase::Headers { since } | Phase::Idle { since }, None) => Some(since),
        })
    }

    /// When the phase's timeout expires under `limits`, and the reason it
    /// gives.
    pub(crate) fn deadline(&self, limits: &Limits) -> (Instant, Cut) {
        match self.phase() {
            Phase::Headers { since } => (since + limits.header_timeout, Cut::HeaderTimeout),
            Phase::Idle { since } => (since + limits.idle_timeout, Cut::IdleTimeout),
            Phase::Answering { since, .. } => {
                (since + limits.response_timeout, Cut::ResponseTimeout)
            }
        }
    }

    /// What wakes the connection's task when it is cut.
    pub(crate) fn woken(&self) -> &Notify {
        &self.wake
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn phases_and_their_deadlines() {
        let t0 = Instant::now();
        let s = ConnState::new(t0);
        let limits = Limits::default()
            .with_header_timeout(Duration::from_secs(1))
            .with_idle_timeout(Duration::from_secs(2))
            .with_response_timeout(Duration::from_secs(3));
        let at = |secs| t0 + Duration::from_secs(secs);
        assert_eq!(s.deadline(&limits), (at(1), Cut::HeaderTimeout));
        s.bytes_arrived(at(5)); // not idle: the accept's clock runs on
        assert_eq!(s.deadline(&limits), (at(1), Cut::HeaderTimeout));
        s.answering(at(10));
        s.sending_listing(7);
        assert_eq!(s.waiting_since(), None);
        assert_eq!(s.deadline(&limits), (at(13), Cut::ResponseTimeout));
        assert!(!s.cut_if_sending(6, Cut::Superseded));
        s.answered(at(20));
        assert_eq!(s.waiting_since(), Some(at(20)));
        assert_eq!(s.deadline(&limits), (at(22), Cut::IdleTimeout));
        assert!(!s.cut_if_sending(7, Cut::Superseded), "idle: not sending");
        s.bytes_arrived(at(21));
        assert_eq!(s.deadline(&limits), (at(22), Cut::HeaderTimeout));
        assert!(s.cut(Cut::Evicted));
        assert!(!s.cut(Cut::IdleTimeout), "the first reason stands");
        assert_eq!(s.cut_reason(), Some(Cut::Evicted));
        assert_eq!(s.waiting_since(), None);
    }
}

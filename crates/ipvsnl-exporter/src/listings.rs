//! The listings the server's responses are sent from: one taken at a
//! time, shared by every request that arrives while it is taken, and at
//! most `max_listings` held by responses still being sent. A newer one
//! beyond that supersedes the oldest: the connections still sending it
//! are cut, so what stalled readers pin is a bounded number of listings,
//! whatever the number of readers.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::{Arc, Mutex, Weak};

use tokio::sync::watch;

use crate::listing::Listing;

/// The server's listings.
#[derive(Debug)]
pub(crate) struct Listings {
    max_listings: usize,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    next_id: u64,
    /// The listing being taken: its id, and where it will be published.
    taking: Option<(u64, watch::Receiver<Option<Arc<Listing>>>)>,
    /// The listings made, oldest first (those no response holds any more
    /// are gone from their `Weak`).
    held: VecDeque<Weak<Listing>>,
}

impl Listings {
    /// Listings of which responses hold at most `max_listings` (1 or
    /// more).
    pub(crate) fn new(max_listings: usize) -> Arc<Self> {
        Arc::new(Listings {
            max_listings: max_listings.max(1),
            state: Mutex::new(State::default()),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The listing for a request that arrives now: the one being taken,
    /// or a new one that `take(id)` makes (on a task of its own, so a
    /// client that goes away does not stop it for the others). `None`
    /// when the task making it panicked.
    pub(crate) async fn join<F, T>(self: &Arc<Self>, take: T) -> Option<Arc<Listing>>
    where
        T: FnOnce(u64) -> F,
        F: Future<Output = Listing> + Send + 'static,
    {
        let mut rx = {
            let mut state = self.state();
            match &state.taking {
                Some((_, rx)) => rx.clone(),
                None => {
                    let id = state.next_id;
                    state.next_id += 1;
                    let (tx, rx) = watch::channel(None);
                    state.taking = Some((id, rx.clone()));
                    let making = take(id);
                    let this = Arc::clone(self);
                    tokio::spawn(async move {
                        let done = Done {
                            listings: Arc::clone(&this),
                            id,
                        };
                        let listing = Arc::new(making.await);
                        this.publish(&listing);
                        drop(done);
                        let _ = tx.send(Some(listing));
                    });
                    rx
                }
            }
        };
        let published = rx.wait_for(Option::is_some).await.ok()?;
        published.clone()
    }

    /// Listing `listing` is made: it joins the held ones, and the oldest
    /// beyond `max_listings` are superseded.
    fn publish(&self, listing: &Arc<Listing>) {
        let superseded: Vec<Arc<Listing>> = {
            let mut state = self.state();
            state.held.retain(|w| w.strong_count() > 0);
            state.held.push_back(Arc::downgrade(listing));
            let excess = state.held.len().saturating_sub(self.max_listings);
            state
                .held
                .drain(..excess)
                .filter_map(|w| w.upgrade())
                .collect()
        };
        for old in superseded {
            old.supersede();
        }
    }

    /// How many listings responses hold now.
    #[cfg(test)]
    fn held(&self) -> usize {
        let mut state = self.state();
        state.held.retain(|w| w.strong_count() > 0);
        state.held.len()
    }
}

/// Ends the taking of listing `id` when its task ends, published or not
/// (a panicking source): the next request takes a new one.
struct Done {
    listings: Arc<Listings>,
    id: u64,
}

impl Drop for Done {
    fn drop(&mut self) {
        let mut state = self.listings.state();
        if state.taking.as_ref().is_some_and(|(id, _)| *id == self.id) {
            state.taking = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::pin::Pin;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    use super::*;
    use crate::conn_state::{ConnState, Cut};
    use crate::MetricPrefix;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    fn listing(id: u64) -> Listing {
        let home = Arc::new(Mutex::new(None));
        Listing::new(id, Vec::new(), None, true, &MetricPrefix::default(), home)
    }

    /// Makes a listing in 50 ms, counting it in `made`.
    fn counting(
        made: Arc<AtomicUsize>,
    ) -> impl FnOnce(u64) -> Pin<Box<dyn Future<Output = Listing> + Send>> {
        move |id| {
            Box::pin(async move {
                made.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(50)).await;
                listing(id)
            })
        }
    }

    #[test]
    fn requests_that_arrive_together_share_one_listing() {
        runtime().block_on(async {
            let listings = Listings::new(2);
            let made = Arc::new(AtomicUsize::new(0));
            let joining: Vec<_> = (0..3)
                .map(|_| {
                    let listings = Arc::clone(&listings);
                    let take = counting(Arc::clone(&made));
                    tokio::spawn(async move { listings.join(take).await })
                })
                .collect();
            let mut joined = Vec::new();
            for j in joining {
                joined.push(j.await.unwrap().unwrap());
            }
            assert_eq!(made.load(Ordering::SeqCst), 1);
            assert!(joined.iter().all(|l| Arc::ptr_eq(l, &joined[0])));
            // Once made, the next request takes a new one.
            let d = listings.join(counting(Arc::clone(&made))).await.unwrap();
            assert_eq!((made.load(Ordering::SeqCst), d.id()), (2, 1));
        });
    }

    #[test]
    fn the_oldest_listing_beyond_the_cap_cuts_its_senders() {
        runtime().block_on(async {
            let listings = Listings::new(2);
            let now = Instant::now();
            let mut held = Vec::new();
            let mut conns = Vec::new();
            for _ in 0..3 {
                let l = listings
                    .join(|id| async move { listing(id) })
                    .await
                    .unwrap();
                let conn = Arc::new(ConnState::new(now));
                conn.answering(now);
                conn.sending_listing(l.id());
                l.sent_by(&conn);
                held.push(l);
                conns.push(conn);
            }
            let cuts: Vec<_> = conns.iter().map(|c| c.cut_reason()).collect();
            assert_eq!(cuts, [Some(Cut::Superseded), None, None]);
            // Superseded ones, and those no response holds, do not count.
            assert_eq!(listings.held(), 2);
            held.pop();
            assert_eq!(listings.held(), 1);
        });
    }

    #[test]
    fn a_panicking_listing_is_none_and_the_next_is_taken_anew() {
        runtime().block_on(async {
            let listings = Listings::new(2);
            let failed = listings
                .join(|_| async move { panic!("the source panicked") })
                .await;
            assert!(failed.is_none());
            let next = listings.join(|id| async move { listing(id) }).await;
            assert_eq!(next.map(|l| l.id()), Some(1));
        });
    }
}

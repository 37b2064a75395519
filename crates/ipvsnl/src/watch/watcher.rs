//! The watcher: one listing a tick, diffed against the last one.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::{Interval, MissedTickBehavior};

use super::{diff, Change};
use crate::{Error, ServiceEntry};

// AsyncClient implements Lister (src/async_client.rs): a listing a tick.

/// Where a [`Watcher`] gets its listings: the whole table, each service
/// with its destinations, as [`crate::Client::table`] lists it.
///
/// The watcher calls [`Lister::list`] once a tick. Implement it to watch
/// another source, or to script listings in a test:
///
/// ```
/// use ipvsnl::watch::Lister;
/// use ipvsnl::{Error, ServiceEntry};
///
/// /// Always the same table.
/// struct Fixed(Vec<ServiceEntry>);
///
/// impl Lister for Fixed {
///     async fn list(&mut self) -> Result<Vec<ServiceEntry>, Error> {
///         Ok(self.0.clone())
///     }
/// }
/// ```
pub trait Lister {
    /// Lists the table: every service with its destinations.
    fn list(&mut self) -> impl Future<Output = Result<Vec<ServiceEntry>, Error>> + Send + '_;
}

/// What one tick found: the changes since the last listing.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Changes {
    /// The changes, in [`diff()`]'s order; never empty, but for the first
    /// listing of an empty table.
    pub changes: Vec<Change>,
    /// Whether this is the first successful listing: then every service
    /// is a [`Change::ServiceAdded`] (and an empty table yields no change,
    /// but is yielded all the same, so the caller knows its view is whole).
    pub first: bool,
}

/// The shortest period: tokio's timer has a millisecond's resolution, and
/// an interval of zero would not be one.
const MIN_PERIOD: Duration = Duration::from_millis(1);

/// Polls a [`Lister`] every period and yields what changed (see the
/// [module](super) for what that can and cannot see).
///
/// ```
/// use std::time::Duration;
/// use ipvsnl::watch::{Change, Lister, Watcher};
/// use ipvsnl::{Error, Service, ServiceEntry, ServiceKey};
///
/// struct One;
/// impl Lister for One {
///     async fn list(&mut self) -> Result<Vec<ServiceEntry>, Error> {
///         let key = ServiceKey::udp("10.0.0.53".parse().unwrap(), 53);
///         Ok(vec![ServiceEntry::new(Service::new(key))])
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let mut watcher = Watcher::new(One, Duration::from_secs(2));
/// let found = watcher.next().await?;
/// assert!(found.first);
/// assert!(matches!(&found.changes[..], [Change::ServiceAdded(_)]));
/// assert_eq!(watcher.snapshot().map(<[_]>::len), Some(1));
/// # Ok::<(), Error>(())
/// # }).unwrap();
/// ```
#[derive(Debug)]
pub struct Watcher<L> {
    lister: L,
    period: Duration,
    /// Made at the first [`Watcher::next`], inside the runtime (a tokio
    /// timer cannot be made outside one).
    interval: Option<Interval>,
    /// The last successful listing.
    snapshot: Option<Vec<ServiceEntry>>,
}

impl<L: Lister> Watcher<L> {
    /// A watcher listing through `lister` every `period` (at least a
    /// millisecond; a shorter one is taken as that).
    ///
    /// Nothing is listed yet, and no runtime is needed yet: the first tick
    /// is the first [`Watcher::next`], which lists at once.
    pub fn new(lister: L, period: Duration) -> Self {
        Watcher {
            lister,
            period: period.max(MIN_PERIOD),
            interval: None,
            snapshot: None,
        }
    }

    /// Waits for the next tick that finds a change, and returns the
    /// changes.
    ///
    /// Each tick lists the table once and diffs it against the last
    /// listing; a tick that finds no change is not returned: it waits for
    /// the next tick. The first successful listing returns every service as
    /// [`Change::ServiceAdded`], with [`Changes::first`] set.
    ///
    /// A failed listing returns its error at once and changes nothing:
    /// the last listing stays the one to diff against, and the next call
    /// lists again at the next tick.
    ///
    /// Ticks come every period after the first; a listing slower than the
    /// period delays the next tick to a period after the late one, so a
    /// slow table never brings a burst of listings.
    ///
    /// Dropping the future (a `select!` that takes another branch) loses no
    /// change, as far as the lister's own future may be dropped: the last
    /// listing is replaced only together with diffing against it, so the
    /// next call finds whatever this one would have (a tick it spent is
    /// not given back).
    pub async fn next(&mut self) -> Result<Changes, Error> {
        let period = self.period;
        let interval = self.interval.get_or_insert_with(|| {
            let mut interval = tokio::time::interval(period);
            interval.set_missed_tick_behavior(MissedTickBehavior::Delay);
            interval
        });
        loop {
            interval.tick().await;
            let listed = self.lister.list().await?;
            let first = self.snapshot.is_none();
            let changes = diff(self.snapshot.as_deref().unwrap_or_default(), &listed);
            self.snapshot = Some(listed);
            if first || !changes.is_empty() {
                return Ok(Changes { changes, first });
            }
        }
    }

    /// The last successful listing (its counters as of then), if there was
    /// one yet: the table as the changes returned so far leave it.
    pub fn snapshot(&self) -> Option<&[ServiceEntry]> {
        self.snapshot.as_deref()
    }

    /// The period between ticks.
    pub fn period(&self) -> Duration {
        self.period
    }

    /// The lister.
    pub fn lister(&self) -> &L {
        &self.lister
    }

    /// The lister, to use between ticks (a client's other requests).
    pub fn lister_mut(&mut self) -> &mut L {
        &mut self.lister
    }

    /// The changes as a stream: each item is what [`Watcher::next`] would
    /// have returned, errors included; the stream never ends (drop it to
    /// stop watching).
    pub fn into_stream(self) -> impl futures_core::Stream<Item = Result<Changes, Error>> + Send
    where
        L: Send,
    {
        ChangeStream {
            pending: Box::pin(step(self)),
            step,
        }
    }
}

/// One [`Watcher::next`] by a future that owns the watcher and hands it
/// back with the item.
async fn step<L: Lister>(mut watcher: Watcher<L>) -> (Result<Changes, Error>, Watcher<L>) {
    let item = watcher.next().await;
    (item, watcher)
}

/// [`Watcher::into_stream`]'s stream: the pending [`step`], boxed once and
/// refilled in place with the next step when it is done.
struct ChangeStream<L, F> {
    pending: Pin<Box<F>>,
    /// [`step`] itself: the pointer ties the step's type to `F`.
    step: fn(Watcher<L>) -> F,
}

impl<L, F> futures_core::Stream for ChangeStream<L, F>
where
    F: Future<Output = (Result<Changes, Error>, Watcher<L>)>,
{
    type Item = Result<Changes, Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        // `ChangeStream` is `Unpin`: its future is pinned in its box.
        let this = self.get_mut();
        let (item, watcher) = match this.pending.as_mut().poll(cx) {
            Poll::Ready(done) => done,
            Poll::Pending => return Poll::Pending,
        };
        this.pending.set((this.step)(watcher));
        Poll::Ready(Some(item))
    }
}

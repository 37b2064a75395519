//! Running the driver's futures on the calling thread, for the blocking
//! client: its transport does each system call when a future is made, so
//! every future is ready at its first poll and nothing here ever parks.
//! (Should one not be, the thread parks until woken, as any executor's.)

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::Thread;

/// Wakes the thread that polls.
struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// Runs `future` to its end on the calling thread: the executor of code
/// written for [`Operations`](crate::Operations) (a controller's
/// reconciling step, a test) when it is given the blocking
/// [`Client`](crate::Client), whose futures never wait, so no async
/// runtime is needed. A future that does wait parks the thread until it is
/// woken; a future of the async client needs its runtime instead.
///
/// ```
/// use ipvsnl::{Error, Operations};
///
/// /// Written once, for either client.
/// async fn version(ipvs: &mut impl Operations) -> Result<u32, Error> {
///     Ok(ipvs.info().await?.version)
/// }
///
/// // A generic-netlink socket opens on any Linux host, IPVS or not.
/// let mut ipvs = ipvsnl::Client::new()?;
/// match ipvsnl::block_on(version(&mut ipvs)) {
///     Ok(v) => println!("IPVS {}.{}.{}", v >> 16, (v >> 8) & 0xff, v & 0xff),
///     Err(e) => assert!(e.is_unavailable(), "{e}"),
/// }
/// # Ok::<(), Error>(())
/// ```
pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    loop {
        match future.as_mut().poll(&mut cx) {
            Poll::Ready(out) => return out,
            Poll::Pending => std::thread::park(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::block_on;

    #[test]
    fn a_ready_future_gives_its_value() {
        assert_eq!(block_on(async { 6 * 7 }), 42);
    }

    #[test]
    fn a_future_that_waits_is_woken_and_finished() {
        // Pending once, waking itself from another thread.
        let mut first = true;
        let out = block_on(std::future::poll_fn(|cx| {
            if std::mem::take(&mut first) {
                let waker = cx.waker().clone();
                std::thread::spawn(move || waker.wake());
                std::task::Poll::Pending
            } else {
                std::task::Poll::Ready("done")
            }
        }));
        assert_eq!(out, "done");
    }
}

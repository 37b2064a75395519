//! Runs one connection under its limits: the connection's future is
//! dropped (the socket closed, whatever its response held freed) when the
//! deadline of its phase passes or when it is cut from outside (evicted,
//! its listing superseded).

use std::future::{poll_fn, Future};
use std::pin::pin;
use std::task::Poll;
use std::time::Instant;

use crate::conn_state::{ConnState, Cut};
use crate::Limits;

/// Polls `conn` to its end, or until `state` says it is to be closed;
/// why it was closed, `None` when it ended by itself.
pub(crate) async fn supervise<C: Future>(
    conn: C,
    state: &ConnState,
    limits: &Limits,
) -> Option<Cut> {
    let mut conn = pin!(conn);
    let (mut deadline, _) = state.deadline(limits);
    let mut timer = pin!(tokio::time::sleep_until(deadline.into()));
    let mut woken = pin!(state.woken().notified());
    poll_fn(|cx| {
        if conn.as_mut().poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        // Cut from outside: the wake-up registered, then the reason read
        // (a cut between the two leaves a permit: the next poll comes).
        while woken.as_mut().poll(cx).is_ready() {
            woken.set(state.woken().notified());
        }
        if let Some(why) = state.cut_reason() {
            return Poll::Ready(Some(why));
        }
        // The phase's deadline, which polling the connection may have
        // moved.
        let (now_due, why) = state.deadline(limits);
        if now_due != deadline {
            deadline = now_due;
            timer.as_mut().reset(deadline.into());
        }
        while timer.as_mut().poll(cx).is_ready() {
            if Instant::now() >= deadline {
                state.cut(why);
                return Poll::Ready(state.cut_reason());
            }
            // Woken early (the clocks' rounding): wait again.
            timer.as_mut().reset(deadline.into());
        }
        Poll::Pending
    })
    .await
}

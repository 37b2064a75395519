//! A response body that tells its connection's [`ConnState`] when it is
//! done (sent to its end, or dropped): the connection's answering time
//! ends, its idle time begins.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use hyper::body::{Body, Frame, SizeHint};

use crate::conn_state::ConnState;

/// `B`, reporting its end to a connection's state.
#[derive(Debug)]
pub(crate) struct TrackedBody<B> {
    body: B,
    state: Arc<ConnState>,
}

impl<B> TrackedBody<B> {
    /// `body`, reporting to `state`.
    pub(crate) fn new(body: B, state: Arc<ConnState>) -> Self {
        TrackedBody { body, state }
    }
}

impl<B: Body + Unpin> Body for TrackedBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<B::Data>, B::Error>>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.body).poll_frame(cx);
        if let Poll::Ready(None) = polled {
            this.state.answered(Instant::now());
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

impl<B> Drop for TrackedBody<B> {
    fn drop(&mut self) {
        self.state.answered(Instant::now());
    }
}

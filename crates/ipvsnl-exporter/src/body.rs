//! A scrape's response body: the text rendered in parts of about
//! [`PART_BYTES`] as hyper asks for them, so a scrape of a big table
//! (10,000 services x 5 destinations: some 150 MB of text) never holds the
//! whole text. Each part is a fresh buffer of the same size, which the
//! allocator hands back part after part: no page of a 150 MB buffer is
//! faulted in. Measured under icount in one boot (`scripts/measure/scrape-bench
//! --kernel 6.1`, 10,000 x 5, medians of 5; benches/SCRAPE.md): a scrape
//! in parts took 0.815 s (sys 0.587 s), the same scrape with the text in
//! one buffer 1.280 s (sys 0.877 s: the faults, and the copies of a
//! growing buffer), against 0.648 s (sys 0.576 s) for `Client::table`.
//!
//! A body holds its place in the text and the listing it renders from,
//! which it shares with every response sent from that listing (see
//! `listing.rs`): never a table of its own. The server lets hyper queue
//! less than a part before it asks for the next one, so a client that
//! stops reading pins one part (64 KiB) and its connection's buffers,
//! whatever the table's size.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};

use crate::listing::Listing;
use crate::server_stats::ServerStats;
use crate::{render_exporter_metrics, Position};

/// What a scrape appends after the exporter's own metrics: text in the
/// exposition format (see [`push_header`](crate::push_header)).
pub type Appendix = Arc<dyn Fn(&mut Vec<u8>) + Send + Sync>;

/// About how much text one part holds (a line is never cut).
pub const PART_BYTES: usize = 64 << 10;

/// A response body: bytes known at once, or a scrape rendered in parts.
#[derive(Debug)]
pub struct ScrapeBody {
    state: State,
    /// A part rendered already, sent before the others.
    first: Option<Bytes>,
}

#[derive(Debug)]
enum State {
    Whole(Option<Bytes>),
    Parts(Box<Parts>),
}

/// What a scrape's body renders from: a listing it shares with the other
/// responses sent from it, and its own place in the text.
struct Parts {
    /// Let go of as soon as the last part is rendered.
    listing: Option<Arc<Listing>>,
    at: Position,
    started: Instant,
    /// The server's counters, rendered last (for a scrape the server
    /// answers).
    server: Option<Arc<ServerStats>>,
    /// The program's own metrics, rendered after all else.
    appendix: Option<Appendix>,
}

impl std::fmt::Debug for Parts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parts")
            .field("listing", &self.listing)
            .field("at", &self.at)
            .field("appendix", &self.appendix.is_some())
            .finish_non_exhaustive()
    }
}

impl ScrapeBody {
    /// A body of `bytes`, all at once.
    pub fn whole(bytes: impl Into<Bytes>) -> Self {
        ScrapeBody {
            state: State::Whole(Some(bytes.into())),
            first: None,
        }
    }

    /// A scrape's body, sent from `listing`: its table and totals, then
    /// the exporter's own metrics (the scrape's duration counted from
    /// `started`) and, when given, the server's counters and the
    /// program's appendix.
    pub(crate) fn from_listing(
        listing: Arc<Listing>,
        started: Instant,
        server: Option<Arc<ServerStats>>,
        appendix: Option<Appendix>,
    ) -> Self {
        let mut parts = Parts {
            listing: Some(listing),
            at: Position::default(),
            started,
            server,
            appendix,
        };
        // A scrape that fits in one part is sent whole, with its length.
        let first = parts.next_part();
        if parts.listing.is_none() {
            return ScrapeBody {
                state: State::Whole(first),
                first: None,
            };
        }
        ScrapeBody {
            state: State::Parts(Box::new(parts)),
            first,
        }
    }

    /// The next part, or `None` after the last.
    pub fn next_part(&mut self) -> Option<Bytes> {
        if let Some(first) = self.first.take() {
            return Some(first);
        }
        match &mut self.state {
            State::Whole(bytes) => bytes.take(),
            State::Parts(p) => p.next_part(),
        }
    }

    /// Every part joined (for tests and small tables).
    pub fn into_vec(mut self) -> Vec<u8> {
        let mut out = Vec::new();
        while let Some(part) = self.next_part() {
            out.extend_from_slice(&part);
        }
        out
    }
}

impl Parts {
    fn next_part(&mut self) -> Option<Bytes> {
        let listing = self.listing.as_ref()?;
        let mut out = Vec::with_capacity(PART_BYTES + 1024);
        if listing.render_part(&mut out, &mut self.at, PART_BYTES) {
            let metric_prefix = listing.metric_prefix();
            render_exporter_metrics(
                &mut out,
                metric_prefix,
                listing.up(),
                self.started.elapsed(),
            );
            if let Some(server) = &self.server {
                server.render(&mut out, metric_prefix);
            }
            if let Some(appendix) = &self.appendix {
                appendix(&mut out);
            }
            self.listing = None;
        }
        Some(Bytes::from(out))
    }
}

impl Body for ScrapeBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.get_mut().next_part().map(|b| Ok(Frame::data(b))))
    }

    fn is_end_stream(&self) -> bool {
        matches!(&self.state, State::Whole(None))
    }

    fn size_hint(&self) -> SizeHint {
        // Known for a whole body: hyper sends its Content-Length; parts
        // go chunked.
        match &self.state {
            State::Whole(b) => SizeHint::with_exact(b.as_ref().map_or(0, |b| b.len() as u64)),
            State::Parts(_) => SizeHint::default(),
        }
    }
}

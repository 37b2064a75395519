//! One listing of the table made ready to render: the table, the totals
//! and a renderer prepared for them. Responses share it (an `Arc`): each
//! holds its place in the text and the part being sent, never a copy of
//! the table. The connections sending it are noted, so that when it is
//! superseded they can be cut.

use std::sync::{Arc, Mutex, Weak};

use ipvsnl::{ServiceEntry, Stats};

use crate::conn_state::{ConnState, Cut};
use crate::{MetricPrefix, Position, Renderer};

/// Where the exporter keeps its renderer between listings: the label sets
/// of a table that stays the same are built once.
pub(crate) type RendererHome = Arc<Mutex<Option<Renderer>>>;

/// A listing ready to render.
#[derive(Debug)]
pub(crate) struct Listing {
    id: u64,
    table: Vec<ServiceEntry>,
    totals: Option<Stats>,
    up: bool,
    metric_prefix: MetricPrefix,
    /// Taken from `home` for the listing's life, put back when it ends.
    renderer: Option<Renderer>,
    home: RendererHome,
    /// The connections that began to send it.
    senders: Mutex<Vec<Weak<ConnState>>>,
}

impl Listing {
    /// Listing `id` of `table` and `totals` (`up` false: the listing
    /// failed, the table is empty), with the renderer kept in `home` (or a
    /// new one, if another listing has it or its metric prefix differs).
    pub(crate) fn new(
        id: u64,
        table: Vec<ServiceEntry>,
        totals: Option<Stats>,
        up: bool,
        metric_prefix: &MetricPrefix,
        home: RendererHome,
    ) -> Self {
        let kept = home.lock().map(|mut slot| slot.take()).unwrap_or(None);
        let mut renderer = match kept {
            Some(r) if r.metric_prefix() == metric_prefix => r,
            _ => Renderer::new(metric_prefix),
        };
        renderer.prepare(&table);
        Listing {
            id,
            table,
            totals,
            up,
            metric_prefix: metric_prefix.clone(),
            renderer: Some(renderer),
            home,
            senders: Mutex::new(Vec::new()),
        }
    }

    /// Its id (listings are numbered as they are begun).
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// Whether the listing worked.
    pub(crate) fn up(&self) -> bool {
        self.up
    }

    /// The prefix its metrics are named under.
    pub(crate) fn metric_prefix(&self) -> &MetricPrefix {
        &self.metric_prefix
    }

    /// Appends its text from `at` on until `out` holds `limit` bytes (see
    /// [`Renderer::render_part`]); whether all of it is written.
    pub(crate) fn render_part(&self, out: &mut Vec<u8>, at: &mut Position, limit: usize) -> bool {
        match &self.renderer {
            Some(r) => r.render_part(out, &self.table, self.totals.as_ref(), at, limit),
            None => true,
        }
    }

    /// Notes that `conn` sends this listing.
    pub(crate) fn sent_by(&self, conn: &Arc<ConnState>) {
        if let Ok(mut senders) = self.senders.lock() {
            // Connections come and go while a listing lives: drop the
            // gone ones now and then so the list stays short.
            if senders.len() >= 64 && senders.len().is_power_of_two() {
                senders.retain(|w| w.strong_count() > 0);
            }
            senders.push(Arc::downgrade(conn));
        }
    }

    /// Cuts the connections still sending it; how many were cut.
    pub(crate) fn supersede(&self) -> usize {
        let senders = match self.senders.lock() {
            Ok(mut s) => std::mem::take(&mut *s),
            Err(_) => return 0,
        };
        senders
            .iter()
            .filter_map(Weak::upgrade)
            .filter(|c| c.cut_if_sending(self.id, Cut::Superseded))
            .count()
    }
}

impl Drop for Listing {
    fn drop(&mut self) {
        // The last response sent (or dropped): the renderer goes home for
        // the next listing.
        if let (Some(r), Ok(mut slot)) = (self.renderer.take(), self.home.lock()) {
            *slot = Some(r);
        }
    }
}

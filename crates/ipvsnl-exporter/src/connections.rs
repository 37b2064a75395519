//! The connection table: at most `max_connections` open. A new connection
//! beyond it takes the place of the one that has waited longest for a
//! request (idle, or still sending its headers), which is cut; when every
//! connection is answering a request, the new one is refused.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;

use crate::conn_state::{ConnState, Cut};
use crate::server_stats::ServerStats;

/// How long the accept loop waits for a cut connection to close before
/// it looks again (a cut connection closes at its task's next turn).
const ROOM_WAIT: Duration = Duration::from_millis(200);

/// The open connections.
#[derive(Debug)]
pub(crate) struct Connections {
    max: usize,
    open: Mutex<Vec<(u64, Arc<ConnState>)>>,
    next_id: Mutex<u64>,
    /// Rung when a connection closes.
    room: Notify,
    stats: Arc<ServerStats>,
}

/// A connection's place in the table, given back when dropped.
#[derive(Debug)]
pub(crate) struct Slot {
    table: Arc<Connections>,
    id: u64,
}

impl Connections {
    /// A table of at most `max` connections (1 or more), counted in
    /// `stats`.
    pub(crate) fn new(max: usize, stats: Arc<ServerStats>) -> Arc<Self> {
        Arc::new(Connections {
            max: max.max(1),
            open: Mutex::new(Vec::new()),
            next_id: Mutex::new(0),
            room: Notify::new(),
            stats,
        })
    }

    fn open(&self) -> std::sync::MutexGuard<'_, Vec<(u64, Arc<ConnState>)>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A place for `conn`: at once while there is room; otherwise once the
    /// connection waiting longest for a request is cut and gone. `None`
    /// (refused) when every open connection is answering.
    pub(crate) async fn admit(self: &Arc<Self>, conn: Arc<ConnState>) -> Option<Slot> {
        loop {
            {
                let mut open = self.open();
                if open.len() < self.max {
                    let id = {
                        let mut next = self.next_id.lock().unwrap_or_else(|e| e.into_inner());
                        *next += 1;
                        *next
                    };
                    open.push((id, conn));
                    self.stats.set_open(open.len());
                    return Some(Slot {
                        table: Arc::clone(self),
                        id,
                    });
                }
                // One already cut is about to close: wait for it rather
                // than cut another.
                let closing = open.iter().any(|(_, c)| c.cut_reason().is_some());
                if !closing && !Self::cut_longest_waiting(&open) {
                    return None;
                }
            }
            let _ = tokio::time::timeout(ROOM_WAIT, self.room.notified()).await;
        }
    }

    /// Cuts the connection that has waited longest for a request (to free
    /// a descriptor when accept runs out of them); whether there was one.
    pub(crate) fn evict_one(&self) -> bool {
        Self::cut_longest_waiting(&self.open())
    }

    fn cut_longest_waiting(open: &[(u64, Arc<ConnState>)]) -> bool {
        let victim = open
            .iter()
            .filter_map(|(_, c)| Some((c.waiting_since()?, c)))
            .min_by_key(|(since, _)| *since);
        match victim {
            Some((_, c)) => c.cut(Cut::Evicted),
            None => false,
        }
    }

    /// Connections open now.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.open().len()
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self.table.open();
        if let Some(i) = open.iter().position(|(id, _)| *id == self.id) {
            open.swap_remove(i);
        }
        self.table.stats.set_open(open.len());
        drop(open);
        self.table.room.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    #[test]
    fn full_table_cuts_the_longest_waiting_or_refuses() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let table = Connections::new(2, Arc::new(ServerStats::default()));
            let t0 = Instant::now();
            let old = Arc::new(ConnState::new(t0));
            let young = Arc::new(ConnState::new(t0 + Duration::from_secs(1)));
            let a = table.admit(Arc::clone(&old)).await.unwrap();
            let _b = table.admit(Arc::clone(&young)).await.unwrap();
            // Full: the third waits for the oldest to go, which is cut.
            let third = Arc::new(ConnState::new(t0 + Duration::from_secs(2)));
            let admitting = tokio::spawn({
                let (table, third) = (Arc::clone(&table), Arc::clone(&third));
                async move { table.admit(third).await }
            });
            tokio::time::sleep(Duration::from_millis(20)).await;
            assert_eq!(old.cut_reason(), Some(Cut::Evicted));
            assert_eq!(young.cut_reason(), None);
            assert!(!admitting.is_finished(), "no room until the cut one goes");
            drop(a);
            let _c = admitting.await.unwrap().unwrap();
            assert_eq!(table.len(), 2);
            // Both answering: nothing to cut, the next is refused.
            young.answering(t0);
            third.answering(t0);
            let refused = table.admit(Arc::new(ConnState::new(t0))).await;
            assert!(refused.is_none());
        });
    }
}

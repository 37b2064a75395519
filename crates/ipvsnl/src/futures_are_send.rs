//! The async API's futures are `Send`: a daemon may spawn them on a
//! multi-threaded runtime. Checked when the tests compile (a future that
//! stops being `Send` fails the build of the tests), with no socket opened:
//! nothing here is called.

#![allow(dead_code)]

use crate::sync::{Syncer, Table};
use crate::watch::Watcher;
use crate::AsyncClient;

fn send<T: Send>(_: &T) {}

fn the_client(c: &mut AsyncClient) {
    send(&c.table());
    send(&c.table_settings());
    send(&c.services());
    send(&c.apply(&[]));
    send(&c.info());
}

fn the_syncer(c: &mut AsyncClient, s: &mut Syncer, t: &Table) {
    send(&s.list_async(c));
    send(&s.plan_async(c, t));
    send(&s.sync_async(c, t));
    send(&s.sync_cached_async(c, t));
}

fn the_syncer_on_either_client(
    c: &mut AsyncClient,
    b: &mut crate::Client,
    s: &mut Syncer,
    t: &Table,
) {
    send(&s.list_on(c));
    send(&s.plan_on(c, t));
    send(&s.sync_on(c, t));
    send(&s.sync_cached_on(c, t));
    send(&s.sync_on(b, t));
}

fn the_watcher(w: &mut Watcher<AsyncClient>) {
    send(&w.next());
}

//! Reading the kernel's table for an oracle, in the tests of the sync
//! engine and of the protocol's failure paths.

use ipvsnl::sync::Table;
use ipvsnl::Client;

/// The kernel's table, listed until two listings in a row agree (a dump
/// can skip or repeat services while other namespaces change theirs, e.g.
/// a previous test's namespace being torn down).
pub fn kernel_table(c: &mut Client) -> Table {
    let mut last = Table::from_entries(c.table().expect("list the table"));
    for _ in 0..5 {
        let again = Table::from_entries(c.table().expect("list the table"));
        if again.same_settings(&last) {
            return again;
        }
        last = again;
    }
    last
}

/// A lock for tests that list big tables, which must not interleave with
/// other tests' changes (the kernel's dump resumes by a position counted
/// over every namespace's services).
pub fn serial(lock: &'static std::sync::Mutex<()>) -> std::sync::MutexGuard<'static, ()> {
    lock.lock().unwrap_or_else(|e| e.into_inner())
}

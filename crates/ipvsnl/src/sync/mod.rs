//! Declarative bulk sync: give the table you want, and the kernel ends up
//! holding exactly that, with the fewest requests and round trips.
//!
//! - [`Table`]: services with their destinations, wanted or found; built
//!   whole ([`Table::insert`]) or edited one service or destination at a
//!   time ([`Table::set_destination`], [`Table::set_weight`], ...).
//! - [`plan`]: the pure planner (current + desired + [`Scope`] -> ordered
//!   [`Request`](crate::Request)s), printable as ipvsadm rules
//!   ([`Plan::to_rules`], defined with the rules format in
//!   [`crate::rules`]) for a dry run.
//! - [`Syncer`]: lists (or remembers) the kernel's table, plans, applies
//!   the plan pipelined ([`crate::Client::apply`]) and reports every
//!   request's [`Fate`] (with the `tokio` feature, the same on an
//!   `AsyncClient`: `Syncer::sync_async` and the others; on either client,
//!   for code written once over [`Operations`](crate::Operations):
//!   [`Syncer::sync_on`] and the others). Its
//!   [`DrainLedger`] remembers the destinations draining between syncs.
//! - [`Ownership`]: what one owner created, kept across restarts in a
//!   file, and the scope built from it (a service removed while the owner
//!   was down is deleted at its next start).

mod apply;
#[cfg(feature = "tokio")]
mod async_syncer;
mod cached;
mod clock;
mod drains;
mod fates;
mod generic;
mod journal;
mod ledger;
mod namespace;
pub mod ownership;
mod ownership_error;
mod ownership_file;
mod plan;
mod planned;
mod report;
mod settle;
mod syncer;
mod table;
mod table_edit;
#[cfg(feature = "serde")]
mod table_serde;
mod view;

pub use clock::Clock;
pub use fates::Fate;
pub use ledger::{DestinationId, DrainLedger};
pub use ownership::Ownership;
pub use ownership_error::OwnershipError;
pub use plan::{plan, Drain, PlanOptions, Scope};
pub use planned::{Plan, PlanRequests};
pub use report::{Found, Report, Unknown};
pub use syncer::Syncer;
pub use table::{Table, TableDestination, TableService};
pub use table_edit::TableEditError;

#[cfg(test)]
mod drain_tests;
#[cfg(test)]
mod emulated;
#[cfg(test)]
mod engine_tests;
#[cfg(test)]
mod ownership_tests;
#[cfg(test)]
mod planned_tests;
#[cfg(test)]
mod tests;

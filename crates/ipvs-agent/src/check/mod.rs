//! Health checks without I/O: a server's health from its results
//! ([`ServerHealth`], rise/fall hysteresis), when its checks run
//! ([`Schedule`], interval and jitter), the queue of checks due
//! ([`Timetable`]), all against times the caller passes in, and every
//! server's health across reloads ([`HealthBook`]).

mod book;
mod id_map;
mod outcome;
mod schedule;
mod state;
mod timetable;

pub use book::{HealthBook, Reconciled};
pub use outcome::{Failure, Outcome};
pub use schedule::{seed_of, Schedule};
pub use state::{Health, Reason, ServerHealth, Transition};
pub use timetable::Timetable;

#[cfg(feature = "fleet")]
pub(crate) use id_map::IdHasher;
pub(crate) use id_map::IdMap;

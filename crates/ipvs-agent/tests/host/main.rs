//! The agent on the host, no kernel: its configuration (every bad input
//! with its exact error), the check state machine and schedule, the
//! decision layer, reloads and the `check` command. One test binary, a
//! module per topic.

mod cli;
mod config_check_errors;
mod config_errors;
mod config_ok;
mod config_robust;
mod desired;
#[cfg(feature = "fleet")]
mod fleet_current;
#[cfg(feature = "fleet")]
mod fleet_encode;
#[cfg(feature = "fleet")]
mod fleet_split;
mod health_book;
mod health_state;
mod schedule;

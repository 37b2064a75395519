//! The typed model: what a user thinks in.

pub(crate) mod config;
pub(crate) mod daemon;
pub(crate) mod destination;
pub(crate) mod entry;
pub(crate) mod family;
pub(crate) mod flag_names;
pub(crate) mod invalid;
pub(crate) mod key_text;
pub(crate) mod other;
pub(crate) mod scheduler;
#[cfg(feature = "serde")]
mod serde_impls;
pub(crate) mod service;
pub(crate) mod stats;

#[cfg(test)]
mod display_tests;
#[cfg(all(test, feature = "serde"))]
mod serde_tests;

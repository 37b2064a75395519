//! A real server's health from its check results, with HAProxy-style
//! hysteresis: `fall` consecutive failures take a healthy server out,
//! `rise` consecutive successes bring a failing one back; anything less
//! changes nothing.

use std::fmt;

use crate::check::outcome::{Failure, Outcome};
use crate::config::{HealthCheck, StartState};

/// Healthy or not, as the decision layer sees a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Health {
    /// Gets its configured weight.
    Up,
    /// Gets weight 0 (or is removed once drained).
    Down,
}

impl fmt::Display for Health {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Health::Up => "up",
            Health::Down => "down",
        })
    }
}

/// Why a server changed state.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reason {
    /// `rise` consecutive successes.
    Rose {
        /// The successes counted (the check's `rise`).
        successes: u32,
    },
    /// `fall` consecutive failures.
    Fell {
        /// The failures counted (the check's `fall`).
        failures: u32,
        /// The last one's cause.
        last: Failure,
    },
    /// The first result of a server started provisionally up was a
    /// failure.
    FirstCheckFailed {
        /// Its cause.
        last: Failure,
    },
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Rose { successes } => write!(f, "{successes} consecutive successes"),
            Reason::Fell { failures, last } => {
                write!(f, "{failures} consecutive failures, the last: {last}")
            }
            Reason::FirstCheckFailed { last } => {
                write!(f, "first check since start failed: {last}")
            }
        }
    }
}

/// A change of state, with its reason (one log line each).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Transition {
    /// The state before.
    pub from: Health,
    /// The state after.
    pub to: Health,
    /// Why.
    pub reason: Reason,
}

/// A server's health, moved by its check results.
///
/// It starts as its check's [`StartState`] says:
///
/// - `Up` (the default) is *provisionally* up: the server keeps its weight
///   until its first result, and that first result, if a failure, takes it
///   out at once. An agent that restarts and adopts the kernel's table
///   changes nothing for servers that are fine (no drop to 0 while `rise`
///   successes accrue), and a server dead at start is out after one check
///   rather than `fall`. After its first success it is fully up: `fall`
///   failures in a row are needed.
/// - `Down`: out until `rise` successes (a server that must prove itself
///   first, keepalived's `alpha`).
///
/// ```
/// use ipvs_agent::check::{Failure, Health, Outcome, ServerHealth};
/// use ipvs_agent::config::StartState;
/// let mut h = ServerHealth::new(2, 3, StartState::Up);
/// assert!(h.record(&Outcome::Pass).is_none());
/// assert!(h.record(&Outcome::Fail(Failure::Timeout)).is_none());
/// assert!(h.record(&Outcome::Fail(Failure::Timeout)).is_none());
/// let t = h.record(&Outcome::Fail(Failure::Timeout)).unwrap();
/// assert_eq!((t.from, t.to), (Health::Up, Health::Down));
/// assert_eq!(t.reason.to_string(), "3 consecutive failures, the last: timeout");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerHealth {
    health: Health,
    provisional: bool,
    /// Consecutive results against the current state (failures while up,
    /// successes while down).
    streak: u32,
    rise: u32,
    fall: u32,
}

impl ServerHealth {
    /// A server with these thresholds (each at least 1; 0 counts as 1) and
    /// starting state.
    pub fn new(rise: u32, fall: u32, start: StartState) -> Self {
        let health = match start {
            StartState::Down => Health::Down,
            _ => Health::Up,
        };
        ServerHealth {
            health,
            provisional: health == Health::Up,
            streak: 0,
            rise: rise.max(1),
            fall: fall.max(1),
        }
    }

    /// A server checked by `check`.
    pub fn for_check(check: &HealthCheck) -> Self {
        ServerHealth::new(check.rise, check.fall, check.start)
    }

    /// Its health now.
    pub fn health(&self) -> Health {
        self.health
    }

    /// Whether it is up only because it has not been checked yet.
    pub fn is_provisional(&self) -> bool {
        self.provisional
    }

    /// Consecutive results against its state so far (failures while up,
    /// successes while down).
    pub fn streak(&self) -> u32 {
        self.streak
    }

    /// The same health under new thresholds (a reload changed the check):
    /// the count of consecutive results starts again.
    #[must_use]
    pub fn retuned(&self, rise: u32, fall: u32) -> Self {
        ServerHealth {
            streak: 0,
            rise: rise.max(1),
            fall: fall.max(1),
            ..self.clone()
        }
    }

    /// Takes one result; gives the transition it causes, if any. An
    /// [`Outcome::Inconclusive`] changes nothing: not the health, not the
    /// streak, and a provisionally up server stays provisional.
    pub fn record(&mut self, outcome: &Outcome) -> Option<Transition> {
        let failure = match outcome {
            Outcome::Pass => None,
            Outcome::Fail(f) => Some(f.clone()),
            Outcome::Inconclusive(_) => return None,
        };
        let provisional = std::mem::take(&mut self.provisional);
        match (self.health, failure) {
            (Health::Up, None) => {
                self.streak = 0;
                None
            }
            (Health::Up, Some(last)) if provisional => {
                self.streak = 0;
                self.health = Health::Down;
                Some(Transition {
                    from: Health::Up,
                    to: Health::Down,
                    reason: Reason::FirstCheckFailed { last },
                })
            }
            (Health::Up, Some(last)) => {
                self.streak += 1;
                (self.streak >= self.fall).then(|| {
                    self.streak = 0;
                    self.health = Health::Down;
                    Transition {
                        from: Health::Up,
                        to: Health::Down,
                        reason: Reason::Fell {
                            failures: self.fall,
                            last,
                        },
                    }
                })
            }
            (Health::Down, Some(_)) => {
                self.streak = 0;
                None
            }
            (Health::Down, None) => {
                self.streak += 1;
                (self.streak >= self.rise).then(|| {
                    self.streak = 0;
                    self.health = Health::Up;
                    Transition {
                        from: Health::Down,
                        to: Health::Up,
                        reason: Reason::Rose {
                            successes: self.rise,
                        },
                    }
                })
            }
        }
    }
}

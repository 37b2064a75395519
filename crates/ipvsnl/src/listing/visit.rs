//! A visit of every service ([`crate::Client::for_each_service`]): the
//! replies of its dump shown to the visitor as they come, each once, and
//! the services its check found after.

use std::collections::HashSet;
use std::ops::ControlFlow;

use super::parts::Parts;
use super::replies::push_service;
use super::whole::Found;
use crate::decode::Detail;
use crate::proto::Replies;
use crate::transport::sockopt::ServiceSnapshot;
use crate::{AddressFamily, ServiceEntry, ServiceKey};

/// The replies of [`crate::Client::for_each_service`]: each service decoded into
/// one scratch entry and shown to the visitor, once per key; and how they
/// came.
pub(super) struct Visit<F> {
    scratch: Vec<ServiceEntry>,
    pub(super) seen: HashSet<ServiceKey>,
    visit: F,
    pub(super) stopped: bool,
    pub(super) parts: Parts,
    /// An IPv6 service was seen.
    pub(super) ipv6: bool,
}

impl<F> Visit<F> {
    /// A visit by `visit`, before its dump.
    pub(super) fn new(visit: F) -> Self {
        Visit {
            scratch: Vec::with_capacity(1),
            seen: HashSet::new(),
            visit,
            stopped: false,
            parts: Parts::default(),
            ipv6: false,
        }
    }
}

/// A visit lent to the call of its dump.
pub(super) struct Visiting<'v, F>(pub(super) &'v mut Visit<F>);

impl<F: FnMut(&ServiceEntry) -> ControlFlow<()>> Replies for Visiting<'_, F> {
    fn message(&mut self, _command: u8, attrs: &[u8]) -> Result<(), crate::DecodeError> {
        self.0.message(attrs)
    }

    fn restart(&mut self) {
        // Taken again from the start: those already shown are not shown
        // twice.
        self.0.parts.restart();
    }

    fn datagram(&mut self, datagram: &[u8]) {
        self.0.parts.datagram(datagram.len());
    }

    fn stopped(&self) -> bool {
        self.0.stopped
    }
}

impl<F: FnMut(&ServiceEntry) -> ControlFlow<()>> Visit<F> {
    /// One service of the dump.
    fn message(&mut self, attrs: &[u8]) -> Result<(), crate::DecodeError> {
        self.parts.entry();
        self.scratch.clear();
        push_service(attrs, Detail::Full, &mut self.scratch)?;
        if let Some(s) = self.scratch.first() {
            // A resumed dump can send a service again (see keep_first).
            if self.seen.insert(s.service.key) {
                self.ipv6 |= s.service.key.family() == AddressFamily::Inet6;
                self.stopped = (self.visit)(s).is_break();
            }
        }
        Ok(())
    }
}

/// A visit goes on with the services found after its dump.
impl<F: FnMut(&ServiceEntry) -> ControlFlow<()>> Found for Visit<F> {
    fn surely_has(&mut self, _snapshot: &ServiceSnapshot) -> bool {
        // Its keys are in a set already: looking each up is cheap.
        false
    }

    fn contains(&mut self, key: &ServiceKey) -> bool {
        self.seen.contains(key)
    }

    fn add(&mut self, entry: ServiceEntry) -> ControlFlow<()> {
        if self.seen.insert(entry.service.key) {
            self.stopped = (self.visit)(&entry).is_break();
        }
        if self.stopped {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    }
}

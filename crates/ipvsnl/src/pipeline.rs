//! Pipelined batches: many requests per
//! `sendmsg`, one ACK per batch, every outcome accounted for. The protocol
//! (batching, ACK accounting, the barrier after `ENOBUFS`, the family id
//! looked up again after a reload) is the sans-IO machine
//! [`crate::proto::Apply`]; this drives it over the client's transport and
//! turns its outcomes into errors that name their requests.

use crate::conn::Conn;
use crate::drive::drive;
use crate::failures::Failures;
use crate::proto::{Limits, Outcome};
use crate::transport::Transport;
use crate::{Error, Request};

#[cfg(doc)]
use crate::Client;

/// Tuning of one [`Client::apply_with`] call.
///
/// ```
/// let opts = ipvsnl::ApplyOptions::default().with_max_batch_requests(64);
/// assert_eq!(opts.max_batch_requests(), Some(64));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ApplyOptions {
    max_batch_requests: Option<usize>,
}

impl ApplyOptions {
    /// At most this many requests per `sendmsg`, overriding the bound the
    /// client derives from its socket buffer. A bound above what the
    /// buffer holds lets a batch full of failures overflow it: useful only
    /// to exercise the `ENOBUFS` recovery, or to measure.
    #[must_use]
    pub fn with_max_batch_requests(mut self, n: usize) -> Self {
        self.max_batch_requests = Some(n.max(1));
        self
    }

    /// The override in force, if any.
    pub fn max_batch_requests(&self) -> Option<usize> {
        self.max_batch_requests
    }
}

impl<T: Transport> Conn<T> {
    /// Applies `requests` pipelined (see [`Client::apply`]), returning the
    /// failures only (what the sync engine keeps: memory for the
    /// exceptions, not for every request).
    pub(crate) async fn apply_failures(
        &mut self,
        requests: &[Request],
        options: &ApplyOptions,
    ) -> Failures {
        let mut failures = Failures::default();
        let skip: Vec<bool> = requests
            .iter()
            .enumerate()
            .map(|(i, r)| match r.validate() {
                Ok(()) => false,
                Err(e) => {
                    failures.set(i, e);
                    true
                }
            })
            .collect();
        let limits = Limits::new(
            self.opts.batch_bytes,
            options
                .max_batch_requests
                .unwrap_or(self.max_batch_requests),
        );
        let mut record = |i: usize, o: Outcome| {
            if let Some(e) = Error::of_outcome(|| requests[i].target(), o) {
                failures.set(i, e);
            }
        };
        let mut machine = self.session.apply(requests, &skip, limits, &mut record);
        drive(
            &mut self.io,
            &mut self.rx,
            self.opts.recv_buffer,
            &mut machine,
        )
        .await;
        drop(machine);
        failures
    }
}

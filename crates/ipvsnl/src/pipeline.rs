//! Pipelined batches: many requests per `sendmsg`, one ACK per batch,
//! every outcome accounted for (tuned by
//! [`ApplyOptions`](crate::ApplyOptions)). The protocol
//! (batching, ACK accounting, the barrier after `ENOBUFS`, the family id
//! looked up again after a reload) is the sans-IO machine
//! [`crate::proto::Apply`]; this drives it over the client's transport and
//! turns its outcomes into errors that name their requests.

use crate::client_core::ClientCore;
use crate::drive::drive;
use crate::failures::Failures;
use crate::proto::{Limits, Outcome};
use crate::transport::Transport;
use crate::{ApplyOptions, Error, Request};

#[cfg(doc)]
use crate::Client;

impl<T: Transport> ClientCore<T> {
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
                .max_batch_requests()
                .unwrap_or(self.max_batch_requests),
        );
        let mut record = |i: usize, o: Outcome| {
            if let Some(e) = Error::of_outcome(|| requests[i].target(), o) {
                failures.set(i, e);
            }
        };
        self.renew_if_due().await;
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

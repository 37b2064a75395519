//! The applier: a plan's requests sent pipelined, in its two phases, each
//! request's outcome kept.

use std::collections::HashMap;

use crate::client_core::ClientCore;
use crate::sync::fates::{Fate, Fates};
use crate::sync::view::{is_unknown, request_key};
use crate::transport::Transport;
use crate::{ApplyOptions, Request, ServiceKey};

/// Sends a plan's requests: the services (phase one, the first
/// `phase`), then the destinations of the services that exist (those
/// of a service whose add was refused are skipped).
pub(crate) async fn apply_plan<T: Transport>(
    core: &mut ClientCore<T>,
    requests: &[Request],
    phase: usize,
    apply: &ApplyOptions,
) -> Fates {
    let mut outcomes = Fates::all_done(requests.len());
    let first = core.apply_failures(&requests[..phase], apply).await;
    let mut failed_adds: HashMap<ServiceKey, usize> = HashMap::new();
    for (i, e) in first {
        if let Request::AddService(s) = &requests[i] {
            failed_adds.insert(s.key, i);
        }
        outcomes.set(i, Fate::Failed(e));
    }
    if failed_adds.is_empty() {
        // The common case: every destination request goes out as planned.
        let rest = core.apply_failures(&requests[phase..], apply).await;
        for (i, e) in rest {
            outcomes.set(phase + i, Fate::Failed(e));
        }
        return outcomes;
    }
    let mut send = Vec::new();
    let mut sent_at = Vec::new();
    for (i, r) in requests.iter().enumerate().skip(phase) {
        match request_key(r).and_then(|k| failed_adds.get(&k)) {
            Some(&cause) if !is_unknown(outcomes.get(cause)) => {
                outcomes.set(i, Fate::Skipped { cause })
            }
            _ => {
                send.push(r.clone());
                sent_at.push(i);
            }
        }
    }
    let failures = core.apply_failures(&send, apply).await;
    drop(send);
    for (j, e) in failures {
        outcomes.set(sent_at[j], Fate::Failed(e));
    }
    outcomes
}

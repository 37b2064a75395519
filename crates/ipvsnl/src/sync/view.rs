//! Keeping the view true: what a sync did, applied to the table it
//! remembers, and services read back from the kernel where a request
//! failed or its outcome is unknown.

use crate::client_core::ClientCore;
use crate::decode::Detail;
use crate::sync::fates::{Fate, Fates};
use crate::sync::table::{
    dest_matches, service_from_entry, service_matches, Table, TableDestination, TableService,
};
use crate::transport::Transport;
use crate::{Error, Request, ServiceKey};

pub(crate) fn result_fate(r: Result<(), Error>) -> Fate {
    match r {
        Ok(()) => Fate::Done,
        Err(e) => Fate::Failed(e),
    }
}

/// A failure whose outcome is not known: sent, and the reply never seen.
pub(crate) fn is_unknown(o: &Fate) -> bool {
    matches!(o, Fate::Failed(e) if e.is_unknown_outcome())
}

/// The service a request is about.
pub(crate) fn request_key(r: &Request) -> Option<ServiceKey> {
    r.service_key()
}

/// Applies the requests that were done to the view. Destination requests
/// of one service come together in a plan: the service is looked up once
/// per run of them.
pub(crate) fn apply_done(t: &mut Table, requests: &[Request], outcomes: &Fates) {
    let mut i = 0;
    while i < requests.len() {
        let key = match &requests[i] {
            Request::AddDestination(k, _)
            | Request::EditDestination(k, _)
            | Request::DeleteDestination(k, _, _) => *k,
            other => {
                if let Fate::Done = outcomes.get(i) {
                    apply_to(t, other);
                }
                i += 1;
                continue;
            }
        };
        let run = requests[i..]
            .iter()
            .take_while(|r| match r {
                Request::AddDestination(k, _)
                | Request::EditDestination(k, _)
                | Request::DeleteDestination(k, _, _) => *k == key,
                _ => false,
            })
            .count();
        if let Some(entry) = t.get_mut(&key) {
            entry.destinations.reserve(run);
            for (j, r) in requests[i..i + run].iter().enumerate() {
                if let Fate::Done = outcomes.get(i + j) {
                    apply_to_service(entry, r);
                }
            }
        }
        i += run;
    }
}

fn apply_to_service(e: &mut TableService, r: &Request) {
    match r {
        Request::AddDestination(_, d) | Request::EditDestination(_, d) => {
            match e.position(&d.addr, d.port) {
                Ok(at) => e.destinations[at].destination = *d,
                Err(at) => e.destinations.insert(at, TableDestination::new(*d)),
            }
        }
        Request::DeleteDestination(_, a, p) => e.remove(a, *p),
        _ => {}
    }
}

/// Applies a request that was done to the view.
pub(crate) fn apply_to(t: &mut Table, r: &Request) {
    match r {
        Request::AddService(s) => t.put(TableService {
            service: (**s).clone(),
            destinations: Vec::new(),
        }),
        Request::EditService(s) => match t.get_mut(&s.key) {
            Some(e) => e.service = (**s).clone(),
            None => t.put(TableService {
                service: (**s).clone(),
                destinations: Vec::new(),
            }),
        },
        Request::DeleteService(k) => {
            t.remove(k);
        }
        Request::AddDestination(k, d) | Request::EditDestination(k, d) => {
            if let Some(e) = t.get_mut(k) {
                // The settings change; the connections are the found ones.
                let mut next = e
                    .destination(&d.addr, d.port)
                    .copied()
                    .unwrap_or(TableDestination::new(*d));
                next.destination = *d;
                e.upsert(next);
            }
        }
        Request::DeleteDestination(k, a, p) => {
            if let Some(e) = t.get_mut(k) {
                e.remove(a, *p);
            }
        }
        _ => {}
    }
}

/// Whether the view shows the request's effect.
pub(crate) fn holds(t: &Table, r: &Request) -> bool {
    match r {
        Request::AddService(s) | Request::EditService(s) => t
            .get(&s.key)
            .is_some_and(|e| service_matches(&e.service, s)),
        Request::DeleteService(k) => t.get(k).is_none(),
        Request::AddDestination(k, d) | Request::EditDestination(k, d) => t
            .get(k)
            .and_then(|e| e.destination(&d.addr, d.port))
            .is_some_and(|found| dest_matches(&found.destination, d)),
        Request::DeleteDestination(k, a, p) => {
            t.get(k).and_then(|e| e.destination(a, *p)).is_none()
        }
        _ => false,
    }
}

/// Reads one service and its destinations back from the kernel into the
/// view (removing it if the kernel has none).
pub(crate) async fn refresh<T: Transport>(
    core: &mut ClientCore<T>,
    t: &mut Table,
    key: &ServiceKey,
) -> Result<(), Error> {
    match core.service(key).await {
        Ok(mut service) => {
            service.destinations = core.list_destinations(key, Detail::Settings).await?;
            t.put(service_from_entry(service));
            Ok(())
        }
        Err(e) if e.is_not_found() => {
            t.remove(key);
            Ok(())
        }
        Err(e) => Err(e),
    }
}

//! The checks across items of a file, once each item reads well: no
//! service (or service name) twice, no server twice in a service, a sorry
//! server that is not also a server, a quorum the servers can meet.

use std::collections::HashMap;

use crate::config::model::Config;
use crate::config::parse::ServiceSpans;
use crate::config::source::{line_column, Diagnostics};

/// Records every cross-item error of `config` (`spans` in its order).
pub(crate) fn cross_checks(
    d: &mut Diagnostics<'_>,
    text: &str,
    config: &Config,
    spans: &[ServiceSpans],
) {
    let mut seen = HashMap::new();
    let mut names = HashMap::new();
    for (vs, sp) in config.services.iter().zip(spans) {
        if let (Some(name), Some(at)) = (&vs.name, &sp.name) {
            if let Some(first) = names.get(name) {
                let (line, _) = line_column(text, *first);
                d.error(
                    at,
                    format!("service name \"{name}\" is used twice (first at line {line})"),
                );
            } else {
                names.insert(name.clone(), at.start);
            }
        }
        let key = vs.service.key;
        if let Some(first) = seen.insert(key, sp.key.start) {
            seen.insert(key, first);
            let (line, _) = line_column(text, first);
            d.error(
                &sp.key,
                format!("service {key} is configured twice (first at line {line})"),
            );
        }
        let mut servers = HashMap::new();
        for (rs, at) in vs.servers.iter().zip(&sp.servers) {
            let id = (rs.destination.addr, rs.destination.port);
            if let Some(first) = servers.get(&id) {
                let (line, _) = line_column(text, *first);
                d.error(
                    at,
                    format!(
                        "server {} is in service {key} twice (first at line {line})",
                        rs.destination.socket_addr()
                    ),
                );
            } else {
                servers.insert(id, at.start);
            }
        }
        if let (Some(sorry), Some(at)) = (&vs.sorry, &sp.sorry) {
            if let Some(first) = servers.get(&(sorry.addr, sorry.port)) {
                let (line, _) = line_column(text, *first);
                d.error(
                    at,
                    format!(
                        "sorry server {} is also a server of the service (line {line})",
                        sorry.socket_addr()
                    ),
                );
            }
        }
        let total: u64 = vs
            .servers
            .iter()
            .map(|s| u64::from(s.destination.weight))
            .sum();
        if let (Some(at), true) = (&sp.quorum, sp.clean) {
            if vs.quorum.min_weight > total {
                d.error(
                    at,
                    format!(
                        "quorum `min_weight` {} can never be met: the servers' weights sum to {total}",
                        vs.quorum.min_weight
                    ),
                );
            }
        }
    }
}

//! What a reload changes: the services a new configuration adds, removes
//! or changes, found by key and compared by value, so that the loop
//! reconciles its health book, checks, metrics and desired table for those
//! only. One service changed in 10,000 then costs the agent the comparison
//! of 10,000 services (a few hundred instructions each) and the work of
//! the one, not the rebuilding of everything for 20,000 servers.

use std::collections::HashMap;

use ipvsnl::ServiceKey;

use crate::config::{Config, VirtualService};

/// Where each service of a configuration is in its `services`.
pub(crate) type Positions = HashMap<ServiceKey, usize>;

/// The positions of `config`'s services.
pub(crate) fn positions(config: &Config) -> Positions {
    config
        .services
        .iter()
        .enumerate()
        .map(|(i, vs)| (vs.service.key, i))
        .collect()
}

/// One service a reload changes: its position in the old configuration
/// (`None`: added) and in the new (`None`: removed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Changed {
    pub(crate) old: Option<usize>,
    pub(crate) new: Option<usize>,
}

impl Changed {
    /// The service as `old` had it and as `new` has it.
    pub(crate) fn services<'a>(
        &self,
        old: &'a Config,
        new: &'a Config,
    ) -> (Option<&'a VirtualService>, Option<&'a VirtualService>) {
        (
            self.old.map(|i| &old.services[i]),
            self.new.map(|i| &new.services[i]),
        )
    }
}

/// What a reload from `old` (its services at `at`) to `new` changes.
#[derive(Debug, Default)]
pub(crate) struct Diff {
    /// The services added, removed or changed: the added and changed in
    /// `new`'s order, then the removed in `old`'s.
    pub(crate) changed: Vec<Changed>,
    /// `new`'s positions, when they are not `old`'s (`None`: the same keys
    /// at the same places).
    pub(crate) positions: Option<Positions>,
}

impl Diff {
    /// Whether a service was added or removed.
    pub(crate) fn keys_changed(&self) -> bool {
        self.changed
            .iter()
            .any(|c| c.old.is_none() || c.new.is_none())
    }
}

/// The diff of `old` (its services' positions `at`) and `new`.
pub(crate) fn diff(old: &Config, at: &Positions, new: &Config) -> Diff {
    let same_places = old.services.len() == new.services.len()
        && old
            .services
            .iter()
            .zip(&new.services)
            .all(|(a, b)| a.service.key == b.service.key);
    if same_places {
        let changed = old
            .services
            .iter()
            .zip(&new.services)
            .enumerate()
            .filter(|(_, (a, b))| a != b)
            .map(|(i, _)| Changed {
                old: Some(i),
                new: Some(i),
            })
            .collect();
        return Diff {
            changed,
            positions: None,
        };
    }
    let positions = positions(new);
    let mut changed: Vec<Changed> = new
        .services
        .iter()
        .enumerate()
        .filter_map(|(i, vs)| match at.get(&vs.service.key) {
            Some(&j) if old.services[j] == *vs => None,
            found => Some(Changed {
                old: found.copied(),
                new: Some(i),
            }),
        })
        .collect();
    changed.extend(
        old.services
            .iter()
            .enumerate()
            .filter(|(_, vs)| !positions.contains_key(&vs.service.key))
            .map(|(j, _)| Changed {
                old: Some(j),
                new: None,
            }),
    );
    Diff {
        changed,
        positions: Some(positions),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(services: &[(u8, u32)]) -> Config {
        let mut text = String::new();
        for (s, w) in services {
            text.push_str(&format!(
                "[[service]]\nprotocol = \"tcp\"\naddress = \"192.0.2.{s}\"\nport = 80\n\
                 [[service.server]]\naddress = \"10.0.0.1\"\nweight = {w}\n"
            ));
        }
        crate::config::parse_str("t.toml", &text).unwrap()
    }

    #[test]
    fn the_same_places_compare_in_place() {
        let old = config(&[(1, 1), (2, 1), (3, 1)]);
        let new = config(&[(1, 1), (2, 5), (3, 1)]);
        let d = diff(&old, &positions(&old), &new);
        assert!(d.positions.is_none());
        let one = Changed {
            old: Some(1),
            new: Some(1),
        };
        assert_eq!(d.changed, vec![one]);
        assert!(!d.keys_changed());
        assert!(diff(&old, &positions(&old), &old).changed.is_empty());
    }

    #[test]
    fn added_removed_and_moved_services_are_found_by_key() {
        let old = config(&[(1, 1), (2, 1), (3, 1)]);
        // 1 removed, 3 moved first and changed, 2 moved unchanged, 4 added.
        let new = config(&[(3, 7), (2, 1), (4, 1)]);
        let d = diff(&old, &positions(&old), &new);
        assert_eq!(
            d.changed,
            vec![
                Changed {
                    old: Some(2),
                    new: Some(0)
                },
                Changed {
                    old: None,
                    new: Some(2)
                },
                Changed {
                    old: Some(0),
                    new: None
                },
            ]
        );
        assert!(d.keys_changed());
        assert_eq!(d.positions, Some(positions(&new)));
    }
}

//! A generation's entries checked against `current` and parsed: every
//! way they can be wrong named (the generation, or the key and the line
//! in its value). No etcd.

use ipvs_agent::fleet::store::current::Current;
use ipvs_agent::fleet::store::layout::{
    assemble, entries, record, value_digest, verify, verify_with, Layout,
};
use ipvs_agent::fleet::store::values::ParseCache;
use ipvs_agent::fleet::FleetError;

use crate::fleet_etcd::config_of;

fn layout() -> Layout {
    Layout::new("/p/")
}

/// A service's entry at `slot` with `value`, its key naming the value's digest.
fn entry(slot: &str, value: &[u8]) -> (String, Vec<u8>) {
    (
        format!("services/{slot}/{}", value_digest(value)),
        value.to_vec(),
    )
}

#[test]
fn entries_are_in_key_order_named_by_content_and_read_back_equal() {
    let c = config_of(12, 80);
    let e = entries(&c);
    assert_eq!(e.len(), 13);
    assert!(
        e.windows(2).all(|w| w[0].0 < w[1].0),
        "sorted as etcd lists them"
    );
    assert_eq!(
        e[11].0,
        format!(
            "services/00000011-tcp-10.0.0.11-80/{}",
            value_digest(&e[11].1)
        )
    );
    assert_eq!(e[12].0, format!("settings/{}", value_digest(&e[12].1)));
    let (current, back) = assemble(&layout(), 4, &e).unwrap();
    assert_eq!(back, c);
    assert_eq!((current.generation, current.services), (4, 12));
    // One weight changed: one key changed, the others the same.
    let mut c2 = c.clone();
    c2.services[5].servers[0].destination.weight = 7;
    let e2 = entries(&c2);
    let changed: Vec<usize> = (0..13).filter(|i| e[*i].0 != e2[*i].0).collect();
    assert_eq!(changed, [5]);
    assert!(e2[5].0.starts_with("services/00000005-tcp-10.0.0.5-80/"));
}

#[test]
fn a_missing_entry_is_an_incomplete_generation_and_a_changed_value_is_named() {
    let e = entries(&config_of(3, 80));
    let current = record(9, &e);
    let mut missing = e.clone();
    missing.remove(1);
    match verify(&layout(), &current, &missing) {
        Err(FleetError::Incomplete {
            generation,
            message,
        }) => {
            assert_eq!(generation, 9);
            assert_eq!(message, "2 services stored, `current` records 3");
        }
        other => panic!("{other:?}"),
    }
    let mut settings_gone = e.clone();
    settings_gone.pop();
    let r = verify(&layout(), &current, &settings_gone).unwrap_err();
    assert!(
        r.to_string()
            .starts_with("generation 9 is incomplete: its entries' digest is xxh3-sum:"),
        "{r}"
    );
    // A value that is not the one its key names.
    let mut changed = e;
    changed[0].1.extend_from_slice(b"# one more line\n");
    match verify(&layout(), &current, &changed) {
        Err(FleetError::Value { key, message }) => {
            assert_eq!(key, format!("/p/entries/{}", changed[0].0));
            assert!(
                message.starts_with("its value's XXH3-128 is ")
                    && message.ends_with(&format!(
                        ", its key names {}",
                        changed[0].0.rsplit('/').next().unwrap()
                    )),
                "{message}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_value_that_does_not_parse_is_named_by_its_key_and_line() {
    let mut e = entries(&config_of(3, 80));
    e[1] = entry(
        "00000001-tcp-10.0.0.1-80",
        b"# ipvs-agent fleet service v1\n[[service]]\nprotocol = \"tcp\"\n\
          address = \"10.0.0.1\"\nport = 99999\n[[service.server]]\naddress = \"10.1.1.1\"\n",
    );
    let current = record(2, &e);
    match verify(&layout(), &current, &e) {
        Err(FleetError::Value { key, message }) => {
            assert_eq!(key, format!("/p/entries/{}", e[1].0));
            assert_eq!(
                message,
                "line 5: `port` must be an integer from 0 to 65535, found 99999"
            );
        }
        other => panic!("{other:?}"),
    }
    // Two services in one value, one service twice, an unknown key, bytes
    // that are not text.
    let mut two = entries(&config_of(2, 80));
    two[0] = entry(
        "00000000-tcp-10.0.0.0-80",
        &[two[0].1.clone(), two[1].1.clone()].concat(),
    );
    two.remove(1);
    let r = verify(&layout(), &record(3, &two), &two).unwrap_err();
    assert_eq!(
        r.to_string(),
        format!(
            "/p/entries/{}: 2 services in one value, one expected",
            two[0].0
        )
    );
    let mut twice = entries(&config_of(2, 80));
    twice[1] = entry("00000001-tcp-10.0.0.1-80", &twice[0].1.clone());
    let r = verify(&layout(), &record(3, &twice), &twice).unwrap_err();
    assert_eq!(
        r.to_string(),
        format!(
            "/p/entries/{}: service TCP 10.0.0.0:80 is configured twice (first at /p/entries/{})",
            twice[1].0, twice[0].0
        )
    );
    let mut settings = entries(&config_of(1, 80));
    let bad = b"[agent]\nresync = \"soon\"\n";
    settings[1] = (format!("settings/{}", value_digest(bad)), bad.to_vec());
    let r = verify(&layout(), &record(3, &settings), &settings).unwrap_err();
    assert!(
        r.to_string()
            .starts_with(&format!("/p/entries/{}: line 2: ", settings[1].0)),
        "{r}"
    );
    let mut unknown = entries(&config_of(1, 80));
    unknown.push(("zzz".into(), b"x".to_vec()));
    let r = verify(&layout(), &record(3, &unknown), &unknown).unwrap_err();
    assert_eq!(
        r.to_string(),
        "/p/entries/zzz: a key this agent does not know"
    );
    let mut binary = entries(&config_of(1, 80));
    binary[0] = entry("00000000-tcp-10.0.0.0-80", &[0xff, 0xfe]);
    let r = verify(&layout(), &record(3, &binary), &binary).unwrap_err();
    assert!(r.to_string().contains("-tcp-10.0.0.0-80/"), "{r}");
    assert!(r.to_string().contains(": not UTF-8"), "{r}");
}

#[test]
fn current_names_its_generation_count_and_digest() {
    let e = entries(&config_of(2, 80));
    let c = record(5, &e);
    assert_eq!(Current::parse(&c.to_text()), Ok(c.clone()));
    assert_ne!(record(5, &entries(&config_of(2, 81))).digest, c.digest);
}

#[test]
fn with_a_cache_only_the_changed_values_are_parsed_and_the_result_is_the_same() {
    let mut cache = ParseCache::new();
    let mut c = config_of(50, 80);
    let e = entries(&c);
    assert_eq!(
        verify_with(&layout(), &record(1, &e), &e, &mut cache).unwrap(),
        c
    );
    assert_eq!(cache.len(), 51, "50 services and the settings");
    c.services[7].servers[2].destination.weight = 9;
    c.services.remove(30);
    let e2 = entries(&c);
    let cached = verify_with(&layout(), &record(2, &e2), &e2, &mut cache).unwrap();
    assert_eq!(cached, c);
    assert_eq!(cached, verify(&layout(), &record(2, &e2), &e2).unwrap());
    assert_eq!(cache.len(), 50, "only this generation's values kept");
    // A bad generation leaves the cache as it was.
    let mut bad = e2.clone();
    bad[3] = entry("00000003-tcp-10.0.0.3-80", b"[[service]]\n");
    assert!(verify_with(&layout(), &record(3, &bad), &bad, &mut cache).is_err());
    assert_eq!(cache.len(), 50);
    // A value parsed for a generation that then fails goes too.
    let mut c4 = c.clone();
    c4.services[0].servers[0].destination.weight = 77;
    let mut e4 = entries(&c4);
    let changed = e4
        .iter()
        .find(|(k, _)| !cache.contains(k))
        .map(|(k, _)| k.clone())
        .expect("service 0's new value");
    let last = e4.len() - 1;
    e4[last] = entry("00000049-tcp-10.0.0.49-80", b"[[service]]\n");
    assert!(verify_with(&layout(), &record(4, &e4), &e4, &mut cache).is_err());
    assert_eq!(cache.len(), 50);
    assert!(!cache.contains(&changed));
    assert!(verify_with(&layout(), &record(2, &e2), &e2, &mut cache).is_ok());
    assert_eq!(cache.len(), 50);
}

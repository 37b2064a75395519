//! 10,000 services split into transactions within etcd's limits.

use ipvs_agent::config;
use ipvs_agent::fleet::publish::transactions::{batches, put_bytes, Limits};
use ipvs_agent::fleet::store::encode;

fn services(n: usize, servers: usize) -> Vec<(String, Vec<u8>)> {
    let mut text = String::new();
    for i in 0..n {
        text.push_str(&format!(
            "[[service]]\nprotocol = \"tcp\"\naddress = \"10.{}.{}.{}\"\nport = 80\n\
             check = {{ kind = \"http\", path = \"/healthz\" }}\n",
            i / 65536,
            (i / 256) % 256,
            i % 256
        ));
        for s in 0..servers {
            text.push_str(&format!(
                "[[service.server]]\naddress = \"192.168.{}.{}\"\n",
                s / 250,
                1 + s % 250
            ));
        }
    }
    let c = config::parse_str("big.toml", &text).unwrap();
    c.services
        .iter()
        .enumerate()
        .map(|(i, vs)| (format!("services/{i:08}"), encode::service(vs).into_bytes()))
        .collect()
}

fn assert_within(entries: &[(String, Vec<u8>)], limits: Limits) -> usize {
    let parts = batches(entries, limits).unwrap();
    let mut next = 0;
    for p in &parts {
        assert_eq!(p.start, next, "consecutive");
        assert!(!p.is_empty());
        assert!(p.len() <= limits.max_ops - 2, "{p:?}");
        let bytes: usize = entries[p.clone()]
            .iter()
            .map(|(k, v)| put_bytes(k, v))
            .sum();
        assert!(bytes <= limits.max_request_bytes - 4096, "{p:?}: {bytes}");
        next = p.end;
    }
    assert_eq!(next, entries.len(), "every entry in a transaction");
    parts.len()
}

#[test]
fn ten_thousand_services_fit_in_transactions_of_at_most_126_puts() {
    let entries = services(10_000, 4);
    assert_eq!(
        assert_within(&entries, Limits::default()),
        10_000_usize.div_ceil(126)
    );
}

#[test]
fn large_services_are_split_by_bytes_and_one_too_large_is_named() {
    // 200 servers a service: about 16 KiB each, so bytes bind before operations.
    let entries = services(200, 200);
    let limits = Limits::new(128, 256 * 1024);
    let n = assert_within(&entries, limits);
    assert!(n > 200usize.div_ceil(126), "{n}");
    let err = batches(&entries, Limits::new(128, 8 * 1024)).unwrap_err();
    assert_eq!(err.0, "services/00000000");
    assert!(err.1 > err.2);
}

//! The renderer on the fixture listing: exact lines, exact integers,
//! escaping, the family structure, and node_exporter's names.

mod common;

use ipvsnl_exporter::{render, MetricPrefix};

fn text(ns: &str) -> String {
    render(
        &MetricPrefix::new(ns).unwrap(),
        &common::table(),
        Some(&common::totals()),
    )
}

fn has(text: &str, line: &str) {
    assert!(
        text.lines().any(|l| l == line),
        "missing line:\n{line}\nin:\n{text}"
    );
}

const TCP: &str =
    r#"local_address="10.0.0.1",local_port="80",local_mark="",proto="TCP",family="IPv4""#;
const UDP6: &str =
    r#"local_address="2001:db8::53",local_port="53",local_mark="",proto="UDP",family="IPv6""#;
const MARK: &str =
    r#"local_address="",local_port="0",local_mark="00000005",proto="FWM",family="IPv4""#;

#[test]
fn totals_are_exact_u64() {
    let t = text("ipvs");
    has(&t, "ipvs_connections_total 4294967301");
    has(&t, "ipvs_outgoing_packets_total 18446744073709551614");
    has(&t, "ipvs_incoming_packets_total 1");
    has(&t, "ipvs_outgoing_bytes_per_second 8");
    has(&t, "# TYPE ipvs_connections_total counter");
    has(&t, "# TYPE ipvs_connections_per_second gauge");
}

#[test]
fn services_tcp_v4_udp_v6_and_fwmark() {
    let t = text("ipvs");
    has(
        &t,
        &format!("ipvs_service_connections_total{{{TCP},scheduler=\"rr\"}} 4294967301"),
    );
    has(
        &t,
        &format!(
            "ipvs_service_incoming_packets_total{{{TCP},scheduler=\"rr\"}} 18446744073709551614"
        ),
    );
    has(
        &t,
        &format!("ipvs_service_outgoing_bytes_per_second{{{TCP},scheduler=\"rr\"}} 9"),
    );
    // The scheduler name `q"u\x` escaped.
    has(
        &t,
        &format!("ipvs_service_connections_total{{{UDP6},scheduler=\"q\\\"u\\\\x\"}} 0"),
    );
    has(
        &t,
        &format!("ipvs_service_connections_total{{{MARK},scheduler=\"wlc\"}} 0"),
    );
}

#[test]
fn destinations_carry_both_halves() {
    let t = text("ipvs");
    let d1 = format!(
        "{TCP},remote_address=\"10.1.0.2\",remote_port=\"8080\",forwarding_method=\"Masq\""
    );
    let d2 = format!(
        "{TCP},remote_address=\"10.1.0.3\",remote_port=\"8080\",forwarding_method=\"Route\""
    );
    let d3 = format!(
        "{UDP6},remote_address=\"2001:db8::1:1\",remote_port=\"53\",forwarding_method=\"Tunnel\""
    );
    let d4 = format!(
        "{MARK},remote_address=\"192.168.1.10\",remote_port=\"0\",forwarding_method=\"Masq\""
    );
    has(&t, &format!("ipvs_backend_connections_active{{{d1}}} 11"));
    has(&t, &format!("ipvs_backend_connections_inactive{{{d1}}} 12"));
    has(
        &t,
        &format!("ipvs_backend_connections_persistent{{{d1}}} 13"),
    );
    has(&t, &format!("ipvs_backend_weight{{{d1}}} 3"));
    has(&t, &format!("ipvs_backend_weight{{{d2}}} 0"));
    has(&t, &format!("ipvs_backend_connections_total{{{d1}}} 14"));
    has(
        &t,
        &format!("ipvs_backend_incoming_bytes_total{{{d1}}} 18446744073709551615"),
    );
    has(&t, &format!("ipvs_backend_outgoing_bytes_total{{{d1}}} 15"));
    has(&t, &format!("ipvs_backend_connections_active{{{d3}}} 1"));
    has(&t, &format!("ipvs_backend_weight{{{d4}}} 1"));
}

#[test]
fn every_family_once_with_its_samples_together() {
    let t = text("ipvs");
    let mut families = Vec::new();
    let mut current = String::new();
    let mut samples = 0;
    for line in t.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            current = rest.split(' ').next().unwrap().to_owned();
            assert!(!families.contains(&current), "{current} twice");
            families.push(current.clone());
        } else if !line.starts_with('#') {
            let name = line.split(['{', ' ']).next().unwrap();
            assert_eq!(name, current, "a sample outside its family: {line}");
            samples += 1;
        }
    }
    // 10 totals, 10 per service (3), 14 per destination (4).
    assert_eq!(families.len(), 10 + 10 + 14);
    assert_eq!(samples, 10 + 3 * 10 + 4 * 14);
    assert!(t.ends_with('\n'));
}

#[test]
fn node_ipvs_namespace_gives_node_exporters_names() {
    let t = text("node_ipvs");
    for name in [
        "node_ipvs_connections_total",
        "node_ipvs_incoming_packets_total",
        "node_ipvs_outgoing_packets_total",
        "node_ipvs_incoming_bytes_total",
        "node_ipvs_outgoing_bytes_total",
        "node_ipvs_backend_connections_active",
        "node_ipvs_backend_connections_inactive",
        "node_ipvs_backend_weight",
    ] {
        has(
            &t,
            &format!(
                "# TYPE {name} {}",
                if name.ends_with("_total") {
                    "counter"
                } else {
                    "gauge"
                }
            ),
        );
    }
    assert!(!t.contains("\nipvs_"), "{t}");
}

#[test]
fn no_totals_and_no_table_give_no_families() {
    let ns = MetricPrefix::default();
    assert_eq!(render(&ns, &[], None), "");
    let t = render(&ns, &[], Some(&common::totals()));
    assert_eq!(t.lines().filter(|l| !l.starts_with('#')).count(), 10);
}

#[test]
fn a_kept_renderer_follows_a_changing_table() {
    use ipvsnl::{Destination, DestinationEntry, Forward, Scheduler};
    use ipvsnl_exporter::Renderer;
    let ns = MetricPrefix::default();
    let mut kept = Renderer::new(&ns);
    let once = |r: &mut Renderer, table: &[ipvsnl::ServiceEntry]| {
        let mut out = Vec::new();
        r.render(&mut out, table, None);
        String::from_utf8(out).unwrap()
    };
    let mut table = common::table();
    let first = once(&mut kept, &table);
    assert_eq!(first, render(&ns, &table, None));
    // The same table again: the kept label sets, the same text.
    assert_eq!(once(&mut kept, &table), first);
    // New counters only: new values, the same label sets.
    table[0].destinations[0].active_conns = 99;
    let again = once(&mut kept, &table);
    assert!(again.contains(
        "remote_address=\"10.1.0.2\",remote_port=\"8080\",forwarding_method=\"Masq\"} 99\n"
    ));
    assert_eq!(again, render(&ns, &table, None));
    // Each thing a label set is made of, changed in turn.
    let changes: [fn(&mut Vec<ipvsnl::ServiceEntry>); 5] = [
        |t| t[0].service.scheduler = Scheduler::Maglev,
        |t| t[0].destinations[1].destination.addr = "10.1.0.99".parse().unwrap(),
        |t| t[0].destinations[1].destination.forward = Forward::Bypass,
        |t| {
            t[1].destinations
                .push(DestinationEntry::new(Destination::new(
                    "2001:db8::2:2".parse().unwrap(),
                    53,
                )))
        },
        |t| {
            t.remove(0);
        },
    ];
    for change in changes {
        change(&mut table);
        assert_eq!(once(&mut kept, &table), render(&ns, &table, None));
    }
}

#[test]
fn parts_of_any_size_join_to_the_whole_text() {
    use ipvsnl_exporter::{Position, Renderer, PART_BYTES};
    // The fixture, repeated into a table of some size (distinct ports).
    let mut table = Vec::new();
    for i in 0..300u16 {
        for mut entry in common::table() {
            if let ipvsnl::ServiceKey::Inet { port, .. } = &mut entry.service.key {
                *port = 1000 + i;
            }
            table.push(entry);
        }
    }
    let totals = common::totals();
    let ns = MetricPrefix::default();
    let whole = render(&ns, &table, Some(&totals));
    for limit in [1, 7, 100, 4096, PART_BYTES, usize::MAX] {
        let mut r = Renderer::new(&ns);
        r.prepare(&table);
        let mut at = Position::default();
        let (mut joined, mut parts) = (Vec::new(), 0);
        loop {
            let mut part = Vec::new();
            let done = r.render_part(&mut part, &table, Some(&totals), &mut at, limit);
            // A part stops at the first line end past the limit.
            assert!(part.is_empty() || part.ends_with(b"\n"));
            joined.extend_from_slice(&part);
            parts += 1;
            if done {
                break;
            }
            assert!(parts < 1_000_000, "no end at limit {limit}");
        }
        assert!(
            joined == whole.as_bytes(),
            "limit {limit}: {} bytes in {parts} parts, {} whole",
            joined.len(),
            whole.len()
        );
        if limit == PART_BYTES {
            assert!(parts > 1, "{} bytes fit one part", whole.len());
        }
    }
}

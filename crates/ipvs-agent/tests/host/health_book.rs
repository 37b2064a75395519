//! Every server's health across reloads: unchanged servers keep their
//! state, changed checks keep the health under new thresholds, new
//! servers start as their check says, removed ones are forgotten; the
//! book feeds the decision layer.

use std::net::IpAddr;

use ipvs_agent::check::{Failure, Health, HealthBook, Outcome};
use ipvs_agent::config::{parse_str, Config};
use ipvs_agent::desired::desired;
use ipvsnl::sync::DestinationId;

fn config(servers: &str) -> Config {
    let text = format!(
        "[[service]]\nprotocol = \"tcp\"\naddress = \"192.0.2.1\"\nport = 80\n\
         check = {{ kind = \"tcp\", rise = 2, fall = 2 }}\n{servers}"
    );
    parse_str("t.toml", &text).unwrap_or_else(|e| panic!("{e}"))
}

fn server(addr: &str, extra: &str) -> String {
    format!("[[service.server]]\naddress = \"{addr}\"\n{extra}\n")
}

fn id(c: &Config, addr: &str) -> DestinationId {
    (
        c.services[0].service.key,
        addr.parse::<IpAddr>().unwrap(),
        80,
    )
}

fn fail() -> Outcome {
    Outcome::Fail(Failure::Refused)
}

#[test]
fn a_reload_keeps_unchanged_servers_state_and_forgets_removed_ones() {
    let one = config(&(server("10.0.0.1", "") + &server("10.0.0.2", "")));
    let mut book = HealthBook::new();
    let r = book.reconcile(&one);
    assert_eq!(r.added, [id(&one, "10.0.0.1"), id(&one, "10.0.0.2")]);
    assert!(r.removed.is_empty() && r.retuned.is_empty());
    // 10.0.0.1 goes down (provisional: its first result fails).
    assert!(book.record(&id(&one, "10.0.0.1"), &fail()).is_some());
    assert_eq!(book.health(&id(&one, "10.0.0.1")), Health::Down);

    // Reload: .1 unchanged, .2 removed, .3 new (started down).
    let two = config(
        &(server("10.0.0.1", "")
            + &server("10.0.0.3", "check = { kind = \"tcp\", start = \"down\" }")),
    );
    let r = book.reconcile(&two);
    assert_eq!(r.unchanged, 1);
    assert_eq!(r.added, [id(&two, "10.0.0.3")]);
    assert_eq!(r.removed, [id(&one, "10.0.0.2")]);
    assert_eq!(book.len(), 2);
    assert_eq!(book.health(&id(&two, "10.0.0.1")), Health::Down);
    assert_eq!(book.health(&id(&two, "10.0.0.3")), Health::Down);
    // A server the book does not hold is down; results for it are ignored.
    assert_eq!(book.health(&id(&one, "10.0.0.2")), Health::Down);
    assert!(book.record(&id(&one, "10.0.0.2"), &Outcome::Pass).is_none());

    // The decision layer from the book: both at weight 0.
    let d = desired(&two, |k, s| {
        book.health(&(*k, s.destination.addr, s.destination.port))
    });
    let svc = d.table.get(&two.services[0].service.key).unwrap();
    assert!(svc.destinations.iter().all(|d| d.destination.weight == 0));
}

#[test]
fn a_changed_check_keeps_the_health_under_its_new_thresholds() {
    let one = config(&server("10.0.0.1", ""));
    let a = id(&one, "10.0.0.1");
    let mut book = HealthBook::new();
    book.reconcile(&one);
    book.record(&a, &Outcome::Pass);
    book.record(&a, &fail()); // one failure of fall 2
    let two = config(&server(
        "10.0.0.1",
        "check = { kind = \"tcp\", rise = 1, fall = 3 }",
    ));
    let r = book.reconcile(&two);
    assert_eq!(r.retuned, [a]);
    assert_eq!(book.health(&a), Health::Up);
    // The streak started again: three failures now, not two.
    assert!(book.record(&a, &fail()).is_none());
    assert!(book.record(&a, &fail()).is_none());
    assert!(book.record(&a, &fail()).is_some());
    assert_eq!(book.health(&a), Health::Down);
    // rise 1: one success brings it back.
    assert!(book.record(&a, &Outcome::Pass).is_some());
}

#[test]
fn a_server_without_a_check_is_always_up() {
    let text = "[[service]]\nprotocol = \"tcp\"\naddress = \"192.0.2.1\"\nport = 80\n\
                [[service.server]]\naddress = \"10.0.0.1\"\n";
    let c = parse_str("t.toml", text).unwrap();
    let mut book = HealthBook::new();
    book.reconcile(&c);
    let a = id(&c, "10.0.0.1");
    assert!(book.record(&a, &fail()).is_none());
    assert_eq!(book.health(&a), Health::Up);
}

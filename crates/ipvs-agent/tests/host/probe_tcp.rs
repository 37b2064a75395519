//! The TCP check against real sockets: open, refused, no answer.

use std::time::Duration;

use ipvs_agent::check::{Failure, Outcome};
use ipvs_agent::probe::{NetProber, Prober, RootCertStore};

use crate::probe_support::{check, full_queue, probe, refusing, silent};

/// The check the daemon times itself (`probe_untimed`), run for at most
/// `wait` (`None`: still running then).
async fn untimed(addr: std::net::SocketAddr, table: &str, wait: Duration) -> Option<Outcome> {
    let prober = NetProber::with_root_certificates(RootCertStore::empty());
    let probe = prober
        .probe_untimed(addr, &check(table))
        .expect("a TCP check untimed");
    tokio::time::timeout(wait, probe).await.ok()
}

#[tokio::test]
async fn a_listening_port_passes() {
    let (_l, addr) = silent();
    assert_eq!(probe(addr, r#"kind = "tcp""#).await, Outcome::Pass);
}

#[tokio::test]
async fn a_port_nothing_listens_on_is_refused() {
    let (_s, addr) = refusing();
    assert_eq!(
        probe(addr, r#"kind = "tcp""#).await,
        Outcome::Fail(Failure::Refused)
    );
}

#[tokio::test]
async fn the_checks_own_port_overrides_the_servers() {
    let (_l, open) = silent();
    let (_s, closed) = refusing();
    let table = format!(r#"kind = "tcp", port = {}"#, open.port());
    assert_eq!(probe(closed, &table).await, Outcome::Pass);
    let table = format!(r#"kind = "tcp", port = {}"#, closed.port());
    assert_eq!(probe(open, &table).await, Outcome::Fail(Failure::Refused));
}

#[tokio::test]
async fn a_connect_with_no_answer_fails_by_timeout() {
    let (_l, _held, addr) = full_queue().await;
    assert_eq!(
        probe(addr, r#"kind = "tcp", timeout = "200ms", interval = "1s""#).await,
        Outcome::Fail(Failure::Timeout)
    );
}

#[tokio::test]
async fn a_passing_check_closes_its_connection_with_a_reset() {
    use std::io::Read;
    let (l, addr) = silent();
    assert_eq!(probe(addr, r#"kind = "tcp""#).await, Outcome::Pass);
    // The check's connection, accepted after the check ended: reset, not
    // closed in order (a read would give 0 for a FIN).
    let (mut s, _) = l.accept().unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .unwrap();
    crate::probe_support::assert_reset(s.read(&mut [0u8; 16]));
}

#[tokio::test]
async fn untimed_the_check_passes_and_is_refused_alike() {
    let (_l, open) = silent();
    let (_s, closed) = refusing();
    let wait = Duration::from_secs(10);
    assert_eq!(
        untimed(open, r#"kind = "tcp""#, wait).await,
        Some(Outcome::Pass)
    );
    assert_eq!(
        untimed(closed, r#"kind = "tcp""#, wait).await,
        Some(Outcome::Fail(Failure::Refused))
    );
}

#[tokio::test]
async fn untimed_a_connect_with_no_answer_outlives_its_timeout() {
    let (_l, _held, addr) = full_queue().await;
    let table = r#"kind = "tcp", timeout = "100ms", interval = "1s""#;
    // Its caller times it: 100 ms is not its end.
    assert_eq!(untimed(addr, table, Duration::from_millis(400)).await, None);
}

#[test]
fn a_command_check_is_never_handed_over_untimed() {
    let prober = NetProber::with_root_certificates(RootCertStore::empty());
    let command = check(r#"kind = "command", command = ["true"]"#);
    let server = "127.0.0.1:80".parse().unwrap();
    assert!(prober.probe_untimed(server, &command).is_none());
}

//! The DNS check against a scripted UDP responder: the query it sends, the
//! response code, replies to ignore (another id or question, a datagram
//! shorter than a header), truncated replies, broken replies, no reply.

use ipvs_agent::check::{Failure, Outcome};

use crate::probe_support::{closed_udp_port, dns_reply, probe, DnsServer};

/// A reply made from the query.
type Script = fn(&[u8]) -> Vec<u8>;

const QUERY: &str = r#"kind = "dns", query = "www.example.org", type = "AAAA""#;

#[tokio::test]
async fn a_noerror_answer_passes_and_the_query_is_as_asked() {
    let server = DnsServer::start(|q| vec![dns_reply(q, 0)]).await;
    assert_eq!(probe(server.addr, QUERY).await, Outcome::Pass);
    let q = &server.queries()[0];
    assert_eq!(q.len(), 12 + 17 + 4);
    assert_eq!(q[2..12], [0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]); // RD, one question
    assert_eq!(&q[12..29], b"\x03www\x07example\x03org\x00");
    assert_eq!(q[29..], [0, 28, 0, 1]); // AAAA, IN
}

#[tokio::test]
async fn query_ids_differ() {
    let server = DnsServer::start(|q| vec![dns_reply(q, 0)]).await;
    for _ in 0..4 {
        assert_eq!(probe(server.addr, QUERY).await, Outcome::Pass);
    }
    let mut ids: Vec<_> = server.queries().iter().map(|q| [q[0], q[1]]).collect();
    ids.sort_unstable();
    ids.dedup();
    // Four random 16-bit ids: all equal with odds 2^-48.
    assert!(ids.len() > 1, "{ids:?}");
}

#[tokio::test]
async fn another_rcode_fails_with_both_and_the_expected_one_passes() {
    let server = DnsServer::start(|q| vec![dns_reply(q, 3)]).await;
    assert_eq!(
        probe(server.addr, QUERY).await,
        Outcome::Fail(Failure::Rcode {
            expected: 0,
            got: 3
        })
    );
    let table = format!(r#"{QUERY}, rcode = "NXDOMAIN""#);
    assert_eq!(probe(server.addr, &table).await, Outcome::Pass);
}

#[tokio::test]
async fn replies_with_another_id_or_question_are_ignored() {
    let server = DnsServer::start(|q| {
        let mut other_id = dns_reply(q, 2);
        other_id[0] ^= 0xff;
        let mut other_name = dns_reply(q, 2);
        other_name[13] = b'x'; // "xww"
        vec![other_id, other_name, dns_reply(q, 0)]
    })
    .await;
    assert_eq!(probe(server.addr, QUERY).await, Outcome::Pass);
}

#[tokio::test]
async fn a_reply_ending_inside_its_question_is_an_other_failure() {
    let server = DnsServer::start(|q| vec![dns_reply(q, 0)[..16].to_vec()]).await;
    match probe(server.addr, QUERY).await {
        Outcome::Fail(Failure::Other(why)) => {
            assert!(why.contains("ends inside its question"), "{why}")
        }
        other => panic!("{other:?}"),
    }
}

/// The server answered, its answer too long for UDP (TC set): its
/// response code counts.
#[tokio::test]
async fn a_truncated_reply_is_an_answer() {
    let truncated: Script = |q| {
        let mut r = dns_reply(q, 0);
        r[2] |= 0x02;
        r
    };
    let server = DnsServer::start(move |q| vec![truncated(q)]).await;
    assert_eq!(probe(server.addr, QUERY).await, Outcome::Pass);
    let server = DnsServer::start(|q| {
        let mut r = dns_reply(q, 3);
        r[2] |= 0x02;
        vec![r]
    })
    .await;
    assert_eq!(
        probe(server.addr, QUERY).await,
        Outcome::Fail(Failure::Rcode {
            expected: 0,
            got: 3
        })
    );
}

/// A datagram shorter than a header answers nothing: the wait goes on.
#[tokio::test]
async fn a_datagram_shorter_than_a_header_is_ignored() {
    let server = DnsServer::start(|q| vec![vec![0; 5], dns_reply(q, 0)]).await;
    assert_eq!(probe(server.addr, QUERY).await, Outcome::Pass);
}

#[tokio::test]
async fn no_reply_fails_by_timeout_and_a_closed_port_is_refused() {
    let server = DnsServer::start(|_| vec![]).await;
    let table = format!(r#"{QUERY}, timeout = "200ms", interval = "1s""#);
    assert_eq!(
        probe(server.addr, &table).await,
        Outcome::Fail(Failure::Timeout)
    );
    assert_eq!(server.queries().len(), 1);
    let closed = closed_udp_port().await;
    assert_eq!(probe(closed, &table).await, Outcome::Fail(Failure::Refused));
}

#[tokio::test]
async fn the_checks_own_port_overrides_the_servers() {
    let server = DnsServer::start(|q| vec![dns_reply(q, 0)]).await;
    let closed = closed_udp_port().await;
    let table = format!("{QUERY}, port = {}", server.addr.port());
    assert_eq!(probe(closed, &table).await, Outcome::Pass);
}

//! The HTTP check against a local server: the request it sends, status,
//! body, and every way it fails.

use ipvs_agent::check::{Failure, Outcome};

use crate::probe_support::{assert_reset, chunked, probe, refusing, silent, HttpServer, Reply};

#[tokio::test]
async fn a_get_with_the_expected_status_passes_and_says_who_it_is() {
    let server = HttpServer::start(chunked(200, &["hello"])).await;
    let table = r#"kind = "http", path = "/healthz?full=1""#;
    assert_eq!(probe(server.addr, table).await, Outcome::Pass);
    let heads = server.heads();
    assert_eq!(heads.len(), 1);
    let head = &heads[0];
    assert!(
        head.starts_with("get /healthz?full=1 http/1.1\r\n"),
        "{head}"
    );
    let host = format!("\r\nhost: 127.0.0.1:{}\r\n", server.addr.port());
    assert!(head.contains(&host), "{head}");
    assert!(head.contains("\r\nconnection: close\r\n"), "{head}");
    let agent = format!(
        "\r\nuser-agent: ipvs-agent/{}\r\n",
        env!("CARGO_PKG_VERSION")
    );
    assert!(head.contains(&agent), "{head}");
}

#[tokio::test]
async fn the_host_header_is_the_checks_host_with_the_port() {
    let server = HttpServer::start(chunked(200, &[])).await;
    let table = r#"kind = "http", host = "www.example.org""#;
    assert_eq!(probe(server.addr, table).await, Outcome::Pass);
    let host = format!("\r\nhost: www.example.org:{}\r\n", server.addr.port());
    assert!(server.heads()[0].contains(&host), "{:?}", server.heads());
}

#[tokio::test]
async fn another_status_fails_with_both() {
    let server = HttpServer::start(chunked(503, &["busy"])).await;
    assert_eq!(
        probe(server.addr, r#"kind = "http""#).await,
        Outcome::Fail(Failure::Status {
            expected: 200,
            got: 503
        })
    );
    let table = r#"kind = "http", status = 503"#;
    assert_eq!(probe(server.addr, table).await, Outcome::Pass);
}

#[tokio::test]
async fn the_body_string_is_found_across_chunks() {
    let server = HttpServer::start(chunked(200, &["status: al", "l g", "ood\n"])).await;
    let table = r#"kind = "http", body_contains = "all good""#;
    assert_eq!(probe(server.addr, table).await, Outcome::Pass);
    let table = r#"kind = "http", body_contains = "all bad""#;
    assert_eq!(
        probe(server.addr, table).await,
        Outcome::Fail(Failure::BodyMismatch)
    );
}

#[tokio::test]
async fn a_string_past_the_first_64_kib_is_not_looked_for() {
    let filler = "x".repeat(16 * 1024);
    let mut chunks: Vec<&str> = vec![&filler; 4]; // 64 KiB
    chunks.push("needle");
    let server = HttpServer::start(chunked(200, &chunks)).await;
    let table = r#"kind = "http", body_contains = "needle""#;
    assert_eq!(
        probe(server.addr, table).await,
        Outcome::Fail(Failure::BodyMismatch)
    );
    // The same string just inside the cap is found.
    let mut chunks: Vec<&str> = vec![&filler; 3];
    chunks.push("needle");
    let server = HttpServer::start(chunked(200, &chunks)).await;
    assert_eq!(probe(server.addr, table).await, Outcome::Pass);
}

#[tokio::test]
async fn a_closed_port_is_refused_and_a_reset_too() {
    let (_s, addr) = refusing();
    assert_eq!(
        probe(addr, r#"kind = "http""#).await,
        Outcome::Fail(Failure::Refused)
    );
    let server = HttpServer::start(Reply::Reset).await;
    assert_eq!(
        probe(server.addr, r#"kind = "http""#).await,
        Outcome::Fail(Failure::Refused)
    );
}

#[tokio::test]
async fn a_server_that_never_answers_fails_by_timeout() {
    let (_l, addr) = silent();
    let table = r#"kind = "http", timeout = "200ms", interval = "1s""#;
    assert_eq!(probe(addr, table).await, Outcome::Fail(Failure::Timeout));
}

#[tokio::test]
async fn garbage_and_a_cut_response_are_other_failures() {
    let server = HttpServer::start(Reply::Raw(b"SSH-2.0-OpenSSH_9.2\r\n\r\n".to_vec())).await;
    match probe(server.addr, r#"kind = "http""#).await {
        Outcome::Fail(Failure::Other(why)) => assert!(why.starts_with("HTTP: "), "{why}"),
        other => panic!("{other:?}"),
    }
    let server = HttpServer::start(Reply::Raw(b"HTTP/1.1 200 OK\r\ncontent-le".to_vec())).await;
    match probe(server.addr, r#"kind = "http""#).await {
        Outcome::Fail(Failure::Other(why)) => {
            assert!(why.contains("closed before a complete response"), "{why}")
        }
        other => panic!("{other:?}"),
    }
    // A body cut short before the string: the error, not a mismatch.
    let cut = b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nshort".to_vec();
    let server = HttpServer::start(Reply::Raw(cut)).await;
    let table = r#"kind = "http", body_contains = "never""#;
    match probe(server.addr, table).await {
        Outcome::Fail(Failure::Other(why)) => assert!(why.starts_with("HTTP: "), "{why}"),
        other => panic!("{other:?}"),
    }
}

/// The outcome of a check looking for `needle` in the body of `raw`.
async fn searched(raw: &str, needle: &str) -> Outcome {
    let server = HttpServer::start(Reply::Raw(raw.as_bytes().to_vec())).await;
    let table = format!(r#"kind = "http", body_contains = "{needle}""#);
    probe(server.addr, &table).await
}

#[tokio::test]
async fn a_body_by_length_or_until_the_close_after_interim_heads_is_searched() {
    let by_length = "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nall good!trailing";
    assert_eq!(searched(by_length, "good").await, Outcome::Pass);
    // Past the length is not the body.
    assert_eq!(
        searched(by_length, "trailing").await,
        Outcome::Fail(Failure::BodyMismatch)
    );
    let until_close = "HTTP/1.0 200 OK\r\n\r\nstatus: all good";
    assert_eq!(searched(until_close, "all good").await, Outcome::Pass);
    assert_eq!(
        searched(until_close, "bad").await,
        Outcome::Fail(Failure::BodyMismatch)
    );
    let interim = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n\
                   Transfer-Encoding: chunked\r\n\r\n4\r\nup, \r\n2\r\nok\r\n0\r\n\r\n";
    assert_eq!(searched(interim, "up, ok").await, Outcome::Pass);
    // A 204 has no body, whatever its Content-Length says.
    let server = HttpServer::start(Reply::Raw(
        b"HTTP/1.1 204 No Content\r\nContent-Length: 2\r\n\r\nok".to_vec(),
    ))
    .await;
    let table = r#"kind = "http", status = 204, body_contains = "ok""#;
    assert_eq!(
        probe(server.addr, table).await,
        Outcome::Fail(Failure::BodyMismatch)
    );
}

#[tokio::test]
async fn a_malformed_body_or_head_is_named() {
    let cases = [
        (
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            "HTTP: a chunk's size line does not start with a hex digit in the response's body",
        ),
        (
            "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
            "HTTP: the response has two different Content-Length headers",
        ),
        (
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
            "HTTP: the connection closed before a complete response",
        ),
    ];
    for (raw, want) in cases {
        assert_eq!(
            searched(raw, "never").await,
            Outcome::Fail(Failure::Other(want.into())),
            "{raw:?}"
        );
    }
    // A head that never ends is not read past 64 KiB.
    let endless = format!("HTTP/1.1 200 OK\r\nX: {}", "y".repeat(70 * 1024));
    assert_eq!(
        searched(&endless, "never").await,
        Outcome::Fail(Failure::Other(
            "HTTP: the response's head is over 64 KiB".into()
        ))
    );
}

/// A server that answers one request with `200 OK` and keeps its end
/// open; what it then reads comes back from the thread: `Ok(0)` for an
/// orderly close, the error for a reset.
fn answering_then_reading() -> (
    std::net::SocketAddr,
    std::thread::JoinHandle<std::io::Result<usize>>,
) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let thread = std::thread::spawn(move || {
        let (mut s, _) = listener.accept()?;
        s.set_read_timeout(Some(std::time::Duration::from_secs(5)))?;
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            s.read_exact(&mut byte)?;
            head.push(byte[0]);
        }
        s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")?;
        s.read(&mut [0u8; 16])
    });
    (addr, thread)
}

#[tokio::test]
async fn a_plain_check_closes_its_connection_with_a_reset() {
    use ipvs_agent::probe::{NetProber, Prober, RootCertStore};

    let (addr, server) = answering_then_reading();
    assert_eq!(probe(addr, r#"kind = "http""#).await, Outcome::Pass);
    assert_reset(server.join().unwrap());
    // Untimed (the daemon's way) too.
    let (addr, server) = answering_then_reading();
    let prober = NetProber::with_root_certificates(RootCertStore::empty());
    let check = crate::probe_support::check(r#"kind = "http""#);
    let untimed = prober.probe_untimed(addr, &check).expect("untimed");
    assert_eq!(untimed.await, Outcome::Pass);
    assert_reset(server.join().unwrap());
}

#[tokio::test]
async fn untimed_the_check_sends_the_same_request_and_reads_the_same_answer() {
    use ipvs_agent::probe::{NetProber, Prober, RootCertStore};

    let prober = NetProber::with_root_certificates(RootCertStore::empty());
    let untimed = |addr, table: &str| {
        let probe = prober.probe_untimed(addr, &crate::probe_support::check(table));
        probe.expect("an HTTP check untimed")
    };
    let server = HttpServer::start(chunked(200, &["hel", "lo"])).await;
    let table = r#"kind = "http", path = "/healthz?full=1", body_contains = "ello""#;
    assert_eq!(untimed(server.addr, table).await, Outcome::Pass);
    let head = &server.heads()[0];
    assert!(
        head.starts_with("get /healthz?full=1 http/1.1\r\n"),
        "{head}"
    );
    let host = format!("\r\nhost: 127.0.0.1:{}\r\n", server.addr.port());
    assert!(head.contains(&host), "{head}");
    assert!(head.contains("\r\nconnection: close\r\n"), "{head}");
    let table = r#"kind = "http", status = 204"#;
    assert_eq!(
        untimed(server.addr, table).await,
        Outcome::Fail(Failure::Status {
            expected: 204,
            got: 200
        })
    );
    let (_s, closed) = refusing();
    let refused = untimed(closed, r#"kind = "http""#).await;
    assert_eq!(refused, Outcome::Fail(Failure::Refused));
}

//! The HTTPS check against a local TLS server: verified (the CA, the
//! name or IP address, the validity) and not verified.

use ipvs_agent::check::{Failure, Outcome};
use ipvs_agent::probe::{NetProber, Prober};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::probe_support::{check, chunked, probe, self_signed, Ca, HttpServer};

fn tls_failure(o: Outcome) -> String {
    match o {
        Outcome::Fail(Failure::Tls(why)) => why,
        other => panic!("expected a TLS failure, got {other:?}"),
    }
}

async fn verified(ca: &Ca, server: &HttpServer, table: &str) -> Outcome {
    NetProber::with_root_certificates(ca.roots())
        .probe(server.addr, check(table))
        .await
}

#[tokio::test]
async fn a_certificate_of_the_trusted_ca_for_the_ip_address_passes() {
    let ca = Ca::new("test CA");
    let server =
        HttpServer::start_tls(chunked(200, &["ok"]), ca.server(&["127.0.0.1"], false)).await;
    let table = r#"kind = "https", body_contains = "ok""#;
    assert_eq!(verified(&ca, &server, table).await, Outcome::Pass);
    assert_eq!(server.heads().len(), 1);
}

#[tokio::test]
async fn a_certificate_for_the_host_name_passes_by_sni() {
    let ca = Ca::new("test CA");
    let tls = ca.server(&["www.example.org"], false);
    let server = HttpServer::start_tls(chunked(200, &[]), tls).await;
    let table = r#"kind = "https", host = "www.example.org""#;
    assert_eq!(verified(&ca, &server, table).await, Outcome::Pass);
    // Without the host the address is verified, and it is not in the
    // certificate.
    let why = tls_failure(verified(&ca, &server, r#"kind = "https""#).await);
    assert!(why.contains("not valid for name"), "{why}");
}

#[tokio::test]
async fn a_wrong_name_fails() {
    let ca = Ca::new("test CA");
    let server =
        HttpServer::start_tls(chunked(200, &[]), ca.server(&["other.example.org"], false)).await;
    let why =
        tls_failure(verified(&ca, &server, r#"kind = "https", host = "www.example.org""#).await);
    assert!(why.contains("not valid for name"), "{why}");
    assert!(why.contains("www.example.org"), "{why}");
}

#[tokio::test]
async fn an_unknown_ca_fails() {
    let ca = Ca::new("test CA");
    let other = Ca::new("another CA");
    let server = HttpServer::start_tls(chunked(200, &[]), ca.server(&["127.0.0.1"], false)).await;
    let why = tls_failure(verified(&other, &server, r#"kind = "https""#).await);
    assert!(why.contains("UnknownIssuer"), "{why}");
    // Nor does the system's store know it.
    let default = NetProber::new()
        .probe(server.addr, check(r#"kind = "https""#))
        .await;
    assert!(tls_failure(default).contains("UnknownIssuer"));
}

#[tokio::test]
async fn an_expired_certificate_fails() {
    let ca = Ca::new("test CA");
    let server = HttpServer::start_tls(chunked(200, &[]), ca.server(&["127.0.0.1"], true)).await;
    let why = tls_failure(verified(&ca, &server, r#"kind = "https""#).await);
    assert!(why.contains("expired"), "{why}");
}

#[tokio::test]
async fn without_verification_a_self_signed_certificate_passes() {
    let server =
        HttpServer::start_tls(chunked(200, &["up"]), self_signed(&["whatever.test"])).await;
    let table = r#"kind = "https", tls_verify = false, body_contains = "up""#;
    assert_eq!(probe(server.addr, table).await, Outcome::Pass);
    // Verified, the same server fails.
    let why = tls_failure(probe(server.addr, r#"kind = "https""#).await);
    assert!(!why.is_empty());
    // The status still counts.
    let table = r#"kind = "https", tls_verify = false, status = 204"#;
    assert_eq!(
        probe(server.addr, table).await,
        Outcome::Fail(Failure::Status {
            expected: 204,
            got: 200
        })
    );
}

#[tokio::test]
async fn a_server_that_speaks_plain_http_fails_the_handshake() {
    // It answers a TLS hello with an HTTP error, as plain servers do.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        let (mut s, _) = listener.accept().await.unwrap();
        s.write_all(b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n")
            .await
            .unwrap();
        let _ = s.shutdown().await;
        // Held until the client has read the answer and closed.
        let _ = s.read(&mut [0; 512]).await;
    });
    let table = r#"kind = "https", tls_verify = false"#;
    let why = tls_failure(probe(addr, table).await);
    assert!(why.contains("corrupt message"), "{why}");
    server.await.unwrap();
}

//! The echo server on loopback (no root needed): a connection answered is
//! closed by the server at once, so a client that reads to the end gets
//! the answer, not its read timeout.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use ipvsnl_test_support::digest::{payload, Proto};
use ipvsnl_test_support::echo::{Answer, EchoServer};

/// Sends `request` (half-closing after it when `half_close`), reads to the
/// end; the answer and how long it took.
fn exchange(answer: Answer, request: &[u8], half_close: bool) -> (Vec<u8>, Duration) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let _server = EchoServer::start(listener, answer, Duration::from_secs(60));
    let started = Instant::now();
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(request).unwrap();
    if half_close {
        s.shutdown(Shutdown::Write).unwrap();
    }
    let mut got = Vec::new();
    s.read_to_end(&mut got)
        .unwrap_or_else(|e| panic!("no end of the answer after {:?}: {e}", started.elapsed()));
    (got, started.elapsed())
}

#[test]
fn an_answer_after_close_ends_the_connection() {
    let (got, took) = exchange(Answer::AfterClose { reply_len: 27 }, b"hello", true);
    assert_eq!(got, vec![b'r'; 27]);
    assert!(took < Duration::from_secs(2), "took {took:?}");
}

#[test]
fn a_digest_answer_ends_the_connection() {
    let body = payload(7, 1000);
    let mut framed = (body.len() as u64).to_be_bytes().to_vec();
    framed.extend_from_slice(&body);
    let answer = Answer::Digest {
        name: "rs1".to_string(),
        proto: Proto::Tcp,
    };
    let (got, took) = exchange(answer, &framed, false);
    let line = String::from_utf8(got).unwrap();
    assert!(line.starts_with("rs1 1000 "), "{line:?}");
    assert!(took < Duration::from_secs(2), "took {took:?}");
}

//! The DNS check: one query over UDP (a header and one question, recursion
//! desired), the reply matched by its id and question, its response code
//! compared with the one expected.

use std::hash::{BuildHasher, RandomState};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::SystemTime;

use tokio::net::UdpSocket;

use crate::check::{Failure, Outcome};
use crate::config::DnsCheck;
use crate::probe::failure::io_outcome;

/// The DNS header's length.
const HEADER: usize = 12;
/// Flags of a query: recursion desired.
const RD: u16 = 0x0100;
/// Flags of a reply: this is a response.
const QR: u16 = 0x8000;
/// The question's class: Internet.
const CLASS_IN: u16 = 1;
/// The bytes of a reply read: its header and question are all the check
/// needs (a question is at most 260 bytes), the rest of a longer datagram
/// is discarded by the receive. A plain DNS reply over UDP is at most 512
/// bytes anyway (the query asks for no more, it has no EDNS record).
const REPLY_READ: usize = 512;

/// One query to `server`; replies that are not to it (another id or
/// question) are ignored and the wait goes on, bounded by the check's
/// timeout.
pub(crate) async fn check(server: SocketAddr, dns: &DnsCheck) -> Outcome {
    match query(server, dns).await {
        Ok(rcode) if rcode == dns.rcode => Outcome::Pass,
        Ok(got) => Outcome::Fail(Failure::Rcode {
            expected: dns.rcode,
            got,
        }),
        Err(not) => not,
    }
}

async fn query(server: SocketAddr, dns: &DnsCheck) -> Result<u8, Outcome> {
    let id = random_id();
    let message = encode_query(id, &dns.name, dns.qtype)?;
    let local: SocketAddr = if server.is_ipv4() {
        (Ipv4Addr::UNSPECIFIED, 0).into()
    } else {
        (Ipv6Addr::UNSPECIFIED, 0).into()
    };
    let socket = UdpSocket::bind(local)
        .await
        .map_err(|e| io_outcome("DNS socket", &e))?;
    // Connected: only the server's datagrams arrive, and its ICMP port
    // unreachable comes back as a refused receive.
    socket
        .connect(server)
        .await
        .map_err(|e| io_outcome("DNS connect", &e))?;
    socket
        .send(&message)
        .await
        .map_err(|e| io_outcome("DNS send", &e))?;
    let question = &message[HEADER..];
    let mut buf = [0u8; REPLY_READ];
    loop {
        let n = socket
            .recv(&mut buf)
            .await
            .map_err(|e| io_outcome("DNS receive", &e))?;
        if let Some(rcode) = read_reply(&buf[..n], id, question)? {
            return Ok(rcode);
        }
    }
}

/// A query id no one on the path can guess: std's per-process random
/// hash keys over the time.
fn random_id() -> u16 {
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    RandomState::new().hash_one(now) as u16
}

/// A query message: the header (`id`, recursion desired, one question)
/// and the question (`name`, `qtype`, class IN).
pub(crate) fn encode_query(id: u16, name: &str, qtype: u16) -> Result<Vec<u8>, Failure> {
    let mut m = Vec::with_capacity(HEADER + name.len() + 6);
    for word in [id, RD, 1, 0, 0, 0] {
        m.extend_from_slice(&word.to_be_bytes());
    }
    let bare = name.strip_suffix('.').unwrap_or(name);
    if !bare.is_empty() {
        for label in bare.split('.') {
            let len = u8::try_from(label.len())
                .ok()
                .filter(|l| (1..=63).contains(l))
                .ok_or_else(|| {
                    Failure::Other(format!(
                        "DNS query \"{name}\": a label must have 1 to 63 bytes"
                    ))
                })?;
            m.push(len);
            m.extend_from_slice(label.as_bytes());
        }
    }
    m.push(0);
    if m.len() - HEADER > 255 + 1 {
        return Err(Failure::Other(format!(
            "DNS query \"{name}\": longer than 255 bytes"
        )));
    }
    m.extend_from_slice(&qtype.to_be_bytes());
    m.extend_from_slice(&CLASS_IN.to_be_bytes());
    Ok(m)
}

/// A datagram received: `Ok(None)` when it is not the reply to this query
/// (shorter than a header, another id, another question) and is ignored;
/// the response code of the reply; an error when the reply to this query
/// is garbled. A truncated reply (TC set: the answer did not fit) is an
/// answer: its response code counts.
pub(crate) fn read_reply(d: &[u8], id: u16, question: &[u8]) -> Result<Option<u8>, Failure> {
    if d.len() < HEADER {
        return Ok(None);
    }
    let word = |i: usize| u16::from_be_bytes([d[i], d[i + 1]]);
    if word(0) != id {
        return Ok(None);
    }
    let flags = word(2);
    if flags & QR == 0 {
        return Err(Failure::Other("DNS reply is a query (QR not set)".into()));
    }
    if word(4) != 1 {
        return Err(Failure::Other(format!(
            "DNS reply with {} questions, not the one asked",
            word(4)
        )));
    }
    let Some(theirs) = d.get(HEADER..HEADER + question.len()) else {
        return Err(Failure::Other("DNS reply ends inside its question".into()));
    };
    // Names compare without case (a server may echo them in its own).
    if !theirs.eq_ignore_ascii_case(question) {
        return Ok(None);
    }
    Ok(Some((flags & 0x000f) as u8))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_is_a_header_and_one_question() {
        let m = encode_query(0xabcd, "ex.org.", 28).unwrap();
        assert_eq!(
            m,
            [
                0xab, 0xcd, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, // header
                2, b'e', b'x', 3, b'o', b'r', b'g', 0, // name
                0, 28, 0, 1, // AAAA, IN
            ]
        );
        assert_eq!(encode_query(1, ".", 2).unwrap()[HEADER..], [0, 0, 2, 0, 1]);
        let long = "a".repeat(64);
        assert!(encode_query(1, &long, 1).is_err());
        assert!(encode_query(1, "a..b", 1).is_err());
    }

    #[test]
    fn replies_are_matched_by_id_and_question() {
        let q = encode_query(7, "ex.org", 1).unwrap();
        let mut reply = q.clone();
        reply[2] = 0x81; // QR, RD
        reply[3] = 0x83; // RA, NXDOMAIN
        assert_eq!(read_reply(&reply, 7, &q[HEADER..]), Ok(Some(3)));
        assert_eq!(read_reply(&reply, 8, &q[HEADER..]), Ok(None));
        let mut upper = reply.clone();
        upper[HEADER + 1] = b'E';
        assert_eq!(read_reply(&upper, 7, &q[HEADER..]), Ok(Some(3)));
        let mut other = reply.clone();
        other[HEADER + 1] = b'f';
        assert_eq!(read_reply(&other, 7, &q[HEADER..]), Ok(None));
        assert!(read_reply(&reply[..HEADER + 3], 7, &q[HEADER..]).is_err());
        assert!(read_reply(&q, 7, &q[HEADER..]).is_err()); // QR not set
    }

    #[test]
    fn a_truncated_reply_is_an_answer_and_a_short_datagram_is_ignored() {
        let q = encode_query(7, "ex.org", 1).unwrap();
        let mut reply = q.clone();
        reply[2] = 0x83; // QR, TC, RD: the answer did not fit
        reply[3] = 0x80; // RA, NOERROR
        assert_eq!(read_reply(&reply, 7, &q[HEADER..]), Ok(Some(0)));
        reply[3] = 0x82; // SERVFAIL
        assert_eq!(read_reply(&reply, 7, &q[HEADER..]), Ok(Some(2)));
        // Shorter than a header: not a reply to anything; the wait goes on.
        assert_eq!(read_reply(&reply[..5], 7, &q[HEADER..]), Ok(None));
        assert_eq!(read_reply(&[], 7, &q[HEADER..]), Ok(None));
    }
}

//! An HTTP check's response head, parsed from the bytes read so far: the
//! status and how the body that follows is framed. No I/O.
//!
//! The parse itself is `httparse`'s (hyper's parser); this file decides
//! what a check needs of it: informational (1xx) heads skipped, the body's
//! framing by RFC 9112 section 6.3 (no body after 1xx, 204 and 304;
//! `Transfer-Encoding` ending in `chunked` over `Content-Length`; a
//! `Content-Length` given twice must agree; otherwise the body runs to the
//! connection's end, which `Connection: close` makes the case anyway).

/// The most header lines a response may have.
const MAX_HEADERS: usize = 100;
/// The largest head read before the response is refused.
pub(crate) const MAX_HEAD: usize = 64 * 1024;

/// How the body after a head is delimited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Framing {
    /// Exactly this many bytes (none for a 204 or 304).
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// Until the server closes the connection.
    UntilClose,
}

/// A final (not 1xx) response head.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Head {
    pub(crate) status: u16,
    pub(crate) framing: Framing,
    /// Where the body starts in the bytes given.
    pub(crate) body_at: usize,
}

/// The final head at the start of `bytes` (any 1xx before it skipped):
/// `Ok(None)` while it is incomplete, the reason when it is not HTTP.
pub(crate) fn parse(bytes: &[u8]) -> Result<Option<Head>, String> {
    let mut at = 0;
    loop {
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut response = httparse::Response::new(&mut headers);
        let len = match response.parse(&bytes[at..]) {
            Ok(httparse::Status::Complete(len)) => len,
            Ok(httparse::Status::Partial) => return Ok(None),
            Err(e) => return Err(format!("{e} in the response's head")),
        };
        let status = response.code.unwrap_or_default();
        if (100..200).contains(&status) && status != 101 {
            at += len;
            continue;
        }
        let framing = framing(status, response.headers)?;
        return Ok(Some(Head {
            status,
            framing,
            body_at: at + len,
        }));
    }
}

fn framing(status: u16, headers: &[httparse::Header<'_>]) -> Result<Framing, String> {
    if status == 204 || status == 304 || (100..200).contains(&status) {
        return Ok(Framing::Length(0));
    }
    let mut chunked = None;
    let mut length: Option<u64> = None;
    for h in headers {
        if h.name.eq_ignore_ascii_case("transfer-encoding") {
            // The last coding of the last such header says.
            let last = h.value.rsplit(|&b| b == b',').next().unwrap_or_default();
            chunked = Some(last.trim_ascii().eq_ignore_ascii_case(b"chunked"));
        } else if h.name.eq_ignore_ascii_case("content-length") {
            let n = std::str::from_utf8(h.value.trim_ascii())
                .ok()
                .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|v| v.parse::<u64>().ok())
                .ok_or_else(|| {
                    format!(
                        "the response's Content-Length \"{}\" is not a number",
                        String::from_utf8_lossy(h.value)
                    )
                })?;
            if length.is_some_and(|l| l != n) {
                return Err("the response has two different Content-Length headers".into());
            }
            length = Some(n);
        }
    }
    Ok(match (chunked, length) {
        (Some(true), _) => Framing::Chunked,
        (Some(false), _) => Framing::UntilClose,
        (None, Some(n)) => Framing::Length(n),
        (None, None) => Framing::UntilClose,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(text: &str) -> Result<Option<Head>, String> {
        parse(text.as_bytes())
    }

    #[test]
    fn a_complete_head_gives_its_status_framing_and_body_start() {
        let text = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
        let h = head(text).unwrap().unwrap();
        assert_eq!((h.status, h.framing), (200, Framing::Length(5)));
        assert_eq!(&text[h.body_at..], "hello");
        assert_eq!(head("HTTP/1.1 200 OK\r\nContent-Le").unwrap(), None);
        assert_eq!(head("").unwrap(), None);
    }

    #[test]
    fn informational_heads_are_skipped() {
        let text = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n\
                    HTTP/1.0 503 Busy\r\n\r\nx";
        let h = head(text).unwrap().unwrap();
        assert_eq!((h.status, h.framing), (503, Framing::UntilClose));
        assert_eq!(&text[h.body_at..], "x");
        assert_eq!(
            head("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 2").unwrap(),
            None
        );
    }

    #[test]
    fn the_framing_follows_the_headers() {
        let f = |headers: &str| {
            head(&format!("HTTP/1.1 200 OK\r\n{headers}\r\n")).map(|h| h.unwrap().framing)
        };
        assert_eq!(f("Transfer-Encoding: chunked\r\n"), Ok(Framing::Chunked));
        assert_eq!(
            f("transfer-encoding: gzip, Chunked\r\ncontent-length: 9\r\n"),
            Ok(Framing::Chunked)
        );
        assert_eq!(f("Transfer-Encoding: gzip\r\n"), Ok(Framing::UntilClose));
        assert_eq!(f(""), Ok(Framing::UntilClose));
        assert_eq!(
            f("Content-Length: 7\r\ncontent-length: 7\r\n"),
            Ok(Framing::Length(7))
        );
        assert_eq!(
            f("Content-Length: 7\r\nContent-Length: 8\r\n"),
            Err("the response has two different Content-Length headers".into())
        );
        assert_eq!(
            f("Content-Length: -1\r\n"),
            Err("the response's Content-Length \"-1\" is not a number".into())
        );
        let empty = |status: &str| {
            head(&format!("HTTP/1.1 {status}\r\nContent-Length: 9\r\n\r\n"))
                .map(|h| h.unwrap().framing)
        };
        assert_eq!(empty("204 No Content"), Ok(Framing::Length(0)));
        assert_eq!(empty("304 Not Modified"), Ok(Framing::Length(0)));
    }

    #[test]
    fn what_is_not_http_is_named() {
        let e = head("SSH-2.0-OpenSSH_9.2\r\n\r\n").unwrap_err();
        assert!(e.ends_with(" in the response's head"), "{e}");
    }
}

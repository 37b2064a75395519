//! The protocol core's machines fed arbitrary inputs: datagrams of random
//! bytes and of well-formed replies with nearby sequence numbers, overruns,
//! time-outs, truncations and socket failures, in any order.
//!
//! Must hold: no panic; every machine finishes once the inputs run out and
//! nothing more comes (time-outs only); an apply reports exactly one
//! outcome for every request it was not told to skip.

#![no_main]

use std::io;
use std::time::Duration;

use ipvsnl::proto::{CallKind, Input, Limits, Machine, Outcome, Poll, Replies, Session};
use ipvsnl::{AddressFamily, Request, ServiceKey};
use libfuzzer_sys::fuzz_target;

/// The fuzzer's bytes, read a little at a time (zeros once used up).
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((b, rest)) => {
                self.0 = rest;
                *b
            }
            None => 0,
        }
    }
    fn take(&mut self, n: usize) -> &[u8] {
        let n = n.min(self.0.len());
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        a
    }
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A netlink message of these fields.
fn message(out: &mut Vec<u8>, kind: u16, flags: u16, seq: u32, payload: &[u8]) {
    out.extend_from_slice(&(16 + payload.len() as u32).to_ne_bytes());
    out.extend_from_slice(&kind.to_ne_bytes());
    out.extend_from_slice(&flags.to_ne_bytes());
    out.extend_from_slice(&seq.to_ne_bytes());
    out.extend_from_slice(&0u32.to_ne_bytes());
    out.extend_from_slice(payload);
    while out.len() % 4 != 0 {
        out.push(0);
    }
}

/// The next input the script says, made to hit the machine's numbers.
fn next_input(b: &mut Bytes<'_>, last_seq: u32, buf: &mut Vec<u8>) -> Option<Input<'static>> {
    buf.clear();
    let seq = last_seq.wrapping_sub(u32::from(b.byte() % 8));
    let errno = -i32::from(b.byte() % 40);
    match b.byte() % 9 {
        0 => {
            let n = usize::from(b.byte());
            buf.extend_from_slice(b.take(n));
        }
        1 => {
            let mut orig = Vec::new();
            message(&mut orig, 0, 0, seq, &[]);
            let mut p = errno.to_ne_bytes().to_vec();
            p.extend(orig);
            message(buf, 2, 0, seq, &p);
        }
        2 => return Some(Input::Overrun),
        3 => return Some(Input::TimedOut),
        4 => {
            return Some(Input::Truncated {
                len: usize::from(b.byte()) * 64,
            })
        }
        5 => return Some(Input::ReceiveFailed(io::Error::from_raw_os_error(9))),
        6 => message(buf, 3, 2, seq, &errno.to_ne_bytes()),
        7 => {
            let flags = u16::from(b.byte()) & 0x1f;
            let mut p = vec![1, 1, 0, 0];
            let n = usize::from(b.byte() % 64);
            p.extend_from_slice(b.take(n));
            message(buf, 0x23, flags, seq, &p);
        }
        _ => {
            let id = 0x20 + u16::from(b.byte() % 4);
            let mut p = vec![1, 2, 0, 0, 6, 0, 1, 0];
            p.extend_from_slice(&id.to_ne_bytes());
            p.extend_from_slice(&[0, 0]);
            message(buf, 0x10, 0, seq, &p);
        }
    }
    None
}

/// Runs `m` on the script; then only time-outs, which must end it.
fn run(m: &mut impl Machine, b: &mut Bytes<'_>, last_seq: impl Fn() -> u32) {
    let mut buf = Vec::new();
    let mut quiet = 0;
    loop {
        match m.poll() {
            Poll::Transmit(_) => {
                if b.byte() % 16 == 1 {
                    m.handle(Input::SendFailed(io::Error::from_raw_os_error(105)));
                } else {
                    m.handle(Input::Sent);
                }
            }
            Poll::Receive(_) if b.is_empty() => {
                quiet += 1;
                assert!(quiet < 10_000, "the machine does not finish on time-outs");
                m.handle(Input::TimedOut);
            }
            Poll::Receive(_) => match next_input(b, last_seq(), &mut buf) {
                Some(input) => m.handle(input),
                None => m.handle(Input::Datagram(&buf)),
            },
            Poll::Finished => return,
            _ => unreachable!("a new kind of poll"),
        }
    }
}

struct Sink;

impl Replies for Sink {
    fn message(&mut self, _command: u8, attrs: &[u8]) -> Result<(), ipvsnl::DecodeError> {
        match attrs.first() {
            Some(0xff) => Err("refused by the sink".into()),
            _ => Ok(()),
        }
    }
    fn restart(&mut self) {}
}

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes(data);
    let mut session = Session::new(Duration::from_secs(1));
    if b.byte() % 2 == 0 {
        session.set_last_seq(u32::MAX - u32::from(b.byte()));
    }
    // Two calls and an apply on one session: what one leaves (an
    // unfinished dump, a family id) the next must cope with.
    for _ in 0..2 {
        let kind = if b.byte() % 2 == 0 {
            CallKind::Dump
        } else {
            CallKind::Get
        };
        let seq = std::cell::Cell::new(0);
        let mut call = session.call(
            kind,
            |out, family, s, flags| {
                seq.set(s);
                message(out, family, flags, s, &[1, 1, 0, 0]);
            },
            Sink,
        );
        run(&mut call, &mut b, || seq.get().max(1));
        assert!(call.result().is_some());
    }
    let n = usize::from(b.byte() % 40);
    let requests: Vec<Request> = (0..n as u32)
        .map(|i| Request::DeleteService(ServiceKey::fwmark(i + 1, AddressFamily::Inet)))
        .collect();
    let skip: Vec<bool> = (0..n).map(|_| b.byte() % 5 == 0).collect();
    let limits = Limits::new(
        64 + usize::from(b.byte()) * 8,
        1 + usize::from(b.byte() % 16),
    );
    let mut seen = vec![0u8; n];
    let mut sink = |i: usize, _o: Outcome| seen[i] += 1;
    let last = std::cell::Cell::new(session.last_seq());
    let mut m = session.apply(&requests, &skip, limits, &mut sink);
    run(&mut m, &mut b, || last.get().wrapping_add(1));
    drop(m);
    for (i, count) in seen.iter().enumerate() {
        assert_eq!(*count, u8::from(!skip[i]), "request {i}");
    }
});

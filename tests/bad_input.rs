//! The bad-input table: malformed input to the library's API and to the
//! rules format, each with the exact error it gets and a check that
//! nothing of it reaches the kernel (the emulated kernel keeps every
//! message a client sends it, byte for byte). Host only: no socket, no
//! kernel.
//!
//! - `api`: names, numbers out of range, impossible combinations, refused
//!   by `Request::validate` (or `Scheduler::new`) and never encoded;
//! - `rules`: bad rules text, refused by `rules::parse` or
//!   `Rules::to_table` with every bad line's number and message;
//! - `million`: a million-line text with one bad line at its end.

mod bad_input {
    pub mod api;
    mod million;
    pub mod rules;
}

use ipvsnl::emulator::{Kernel, Taken};
use ipvsnl::rules::{parse, Numeric};
use ipvsnl::{ApplyOptions, Client, Destination, Error, Request, RequestKind, Service};
use ipvsnl_wire::netlink_packet_core::ParseableParametrized;
use ipvsnl_wire::netlink_packet_generic::GenlHeader;
use ipvsnl_wire::IpvsMessage;

use bad_input::api::{self, Case, Input};
use bad_input::rules::{self, Stage};

/// What one apply sent to a new emulated kernel, and what it returned.
struct Sent {
    /// Every message the kernel received (family lookups too), in order.
    taken: Vec<Taken>,
    /// The kernel's IPVS family id.
    family: u16,
    /// The apply's result per request.
    results: Vec<Result<(), Error>>,
}

impl Sent {
    /// The IPVS requests the kernel received, read back from their bytes
    /// (family lookups are not counted).
    fn messages(&self) -> Vec<IpvsMessage> {
        let ipvs = self
            .taken
            .iter()
            .filter(|t| t.kind != Some(RequestKind::ResolveFamily));
        ipvs.map(|t| {
            let b = &t.bytes;
            let len = u32::from_ne_bytes([b[0], b[1], b[2], b[3]]) as usize;
            assert_eq!(len, b.len(), "a sent message's length is its own");
            assert_eq!(u16::from_ne_bytes([b[4], b[5]]), self.family, "{t:?}");
            let [cmd, version, _, _, ref attrs @ ..] = b[16..] else {
                panic!("a sent IPVS message has its generic-netlink header");
            };
            let header = GenlHeader { cmd, version };
            IpvsMessage::parse_with_param(attrs, header).expect("a sent request decodes")
        })
        .collect()
    }

    /// Whether every request's result is an invalid-input error.
    fn all_invalid(&self) -> bool {
        let invalid = |r: &Result<(), Error>| matches!(r, Err(e) if e.is_invalid_input());
        self.results.iter().all(invalid)
    }
}

/// Applies `requests` with a client of a new emulated kernel (which
/// refuses those that fail `Request::validate` unsent), at most 16 to a
/// datagram.
fn apply_validated(requests: &[Request]) -> Sent {
    let kernel = Kernel::new();
    let mut ipvs = Client::emulated(&kernel);
    let options = ApplyOptions::default().with_max_batch_requests(16);
    let results = ipvs.apply_with(requests, &options);
    Sent {
        taken: kernel.requests(),
        family: kernel.family_id().expect("the module is loaded"),
        results,
    }
}

/// The API's bad inputs: the exact error, an invalid-input error, and
/// nothing transmitted for it, alone or between good requests.
#[test]
fn api_bad_inputs_are_refused_and_never_sent() {
    let cases = api::cases();
    assert!(cases.len() >= 60, "{} API cases", cases.len());
    let mut invalid = Vec::new();
    let mut wrong = Vec::new();
    for Case { name, input, error } in cases {
        let e = match input {
            Input::Scheduler(s) => api::scheduler_error(s),
            Input::Request(r) => {
                let e = r.validate().expect_err(name);
                // Alone: nothing goes out, not even the family lookup.
                let sent = apply_validated(std::slice::from_ref(&r));
                assert!(sent.taken.is_empty(), "{name}: {:?}", sent.taken);
                assert!(sent.all_invalid(), "{name}: {:?}", sent.results);
                invalid.push(r);
                e
            }
        };
        assert!(e.is_invalid_input(), "{name}: {e:?}");
        if e.to_string() != error {
            wrong.push(format!("{name}:\n  got  {e}\n  want {error}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // A batch of nothing but bad requests transmits nothing.
    let sent = apply_validated(&invalid);
    assert!(sent.taken.is_empty(), "{:?}", sent.taken);
    assert!(sent.all_invalid(), "{:?}", sent.results);
    // Between good ones: exactly the good ones are encoded, in order, and
    // each is answered; no bad one is.
    let key = api::v4();
    let mut mixed = vec![Request::add_service(Service::new(key))];
    for (i, bad) in invalid.iter().enumerate() {
        mixed.push(bad.clone());
        let addr = std::net::IpAddr::from([10, 1, (i / 250) as u8, (i % 250 + 1) as u8]);
        mixed.push(Request::AddDestination(key, Destination::new(addr, 80)));
    }
    let good: Vec<usize> = (0..mixed.len())
        .filter(|i| mixed[*i].validate().is_ok())
        .collect();
    assert_eq!(good.len(), invalid.len() + 1);
    let sent = apply_validated(&mixed);
    let messages = sent.messages();
    let want: Vec<_> = good.iter().map(|i| mixed[*i].to_message()).collect();
    assert_eq!(messages, want);
    for bad in &invalid {
        assert!(!messages.contains(&bad.to_message()), "{bad:?} was sent");
    }
    // Each good one applied; each bad one refused unsent.
    for (i, r) in sent.results.iter().enumerate() {
        match r {
            Ok(()) => assert!(good.contains(&i), "request {i} applied"),
            Err(e) => assert!(!good.contains(&i) && e.is_invalid_input(), "{i}: {e}"),
        }
    }
}

/// The rules format's bad texts: the exact error with every bad line's
/// number; no `Rules` (nothing to apply) or no table.
#[test]
fn rules_bad_texts_name_every_bad_line() {
    assert!(
        rules::CASES.len() >= 90,
        "{} rules cases",
        rules::CASES.len()
    );
    let mut wrong = Vec::new();
    for case in rules::CASES {
        let name = case.name;
        let e = match (case.stage, parse(case.text, &Numeric)) {
            (Stage::Parse, Err(e)) => e,
            (Stage::Table, Ok(r)) => r.to_table().expect_err(name),
            (stage, got) => panic!("{name}: {stage:?} case, parse gave {got:?}"),
        };
        let lines: Vec<usize> = e.lines().iter().map(|b| b.line()).collect();
        if e.to_string() != case.error || lines != case.lines {
            wrong.push(format!(
                "{name}:\n  got  {e} {lines:?}\n  want {}",
                case.error
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Empty and blank texts are no error: an empty `Rules`, an empty table.
#[test]
fn an_empty_text_is_an_empty_table() {
    for text in ["", "\n", "\n\n  \t \n", "ipvsadm\n", "\r\n"] {
        let r = parse(text, &Numeric).unwrap();
        assert!(r.is_empty(), "{text:?}");
        assert_eq!(r.to_table().unwrap().len(), 0, "{text:?}");
    }
}

/// Bytes that are not UTF-8 never reach the parser as such: refused by
/// `str::from_utf8`, and read lossily (as `ipvsadm -R` does) a bad line.
#[test]
fn non_utf8_is_refused_before_or_by_the_parser() {
    for (name, bytes, error) in rules::NOT_UTF8 {
        assert!(std::str::from_utf8(bytes).is_err(), "{name}");
        let text = String::from_utf8_lossy(bytes);
        let e = parse(&text, &Numeric).expect_err(name);
        assert_eq!(e.to_string(), *error, "{name}");
    }
}

/// The edges of each range are good input: accepted, and sent (one
/// message each) when applied; the rules reader takes them too.
#[test]
fn the_edges_of_each_range_are_accepted_and_sent() {
    use ipvsnl::{
        AddressFamily, DaemonRole, Netmask, Scheduler, ServiceKey, SyncDaemon, Timeouts,
        IFNAME_MAX, PE_NAME_MAX, SCHED_NAME_MAX, SYNC_ID_MAX, THRESHOLD_MAX, TIMEOUT_MAX,
        WEIGHT_MAX,
    };
    let key = api::v4();
    let v6 = ServiceKey::fwmark(u32::MAX, AddressFamily::Inet6);
    let sched = Scheduler::new(&"s".repeat(SCHED_NAME_MAX)).unwrap();
    let good = vec![
        Request::add_service(Service::new(key).with_scheduler(sched)),
        Request::edit_service(
            Service::new(key)
                .with_persistence(u32::MAX)
                .with_persistence_engine("p".repeat(PE_NAME_MAX))
                // Not contiguous: the kernel takes any IPv4 mask, so does the model.
                .with_netmask(Netmask::V4([255, 0, 255, 0].into())),
        ),
        Request::add_service(Service::new(v6).with_netmask(Netmask::V6(1))),
        Request::edit_service(Service::new(v6).with_netmask(Netmask::V6(128))),
        Request::AddDestination(
            key,
            api::server()
                .with_weight(WEIGHT_MAX)
                .with_thresholds(THRESHOLD_MAX, THRESHOLD_MAX),
        ),
        Request::SetTimeouts(Timeouts::new(TIMEOUT_MAX, TIMEOUT_MAX, TIMEOUT_MAX)),
        Request::StartDaemon(
            SyncDaemon::new(DaemonRole::Backup, "i".repeat(IFNAME_MAX))
                .with_sync_id(SYNC_ID_MAX)
                .with_ttl(255),
        ),
    ];
    for r in &good {
        r.validate().unwrap_or_else(|e| panic!("{r:?}: {e}"));
    }
    let sent = apply_validated(&good);
    let want: Vec<_> = good.iter().map(Request::to_message).collect();
    assert_eq!(sent.messages(), want);
    let text = "-a -t 10.0.0.1:80 -r 10.0.1.1 -w 2147483647 -x 2147483647 -y 2147483647\n\
                -A -t 10.0.0.1:80 -p 4294967295 -M 255.0.255.0\n\
                -A -f 4294967295 -6 -p 0 -M 128\n\
                --set 2147483647 0 0\n\
                --start-daemon master --syncid 255 --mcast-ttl 255 --sync-maxlen 65507\n";
    assert_eq!(parse(text, &Numeric).unwrap().len(), 5);
}

/// The whole table has at least 100 cases.
#[test]
fn the_table_has_a_hundred_cases() {
    let n = api::cases().len() + rules::CASES.len() + rules::NOT_UTF8.len() + 1;
    assert!(n >= 100, "{n} cases");
}

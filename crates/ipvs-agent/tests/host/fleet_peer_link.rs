//! The peer link's datagram (every malformed one refused with its
//! reason), two links talking over UDP on 127.0.0.1, the new options of
//! `run --etcd`, and the record of the VIPs held.

use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use ipvs_agent::cli::RunOptions;
use ipvs_agent::fleet::leader::peer_link::{PeerLink, PeerLinkOptions};
use ipvs_agent::fleet::leader::state_machine::{Event, Leadership, Timing};
use ipvs_agent::fleet::peers::datagram::Datagram;
use ipvs_agent::fleet::peers::reports::{PeerTiming, Peers};
use ipvs_agent::fleet::vip::addresses::Vip;
use ipvs_agent::fleet::vip::record::VipState;
use tokio::sync::{mpsc, watch};

fn datagram() -> Datagram {
    let mut d = Datagram::decode(&sample().encode(b"k"), b"k").unwrap();
    d.echo.push(("[2001:db8::2]:7946".parse().unwrap(), 3, 4));
    d
}

fn sample() -> Datagram {
    // Built through the text form: the type is non-exhaustive.
    let text = "ipvs-agent-peer 1\nfrom 10.0.0.1:7946\nboot 11\nstamp 22\n\
                state blind=1 elected=0 holding=1\necho 10.0.0.2:7946 5 6\n";
    sign(text, b"k")
}

/// `text` with its MAC under `key`, decoded.
fn sign(text: &str, key: &[u8]) -> Datagram {
    Datagram::decode(&with_mac(text, key), key).unwrap()
}

/// `text` and a `mac` line under `key` (computed by encoding a datagram
/// whose body is `text`: the encoder's MAC covers exactly the body).
fn with_mac(text: &str, key: &[u8]) -> Vec<u8> {
    use hmac::{Hmac, Mac};
    let mut m = <Hmac<sha2::Sha256> as Mac>::new_from_slice(key).unwrap();
    m.update(text.as_bytes());
    let tag: String = m
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("{text}mac {tag}\n").into_bytes()
}

#[test]
fn a_datagram_round_trips_and_a_changed_byte_is_refused() {
    let d = datagram();
    assert_eq!(d.from, "10.0.0.1:7946".parse::<SocketAddr>().unwrap());
    assert_eq!((d.boot, d.stamp), (11, 22));
    assert_eq!((d.blind, d.elected, d.holding), (true, false, true));
    assert_eq!(d.echo.len(), 2);
    let bytes = d.encode(b"key");
    assert_eq!(Datagram::decode(&bytes, b"key").unwrap(), d);
    for i in 0..bytes.len() - 1 {
        let mut bad = bytes.clone();
        bad[i] ^= 0x01;
        assert!(Datagram::decode(&bad, b"key").is_err(), "byte {i} changed");
    }
}

#[test]
fn a_malformed_datagram_is_refused_with_its_reason() {
    let body = |state: &str, extra: &str| {
        format!("ipvs-agent-peer 1\nfrom 10.0.0.1:7946\nboot 1\nstamp 2\nstate {state}\n{extra}")
    };
    let cases = [
        (b"\xff\xfe".to_vec(), "peer datagram: not UTF-8"),
        (b"hello\n".to_vec(), "peer datagram: no `mac` line"),
        (
            b"x\nmac 00\n".to_vec(),
            "peer datagram: its `mac` is not 64 hex digits",
        ),
        (
            with_mac("ipvs-agent-peer 2\n", b"k"),
            "peer datagram: not starting with `ipvs-agent-peer 1`",
        ),
        (
            with_mac("ipvs-agent-peer 1\nfrom nowhere\n", b"k"),
            "peer datagram: `from nowhere`: not an address and port",
        ),
        (
            with_mac("ipvs-agent-peer 1\nfrom 10.0.0.1:1\nboot x\n", b"k"),
            "peer datagram: `boot x`: not a number",
        ),
        (
            with_mac("ipvs-agent-peer 1\nfrom 10.0.0.1:1\nstamp 1\n", b"k"),
            "peer datagram: expected `boot ...`, got `stamp 1`",
        ),
        (
            with_mac(&body("blind=1 elected=2 holding=0", ""), b"k"),
            "peer datagram: `state blind=1 elected=2 holding=0`: expected blind=0|1 elected=0|1 holding=0|1",
        ),
        (
            with_mac(&body("blind=1 elected=0", ""), b"k"),
            "peer datagram: `state blind=1 elected=0`: expected blind=0|1 elected=0|1 holding=0|1",
        ),
        (
            with_mac(&body("blind=1 elected=0 holding=0", "echo 10.0.0.2:1 5\n"), b"k"),
            "peer datagram: `echo 10.0.0.2:1 5`: expected `echo ADDR BOOT STAMP`",
        ),
    ];
    for (bytes, want) in cases {
        assert_eq!(Datagram::decode(&bytes, b"k").unwrap_err(), want);
    }
    let ok = with_mac(&body("blind=0 elected=1 holding=0", ""), b"k");
    let d = Datagram::decode(&ok, b"k").unwrap();
    assert_eq!(
        (d.blind, d.elected, d.holding, d.echo.len()),
        (false, true, false, 0)
    );
}

#[test]
fn datagrams_of_other_versions_are_read_for_what_this_one_knows() {
    let head = "ipvs-agent-peer 1\nfrom 10.0.0.1:7946\nboot 11\nstamp 22\n";
    // The first version: the three flags only.
    let first = sign(&format!("{head}state blind=1 elected=0 holding=1\n"), b"k");
    assert_eq!(
        (first.on_peers, first.lease, first.names),
        (false, None, None)
    );
    // A later one: words and a kind of line this version does not know.
    let later = sign(
        &format!(
            "{head}state blind=0 elected=1 holding=1 on-peers=1 lease=5 colour=blue \
             standby names=6\necho 10.0.0.2:7946 5 6\nweight 3 of 4\necho 10.0.0.3:7946 7 8\n"
        ),
        b"k",
    );
    assert_eq!(
        (later.blind, later.elected, later.holding),
        (false, true, true)
    );
    assert_eq!(
        (later.on_peers, later.lease, later.names),
        (true, Some(5), Some(6))
    );
    assert_eq!(later.echo.len(), 2);
    // A known word or an `echo` line cut short is still refused.
    for (text, want) in [
        (
            format!("{head}state blind=0 elected=1 holding=1 lease=x\n"),
            "peer datagram: `state blind=0 elected=1 holding=1 lease=x`: `lease=x` is not a valid lease",
        ),
        (
            format!("{head}state blind=0 elected=1 holding=1\necho 10.0.0.2:7946\n"),
            "peer datagram: `echo 10.0.0.2:7946`: expected `echo ADDR BOOT STAMP`",
        ),
    ] {
        assert_eq!(Datagram::decode(&with_mac(&text, b"k"), b"k").unwrap_err(), want);
    }
    // What this version sends, a first-version reader takes: its state
    // line begins with the three flags in their order.
    let mut d = later.clone();
    d.names = Some(9);
    let text = String::from_utf8(d.encode(b"k")).unwrap();
    let state = text.lines().find(|l| l.starts_with("state ")).unwrap();
    assert!(
        state.starts_with("state blind=0 elected=1 holding=1 "),
        "{state}"
    );
}

fn free_port() -> SocketAddr {
    UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
}

/// One link's side: its machine published, its events.
fn side(
    me: SocketAddr,
    peers: Vec<SocketAddr>,
    key: &[u8],
) -> (watch::Sender<Leadership>, mpsc::Receiver<Event>) {
    let ttl = Duration::from_secs(2);
    let timing = PeerTiming::for_ttl(ttl);
    let machine = Leadership::with_peers(
        Timing::for_ttl(ttl).unwrap(),
        Peers::new(peers.len(), timing),
    );
    let (state_tx, state) = watch::channel(machine);
    let (tx, rx) = mpsc::channel(64);
    let link = PeerLink::bind(PeerLinkOptions::new(me, peers, key.to_vec())).unwrap();
    link.spawn(timing, state, tx).unwrap();
    (state_tx, rx)
}

#[tokio::test]
async fn two_links_exchange_reports_echoing_each_others_stamps_and_a_stranger_is_ignored() {
    let (a, b, c) = (free_port(), free_port(), free_port());
    let (_a_state, mut a_events) = side(a, vec![b, c], b"fleet");
    let (_b_state, _b_events) = side(b, vec![a], b"fleet");
    // c sends under another key: its datagrams never count.
    let (_c_state, _c_events) = side(c, vec![a], b"another fleet");
    let mut sent = 0;
    let mut from_b_echoing_a = 0;
    let until = tokio::time::Instant::now() + Duration::from_secs(5);
    while from_b_echoing_a < 3 {
        let event = tokio::time::timeout_at(until, a_events.recv())
            .await
            .expect("reports within 5 s")
            .unwrap();
        match event {
            Event::ReportSent { supports } => {
                // No lease yet: etcd-blind, not elected.
                assert!(supports);
                sent += 1;
            }
            Event::PeerReport { peer, report } => {
                assert_eq!(peer, 0, "only b's reports count");
                assert!(report.blind && !report.elected && !report.holding);
                if let Some(echo) = report.echo {
                    assert!(echo <= tokio::time::Instant::now());
                    from_b_echoing_a += 1;
                }
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert!(sent >= 1);
}

fn parse(args: &[&str]) -> Result<RunOptions, String> {
    RunOptions::parse(args).map_err(|e| e.to_string())
}

#[test]
fn the_peer_and_lease_options_are_taken_and_checked() {
    let e = "http://127.0.0.1:2379";
    let o = parse(&[
        "--etcd",
        e,
        "--vip",
        "192.0.2.1/32",
        "--vip-interface",
        "eth0",
        "--peer-listen",
        "10.0.0.1:7946",
        "--peers",
        "10.0.0.2:7946, 10.0.0.3:7946",
        "--peer-key",
        "/etc/key",
        "--lease-ttl",
        "7",
        "--state-dir",
        "/var/lib/a",
    ])
    .unwrap();
    assert_eq!(o.peer_listen, Some("10.0.0.1:7946".parse().unwrap()));
    assert_eq!(o.peers.len(), 2);
    assert_eq!(o.lease_ttl, Some(Duration::from_secs(7)));
    assert_eq!(
        o.state_dir.as_deref(),
        Some(std::path::Path::new("/var/lib/a"))
    );
    let vip = [
        "--etcd",
        e,
        "--vip",
        "192.0.2.1/32",
        "--vip-interface",
        "eth0",
    ];
    let with = |extra: &[&str]| {
        let mut a = vip.to_vec();
        a.extend_from_slice(extra);
        parse(&a).unwrap_err()
    };
    assert_eq!(
        with(&["--lease-ttl", "1"]),
        "--lease-ttl: lease TTL 1s: whole seconds from 2 to 300"
    );
    assert_eq!(
        with(&["--lease-ttl", "301"]),
        "--lease-ttl: lease TTL 301s: whole seconds from 2 to 300"
    );
    assert_eq!(
        with(&["--lease-ttl", "5s"]),
        "--lease-ttl: \"5s\" is not a number of seconds"
    );
    assert_eq!(
        with(&["--peer-listen", "10.0.0.1:1"]),
        "--peer-listen needs --peers"
    );
    assert_eq!(
        with(&["--peers", "10.0.0.2:1"]),
        "--peers needs --peer-listen"
    );
    assert_eq!(with(&["--peer-key", "/k"]), "--peer-key goes with --peers");
    assert_eq!(
        with(&["--peers", "10.0.0.2"]),
        "--peers: \"10.0.0.2\" is not ADDRESS:PORT"
    );
    assert_eq!(
        with(&["--peers", "10.0.0.2:1,10.0.0.2:1"]),
        "--peers: 10.0.0.2:1 twice"
    );
    assert_eq!(
        with(&["--peer-listen", "0.0.0.0:7946", "--peers", "10.0.0.2:1"]),
        "--peer-listen: 0.0.0.0:7946: give this director's own address on the link (its peers know it by it)"
    );
    assert_eq!(
        with(&["--peer-listen", "x"]),
        "--peer-listen: \"x\" is not ADDRESS:PORT"
    );
    assert_eq!(
        with(&["--peer-listen", "10.0.0.1:1", "--peers", "10.0.0.1:1"]),
        "--peers: 10.0.0.1:1 is this director's --peer-listen"
    );
    assert_eq!(
        parse(&[
            "--etcd",
            e,
            "--peer-listen",
            "10.0.0.1:1",
            "--peers",
            "10.0.0.2:1"
        ])
        .unwrap_err(),
        "--peers: no election without --vip or --sync-interface"
    );
    assert_eq!(
        parse(&["a.toml", "--lease-ttl", "5"]).unwrap_err(),
        "--lease-ttl, --peers, --peer-listen and --peer-key go with --etcd"
    );
}

#[test]
fn the_record_of_the_vips_is_replaced_whole_and_a_bad_line_is_named() {
    let dir = std::env::temp_dir().join(format!("fleet-vip-state-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let state = VipState::new(&dir);
    assert!(
        state.load::<Vip>().unwrap().is_empty(),
        "no file: nothing recorded"
    );
    let two: Vec<(String, Vip)> = vec![
        ("eth0".to_string(), "192.0.2.1/32".parse().unwrap()),
        ("eth1".to_string(), "2001:db8::1/128".parse().unwrap()),
    ];
    state.store(&two).unwrap();
    assert_eq!(state.load().unwrap(), two);
    state.store(&two[1..]).unwrap();
    assert_eq!(state.load().unwrap(), two[1..]);
    assert!(
        !dir.join(".vips.new").exists(),
        "the temporary file was renamed"
    );
    std::fs::write(state.path(), "eth0 192.0.2.1/32\neth0 nonsense\n").unwrap();
    let e = state.load::<Vip>().unwrap_err().to_string();
    assert_eq!(
        e,
        format!(
            "{} line 2: `eth0 nonsense` is not `INTERFACE ADDR/PREFIX`",
            state.path().display()
        )
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

//! The kernel's connection-sync daemon driven through the library: a
//! master on director A and a backup on director B (their own namespaces,
//! one link between them), connections made through A showing up in B's
//! connection table, the daemons' listing, and a failover where the client
//! keeps its established connection when the VIP moves to B. The wiring is
//! in the test-support crate's `lab::failover`.

use std::collections::BTreeMap;
use std::net::TcpStream;
use std::time::Duration;

use ipvsnl::connections::Connection;
use ipvsnl::{Client, DaemonRole, SyncDaemon};
use ipvsnl_test_support::lab::failover::{
    echo_server, echoed, entry_for, exchange, ip, poll, try_exchange, FailoverLab, Node, Side, RS,
    SYNC_IF, SYNC_MTU, VIP,
};

/// How long a synced entry may take to reach the backup: the master sends
/// its buffer at the latest every 2 s (IPVS_SYNC_FLUSH_TIME).
const SYNC_WAIT: Duration = Duration::from_secs(12);

/// TCP states of a connection the client has closed.
const CLOSING: &[&str] = &["FIN_WAIT", "CLOSE_WAIT", "TIME_WAIT", "CLOSE", "LAST_ACK"];

/// The default message length is 1500 less the IP and UDP headers for a
/// master whatever the link's MTU, and the MTU (at least 1500) less them
/// for a backup; the sync link's MTU is below 1500.
const V4_DEFAULT_LEN: u16 = 1500 - 20 - 8;
const V6_DEFAULT_LEN: u16 = 1500 - 40 - 8;

/// A connection from the client, with two lines exchanged through the
/// director the client's route points at (A unless moved).
fn open(lab: &FailoverLab, tag: &str) -> (TcpStream, u16) {
    let s = lab.connect();
    let port = s.local_addr().unwrap().port();
    for n in 1..=2 {
        let line = format!("{tag}-{n}");
        assert_eq!(
            exchange(&s, &line),
            echoed(&line),
            "{tag}: the real server's reply"
        );
    }
    (s, port)
}

/// The `Origin` column (`SYNC` or `LOCAL`) of `/proc/net/ip_vs_conn_sync`
/// by client port.
fn origins(node: &Node) -> BTreeMap<u16, String> {
    let text = node.proc_net("ip_vs_conn_sync");
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let port = u16::from_str_radix(f.get(2)?, 16).ok()?;
            Some((port, f.get(8)?.to_string()))
        })
        .collect()
}

/// Waits until B holds an entry for each port in `want` whose state
/// satisfies the predicate; panics with both tables otherwise.
fn wait_on_backup(lab: &FailoverLab, want: &[(u16, StateOk)]) -> BTreeMap<u16, Connection> {
    let got = poll(SYNC_WAIT, || {
        let mut found = BTreeMap::new();
        for (port, ok) in want {
            let c = entry_for(&lab.b, *port).filter(|c| ok(&c.state))?;
            found.insert(*port, c);
        }
        Some(found)
    });
    got.unwrap_or_else(|| {
        panic!(
            "the backup did not get the connections {:?} in {SYNC_WAIT:?}\nA:\n{}B:\n{}",
            want.iter().map(|w| w.0).collect::<Vec<_>>(),
            lab.a.proc_net("ip_vs_conn"),
            lab.b.proc_net("ip_vs_conn")
        )
    })
}

/// A test of a connection's state.
type StateOk = fn(&str) -> bool;

fn established(s: &str) -> bool {
    s == "ESTABLISHED"
}

fn closing(s: &str) -> bool {
    CLOSING.contains(&s)
}

/// Stops `role` on `c`; the listing is then empty and a second stop is
/// refused with ESRCH.
#[track_caller]
fn stop(c: &mut Client, role: DaemonRole) {
    let at = std::panic::Location::caller();
    let t = std::time::Instant::now();
    c.stop_sync_daemon(role)
        .unwrap_or_else(|e| panic!("stopping the {role} (line {}): {e}", at.line()));
    eprintln!("{role} stopped in {:?} (line {})", t.elapsed(), at.line());
    assert_eq!(c.sync_daemons().unwrap(), vec![], "{role} stopped");
    let e = c.stop_sync_daemon(role).unwrap_err();
    assert_eq!(e.errno(), Some(libc::ESRCH), "{e}");
}

/// A lab with its echo server, `master` started on A and `backup` on B.
fn lab_with(
    master: &SyncDaemon,
    backup: &SyncDaemon,
) -> (FailoverLab, ipvsnl_test_support::echo::EchoServer) {
    let mut lab = FailoverLab::new();
    let server = echo_server(&lab.server);
    lab.ca.start_sync_daemon(master).unwrap();
    lab.cb.start_sync_daemon(backup).unwrap();
    (lab, server)
}

/// The default group, port, TTL and message length, listed as the kernel
/// chose them.
#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn syncd_connections_reach_the_backup() {
    let (mut lab, _server) = lab_with(
        &SyncDaemon::new(DaemonRole::Master, SYNC_IF),
        &SyncDaemon::new(DaemonRole::Backup, SYNC_IF),
    );

    let defaults = |role| {
        SyncDaemon::new(role, SYNC_IF)
            .with_group(ip("224.0.0.81"))
            .with_port(8848)
            .with_ttl(1)
    };
    // Not the link's MTU (1400 on both ends).
    for n in [&lab.a, &lab.b] {
        assert_eq!(n.mtu(SYNC_IF), SYNC_MTU);
    }
    assert_eq!(
        lab.ca.sync_daemons().unwrap(),
        vec![defaults(DaemonRole::Master).with_max_len(V4_DEFAULT_LEN)]
    );
    assert_eq!(
        lab.cb.sync_daemons().unwrap(),
        vec![defaults(DaemonRole::Backup).with_max_len(V4_DEFAULT_LEN)]
    );

    let open_ones: Vec<(TcpStream, u16)> = (0..3).map(|i| open(&lab, &format!("c{i}"))).collect();
    let (done, done_port) = open(&lab, "closed");
    done.shutdown(std::net::Shutdown::Write).unwrap();
    let mut rest = Vec::new();
    let _ = std::io::Read::read_to_end(&mut &done, &mut rest);
    assert!(rest.is_empty(), "the server closes after the client");
    drop(done);

    let mut want: Vec<(u16, StateOk)> = open_ones
        .iter()
        .map(|(_, p)| (*p, established as StateOk))
        .collect();
    want.push((done_port, closing));
    let on_b = wait_on_backup(&lab, &want);
    for (port, c) in &on_b {
        assert_eq!(
            (c.dest_addr, c.dest_port),
            (ip(RS), 80),
            "port {port}: {c:?}"
        );
        assert!(c.expires > 0, "{c:?}");
        let on_a = entry_for(&lab.a, *port).expect("A still has the entry");
        assert_eq!((on_a.dest_addr, on_a.dest_port), (c.dest_addr, c.dest_port));
    }
    eprintln!("closed connection on B: {}", on_b[&done_port].state);
    let (a_origin, b_origin) = (origins(&lab.a), origins(&lab.b));
    for port in on_b.keys() {
        assert_eq!(a_origin.get(port).map(String::as_str), Some("LOCAL"));
        assert_eq!(b_origin.get(port).map(String::as_str), Some("SYNC"));
    }

    stop(&mut lab.ca, DaemonRole::Master);
    stop(&mut lab.cb, DaemonRole::Backup);
    drop(open_ones);
}

/// An explicit group, port, TTL, sync id and message length, listed back
/// as the kernel took them, and connections still reach a backup
/// configured alike; then an IPv6 group on the same link, listed with its
/// own default length.
#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn syncd_explicit_group_port_and_sync_id() {
    let set = |role| {
        SyncDaemon::new(role, SYNC_IF)
            .with_sync_id(7)
            .with_group(ip("239.10.0.1"))
            .with_port(7777)
            .with_ttl(2)
            .with_max_len(500)
    };
    let (mut lab, _server) = lab_with(&set(DaemonRole::Master), &set(DaemonRole::Backup));
    // The kernel raises a backup's message length to at least 1024.
    assert_eq!(
        lab.ca.sync_daemons().unwrap(),
        vec![set(DaemonRole::Master)]
    );
    assert_eq!(
        lab.cb.sync_daemons().unwrap(),
        vec![set(DaemonRole::Backup).with_max_len(1024)]
    );
    let e = lab
        .ca
        .start_sync_daemon(&set(DaemonRole::Master))
        .unwrap_err();
    assert!(e.is_already_exists(), "{e}");

    let (s, port) = open(&lab, "explicit");
    let on_b = wait_on_backup(&lab, &[(port, established)]);
    assert_eq!(on_b[&port].dest_addr, ip(RS));
    drop(s);
    stop(&mut lab.ca, DaemonRole::Master);
    stop(&mut lab.cb, DaemonRole::Backup);

    let v6 = SyncDaemon::new(DaemonRole::Master, SYNC_IF)
        .with_group(ip("ff02::81"))
        .with_port(8850);
    lab.ca.start_sync_daemon(&v6).unwrap();
    assert_eq!(
        lab.ca.sync_daemons().unwrap(),
        vec![v6.with_ttl(1).with_max_len(V6_DEFAULT_LEN)]
    );
    stop(&mut lab.ca, DaemonRole::Master);
}

/// Direct routing: the client's established connection goes on through B
/// once the VIP has moved there and A is gone from the client's link, since
/// B has the connection's entry from A's sync daemon; one made after A's
/// daemon stopped is reset by B.
#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn syncd_failover_keeps_an_established_connection() {
    let (mut lab, _server) = lab_with(
        &SyncDaemon::new(DaemonRole::Master, SYNC_IF).with_sync_id(3),
        &SyncDaemon::new(DaemonRole::Backup, SYNC_IF).with_sync_id(3),
    );

    let (s, port) = open(&lab, "before");
    let synced = wait_on_backup(&lab, &[(port, established)]);
    assert_eq!(synced[&port].dest_addr, ip(RS));
    // A's daemon stops first: a connection made through A from now on
    // never reaches B, and does not survive the move.
    stop(&mut lab.ca, DaemonRole::Master);
    let (unsynced, unsynced_port) = open(&lab, "unsynced");
    assert!(entry_for(&lab.a, unsynced_port).is_some());
    assert!(entry_for(&lab.b, unsynced_port).is_none());

    // A goes: the VIP leaves it and its client link goes down; B takes the
    // VIP and the client's route follows it.
    lab.a.ip(&format!("addr del {VIP}/32 dev up0"));
    lab.a.ip("link set up0 down");
    lab.b.ip(&format!("addr add {VIP}/32 dev up0"));
    lab.client_via(&Side::B);

    for n in 1..=3 {
        let line = format!("after-{n}");
        assert_eq!(exchange(&s, &line), echoed(&line), "reply through B");
    }
    // B has no entry for this one and does not schedule a mid-stream
    // segment: the VIP is local there, nothing listens on it, B resets it.
    let got = try_exchange(&unsynced, "lost");
    assert_eq!(
        got.as_ref().map_err(std::io::Error::kind).err(),
        Some(std::io::ErrorKind::ConnectionReset),
        "the connection B has no entry for: {got:?}"
    );
    let on_b = entry_for(&lab.b, port).expect("B keeps the entry");
    assert_eq!(on_b.state, "ESTABLISHED", "{on_b:?}");
    assert_eq!(on_b.dest_addr, ip(RS));

    // A new connection now is scheduled by B itself.
    let (fresh, fresh_port) = open(&lab, "new-on-b");
    let origin = origins(&lab.b);
    assert_eq!(origin.get(&fresh_port).map(String::as_str), Some("LOCAL"));
    assert_eq!(origin.get(&port).map(String::as_str), Some("SYNC"));
    drop((s, fresh, unsynced));

    stop(&mut lab.cb, DaemonRole::Backup);
    assert!(
        entry_for(&lab.b, port).is_some(),
        "entries outlive the daemon"
    );
}

//! The global operations against the real kernel: zero, flush, timeouts,
//! info, sync daemons, namespace-bound clients, unprivileged callers, and
//! connection counts and counters under real traffic.

use crate::common;

use std::io::{Read, Write};
use std::net::{IpAddr, TcpListener, TcpStream};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::*;
use ipvsnl::{
    AddressFamily, Client, DaemonRole, Destination, Forward, Service, ServiceKey, SyncDaemon,
    Timeouts,
};

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn info_timeouts_flush() {
    fresh_netns();
    let mut c = Client::new().unwrap();
    let info = c.info().unwrap();
    assert_eq!(info.version, 0x010201);
    assert_eq!(info.version_string(), "1.2.1");
    let proc_head = read_proc_net("ip_vs");
    assert!(
        proc_head.starts_with(&format!(
            "IP Virtual Server version 1.2.1 (size={})",
            info.conn_tab_size
        )),
        "{proc_head}"
    );
    assert_eq!(c.timeouts().unwrap(), Timeouts::new(900, 120, 300));
    c.set_timeouts(&Timeouts::new(100, 0, 50)).unwrap();
    assert_eq!(c.timeouts().unwrap(), Timeouts::new(100, 120, 50));
    c.set_timeouts(&Timeouts::new(0, 0, 0)).unwrap();
    assert_eq!(c.timeouts().unwrap(), Timeouts::new(100, 120, 50));
    c.set_timeouts(&Timeouts::new(0, 7, 0)).unwrap();
    assert_eq!(c.timeouts().unwrap(), Timeouts::new(100, 7, 50));
    assert_eq!(
        ipvsadm_ok(&["-L", "--timeout"]),
        "Timeout (tcp tcpfin udp): 100 7 50\n"
    );
    // The bound is the kernel's (INT_MAX / HZ seconds): it answers EINVAL
    // and changes nothing. Above INT_MAX (negative as the kernel's int)
    // the library refuses first, whatever the kernel's HZ.
    let e = c
        .set_timeouts(&Timeouts::new(10_000_000, 0, 0))
        .unwrap_err();
    assert_eq!(e.errno(), Some(libc::EINVAL), "{e}");
    let e = c.set_timeouts(&Timeouts::new(u32::MAX, 0, 0)).unwrap_err();
    assert!(e.is_invalid_input(), "{e}");
    assert_eq!(c.timeouts().unwrap(), Timeouts::new(100, 7, 50));

    for i in 0..20u8 {
        let key = ServiceKey::tcp(IpAddr::from([10, 5, 0, i]), 80);
        c.add_service(&Service::new(key)).unwrap();
        c.add_destination(&key, &Destination::new(ip("10.6.0.1"), 80))
            .unwrap();
    }
    c.add_service(&Service::new(ServiceKey::fwmark(1, AddressFamily::Inet6)))
        .unwrap();
    assert_eq!(c.services().unwrap().len(), 21);
    c.flush().unwrap();
    assert!(c.services().unwrap().is_empty());
    c.flush().unwrap(); // flushing nothing is fine
    assert_eq!(ipvsadm_ok(&["-S", "-n"]), "");
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn sync_daemons_master_and_backup() {
    fresh_netns();
    let mut c = Client::new().unwrap();
    assert!(c.sync_daemons().unwrap().is_empty());
    let master = SyncDaemon::new(DaemonRole::Master, "lo")
        .with_sync_id(9)
        .with_max_len(1400)
        .with_group(ip("224.0.0.100"))
        .with_port(9999)
        .with_ttl(3);
    c.start_sync_daemon(&master).unwrap();
    let e = c.start_sync_daemon(&master).unwrap_err();
    assert!(e.is_already_exists(), "{e}");
    let backup = SyncDaemon::new(DaemonRole::Backup, "lo").with_sync_id(200);
    c.start_sync_daemon(&backup).unwrap();
    let listed = c.sync_daemons().unwrap();
    assert_eq!(listed.len(), 2, "{listed:?}");
    assert_eq!(listed[0], master, "master listed with what was set");
    // The backup was started with the kernel's defaults; it lists them.
    assert_eq!(listed[1].role, DaemonRole::Backup);
    assert_eq!(listed[1].interface, "lo");
    assert_eq!(listed[1].sync_id, 200);
    assert_eq!(listed[1].group, Some(ip("224.0.0.81")));
    assert_eq!(listed[1].port, Some(8848));
    assert_eq!(listed[1].ttl, Some(1));
    assert!(listed[1].max_len.is_some_and(|l| l > 0));
    let text = ipvsadm_ok(&["-L", "--daemon"]);
    assert!(
        text.starts_with(
            "master sync daemon (mcast=lo, syncid=9, maxlen=1400, group=224.0.0.100, port=9999, ttl=3)\n"
        ),
        "{text}"
    );
    c.stop_sync_daemon(DaemonRole::Master).unwrap();
    let e = c.stop_sync_daemon(DaemonRole::Master).unwrap_err();
    assert_eq!(e.errno(), Some(libc::ESRCH), "{e}");
    assert!(e.to_string().contains("no sync daemon"), "{e}");
    let listed = c.sync_daemons().unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].role, DaemonRole::Backup);
    c.stop_sync_daemon(DaemonRole::Backup).unwrap();
    assert!(c.sync_daemons().unwrap().is_empty());

    // An IPv6 group on lo in a fresh namespace: no route to it (the
    // kernel's answer; a backup that joined one hung on stop on 6.1).
    let v6 = SyncDaemon::new(DaemonRole::Master, "lo")
        .with_group(ip("ff02::81"))
        .with_port(8849);
    let e = c.start_sync_daemon(&v6).unwrap_err();
    assert_eq!(e.errno(), Some(libc::ENETUNREACH), "{e}");
    assert!(
        e.to_string().starts_with("start sync daemon master on lo"),
        "{e}"
    );
    assert!(c.sync_daemons().unwrap().is_empty());
    let e = c
        .start_sync_daemon(&SyncDaemon::new(DaemonRole::Master, "nosuchdev0"))
        .unwrap_err();
    assert_eq!(e.errno(), Some(libc::ENODEV), "{e}");
    let e = c
        .start_sync_daemon(&SyncDaemon::new(DaemonRole::Master, "lo").with_group(ip("10.0.0.1")))
        .unwrap_err();
    assert!(e.is_invalid_input(), "{e}");
}

/// A thread parked in a namespace of its own; its namespace file is a path
/// any thread can open.
struct NsThread {
    path: std::path::PathBuf,
    stop: mpsc::Sender<()>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl NsThread {
    fn spawn() -> Self {
        let (tx_path, rx_path) = mpsc::channel();
        let (stop, rx_stop) = mpsc::channel::<()>();
        let handle = std::thread::spawn(move || {
            fresh_netns();
            // SAFETY: gettid has no preconditions.
            let tid = unsafe { libc::gettid() };
            let path = format!("/proc/{}/task/{tid}/ns/net", std::process::id());
            tx_path.send(path).unwrap();
            let _ = rx_stop.recv();
        });
        let path = rx_path.recv().unwrap().into();
        NsThread {
            path,
            stop,
            handle: Some(handle),
        }
    }
}

impl Drop for NsThread {
    fn drop(&mut self) {
        let _ = self.stop.send(());
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

fn my_netns() -> std::path::PathBuf {
    std::fs::read_link("/proc/thread-self/ns/net").unwrap()
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn client_bound_to_another_namespace_by_path() {
    fresh_netns();
    let before = my_netns();
    let other = NsThread::spawn();
    let mut there = Client::in_namespace(&other.path).unwrap();
    assert_eq!(my_netns(), before, "the calling thread did not move");
    let mut here = Client::new().unwrap();
    let key = ServiceKey::tcp(ip("10.7.0.1"), 80);
    there.add_service(&Service::new(key)).unwrap();
    there
        .add_destination(&key, &Destination::new(ip("10.7.0.2"), 80))
        .unwrap();
    assert_eq!(my_netns(), before);
    assert_eq!(there.services().unwrap().len(), 1);
    assert!(here.services().unwrap().is_empty(), "not in our namespace");
    assert_eq!(ipvsadm_ok(&["-S", "-n"]), "");
    // And a namespace created by `ip netns add` (a bind mount under /run/netns).
    let name = format!("ipvsnl-test-{}", std::process::id());
    assert_ok("ip netns add", run("ip", &["netns", "add", &name]));
    {
        let path = format!("/run/netns/{name}");
        let mut named = Client::in_namespace(&path).unwrap();
        named.add_service(&Service::new(key)).unwrap();
        assert_eq!(named.services().unwrap().len(), 1);
        assert_eq!(
            stable_listing("ip netns exec ipvsadm -S -n", || run(
                "ip",
                &["netns", "exec", &name, "ipvsadm", "-S", "-n"]
            )),
            "-A -t 10.7.0.1:80 -s wlc\n"
        );
        drop(named);
        let _ = run("ip", &["netns", "del", &name]);
    }
    // A path that is not a namespace.
    let e = Client::in_namespace("/nonexistent/ns").unwrap_err();
    assert!(e.to_string().contains("/nonexistent/ns"), "{e}");
    assert_eq!(my_netns(), before);
}

/// Re-executed as uid 65534 by `unprivileged_caller_gets_eperm`.
#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn child_as_nobody() {
    if std::env::var_os("IPVSNL_NOBODY_CHILD").is_none() {
        return;
    }
    // SAFETY: getuid has no preconditions.
    assert_eq!(unsafe { libc::getuid() }, NOBODY);
    let mut c = Client::new().expect("a socket and the family lookup need no privilege");
    let e = c.services().unwrap_err();
    assert!(e.is_permission_denied(), "{e}");
    assert!(e.to_string().contains("CAP_NET_ADMIN"), "{e}");
    let e = c
        .add_service(&Service::new(ServiceKey::tcp(ip("10.0.0.1"), 80)))
        .unwrap_err();
    assert!(e.is_permission_denied(), "{e}");
    let e = c.info().unwrap_err();
    assert_eq!(e.errno(), Some(libc::EPERM), "{e}");
    println!("NOBODY-CHILD-OK");
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn unprivileged_caller_gets_eperm() {
    fresh_netns();
    // The test binary is staged under /payload; make a copy nobody can run.
    let exe = std::env::current_exe().unwrap();
    let copy = std::env::temp_dir().join(format!("ipvsnl-nobody-{}", std::process::id()));
    std::fs::copy(&exe, &copy).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = command_as_nobody(copy.to_str().unwrap())
        .args([
            "--ignored",
            "--exact",
            &test_name(module_path!(), "child_as_nobody"),
            "--nocapture",
        ])
        .env("IPVSNL_NOBODY_CHILD", "1")
        .current_dir("/")
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&copy);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("NOBODY-CHILD-OK"),
        "child failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    // Root in the same namespace still can.
    Client::new().unwrap().services().unwrap();
}

fn wait_for<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Real connections through a local virtual service: connection counts,
/// 64-bit counters, zero of one service and of everything.
#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn traffic_counts_stats_and_zero() {
    fresh_netns();
    let mut c = Client::new().unwrap();
    // The virtual address is local (on lo); the real server is a listener
    // on this host, reached by local forwarding.
    assert_ok(
        "ip addr add",
        run("ip", &["addr", "add", "10.8.0.1/32", "dev", "lo"]),
    );
    let listener = TcpListener::bind("0.0.0.0:8080").unwrap();
    let key = ServiceKey::tcp(ip("10.8.0.1"), 8080);
    let idle = ServiceKey::tcp(ip("10.8.0.2"), 80);
    c.add_service(&Service::new(key)).unwrap();
    c.add_service(&Service::new(idle)).unwrap();
    c.add_destination(
        &key,
        &Destination::new(ip("10.8.0.1"), 8080).with_forward(Forward::Local),
    )
    .unwrap();
    let server = std::thread::spawn(move || {
        for _ in 0..3 {
            let (mut s, _) = listener.accept().unwrap();
            let mut buf = [0u8; 5];
            s.read_exact(&mut buf).unwrap();
            s.write_all(b"world").unwrap();
        }
        listener
    });
    let mut open = Vec::new();
    for _ in 0..3 {
        let mut s = TcpStream::connect("10.8.0.1:8080").unwrap();
        s.write_all(b"hello").unwrap();
        let mut buf = [0u8; 5];
        s.read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"world");
        open.push(s);
    }
    let _listener = server.join().unwrap();
    let d = &c.destinations(&key).unwrap()[0];
    assert_eq!(d.active_conns + d.inactive_conns, 3, "{d:?}");
    let s = wait_for("service counters", || {
        let s = c.service(&key).unwrap().stats;
        (s.conns == 3 && s.in_packets > 0).then_some(s)
    });
    assert!(s.in_bytes >= s.in_packets * 40, "{s:?}");
    let dstats = c.destinations(&key).unwrap()[0].stats;
    assert_eq!(dstats.conns, 3);
    assert!(c.service(&idle).unwrap().stats.conns == 0);
    // The namespace's totals: as /proc/net/ip_vs_stats of this thread says,
    // and the same when read by a client used from a thread elsewhere.
    let totals = wait_for("totals", || {
        let t = c.totals().unwrap();
        (t.conns == 3 && t.in_packets >= s.in_packets).then_some(t)
    });
    assert!(totals.in_packets >= s.in_packets, "{totals:?} {s:?}");
    let proc_text = read_proc_net("ip_vs_stats");
    let first_row: Vec<u64> = proc_text
        .lines()
        .nth(2)
        .unwrap()
        .split_whitespace()
        .map(|w| u64::from_str_radix(w, 16).unwrap())
        .collect();
    assert_eq!(first_row[0], totals.conns, "{proc_text}");
    let here_path = format!(
        "/proc/{}/task/{}/ns/net",
        std::process::id(),
        // SAFETY: gettid has no preconditions.
        unsafe { libc::gettid() }
    );
    let bound = Client::in_namespace(&here_path).unwrap();
    let elsewhere = std::thread::spawn(move || {
        fresh_netns(); // this thread is now in an empty namespace
        let from_bound = bound.totals().unwrap();
        let own = Client::new().unwrap().totals().unwrap();
        (from_bound, own)
    })
    .join()
    .unwrap();
    assert_eq!(elsewhere.0.conns, 3, "bound client reads its namespace");
    assert_eq!(elsewhere.1.conns, 0, "a fresh namespace has no traffic");
    // Zero the idle service only: the busy one keeps its counters.
    c.zero(Some(&idle)).unwrap();
    assert_eq!(c.service(&key).unwrap().stats.conns, 3);
    c.zero(Some(&key)).unwrap();
    assert_eq!(c.service(&key).unwrap().stats.conns, 0);
    assert_eq!(c.destinations(&key).unwrap()[0].stats.conns, 0);
    drop(open);
    // Zero everything.
    let mut s = TcpStream::connect("10.8.0.1:8080");
    if let Ok(s) = s.as_mut() {
        let _ = s.write_all(b"x");
    }
    wait_for("new connection counted", || {
        (c.service(&key).unwrap().stats.conns >= 1).then_some(())
    });
    c.zero(None).unwrap();
    assert_eq!(c.service(&key).unwrap().stats.conns, 0);
    assert_eq!(c.totals().unwrap().conns, 0, "zero resets the totals");
}

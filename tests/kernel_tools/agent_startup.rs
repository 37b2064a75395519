//! ipvs-agent's start against the kernel: a server whose check fails by
//! timeout (an HTTP server that accepts and never answers), its timeout
//! the file's longest, is never given weight while the agent is started
//! fresh and then killed and started again 20 times over its table; its
//! weight is sampled from the kernel's `/proc/net/ip_vs` (of the test's
//! namespace) every few milliseconds across every start, and no restart
//! sends a request.

use crate::agent_support::*;
use crate::common::*;

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use ipvsnl::Client;

const METRICS_PORT: u16 = 9102;

/// How many times the agent is killed and started again.
const RESTARTS: usize = 20;

/// How long the weight is still sampled once the agent is ready: past
/// the silent server's first timeout (1 s) and its next check's.
const AFTER_READY: Duration = Duration::from_millis(2500);

/// What the samples of one start saw.
#[derive(Debug, Default)]
struct Seen {
    samples: usize,
    /// Samples with the silent server at a weight above 0.
    above: usize,
    /// Samples without it (or without its service) in the kernel.
    absent: usize,
}

/// `ADDRESS:PORT` as `/proc/net/ip_vs` prints an IPv4 one.
fn proc_hex(a: SocketAddr) -> String {
    match a.ip() {
        IpAddr::V4(v4) => format!("{:08X}:{:04X}", u32::from(v4), a.port()),
        IpAddr::V6(_) => unreachable!("the test's addresses are IPv4"),
    }
}

/// The weight of `server` in the TCP service `vip`, as this thread's
/// network namespace's `/proc/net/ip_vs` shows it (`None`: not there).
fn proc_weight(vip: SocketAddr, server: SocketAddr) -> Option<u32> {
    let text = std::fs::read_to_string("/proc/thread-self/net/ip_vs").expect("/proc/net/ip_vs");
    weight_in(&text, vip, server)
}

/// The weight of `server` in the TCP service `vip` in `text`, the
/// kernel's `/proc/net/ip_vs`.
fn weight_in(text: &str, vip: SocketAddr, server: SocketAddr) -> Option<u32> {
    let (service, dest) = (format!("TCP  {} ", proc_hex(vip)), proc_hex(server));
    text.lines()
        .skip_while(|l| !l.starts_with(&service))
        .skip(1)
        .take_while(|l| l.trim_start().starts_with("->"))
        .find_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.get(1) == Some(&dest.as_str())).then(|| f[3].parse().expect("a weight"))
        })
}

#[test]
fn proc_net_ip_vs_is_read_as_the_kernel_prints_it() {
    let text = "IP Virtual Server version 1.2.1 (size=4096)\n\
                Prot LocalAddress:Port Scheduler Flags\n  \
                -> RemoteAddress:Port Forward Weight ActiveConn InActConn\n\
                TCP  0A280001:0050 rr \n  \
                -> 0A1E0002:1F91      Masq    7      0          0         \n\
                TCP  0A280002:0050 rr \n  \
                -> 0A1E0001:1F91      Masq    1      0          0         \n  \
                -> 0A1E0002:1F91      Masq    0      3          1         \n";
    let at = |s: &str| -> SocketAddr { s.parse().unwrap() };
    let vip = at("10.40.0.2:80");
    assert_eq!(weight_in(text, vip, at("10.30.0.1:8081")), Some(1));
    assert_eq!(weight_in(text, vip, at("10.30.0.2:8081")), Some(0));
    assert_eq!(
        weight_in(text, at("10.40.0.1:80"), at("10.30.0.2:8081")),
        Some(7)
    );
    assert_eq!(weight_in(text, vip, at("10.30.0.3:8081")), None);
    assert_eq!(
        weight_in(text, at("10.40.0.3:80"), at("10.30.0.1:8081")),
        None
    );
}

/// Samples the silent server's weight every 2 ms while `agent` starts,
/// until it has been ready for [`AFTER_READY`] (its readiness asked every
/// 50 ms).
fn sample_start(agent: &mut Agent, vip: SocketAddr, silent: SocketAddr) -> Seen {
    let mut seen = Seen::default();
    let started = Instant::now();
    let mut ready_at: Option<Instant> = None;
    let mut asked = Instant::now() - Duration::from_secs(1);
    loop {
        match proc_weight(vip, silent) {
            Some(0) => {}
            Some(_) => seen.above += 1,
            None => seen.absent += 1,
        }
        seen.samples += 1;
        if ready_at.is_none() && asked.elapsed() >= Duration::from_millis(50) {
            asked = Instant::now();
            agent.assert_running();
            let status = ipvsnl_test_support::client::try_http_get(
                &format!("127.0.0.1:{METRICS_PORT}"),
                "/ready",
            );
            if matches!(status, Ok((200, _))) {
                ready_at = Some(Instant::now());
            }
        }
        if ready_at.is_some_and(|t| t.elapsed() >= AFTER_READY) {
            return seen;
        }
        assert!(
            started.elapsed() < PATIENCE,
            "not ready in {PATIENCE:?}; log:\n{}",
            agent.log()
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn agent_start_never_gives_weight_to_a_server_whose_check_times_out() {
    fresh_netns();
    // Every check's timeout 1 s: the silent server's is the file's
    // longest (the first sync once ran just before its first result and
    // gave it its weight).
    let check = r#"{ kind = "http", interval = "2s", timeout = "1s", fall = 2, rise = 2 }"#;
    let (rs, service) = http_and_silent(check);
    let services = [service];
    let key = services[0].key();
    let vip: SocketAddr = "10.40.0.2:80".parse().unwrap();
    let silent = SocketAddr::new(rs[1].addr(), 8081);
    add_vips(&services);
    let dir = Scratch::new("startup");
    let file = dir.path("agent.toml");
    std::fs::write(&file, config_text(&services)).unwrap();
    let mut c = Client::new().unwrap();

    // A fresh start: the service waits for the silent server's first
    // result (its timeout, within start_wait) and goes in with it at 0.
    let mut agent = Agent::start(&file, METRICS_PORT, dir.path("agent-0.log"));
    let fresh = sample_start(&mut agent, vip, silent);
    assert_eq!(kernel_weight(&mut c, &key, silent), Some(0));
    assert_eq!(
        proc_weight(vip, silent),
        Some(0),
        "/proc/net/ip_vs as netlink"
    );

    let mut all = Vec::new();
    let mut requests = Vec::new();
    for i in 1..=RESTARTS {
        agent.kill();
        agent = Agent::start(&file, METRICS_PORT, dir.path(&format!("agent-{i}.log")));
        let seen = sample_start(&mut agent, vip, silent);
        requests.push(agent.requests_sent());
        all.push(seen);
    }
    let samples: usize = all.iter().map(|s| s.samples).sum();
    let above: usize = all.iter().map(|s| s.above).sum();
    let absent: usize = all.iter().map(|s| s.absent).sum();
    eprintln!(
        "agent start: fresh start {} samples, {} at weight > 0; {RESTARTS} restarts: \
         {samples} samples of {silent}'s weight, {above} at weight > 0, {absent} absent; \
         requests sent by each restart: {requests:?}",
        fresh.samples, fresh.above
    );
    assert_eq!(fresh.above, 0, "fresh start: {fresh:?}");
    for (i, seen) in all.iter().enumerate() {
        assert_eq!(
            (seen.above, seen.absent),
            (0, 0),
            "restart {}: {seen:?}",
            i + 1
        );
    }
    assert!(
        requests.iter().all(|r| *r == 0.0),
        "requests sent at restarts: {requests:?}; last log:\n{}",
        agent.log()
    );
}

//! How fast ipvs-agent reacts to a real server's death and recovery, in
//! the VM (`scripts/measure/agent-reaction`): three TCP echo servers, each in a
//! namespace of its own behind a NAT service, checked by TCP every 200 ms
//! (timeout 200 ms, fall 2, rise 2). Each round stops one server's
//! listener (connections refused from then on), times until the kernel
//! holds it at weight 0, serves it again and times until its weight is
//! back; a pause that varies from round to round puts the kill at another
//! point of the check schedule each time.
//!
//! PROGRAM is ipvs-agent, or keepalived (Debian's, `IPVSNL_VM_PEERS=1`)
//! run as a checker only (`-C`) on the same service: `delay_loop 0.2`,
//! `TCP_CHECK { connect_timeout 0.2 retry 1 delay_before_retry 0.2 }`
//! (a failed connect and one failed retry: the agent's fall 2) and
//! `inhibit_on_failure` (weight 0, as the agent drains); keepalived has no
//! rise, a server is back after one success.
//!
//! Prints one line a measurement, `REACTION|LABEL|out|MS` and
//! `REACTION|LABEL|back|MS` (guest time: under `-icount` that is counted
//! instructions), which the script sums up.
//!
//! `agent-reaction PROGRAM LABEL [ROUNDS]` (ROUNDS defaults to 20).

use std::fmt::Write as _;
use std::net::{IpAddr, SocketAddr};
use std::process::{Command, ExitCode, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use ipvsnl::{Client, ServiceKey};
use ipvsnl_bench::daemon::stop;
use ipvsnl_test_support::commands::sh;
use ipvsnl_test_support::lab::backends::{Backend, Serve};
use ipvsnl_test_support::netns;

const PORT: u16 = 8080;
const VIP: &str = "10.40.0.1";
/// The longest a reaction may take before the run is called failed.
const LIMIT: Duration = Duration::from_secs(30);

fn weight(c: &mut Client, key: &ServiceKey, server: SocketAddr) -> Option<u32> {
    let services = c.table().ok()?;
    services
        .iter()
        .find(|e| e.service.key == *key)?
        .destinations
        .iter()
        .find(|d| d.destination.addr == server.ip() && d.destination.port == server.port())
        .map(|d| d.destination.weight)
}

/// Polls every 2 ms until `server` has `want`; the time it took.
fn until_weight(c: &mut Client, key: &ServiceKey, server: SocketAddr, want: u32) -> Duration {
    let t = Instant::now();
    while weight(c, key, server) != Some(want) {
        assert!(
            t.elapsed() < LIMIT,
            "{server} not at weight {want} in {LIMIT:?}"
        );
        thread::sleep(Duration::from_millis(2));
    }
    t.elapsed()
}

/// keepalived's configuration of the same service and checks.
fn keepalived_config(servers: &[Backend]) -> String {
    let mut out = format!(
        "global_defs {{ router_id reaction }}\nvirtual_server {VIP} 80 {{\n  delay_loop 0.2\n  \
         lb_algo rr\n  lb_kind NAT\n  protocol TCP\n"
    );
    for s in servers {
        let _ = writeln!(
            out,
            "  real_server {} {PORT} {{\n    weight 1\n    inhibit_on_failure\n    \
             TCP_CHECK {{\n      connect_timeout 0.2\n      retry 1\n      \
             delay_before_retry 0.2\n    }}\n  }}",
            s.addr()
        );
    }
    out.push_str("}\n");
    out
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let (Some(agent), Some(label)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: agent-reaction AGENT LABEL [ROUNDS]");
        return ExitCode::from(2);
    };
    let rounds: u32 = args.get(3).and_then(|r| r.parse().ok()).unwrap_or(20);

    netns::fresh_netns();
    let servers: Vec<Backend> = (1..=3).map(Backend::start).collect();
    for s in &servers {
        s.serve(PORT, Serve::Echo);
    }
    sh("ip", &["addr", "add", &format!("{VIP}/32"), "dev", "lo"]);
    let keepalived = agent.ends_with("keepalived");
    let mut config = format!(
        "[agent]\nresync = \"10m\"\n\n[[service]]\nprotocol = \"tcp\"\naddress = \"{VIP}\"\n\
         port = 80\nscheduler = \"rr\"\ncheck = {{ kind = \"tcp\", interval = \"200ms\", \
         timeout = \"200ms\", fall = 2, rise = 2 }}\n"
    );
    for s in &servers {
        let _ = write!(
            config,
            "\n[[service.server]]\naddress = \"{}\"\nport = {PORT}\nweight = 1\n",
            s.addr()
        );
    }
    let dir = std::env::temp_dir();
    let mut command = Command::new(agent);
    if keepalived {
        let file = dir.join("agent-reaction-keepalived.conf");
        std::fs::write(&file, keepalived_config(&servers)).expect("write the configuration");
        command.args(["-n", "-C", "-f"]).arg(&file);
        command.arg("-p").arg(dir.join("reaction-k.pid"));
        command.arg("-c").arg(dir.join("reaction-c.pid"));
    } else {
        let file = dir.join("agent-reaction.toml");
        std::fs::write(&file, config).expect("write the configuration");
        command.arg("run").arg(&file).arg("--no-http");
    }
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the agent");

    let key = ServiceKey::tcp(VIP.parse::<IpAddr>().expect("VIP"), 80);
    let mut c = Client::new().expect("an IPVS client");
    for s in &servers {
        until_weight(&mut c, &key, SocketAddr::new(s.addr(), PORT), 1);
    }
    for round in 0..rounds {
        // A pause of 0 to 190 ms: the kill falls at another point of the
        // 200 ms schedule each round.
        thread::sleep(Duration::from_millis(500 + u64::from(round * 37 % 200)));
        let victim = &servers[round as usize % servers.len()];
        let at = SocketAddr::new(victim.addr(), PORT);
        victim.stop(PORT);
        let out = until_weight(&mut c, &key, at, 0);
        println!("REACTION|{label}|out|{:.1}", out.as_secs_f64() * 1e3);
        victim.serve(PORT, Serve::Echo);
        let back = until_weight(&mut c, &key, at, 1);
        println!("REACTION|{label}|back|{:.1}", back.as_secs_f64() * 1e3);
    }
    stop(&mut child);
    ExitCode::SUCCESS
}

//! The agent's CPU per TCP check on the host, for a profiler: the daemon
//! loop ([`Agent`]) with the real prober ([`NetProber`]) on an emulated
//! kernel (no root, no module), SERVICES TCP services each over the same
//! real servers (the PORTS given: listeners on 127.0.0.1 that accept and
//! close, of another process so that a profiler counts the agent only),
//! every server checked every second (timeout 1 s), for SECONDS seconds;
//! then prints the checks done and the failures among them.
//!
//! A profile's instructions per check are the difference of two runs of
//! different lengths over the difference of their checks (the start, the
//! configuration and the first sync, cancels out):
//!
//! ```sh
//! python3 -c '...accept and close on 4 ports...' &
//! cargo build --release -p ipvs-agent --example check_cost
//! valgrind --tool=callgrind target/release/examples/check_cost 100 5 PORT1 PORT2 PORT3 PORT4
//! ```
//!
//! `check_cost [--http] SERVICES SECONDS PORT...`: with `--http` every
//! check is an HTTP GET of `/` expecting status 200 (the listeners must
//! answer it).

use std::fmt::Write as _;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::time::Duration;

use ipvs_agent::config::parse_str;
use ipvs_agent::daemon::{Agent, AgentOptions, Connector};
use ipvs_agent::probe::NetProber;
use ipvsnl::emulator::Kernel;
use ipvsnl::AsyncClient;

fn main() {
    let mut args: Vec<String> = std::env::args().collect();
    let http = args.get(1).is_some_and(|a| a == "--http");
    if http {
        args.remove(1);
    }
    let check = if http {
        r#"kind = "http", path = "/", status = 200"#
    } else {
        r#"kind = "tcp""#
    };
    let (Some(services), Some(seconds)) = (
        args.get(1).and_then(|a| a.parse::<u32>().ok()),
        args.get(2).and_then(|a| a.parse::<u64>().ok()),
    ) else {
        eprintln!("usage: check_cost [--http] SERVICES SECONDS PORT...");
        std::process::exit(2);
    };
    let ports: Vec<u16> = args[3..].iter().filter_map(|p| p.parse().ok()).collect();
    let mut text = String::from("[agent]\nresync = \"10m\"\n");
    for i in 0..services {
        let vip = IpAddr::V4(Ipv4Addr::new(10, 41, (i / 250) as u8, (i % 250 + 1) as u8));
        let _ = write!(
            text,
            "\n[[service]]\nprotocol = \"tcp\"\naddress = \"{vip}\"\nport = 80\nscheduler = \"rr\"\n\
             check = {{ {check}, interval = \"1s\", timeout = \"1s\" }}\n"
        );
        for p in &ports {
            let _ = write!(
                text,
                "[[service.server]]\naddress = \"127.0.0.1\"\nport = {p}\n"
            );
        }
    }
    let config = parse_str("check-cost.toml", &text).unwrap_or_else(|e| panic!("{e}"));
    let kernel = Kernel::new();
    let connector = Connector::new("an emulated kernel", move || {
        let kernel = kernel.clone();
        Box::pin(async move { Ok(AsyncClient::emulated(&kernel)) })
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let metrics = runtime.block_on(async move {
        let agent = Agent::new(
            config,
            connector,
            Arc::new(NetProber::new()),
            AgentOptions::default(),
        );
        let handle = agent.handle();
        let task = tokio::spawn(agent.run());
        tokio::time::sleep(Duration::from_secs(seconds)).await;
        let metrics = handle.metrics_text();
        handle.stop();
        let _ = task.await;
        metrics
    });
    let count = format!(
        "ipvs_agent_check_duration_seconds_count{{kind=\"{}\"}} ",
        if http { "http" } else { "tcp" }
    );
    let checks = metrics
        .lines()
        .find_map(|l| l.strip_prefix(count.as_str()))
        .unwrap_or("0");
    // Every failure, whatever its server and reason (none, against
    // listeners that answer).
    let failures: u64 = metrics
        .lines()
        .filter(|l| l.starts_with("ipvs_agent_check_failures_total{"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum();
    println!("checks {checks} failures {failures}");
}

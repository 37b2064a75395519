//! What one health check costs a director daemon, in the VM
//! (`scripts/measure/agent-reaction --cost`): SERVICES TCP services (default 1,000),
//! each over the same four real servers (four namespaces, one listener
//! each that accepts and closes), every server checked by TCP every second
//! (timeout 1 s). Once the table is whole and the checks have run for a
//! few seconds, the daemon's CPU time (user + system of its processes,
//! from /proc/PID/stat, the checker child of keepalived included) and the
//! connections the real servers accepted (one per check, whichever daemon)
//! are read twice, WINDOW seconds apart.
//!
//! Under `-icount shift=0,sleep=off` a guest nanosecond is one
//! instruction, so CPU time / checks is instructions per check.
//!
//! PROGRAM is ipvs-agent or keepalived (checker only, `delay_loop 1`,
//! `TCP_CHECK { connect_timeout 1 }`). KIND `http` checks by HTTP instead:
//! the servers answer every GET `200 OK` with a short body (in their accept
//! loop: no thread a request), the agent's check is `kind = "http"`,
//! `path = "/"`, `status = 200`, keepalived's `HTTP_GET { url { path /
//! status_code 200 } connect_timeout 1 }`. Prints
//! `CHECKCOST|LABEL|CHECKS|CPU_NS|NS_PER_CHECK|USER_NS_PER_CHECK|SYSTEM_NS_PER_CHECK`.
//!
//! `agent-check-cost PROGRAM LABEL [SERVICES] [WINDOW] [tcp|http]`

use std::fmt::Write as _;
use std::net::{IpAddr, Ipv4Addr};
use std::process::{Command, ExitCode, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use ipvsnl::Client;
use ipvsnl_bench::daemon::stop;
use ipvsnl_test_support::lab::backends::{Backend, Serve};
use ipvsnl_test_support::netns;

const PORT: u16 = 8080;

/// VIP of service `i`: 10.41.(i / 250).(i % 250 + 1).
fn vip(i: u32) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(10, 41, (i / 250) as u8, (i % 250 + 1) as u8))
}

/// The check of every server: by TCP connect, or by HTTP GET.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Tcp,
    Http,
}

fn agent_config(services: u32, servers: &[Backend], kind: Kind) -> String {
    let check = match kind {
        Kind::Tcp => r#"kind = "tcp""#,
        Kind::Http => r#"kind = "http", path = "/", status = 200"#,
    };
    let mut out = String::from("[agent]\nresync = \"10m\"\n");
    for i in 0..services {
        let _ = write!(
            out,
            "\n[[service]]\nprotocol = \"tcp\"\naddress = \"{}\"\nport = 80\nscheduler = \"rr\"\n\
             check = {{ {check}, interval = \"1s\", timeout = \"1s\" }}\n",
            vip(i)
        );
        for s in servers {
            let _ = write!(
                out,
                "[[service.server]]\naddress = \"{}\"\nport = {PORT}\n",
                s.addr()
            );
        }
    }
    out
}

fn keepalived_config(services: u32, servers: &[Backend], kind: Kind) -> String {
    let check = match kind {
        Kind::Tcp => "TCP_CHECK {\n      connect_timeout 1\n    }",
        Kind::Http => {
            "HTTP_GET {\n      url {\n        path /\n        status_code 200\n      }\n      \
             connect_timeout 1\n    }"
        }
    };
    let mut out = String::from("global_defs { router_id cost }\n");
    for i in 0..services {
        let _ = writeln!(
            out,
            "virtual_server {} 80 {{\n  delay_loop 1\n  lb_algo rr\n  lb_kind NAT\n  protocol TCP",
            vip(i)
        );
        for s in servers {
            let _ = writeln!(
                out,
                "  real_server {} {PORT} {{\n    weight 1\n    {check}\n  }}",
                s.addr()
            );
        }
        out.push_str("}\n");
    }
    out
}

/// User and system time (clock ticks) of `pid` and of its children.
fn cpu_ticks(pid: u32) -> (u64, u64) {
    let (mut user, mut system) = (0, 0);
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return (0, 0);
    };
    for entry in dir.flatten() {
        let Ok(text) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid ... utime(14) stime(15): after the ')'.
        let Some((head, rest)) = text.rsplit_once(')') else {
            continue;
        };
        let this: u32 = head
            .split_whitespace()
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let ppid: u32 = fields.get(1).and_then(|p| p.parse().ok()).unwrap_or(0);
        if this == pid || ppid == pid {
            let f = |i: usize| {
                fields
                    .get(i)
                    .and_then(|v| v.parse::<u64>().ok())
                    .unwrap_or(0)
            };
            user += f(11);
            system += f(12);
        }
    }
    (user, system)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let (Some(program), Some(label)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: agent-check-cost PROGRAM LABEL [SERVICES] [WINDOW]");
        return ExitCode::from(2);
    };
    let services: u32 = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(1000);
    let window = Duration::from_secs(args.get(4).and_then(|a| a.parse().ok()).unwrap_or(10));
    let kind = match args.get(5).map(String::as_str) {
        None | Some("tcp") => Kind::Tcp,
        Some("http") => Kind::Http,
        Some(other) => {
            eprintln!("agent-check-cost: KIND is tcp or http, not {other}");
            return ExitCode::from(2);
        }
    };

    netns::fresh_netns();
    let servers: Vec<Backend> = (1..=4).map(Backend::start).collect();
    let serve = match kind {
        Kind::Tcp => Serve::Close,
        Kind::Http => Serve::HttpInLoop,
    };
    for s in &servers {
        s.serve(PORT, serve);
    }
    let dir = std::env::temp_dir();
    let mut command = Command::new(program);
    if program.ends_with("keepalived") {
        let file = dir.join("check-cost-keepalived.conf");
        std::fs::write(&file, keepalived_config(services, &servers, kind)).expect("write");
        command.args(["-n", "-C", "-f"]).arg(&file);
        command.arg("-p").arg(dir.join("cost-k.pid"));
        command.arg("-c").arg(dir.join("cost-c.pid"));
    } else {
        let file = dir.join("check-cost.toml");
        std::fs::write(&file, agent_config(services, &servers, kind)).expect("write");
        command.arg("run").arg(&file).arg("--no-http");
    }
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the daemon");
    let pid = child.id();

    let mut c = Client::new().expect("an IPVS client");
    let want = services as usize * servers.len();
    let started = Instant::now();
    loop {
        let have: usize = c
            .table()
            .map(|t| t.iter().map(|s| s.destinations.len()).sum())
            .unwrap_or(0);
        if have == want {
            break;
        }
        if started.elapsed() > Duration::from_secs(300) {
            eprintln!("{label}: {have} of {want} destinations after 300 s");
            stop(&mut child);
            return ExitCode::FAILURE;
        }
        thread::sleep(Duration::from_millis(200));
    }
    thread::sleep(Duration::from_secs(3));
    let checks = || servers.iter().map(|s| s.accepted(PORT)).sum::<u64>();
    let (n0, t0) = (checks(), cpu_ticks(pid));
    thread::sleep(window);
    let (n1, t1) = (checks(), cpu_ticks(pid));
    // SAFETY: sysconf has no preconditions.
    let hz = u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).unwrap_or(100);
    let ns = |ticks: u64| ticks * 1_000_000_000 / hz.max(1);
    let (user, system) = (ns(t1.0 - t0.0), ns(t1.1 - t0.1));
    let cpu_ns = user + system;
    let n = (n1 - n0).max(1);
    println!(
        "CHECKCOST|{label}|{n}|{cpu_ns}|{}|{}|{}",
        cpu_ns / n,
        user / n,
        system / n
    );
    stop(&mut child);
    ExitCode::SUCCESS
}

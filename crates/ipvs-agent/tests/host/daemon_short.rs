//! The director short of its own resources: a check it cannot run moves
//! no server's health, checks in flight stay under a cap that fits the
//! open-files limit, and a server's next check never starts beside its
//! last. With 500 real TCP checks under an open-files limit of 64 (in a
//! process of its own), no server is drained.

use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use ipvs_agent::check::Outcome;
use ipvs_agent::daemon::{Agent, AgentOptions};
use ipvs_agent::probe::NetProber;
use ipvsnl::emulator::Kernel;

use crate::daemon_support::*;

fn short() -> Outcome {
    Outcome::Inconclusive("connect: Too many open files (os error 24)".into())
}

#[tokio::test(start_paused = true)]
async fn a_check_the_director_cannot_run_drains_no_server() {
    let kernel = Kernel::new();
    let prober = Scripted::default();
    let agent = start_default(&kernel, &prober);
    advance(MS).await;
    assert_eq!(weight(&kernel, &key(80), A), "10");
    // Far more than `fall` checks in a row, none conclusive.
    prober.set(A, short());
    advance(20 * S).await;
    assert!(prober.probes(A) >= 10, "{}", prober.probes(A));
    assert_eq!(weight(&kernel, &key(80), A), "10");
    let text = agent.handle.metrics_text();
    assert!(
        !text.contains("server=\"10.0.0.1:80\",reason="),
        "counted as the server's failure:\n{text}"
    );
    let counted = format!(
        "ipvs_agent_checks_inconclusive_total{{kind=\"tcp\"}} {}\n",
        prober.probes(A) - 1
    );
    assert!(text.contains(&counted), "{counted}\n{text}");
    agent.stop(false).await;
}

#[tokio::test(start_paused = true)]
async fn at_start_an_inconclusive_server_waits_as_an_unanswered_one() {
    let kernel = Kernel::new();
    let prober = Scripted::default();
    prober.set(A, short());
    let extra = "";
    let text = format!(
        "{}{extra}",
        text("1h", 20, "").replace("[agent]\n", "[agent]\nstart_wait = \"3s\"\n")
    );
    let agent = start(&kernel, config(&text), &prober, AgentOptions::default());
    advance(MS).await;
    // A has not answered: its service waits, up to `start_wait`.
    assert_eq!(weight(&kernel, &key(80), A), "no service");
    advance(3 * S).await;
    // Then it enters as its `start` says (up), B as it answered.
    assert_eq!(weight(&kernel, &key(80), A), "10");
    assert_eq!(weight(&kernel, &key(80), B), "20");
    agent.stop(false).await;
}

#[tokio::test(start_paused = true)]
async fn checks_in_flight_stay_under_the_cap_and_the_rest_wait_their_turn() {
    let kernel = Kernel::new();
    let prober = Scripted::default();
    let agent = start(
        &kernel,
        config(&text("1h", 20, "")),
        &prober,
        AgentOptions::default().with_max_checks_in_flight(1),
    );
    advance(MS).await;
    // Both checked at start, one after the other.
    assert_eq!((prober.probes(A), prober.probes(B)), (1, 1));
    assert_eq!(weight(&kernel, &key(80), A), "10");
    assert_eq!(weight(&kernel, &key(80), B), "20");
    advance(10 * S).await;
    assert_eq!(prober.max_in_flight(), 1);
    assert!(prober.probes(A) >= 5 && prober.probes(B) >= 5);
    let text = agent.handle.metrics_text();
    assert!(
        !text.contains("ipvs_agent_checks_not_started_total{why=\"deferred\"} 0\n"),
        "{text}"
    );
    agent.stop(false).await;
}

#[tokio::test(start_paused = true)]
async fn a_servers_next_check_never_starts_beside_its_last() {
    let kernel = Kernel::new();
    let prober = Scripted::default();
    // Both hang until the daemon times them out (1 s); one at a time, so
    // each is started late, and its next falls due while it runs.
    prober.hang(A);
    prober.hang(B);
    let agent = start(
        &kernel,
        config(&text("1h", 20, "")),
        &prober,
        AgentOptions::default().with_max_checks_in_flight(1),
    );
    advance(20 * S).await;
    assert_eq!(prober.max_in_flight(), 1);
    // A check due while its own last one runs (started late, behind the
    // other's) is skipped, not started beside it: counted, and the server
    // checked again at its next due time. Neither is starved.
    let text = agent.handle.metrics_text();
    let count = |why: &str| -> u64 {
        let series = format!("ipvs_agent_checks_not_started_total{{why=\"{why}\"}} ");
        let line = text.lines().find(|l| l.starts_with(&series));
        line.unwrap_or_else(|| panic!("{series}\n{text}"))[series.len()..]
            .parse()
            .unwrap()
    };
    assert!(count("overlapping") > 0, "{text}");
    assert!(count("deferred") > 0, "{text}");
    let (a, b) = (prober.probes(A), prober.probes(B));
    assert!(a >= 8 && b >= 4, "{a}, {b}");
    agent.stop(false).await;
}

/// The variable that makes this test binary, run again, the child of
/// [`short_of_descriptors_drains_no_server`].
const CHILD: &str = "IPVS_AGENT_TEST_SHORT_CHILD";
const SERVERS: usize = 500;
const NOFILE: u64 = 64;

#[test]
fn short_of_descriptors_drains_no_server() {
    if std::env::var_os(CHILD).is_some() {
        return short_child();
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "daemon_short::short_of_descriptors_drains_no_server",
        ])
        .args(["--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    let line = text.lines().find(|l| l.contains("drained "));
    println!("{}", line.unwrap_or("no figures"));
    assert!(text.contains("drained 0 of 500"), "{text}");
}

/// In a process of its own: the open-files limit at 64, an agent with the
/// real prober checking 500 servers (127.0.1.x and 127.0.2.x, one
/// listener on every loopback address) every 500 ms for 5 s.
fn short_child() {
    let listener = TcpListener::bind((Ipv4Addr::UNSPECIFIED, 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit read and write the rlimit we pass,
    // which lives for the whole call.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim), 0);
        lim.rlim_cur = NOFILE;
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &lim), 0);
    }
    let mut text = String::from(
        "[[service]]\nprotocol = \"tcp\"\naddress = \"192.0.2.1\"\nport = 80\n\
         check = { kind = \"tcp\", interval = \"500ms\", timeout = \"400ms\", fall = 1, rise = 1 }\n",
    );
    let servers: Vec<SocketAddr> = (0..SERVERS)
        .map(|i| {
            SocketAddr::from((
                Ipv4Addr::new(127, 0, 1 + (i / 250) as u8, 1 + (i % 250) as u8),
                port,
            ))
        })
        .collect();
    for s in &servers {
        text += &format!(
            "[[service.server]]\naddress = \"{}\"\nport = {port}\n",
            s.ip()
        );
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async move {
        // Accepts and drops what arrives (a check resets its connection).
        tokio::spawn(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            loop {
                if let Ok((s, _)) = listener.accept().await {
                    drop(s);
                }
            }
        });
        let kernel = Kernel::new();
        let agent = Agent::new(
            config(&text),
            connector(&kernel),
            Arc::new(NetProber::new()),
            AgentOptions::default(),
        );
        let handle = agent.handle();
        let task = tokio::spawn(agent.run());
        let mut drained = 0;
        for _ in 0..10 {
            tokio::time::sleep(Duration::from_millis(500)).await;
            let state = handle.state().await.unwrap();
            drained = drained.max(
                servers
                    .iter()
                    .filter(|s| {
                        state
                            .server(**s)
                            .is_some_and(|s| s.health != ipvs_agent::check::Health::Up)
                    })
                    .count(),
            );
        }
        let metrics = handle.metrics_text();
        let deferred = metrics
            .lines()
            .find(|l| l.starts_with("ipvs_agent_checks_not_started_total{why=\"deferred\"}"))
            .unwrap_or("none")
            .to_string();
        println!("drained {drained} of {SERVERS}; {deferred}");
        handle.stop_removing(false);
        task.await.unwrap().unwrap();
    });
}

/// Makes this test binary, run again, the child of
/// [`a_second_sigterm_exits_at_once`].
const SIGNAL_CHILD: &str = "IPVS_AGENT_TEST_SIGNAL_CHILD";

#[test]
fn a_second_sigterm_exits_at_once() {
    if std::env::var_os(SIGNAL_CHILD).is_some() {
        return signal_child();
    }
    let started = std::time::Instant::now();
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "daemon_short::a_second_sigterm_exits_at_once"])
        .args(["--nocapture", "--test-threads=1"])
        .env(SIGNAL_CHILD, "1")
        .output()
        .unwrap();
    let took = started.elapsed();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(ipvs_agent::daemon::FORCED_EXIT),
        "{text}"
    );
    assert!(text.contains("stop waiting for the stalled sync"), "{text}");
    // The first SIGTERM's stop would wait 10 s for the stalled sync.
    assert!(took < Duration::from_secs(5), "{took:?}\n{text}");
}

/// In a process of its own: an agent whose sync stalls (a kernel that
/// stops answering), a SIGTERM (its stop waits for that sync), a second
/// SIGTERM: the process exits at once.
fn signal_child() {
    use ipvsnl::emulator::{Fault, When};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let signals = ipvs_agent::daemon::Signals::install().unwrap();
        let kernel = Kernel::new();
        let prober = Scripted::default();
        let fast = text("1h", 20, "")
            .replace(
                "interval = \"2s\", timeout = \"1s\"",
                "interval = \"200ms\", timeout = \"100ms\"",
            )
            .replace("fall = 3", "fall = 1");
        let agent = start(&kernel, config(&fast), &prober, AgentOptions::default());
        tokio::spawn(ipvs_agent::daemon::forward_signals(
            agent.handle.clone(),
            signals,
        ));
        while !agent.handle.ready() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        kernel.inject(When::next_request(), Fault::Stall);
        // A change to sync: B fails, and its sync stalls.
        prober.fail(B);
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(kernel.faults_armed(), 0, "the sync did not stall");
        println!("stop waiting for the stalled sync");
        // SAFETY: raise only sends a signal to this process, whose
        // SIGTERM is taken by the handlers installed above.
        unsafe { libc::raise(libc::SIGTERM) };
        tokio::time::sleep(Duration::from_millis(300)).await;
        unsafe { libc::raise(libc::SIGTERM) };
        tokio::time::sleep(Duration::from_secs(30)).await;
        println!("not ended by the second SIGTERM");
    });
}

/// Makes this test binary, run again, the child of
/// [`a_panic_in_any_task_ends_the_daemon`].
const PANIC_CHILD: &str = "IPVS_AGENT_TEST_PANIC_CHILD";

#[test]
fn a_panic_in_any_task_ends_the_daemon() {
    use std::os::unix::process::ExitStatusExt;
    if std::env::var_os(PANIC_CHILD).is_some() {
        ipvs_agent::daemon::abort_on_panic();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            // A task of the daemon's (say, fleet mode's follower) panics;
            // tokio alone would let the rest run on.
            let _ = tokio::spawn(async { panic!("the follower broke") }).await;
            println!("still running after the panic");
        });
        return;
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "daemon_short::a_panic_in_any_task_ends_the_daemon",
        ])
        .args(["--nocapture", "--test-threads=1"])
        .env(PANIC_CHILD, "1")
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.signal(), Some(libc::SIGABRT), "{text}");
    assert!(!text.contains("still running"), "{text}");
    assert!(text.contains("the follower broke"), "{text}");
}

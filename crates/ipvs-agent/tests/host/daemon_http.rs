//! The HTTP endpoint over real loopback sockets (the clock runs: real
//! I/O): /metrics (the exporter's IPVS series and the agent's), /healthz,
//! /ready, 404.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};

use ipvs_agent::daemon::serve;
use ipvsnl::emulator::Kernel;
use tokio::task::JoinHandle;

use crate::daemon_support::*;

/// One GET, its status line and body (blocking, on a thread of its own).
async fn get(addr: SocketAddr, path: &str) -> (String, String) {
    let path = path.to_string();
    tokio::task::spawn_blocking(move || {
        let mut s = TcpStream::connect(addr).unwrap();
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        let (head, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
        (
            head.lines().next().unwrap_or("").to_string(),
            body.to_string(),
        )
    })
    .await
    .unwrap()
}

/// The default agent on `kernel`, checked by `prober`, and its endpoint
/// on 127.0.0.1, once the first sync is done: the endpoint's address,
/// the agent and the endpoint's task.
pub(crate) async fn ready_endpoint(
    kernel: &Kernel,
    prober: &Scripted,
) -> (SocketAddr, Running, JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let agent = start_default(kernel, prober);
    let server = tokio::spawn(serve(listener, agent.handle.clone(), connector(kernel)));
    while !agent.handle.ready() {
        tokio::task::yield_now().await;
    }
    (addr, agent, server)
}

#[tokio::test]
async fn metrics_healthz_and_ready_are_served() {
    let kernel = Kernel::new();
    let prober = Scripted::default();
    prober.fail(B);
    // Ready once the first sync is done.
    let (addr, agent, server) = ready_endpoint(&kernel, &prober).await;
    assert_eq!(get(addr, "/ready").await.0, "HTTP/1.1 200 OK");
    assert_eq!(
        get(addr, "/healthz").await,
        ("HTTP/1.1 200 OK".into(), "ok\n".into())
    );
    let (status, body) = get(addr, "/metrics").await;
    assert_eq!(status, "HTTP/1.1 200 OK");
    // The exporter's series of the kernel's table...
    assert!(body.contains("ipvs_backend_weight{local_address=\"192.0.2.1\",local_port=\"80\",local_mark=\"\",proto=\"TCP\",family=\"IPv4\",remote_address=\"10.0.0.2\",remote_port=\"80\",forwarding_method=\"Masq\"} 0\n"), "{body}");
    // ...and the agent's.
    assert!(body.contains("ipvs_agent_server_up{service=\"TCP 192.0.2.1:80\",name=\"web\",server=\"10.0.0.2:80\",checked=\"true\"} 0\n"), "{body}");
    assert!(body.contains("ipvs_agent_server_up{service=\"TCP 192.0.2.1:80\",name=\"web\",server=\"10.0.0.1:80\",checked=\"true\"} 1\n"), "{body}");
    assert!(body.contains("ipvs_agent_check_failures_total{service=\"TCP 192.0.2.1:80\",name=\"web\",server=\"10.0.0.2:80\",reason=\"refused\"} "), "{body}");
    assert!(
        body.contains("\nipvs_agent_syncs_total{result=\"complete\"} 1\n"),
        "{body}"
    );
    assert!(
        body.contains("\nipvs_agent_sync_requests_total{outcome=\"done\"} 3\n"),
        "{body}"
    );
    // (Checks every 2 s: a slow run may have had more than the first round.)
    assert!(
        body.contains("\nipvs_agent_check_duration_seconds_count{kind=\"tcp\"} "),
        "{body}"
    );
    assert!(body.contains("\nipvs_agent_ready 1\n"), "{body}");
    assert_eq!(get(addr, "/nothing").await.0, "HTTP/1.1 404 Not Found");

    // Stopped: /healthz says so, the rest still answers.
    agent.handle.stop();
    agent.task.await.unwrap().unwrap();
    assert_eq!(
        get(addr, "/healthz").await.0,
        "HTTP/1.1 503 Service Unavailable"
    );
    server.abort();
}

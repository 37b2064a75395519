//! The HTTP endpoint on a bad day (issue 40): 100 slow clients, each
//! connected and halfway through a request head that never ends, must not
//! keep `/healthz` from answering at once (a liveness probe that times out
//! restarts the director). Real loopback sockets, the clock runs.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use ipvsnl::emulator::Kernel;

use crate::daemon_http::ready_endpoint;
use crate::daemon_support::Scripted;

/// Slow clients opened before the probe: more than the endpoint's cap.
const SLOW_CLIENTS: usize = 100;
/// The generous bound on the probe's answer (a kubelet's default probe
/// timeout is 1 s; the slow clients' own header timeout is 10 s).
const PROMPT: Duration = Duration::from_secs(2);

/// A client that sends half a request head and then nothing.
fn slow_client(addr: SocketAddr) -> TcpStream {
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nUser-Ag")
        .unwrap();
    s
}

/// One GET of `/healthz` on a fresh connection: its status line, read
/// with a timeout of 3 x [`PROMPT`] so a starved probe fails, not hangs.
fn healthz(addr: SocketAddr) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(PROMPT * 3)).unwrap();
    s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let out = String::from_utf8_lossy(&out);
    out.lines().next().unwrap_or("").to_string()
}

#[tokio::test]
async fn healthz_answers_promptly_beside_100_slow_connections() {
    let kernel = Kernel::new();
    let (addr, agent, server) = ready_endpoint(&kernel, &Scripted::default()).await;
    let (status, took, slow) = tokio::task::spawn_blocking(move || {
        let slow: Vec<TcpStream> = (0..SLOW_CLIENTS).map(|_| slow_client(addr)).collect();
        // Let the endpoint accept them all before the probe comes.
        std::thread::sleep(Duration::from_millis(200));
        let started = Instant::now();
        let status = healthz(addr);
        (status, started.elapsed(), slow)
    })
    .await
    .unwrap();
    println!("/healthz beside {SLOW_CLIENTS} slow connections: {status:?} in {took:?}");
    assert_eq!(status, "HTTP/1.1 200 OK", "after {took:?}");
    assert!(took < PROMPT, "/healthz took {took:?}");
    drop(slow);
    agent.handle.stop();
    agent.task.await.unwrap().unwrap();
    server.abort();
}

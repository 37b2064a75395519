//! 1,100 connections that send nothing, to the `ipvs-exporter` binary
//! under an open-files limit of 1,024: a scrape is still answered within
//! 2 s, and the exporter keeps its descriptors under the connection cap.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const IDLE: usize = 1100;
const SOFT_LIMIT: usize = 1024;

/// The exporter on 127.0.0.1:0, its soft open-files limit lowered to
/// `SOFT_LIMIT` (the usual default), and the address it listens on.
fn spawn_exporter() -> (Child, SocketAddr) {
    let mut child = Command::new("sh")
        .args([
            "-c",
            &format!("ulimit -S -n {SOFT_LIMIT} && exec \"$0\" \"$@\""),
            env!("CARGO_BIN_EXE_ipvs-exporter"),
            "--web.listen-address=127.0.0.1:0",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let addr = loop {
        let line = lines
            .next()
            .expect("the exporter exited before listening")
            .unwrap();
        if let Some(rest) = line.split("listening on ").nth(1) {
            let addr = rest.trim_end_matches('"').trim_end_matches("/metrics");
            break addr.parse().unwrap();
        }
    };
    // Keep draining its log so it never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    (child, addr)
}

fn descriptors(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count()
}

#[test]
fn a_scrape_is_answered_with_1100_idle_connections_open() {
    let (mut child, addr) = spawn_exporter();
    let mut idle = Vec::with_capacity(IDLE);
    for i in 0..IDLE {
        match TcpStream::connect_timeout(&addr, Duration::from_secs(5)) {
            Ok(s) => idle.push(s),
            Err(e) => {
                panic!("idle connection {i}: {e} (is this process's open-files limit > 1,200?)")
            }
        }
    }
    // Let the exporter take them in.
    std::thread::sleep(Duration::from_millis(500));

    let started = Instant::now();
    let answer = (|| -> std::io::Result<String> {
        let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
        s.set_read_timeout(Some(Duration::from_secs(2)))?;
        write!(
            s,
            "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )?;
        let mut text = String::new();
        s.read_to_string(&mut text)?;
        Ok(text)
    })();
    let took = started.elapsed();
    let fds = descriptors(child.id());
    eprintln!(
        "{IDLE} idle connections: the scrape took {:.3} s ({}), the exporter has {fds} descriptors",
        took.as_secs_f64(),
        answer
            .as_ref()
            .map_or_else(|e| e.to_string(), |t| format!("{} bytes", t.len()))
    );
    child.kill().unwrap();
    child.wait().unwrap();
    let text = answer.expect("the scrape got no answer");
    assert!(text.starts_with("HTTP/1.1 200 OK"), "{text}");
    assert!(text.contains("\nipvs_up "), "{text}");
    assert!(took < Duration::from_secs(2), "the scrape took {took:?}");
    // The default cap (512 connections) and a few for the listener, the
    // runtime, stdio and netlink.
    assert!(fds <= 512 + 32, "{fds} descriptors open");
}

//! A single-member etcd for the fleet tests: Debian's etcd-server (3.4),
//! which .ci/setup unpacks under ~/.cache/ipvsnl-vm/peers/ (`IPVSNL_ETCD`
//! names another binary), on 127.0.0.1 with free ports and a data
//! directory of its own; killed and its directory removed when dropped.
//! Support, no test: a module of the `host` and `figures` test binaries
//! (`#[path]`).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long etcd gets to answer `/health`.
const READY_WITHIN: Duration = Duration::from_secs(30);

/// A running etcd, killed and its directory removed on drop.
pub(crate) struct EtcdServer {
    binary: PathBuf,
    dir: PathBuf,
    client_port: u16,
    peer_port: u16,
    child: Option<Child>,
}

fn binary() -> PathBuf {
    if let Some(p) = std::env::var_os("IPVSNL_ETCD") {
        return PathBuf::from(p);
    }
    let home = std::env::var_os("HOME").unwrap_or_default();
    PathBuf::from(home).join(".cache/ipvsnl-vm/peers/usr/bin/etcd")
}

/// A port nobody listens on now (the kernel's choice).
fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    l.local_addr().unwrap().port()
}

impl EtcdServer {
    /// Starts an etcd; retries with other ports if one was taken meanwhile.
    pub(crate) fn start() -> EtcdServer {
        let binary = binary();
        assert!(
            binary.is_file(),
            "etcd not found at {}: run .ci/setup (it unpacks Debian's etcd-server under \
             ~/.cache/ipvsnl-vm/peers/), or set IPVSNL_ETCD to an etcd binary",
            binary.display()
        );
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let base = if std::path::Path::new("/dev/shm").is_dir() {
            PathBuf::from("/dev/shm")
        } else {
            std::env::temp_dir()
        };
        let dir = base.join(format!(
            "ipvs-agent-etcd-{}-{}",
            std::process::id(),
            COUNT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("the etcd test directory");
        let mut server = EtcdServer {
            binary,
            dir,
            client_port: 0,
            peer_port: 0,
            child: None,
        };
        for attempt in 1..=5 {
            server.client_port = free_port();
            server.peer_port = free_port();
            match server.spawn() {
                Ok(()) => return server,
                Err(log) if log.contains("address already in use") && attempt < 5 => {
                    let _ = std::fs::remove_dir_all(server.dir.join("data"));
                }
                Err(log) => panic!("etcd did not start:\n{log}"),
            }
        }
        unreachable!()
    }

    /// Starts the process on the server's ports and data directory and
    /// waits until it answers `/health`; `Err` with its log if it exited.
    fn spawn(&mut self) -> Result<(), String> {
        let client = format!("http://127.0.0.1:{}", self.client_port);
        let peer = format!("http://127.0.0.1:{}", self.peer_port);
        let log_path = self.dir.join("etcd.log");
        let log = std::fs::File::create(&log_path).expect("etcd.log");
        let child = Command::new(&self.binary)
            .args(["--name", "t", "--data-dir"])
            .arg(self.dir.join("data"))
            .args(["--listen-client-urls", &client])
            .args(["--advertise-client-urls", &client])
            .args(["--listen-peer-urls", &peer])
            .args(["--initial-advertise-peer-urls", &peer])
            .args(["--initial-cluster", &format!("t={peer}")])
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("etcd.log"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", self.binary.display()));
        self.child = Some(child);
        let until = Instant::now() + READY_WITHIN;
        loop {
            if let Some(status) = self.child.as_mut().unwrap().try_wait().unwrap() {
                self.child = None;
                let text = std::fs::read_to_string(&log_path).unwrap_or_default();
                return Err(format!("{status}\n{text}"));
            }
            if self.healthy() {
                return Ok(());
            }
            if Instant::now() > until {
                let text = std::fs::read_to_string(&log_path).unwrap_or_default();
                self.kill();
                return Err(format!("no /health within {READY_WITHIN:?}\n{text}"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn healthy(&self) -> bool {
        let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.client_port)) else {
            return false;
        };
        let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
        if s.write_all(b"GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
            .is_err()
        {
            return false;
        }
        let mut body = String::new();
        let _ = s.read_to_string(&mut body);
        body.contains("\"health\":\"true\"")
    }

    /// Its client URL.
    pub(crate) fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.client_port)
    }

    /// Its client URL as the list the library takes.
    pub(crate) fn endpoints(&self) -> Vec<String> {
        vec![self.endpoint()]
    }

    /// Kills the process (SIGKILL), keeping its data.
    pub(crate) fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Kills it and starts it again on the same ports and data.
    pub(crate) fn restart(&mut self) {
        self.kill();
        let until = Instant::now() + READY_WITHIN;
        // The ports were ours a moment ago; a start that loses one to a
        // socket in TIME_WAIT or another test is tried again.
        loop {
            match self.spawn() {
                Ok(()) => return,
                Err(log) if Instant::now() < until && log.contains("address already in use") => {
                    std::thread::sleep(Duration::from_millis(200));
                }
                Err(log) => panic!("etcd did not restart:\n{log}"),
            }
        }
    }
}

impl Drop for EtcdServer {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The text of a configuration of `n` services (4 servers each, HTTP
/// checks), every service's port `port`: two calls with different ports
/// give configurations that differ in every service.
pub(crate) fn config_text(n: usize, port: u16) -> String {
    let mut text = String::from("[agent]\nresync = \"20s\"\n");
    for i in 0..n {
        text.push_str(&format!(
            "[[service]]\nprotocol = \"tcp\"\naddress = \"10.{}.{}.{}\"\nport = {port}\n\
             check = {{ kind = \"http\", path = \"/healthz\" }}\n",
            i / 65536,
            (i / 256) % 256,
            i % 256
        ));
        for s in 1..=4 {
            text.push_str(&format!(
                "[[service.server]]\naddress = \"192.168.0.{s}\"\nport = 8080\n"
            ));
        }
    }
    text
}

/// [`config_text`] parsed.
pub(crate) fn config_of(n: usize, port: u16) -> ipvs_agent::config::Config {
    ipvs_agent::config::parse_str("generated.toml", &config_text(n, port)).unwrap()
}

/// The number of keys under `prefix`.
pub(crate) async fn keys_under(etcd: &ipvs_agent::fleet::store::etcd::Etcd, prefix: &str) -> i64 {
    let options = etcd_client::GetOptions::new()
        .with_prefix()
        .with_count_only();
    etcd.client()
        .get(prefix, Some(options))
        .await
        .expect("count keys")
        .count()
}

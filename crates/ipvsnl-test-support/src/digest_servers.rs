//! The forwarding tests' real servers: a TCP, a UDP and an SCTP server on
//! one address, answering as [`crate::digest`] describes (the streams
//! through [`crate::echo`]'s accept loop).

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};

use crate::digest::{serve_datagrams, stream_socket, Proto, SERVER_LIFETIME};
use crate::echo::{Answer, EchoServer};

/// A TCP, a UDP and an SCTP server on one address and port, in the calling
/// thread's namespace, each answering with [`crate::digest::Reply`]'s line; stopped when
/// dropped.
pub struct EchoServers {
    _streams: Vec<EchoServer>,
    stop: Arc<AtomicBool>,
    udp: Option<JoinHandle<()>>,
}

impl EchoServers {
    /// Starts them, listening when this returns.
    pub fn start(name: &str, addr: SocketAddr) -> EchoServers {
        let mut streams = Vec::new();
        for proto in [Proto::Tcp, Proto::Sctp] {
            let sock = stream_socket(proto, &addr).expect("stream socket");
            sock.set_reuse_address(true).expect("SO_REUSEADDR");
            sock.bind(&addr.into())
                .unwrap_or_else(|e| panic!("{name}: bind {proto:?} {addr}: {e}"));
            sock.listen(16).expect("listen");
            let answer = Answer::Digest {
                name: name.to_string(),
                proto,
            };
            streams.push(EchoServer::start(sock.into(), answer, SERVER_LIFETIME));
        }
        let stop = Arc::new(AtomicBool::new(false));
        let udp = UdpSocket::bind(addr).unwrap_or_else(|e| panic!("{name}: bind UDP {addr}: {e}"));
        let (name, stopping) = (name.to_string(), stop.clone());
        let udp = thread::spawn(move || serve_datagrams(&name, udp, &stopping));
        EchoServers {
            _streams: streams,
            stop,
            udp: Some(udp),
        }
    }
}

impl Drop for EchoServers {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.udp.take() {
            let _ = t.join();
        }
    }
}

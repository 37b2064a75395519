//! The blocking transport: system calls that wait, bounded by the socket's
//! receive timeout. Its futures are ready when first polled (the work is
//! done when they are made), so [`crate::block_on`] runs them on the
//! calling thread without a runtime.

use std::future::{ready, Future};
use std::io;

use super::socket::{NlSocket, Received};
use super::Transport;
use crate::proto::Wait;

/// A socket whose calls wait (`SO_RCVTIMEO` bounds each receive).
#[derive(Debug)]
pub(crate) struct Blocking {
    pub(crate) sock: NlSocket,
}

impl Transport for Blocking {
    fn send(&mut self, datagram: &[u8]) -> impl Future<Output = io::Result<()>> + Send {
        ready(self.sock.send(datagram))
    }

    fn receive(
        &mut self,
        rx: &mut [u8],
        segment: usize,
        got: &mut [Received],
        wait: Wait,
    ) -> impl Future<Output = io::Result<usize>> + Send {
        let received = match wait {
            Wait::Up(timeout) => self
                .sock
                .set_timeout(timeout)
                .and_then(|()| self.sock.recv_many(rx, segment, got, false)),
            _ => self.sock.recv_many(rx, segment, got, true),
        };
        ready(received)
    }
}

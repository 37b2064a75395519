//! The blocking transport: system calls that wait, bounded by the socket's
//! receive timeout. Its futures are ready when first polled (the work is
//! done when they are made), so [`crate::block_on`] runs them on the
//! calling thread without a runtime.

use std::future::{ready, Future};
use std::io;
use std::time::{Duration, Instant};

use super::netns::open_socket;
use super::socket::{NlSocket, Received};
use super::{Fresh, Transport};
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
            Wait::Up(timeout) => self.wait_up(rx, segment, got, timeout),
            _ => self.sock.recv_many(rx, segment, got, true),
        };
        ready(received)
    }

    fn reopen(&mut self, fresh: &Fresh<'_>) -> impl Future<Output = io::Result<()>> + Send {
        let opened = open_socket(fresh.netns).and_then(|mut sock| {
            sock.set_timeout(fresh.timeout)?;
            if let Some(bytes) = fresh.buffer {
                sock.set_receive_buffer(bytes)?;
            }
            Ok(sock)
        });
        ready(opened.map(|sock| self.sock = sock))
    }
}

impl Blocking {
    /// Receives, waiting up to `timeout` in all for the first datagram. A
    /// signal ends a wait bounded by `SO_RCVTIMEO` early with `EINTR`
    /// (such a receive is never restarted by the kernel, `SA_RESTART` or
    /// not): the wait goes on for what is left of `timeout`, not for a
    /// whole new one, so a process signalled often still sees its time-out.
    fn wait_up(
        &mut self,
        rx: &mut [u8],
        segment: usize,
        got: &mut [Received],
        timeout: Duration,
    ) -> io::Result<usize> {
        let started = Instant::now();
        let mut left = timeout;
        loop {
            self.sock.set_timeout(left)?;
            match self.sock.recv_many(rx, segment, got, false) {
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {
                    left = timeout.saturating_sub(started.elapsed());
                    // A zero SO_RCVTIMEO would mean "wait for ever".
                    if left.is_zero() {
                        return Err(io::Error::from_raw_os_error(libc::EAGAIN));
                    }
                }
                r => return r,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    use super::*;
    /// Room for two datagrams (any number up to the socket's own bound).
    const MAX_DATAGRAMS: usize = 2;

    extern "C" fn ignore(_: libc::c_int) {}

    #[test]
    fn signals_do_not_restart_the_wait() {
        // SIGUSR1 caught by a handler that does nothing, installed without
        // SA_RESTART (with it, a receive under SO_RCVTIMEO still fails
        // with EINTR).
        // SAFETY: a zeroed sigaction is valid; the handler is a plain
        // function that touches nothing; SIGUSR1 is not used otherwise in
        // this test binary.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = ignore as extern "C" fn(libc::c_int) as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            assert_eq!(libc::sigaction(libc::SIGUSR1, &sa, std::ptr::null_mut()), 0);
        }
        let mut io = Blocking {
            sock: NlSocket::open().expect("a generic netlink socket"),
        };
        // SAFETY: pthread_self has no preconditions.
        let me = unsafe { libc::pthread_self() } as usize;
        let stop = Arc::new(AtomicBool::new(false));
        let signaller = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let until = Instant::now() + Duration::from_secs(5);
                while !stop.load(Ordering::Relaxed) && Instant::now() < until {
                    // SAFETY: `me` is the receiving thread, alive until
                    // `stop` is set (it joins this thread after).
                    unsafe { libc::pthread_kill(me as libc::pthread_t, libc::SIGUSR1) };
                    std::thread::sleep(Duration::from_millis(20));
                }
            })
        };
        let mut rx = vec![0; 4096 * MAX_DATAGRAMS];
        let mut got = [Received::default(); MAX_DATAGRAMS];
        let started = Instant::now();
        // Nothing was asked: nothing comes. Signalled every 20 ms, a
        // 300 ms wait that started over at each signal would last until
        // the signals stop (5 s).
        let r = crate::block_on::block_on(io.receive(
            &mut rx,
            4096,
            &mut got,
            Wait::Up(Duration::from_millis(300)),
        ));
        let took = started.elapsed();
        stop.store(true, Ordering::Relaxed);
        signaller.join().unwrap();
        let e = r.expect_err("no datagram can come");
        assert_eq!(e.raw_os_error(), Some(libc::EAGAIN), "{e}");
        assert!(
            took < Duration::from_secs(3),
            "the 300 ms wait took {took:?}"
        );
    }
}

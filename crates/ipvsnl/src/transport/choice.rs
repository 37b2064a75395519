//! The transport a client runs over. Without the `emulator` feature it is
//! the client's own ([`Blocking`](super::blocking::Blocking) or
//! [`Tokio`](super::tokio::Tokio)), by a type alias: the code is the one
//! it was. With it, [`Io`] is that transport or an emulated kernel's
//! socket, chosen by one match per send and per receive. That match costs
//! a predictable branch beside a system call (a few nanoseconds against
//! the microseconds of `sendmsg`/`recvmmsg`), and only in builds that
//! take the feature, which users take as a dev-dependency: their release
//! builds never carry it.

#[cfg(feature = "emulator")]
use std::io;

#[cfg(feature = "emulator")]
use super::{Fresh, Received, Transport};
#[cfg(feature = "emulator")]
use crate::proto::Wait;

/// A client's transport: its socket, or an emulated kernel's.
#[cfg(feature = "emulator")]
#[derive(Debug)]
pub(crate) enum Io<R> {
    /// The kernel's, through a real socket.
    Real(R),
    /// An emulated kernel's ([`crate::emulator`]).
    Emulated(crate::emulator::Port),
}

/// A client's transport: its socket.
#[cfg(not(feature = "emulator"))]
pub(crate) type Io<R> = R;

/// The transport over a real socket.
#[inline(always)]
pub(crate) fn real<R>(r: R) -> Io<R> {
    #[cfg(feature = "emulator")]
    return Io::Real(r);
    #[cfg(not(feature = "emulator"))]
    r
}

#[cfg(feature = "emulator")]
impl<R: Transport + Send> Transport for Io<R> {
    async fn send(&mut self, datagram: &[u8]) -> io::Result<()> {
        match self {
            Io::Real(r) => r.send(datagram).await,
            Io::Emulated(e) => e.send(datagram).await,
        }
    }

    async fn receive(
        &mut self,
        rx: &mut [u8],
        segment: usize,
        got: &mut [Received],
        wait: Wait,
    ) -> io::Result<usize> {
        match self {
            Io::Real(r) => r.receive(rx, segment, got, wait).await,
            Io::Emulated(e) => e.receive(rx, segment, got, wait).await,
        }
    }

    async fn cooperate(&mut self) {
        match self {
            Io::Real(r) => r.cooperate().await,
            Io::Emulated(e) => e.cooperate().await,
        }
    }

    async fn reopen(&mut self, fresh: &Fresh<'_>) -> io::Result<()> {
        match self {
            Io::Real(r) => r.reopen(fresh).await,
            Io::Emulated(e) => {
                *e = e.reopened();
                Ok(())
            }
        }
    }
}

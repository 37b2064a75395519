//! What a service dump lists, as a caller collects it: each service's
//! item index (see [`super::driver::key`]).

use crate::decode::{service_reply, Detail};
use crate::proto::Replies;
use crate::DecodeError;

/// Collects the items a dump lists; stops after `stop_after` of them,
/// fails on item `fail_at`, and counts the dump's restarts.
#[derive(Debug, Default)]
pub(crate) struct Items {
    pub got: Vec<u32>,
    pub stop_after: Option<usize>,
    pub fail_at: Option<u32>,
    pub restarts: u32,
}

impl Items {
    /// Collects every item but fails on `fail_at`.
    pub(crate) fn failing_at(fail_at: Option<u32>) -> Items {
        Items {
            fail_at,
            ..Items::default()
        }
    }
}

impl Replies for Items {
    fn message(&mut self, _command: u8, attrs: &[u8]) -> Result<(), DecodeError> {
        let entry = service_reply(attrs, Detail::Full)?;
        let i = super::driver::index(entry.key()).ok_or("not a test item")?;
        if self.fail_at == Some(i) {
            return Err(format!("item {i} cannot be decoded").into());
        }
        self.got.push(i);
        Ok(())
    }
    fn restart(&mut self) {
        self.got.clear();
        self.restarts += 1;
    }
    fn stopped(&self) -> bool {
        self.stop_after.is_some_and(|n| self.got.len() >= n)
    }
}

/// Writes a service dump request (or, as a get, a request the kernel
/// answers with data: the same command).
pub(crate) fn write(out: &mut Vec<u8>, family: u16, seq: u32, flags: u16) {
    let m = ipvsnl_wire::write::begin_ipvs_message(
        out,
        family,
        flags,
        seq,
        ipvsnl_wire::IpvsCommand::GetService,
    );
    ipvsnl_wire::write::end_message(out, m);
}

/// Writes a `GET_INFO`: a get the kernel answers with one message.
pub(crate) fn write_info(out: &mut Vec<u8>, family: u16, seq: u32, flags: u16) {
    let m = ipvsnl_wire::write::begin_ipvs_message(
        out,
        family,
        flags,
        seq,
        ipvsnl_wire::IpvsCommand::GetInfo,
    );
    ipvsnl_wire::write::end_message(out, m);
}

/// Counts the messages of an answer.
#[derive(Debug, Default)]
pub(crate) struct Count(pub usize);

impl Replies for Count {
    fn message(&mut self, _command: u8, _attrs: &[u8]) -> Result<(), DecodeError> {
        self.0 += 1;
        Ok(())
    }
    fn restart(&mut self) {
        self.0 = 0;
    }
    fn stopped(&self) -> bool {
        false
    }
}

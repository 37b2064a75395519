//! What the scripted kernel's dumps list, as a caller collects it: each
//! message's first four bytes are an item's index.

use super::kernel::Req;
use crate::proto::{Encode, Replies};
use crate::DecodeError;

/// Collects the indexes a dump lists; stops after `stop_after` of them,
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
        let i = u32::from_ne_bytes(attrs[..4].try_into().map_err(|_| "short")?);
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

/// Writes the scripted kernel's one request.
pub(crate) fn write(out: &mut Vec<u8>, family: u16, seq: u32, flags: u16) {
    Req(0).encode(out, family, seq, flags);
}

//! Typed requests: one value per kernel operation ([`Request`]), encoded
//! into one IPVS message. The pipelined batch API and the sync engine take
//! these.
//!
//! - `value`: the type, what it is about and its checks;
//! - `kind`: what kind of request ([`RequestKind`]), named in errors;
//! - `new`: the constructors;
//! - `fixed`: the attribute writers both encoders share;
//! - `message`: the owned `IpvsMessage` of a request;
//! - `bytes`: the bytes of a request, written directly (what a sync
//!   sends by the thousand).

mod bytes;
mod fixed;
mod kind;
mod message;
mod new;
mod value;

#[cfg(any(test, feature = "emulator"))]
pub(crate) use bytes::encode;
pub(crate) use bytes::push_service_nest;
#[cfg(any(test, feature = "emulator"))]
pub(crate) use fixed::addr_bytes;
pub use kind::RequestKind;
pub use value::Request;

#[cfg(test)]
mod tests;

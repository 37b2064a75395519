//! An IPVS generic-netlink message: a command and its attributes.

use netlink_packet_core::{
    DecodeError, Emitable, ErrorContext, NlasIterator, ParseableParametrized,
};
use netlink_packet_generic::{GenlFamily, GenlHeader};

use crate::{IpvsAttr, IpvsCommand};

/// The generic-netlink family name of IPVS.
pub const IPVS_GENL_NAME: &str = "IPVS";
/// The family version the kernel registers (it does not check it).
pub const IPVS_GENL_VERSION: u8 = 1;

/// The payload of one IPVS generic-netlink message.
///
/// It plugs into `netlink_packet_generic::GenlMessage` and from there into
/// `netlink_packet_core::NetlinkMessage`.
///
/// ```
/// use ipvsnl_wire::{IpvsAttr, IpvsCommand, IpvsMessage};
/// use netlink_packet_core::{Emitable, ParseableParametrized};
/// use netlink_packet_generic::GenlHeader;
///
/// let msg = IpvsMessage::new(IpvsCommand::SetConfig, vec![IpvsAttr::TimeoutTcp(900)]);
/// let mut buf = vec![0; msg.buffer_len()];
/// msg.emit(&mut buf);
/// let header = GenlHeader { cmd: 12, version: 1 };
/// assert_eq!(IpvsMessage::parse_with_param(&buf[..], header).unwrap(), msg);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct IpvsMessage {
    /// The command (from the generic-netlink header).
    pub command: IpvsCommand,
    /// The top-level attributes, in wire order.
    pub attrs: Vec<IpvsAttr>,
}

impl IpvsMessage {
    /// A message with the given command and attributes.
    pub fn new(command: IpvsCommand, attrs: Vec<IpvsAttr>) -> Self {
        IpvsMessage { command, attrs }
    }
}

impl GenlFamily for IpvsMessage {
    fn family_name() -> &'static str {
        IPVS_GENL_NAME
    }

    fn command(&self) -> u8 {
        self.command.into()
    }

    fn version(&self) -> u8 {
        IPVS_GENL_VERSION
    }
}

impl Emitable for IpvsMessage {
    fn buffer_len(&self) -> usize {
        self.attrs.as_slice().buffer_len()
    }

    fn emit(&self, buffer: &mut [u8]) {
        self.attrs.as_slice().emit(buffer)
    }
}

impl ParseableParametrized<[u8], GenlHeader> for IpvsMessage {
    fn parse_with_param(buf: &[u8], header: GenlHeader) -> Result<Self, DecodeError> {
        let command = IpvsCommand::from(header.cmd);
        let mut attrs = Vec::new();
        for nla in NlasIterator::new(buf) {
            let nla =
                nla.with_context(|| format!("malformed attribute in IPVS {command:?} message"))?;
            attrs.push(
                IpvsAttr::parse_for(&nla, command)
                    .with_context(|| format!("in IPVS {command:?} message"))?,
            );
        }
        Ok(IpvsMessage { command, attrs })
    }
}

//! Parsing and emitting a nest: a list of attributes inside one attribute.

use netlink_packet_core::{
    DecodeError, Emitable, ErrorContext, Nla, NlaBuffer, NlasIterator, Parseable,
};

/// Parses every attribute of a nest's payload, naming the nest on error.
pub(crate) fn parse_nest<A>(payload: &[u8], nest: &str) -> Result<Vec<A>, DecodeError>
where
    A: for<'a> Parseable<NlaBuffer<&'a [u8]>>,
{
    let mut out = Vec::new();
    for nla in NlasIterator::new(payload) {
        let nla = nla.with_context(|| format!("malformed attribute in {nest}"))?;
        out.push(A::parse(&nla).with_context(|| format!("in {nest}"))?);
    }
    Ok(out)
}

/// Size of a nest's payload (the attributes it holds, each aligned).
pub(crate) fn nest_len<A: Nla>(attrs: &[A]) -> usize {
    attrs.as_ref().buffer_len()
}

/// Writes a nest's attributes into its payload buffer.
pub(crate) fn emit_nest<A: Nla>(attrs: &[A], buf: &mut [u8]) {
    attrs.as_ref().emit(buf)
}

//! Counters and rates.

/// Counters since the last zero and rates per second, all 64-bit.
///
/// Filled from the kernel's `STATS64` nest, or from the 32-bit `STATS`
/// nest on kernels before 4.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub struct Stats {
    /// Connections scheduled.
    pub conns: u64,
    /// Packets in.
    pub in_packets: u64,
    /// Packets out.
    pub out_packets: u64,
    /// Bytes in.
    pub in_bytes: u64,
    /// Bytes out.
    pub out_bytes: u64,
    /// Connections per second.
    pub cps: u64,
    /// Packets in per second.
    pub in_pps: u64,
    /// Packets out per second.
    pub out_pps: u64,
    /// Bytes in per second.
    pub in_bps: u64,
    /// Bytes out per second.
    pub out_bps: u64,
}

//! Counters and rates.

/// Counters since the last zero and rates per second, all 64-bit.
///
/// Filled from the kernel's `STATS64` nest, or from the 32-bit `STATS`
/// nest on kernels before 4.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
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

impl Stats {
    /// All counters and rates zero (the same as `Stats::default()`).
    ///
    /// ```
    /// use ipvsnl::Stats;
    /// let s = Stats::new()
    ///     .with_conns(3)
    ///     .with_packets(10, 9)
    ///     .with_bytes(1500, 900)
    ///     .with_cps(1)
    ///     .with_packet_rates(5, 4)
    ///     .with_byte_rates(700, 400);
    /// assert_eq!((s.in_packets, s.out_packets), (10, 9));
    /// assert_eq!((s.in_bps, s.out_bps), (700, 400));
    /// assert_eq!(Stats::new(), Stats::default());
    /// ```
    pub fn new() -> Self {
        Stats::default()
    }

    /// Sets the connections scheduled.
    #[must_use]
    pub fn with_conns(mut self, conns: u64) -> Self {
        self.conns = conns;
        self
    }

    /// Sets the packets in and out.
    #[must_use]
    pub fn with_packets(mut self, inbound: u64, outbound: u64) -> Self {
        self.in_packets = inbound;
        self.out_packets = outbound;
        self
    }

    /// Sets the bytes in and out.
    #[must_use]
    pub fn with_bytes(mut self, inbound: u64, outbound: u64) -> Self {
        self.in_bytes = inbound;
        self.out_bytes = outbound;
        self
    }

    /// Sets the connections per second.
    #[must_use]
    pub fn with_cps(mut self, cps: u64) -> Self {
        self.cps = cps;
        self
    }

    /// Sets the packets per second in and out.
    #[must_use]
    pub fn with_packet_rates(mut self, inbound: u64, outbound: u64) -> Self {
        self.in_pps = inbound;
        self.out_pps = outbound;
        self
    }

    /// Sets the bytes per second in and out.
    #[must_use]
    pub fn with_byte_rates(mut self, inbound: u64, outbound: u64) -> Self {
        self.in_bps = inbound;
        self.out_bps = outbound;
        self
    }
}

//! How much of an entry to decode, and what decoding gives.

/// Why a reply could not be turned into the model.
pub(crate) type DecodeResult<T> = Result<T, crate::DecodeError>;

/// How much of a listed service or destination to decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Detail {
    /// Everything, counters included.
    Full,
    /// Settings and connection counts, not the traffic counters (left at
    /// zero): what the sync engine plans with.
    Settings,
}

//! Round trip.

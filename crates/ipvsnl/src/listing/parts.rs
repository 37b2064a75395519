//! The parts of a service dump, counted: a dump made in one part is one
//! consistent snapshot of the namespace's services, and needs no check.
//!
//! What the kernel does (read in `net/netfilter/ipvs/ip_vs_ctl.c`,
//! measured on the Debian 6.1 and 6.12 kernels): each part of a service
//! dump is made by one call of its dump function, under the IPVS mutex,
//! into one datagram. A call walks the kernel's service tables (one for
//! every namespace) from where the last one stopped, counted over every
//! namespace's services, and stops at the end of the tables or when the
//! next service does not fit. `NLMSG_DONE` always comes alone, in a part of
//! its own, after the last part with services. So a part that stopped at
//! the end of the tables held every service of the namespace at that
//! moment; the parts after it can only repeat one (when another namespace
//! added services meanwhile), never miss one.
//!
//! A part stops for room only when less than a service message is left
//! of it. Measured: the parts of a reader with 4 KiB buffers hold 3,520
//! bytes (the first, of `NLMSG_GOODSIZE`: 11 services of 320 bytes) or
//! 3,840 bytes; an IPv6 service with a persistence engine takes 328 bytes.
//! A part is never smaller than `NLMSG_GOODSIZE`, a page less the kernel's
//! `skb_shared_info` (at least 3,328 bytes with the most fragments a kernel
//! can be built with, 45). So a dump whose services all came in ONE part of
//! at most [`ONE_PART_BYTES`] stopped at the end of the tables: it is whole.
//! (Counting services instead would not do: a dump of 11 services can take
//! two parts, or one part that stopped for room just before a 12th that a
//! change elsewhere then made the next part skip.)

/// The largest part, in bytes, that surely stopped at the end of the
/// service tables rather than for room (see the module).
pub(crate) const ONE_PART_BYTES: usize = 2048;

/// How the entries of a dump came: in how many datagrams, and how long
/// the first of them was.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Parts {
    /// Datagrams that held at least one entry.
    with_entries: u32,
    /// The length of the first of them.
    first_len: usize,
    /// The length of the datagram being read, until its first entry.
    reading: Option<usize>,
}

impl Parts {
    /// A datagram of the dump is about to be read.
    pub(crate) fn datagram(&mut self, len: usize) {
        self.reading = Some(len);
    }

    /// An entry of the dump was read (from the datagram last announced).
    pub(crate) fn entry(&mut self) {
        if let Some(len) = self.reading.take() {
            self.with_entries += 1;
            if self.with_entries == 1 {
                self.first_len = len;
            }
        }
    }

    /// Whether the entries came in one part at most: then none of them is
    /// a repeat (a dump repeats an entry only when it resumes).
    pub(crate) fn is_single(&self) -> bool {
        self.with_entries <= 1
    }

    /// The dump starts over.
    pub(crate) fn restart(&mut self) {
        *self = Parts::default();
    }

    /// Whether the dump was made in one go under the kernel's mutex: no
    /// service at all, or all of them in one part that surely ended at the
    /// end of the tables. Such a dump holds every service that existed
    /// while it was made.
    pub(crate) fn is_one_snapshot(&self) -> bool {
        match self.with_entries {
            0 => true,
            1 => self.first_len <= ONE_PART_BYTES,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dump(datagrams: &[(usize, usize)]) -> Parts {
        let mut p = Parts::default();
        for &(len, services) in datagrams {
            p.datagram(len);
            for _ in 0..services {
                p.entry();
            }
        }
        p
    }

    #[test]
    fn only_an_empty_dump_or_one_short_part_is_one_snapshot() {
        // The DONE alone: an empty table.
        assert!(dump(&[(20, 0)]).is_one_snapshot());
        // Five services, then the DONE.
        assert!(dump(&[(1600, 5), (20, 0)]).is_one_snapshot());
        assert!(dump(&[(ONE_PART_BYTES, 6), (20, 0)]).is_one_snapshot());
        // One part that may have stopped for room.
        assert!(!dump(&[(3520, 11), (20, 0)]).is_one_snapshot());
        assert!(!dump(&[(ONE_PART_BYTES + 1, 6), (20, 0)]).is_one_snapshot());
        // Two parts, however short.
        assert!(!dump(&[(320, 1), (320, 1), (20, 0)]).is_one_snapshot());
        assert!(!dump(&[(320, 1), (320, 1), (20, 0)]).is_single());
        // One part, whatever its size, repeats nothing.
        assert!(dump(&[(3840, 12), (20, 0)]).is_single());
        // A datagram of another call's replies (no service of ours) is not
        // a part.
        assert!(dump(&[(3840, 0), (1600, 5), (20, 0)]).is_one_snapshot());
    }

    #[test]
    fn a_dump_taken_again_is_counted_again() {
        let mut p = dump(&[(3520, 11), (320, 1)]);
        p.restart();
        p.datagram(640);
        p.entry();
        p.entry();
        assert!(p.is_one_snapshot() && p.is_single());
    }
}

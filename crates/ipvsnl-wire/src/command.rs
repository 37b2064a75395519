//! The commands of the IPVS generic-netlink family (`IPVS_CMD_*`).

/// One IPVS command, as carried in the generic-netlink header.
///
/// The kernel replies to a get with the matching "new"/"set" command: a
/// service dump arrives as [`IpvsCommand::NewService`], `GET_INFO` is answered
/// with [`IpvsCommand::SetInfo`] and `GET_CONFIG` with
/// [`IpvsCommand::SetConfig`]. A number this crate does not know is kept in
/// [`IpvsCommand::Other`].
///
/// ```
/// use ipvsnl_wire::IpvsCommand;
/// assert_eq!(u8::from(IpvsCommand::GetService), 4);
/// assert_eq!(IpvsCommand::from(17), IpvsCommand::Flush);
/// assert_eq!(IpvsCommand::from(99), IpvsCommand::Other(99));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum IpvsCommand {
    /// Add a service (1).
    NewService,
    /// Edit a service (2).
    SetService,
    /// Delete a service (3).
    DelService,
    /// Get one service, or dump all (4).
    GetService,
    /// Add a destination (5); also the reply command of a destination dump.
    NewDest,
    /// Edit a destination (6).
    SetDest,
    /// Delete a destination (7).
    DelDest,
    /// Dump the destinations of one service (8, dump only).
    GetDest,
    /// Start a sync daemon (9); also the reply command of a daemon dump.
    NewDaemon,
    /// Stop a sync daemon (10).
    DelDaemon,
    /// Dump the running sync daemons (11, dump only).
    GetDaemon,
    /// Set the connection timeouts (12); also the reply to `GET_CONFIG`.
    SetConfig,
    /// Get the connection timeouts (13).
    GetConfig,
    /// The reply to `GET_INFO` (14).
    SetInfo,
    /// Get the version and connection table size (15).
    GetInfo,
    /// Zero the counters of one service or of everything (16).
    Zero,
    /// Delete every service (17).
    Flush,
    /// A command number this crate does not know.
    Other(u8),
}

impl From<IpvsCommand> for u8 {
    #[inline]
    fn from(cmd: IpvsCommand) -> u8 {
        use IpvsCommand::*;
        match cmd {
            NewService => 1,
            SetService => 2,
            DelService => 3,
            GetService => 4,
            NewDest => 5,
            SetDest => 6,
            DelDest => 7,
            GetDest => 8,
            NewDaemon => 9,
            DelDaemon => 10,
            GetDaemon => 11,
            SetConfig => 12,
            GetConfig => 13,
            SetInfo => 14,
            GetInfo => 15,
            Zero => 16,
            Flush => 17,
            Other(n) => n,
        }
    }
}

impl From<u8> for IpvsCommand {
    fn from(n: u8) -> Self {
        use IpvsCommand::*;
        match n {
            1 => NewService,
            2 => SetService,
            3 => DelService,
            4 => GetService,
            5 => NewDest,
            6 => SetDest,
            7 => DelDest,
            8 => GetDest,
            9 => NewDaemon,
            10 => DelDaemon,
            11 => GetDaemon,
            12 => SetConfig,
            13 => GetConfig,
            14 => SetInfo,
            15 => GetInfo,
            16 => Zero,
            17 => Flush,
            n => Other(n),
        }
    }
}

impl IpvsCommand {
    /// Whether the kernel serves this command only as a dump
    /// (`NLM_F_DUMP` must be set, or the kernel answers `EOPNOTSUPP`).
    pub fn is_dump_only(self) -> bool {
        matches!(self, IpvsCommand::GetDest | IpvsCommand::GetDaemon)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_number_round_trips() {
        for n in 0..=u8::MAX {
            assert_eq!(u8::from(IpvsCommand::from(n)), n);
        }
        assert_eq!(IpvsCommand::from(0), IpvsCommand::Other(0));
        assert!(IpvsCommand::GetDest.is_dump_only());
        assert!(!IpvsCommand::GetService.is_dump_only());
    }
}

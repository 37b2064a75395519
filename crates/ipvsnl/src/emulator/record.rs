//! What a request asked, in the library's words, for the record of
//! requests taken ([`Taken`](super::Taken)): its kind, and for a change
//! the library's [`Request`] decoded from the bytes received.

use ipvsnl_wire::{IpvsCommand, IPVS_CMD_ATTR_SERVICE};

use crate::decode::{self, Detail};
use crate::proto::frame;
use crate::{AddressFamily, Request, RequestKind};

/// The kind of IPVS command `command` (sent as a dump or not).
pub(crate) fn kind(command: IpvsCommand, dump: bool) -> Option<RequestKind> {
    use IpvsCommand::*;
    use RequestKind as K;
    Some(match command {
        NewService => K::AddService,
        SetService => K::EditService,
        DelService => K::DeleteService,
        GetService if dump => K::ListServices,
        GetService => K::GetService,
        NewDest => K::AddDestination,
        SetDest => K::EditDestination,
        DelDest => K::DeleteDestination,
        GetDest => K::ListDestinations,
        NewDaemon => K::StartDaemon,
        DelDaemon => K::StopDaemon,
        GetDaemon => K::ListDaemons,
        SetConfig => K::SetTimeouts,
        GetConfig => K::GetTimeouts,
        GetInfo => K::GetInfo,
        Zero => K::Zero,
        Flush => K::Flush,
        _ => return None,
    })
}

/// The change a message asks for, if it is one the library can say.
pub(crate) fn request(command: IpvsCommand, attrs: &[u8]) -> Option<Request> {
    use IpvsCommand::*;
    let service = || {
        decode::service_reply(attrs, Detail::Settings)
            .ok()
            .map(|e| e.service)
    };
    let dest = |family: AddressFamily| {
        let mut one = Vec::with_capacity(1);
        decode::push_destination(attrs, family, Detail::Settings, &mut one).ok()?;
        one.pop().map(|e| e.destination)
    };
    let message = || frame::decode(command.into(), attrs).ok();
    Some(match command {
        NewService => Request::AddService(Box::new(service()?)),
        SetService => Request::EditService(Box::new(service()?)),
        DelService => Request::DeleteService(service()?.key),
        NewDest | SetDest | DelDest => {
            let key = service()?.key;
            let d = dest(key.family())?;
            match command {
                NewDest => Request::AddDestination(key, d),
                SetDest => Request::EditDestination(key, d),
                _ => Request::DeleteDestination(key, d.addr, d.port),
            }
        }
        Zero => match ipvsnl_wire::find_attr(attrs, IPVS_CMD_ATTR_SERVICE) {
            Ok(Some(_)) => Request::Zero(Some(service()?.key)),
            _ => Request::Zero(None),
        },
        Flush => Request::Flush,
        SetConfig => Request::SetTimeouts(decode::timeouts(&message()?.attrs)),
        NewDaemon => Request::StartDaemon(decode::sync_daemon(&message()?.attrs).ok()?),
        DelDaemon => {
            let d = decode::sync_daemon(&message()?.attrs).ok()?;
            Request::StopDaemon(d.role)
        }
        _ => return None,
    })
}

/// The service a message names, if any.
pub(crate) fn service(attrs: &[u8]) -> Option<crate::ServiceKey> {
    match ipvsnl_wire::find_attr(attrs, IPVS_CMD_ATTR_SERVICE) {
        Ok(Some(_)) => decode::service_reply(attrs, Detail::Settings)
            .ok()
            .map(|e| e.service.key),
        _ => None,
    }
}

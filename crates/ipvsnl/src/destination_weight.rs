//! The one partial edit: a destination's weight set alone, its other
//! settings read from the kernel and written back unchanged (an IPVS edit
//! replaces every field of a destination; the kernel has no partial one).

use std::net::IpAddr;

use crate::client_core::ClientCore;
use crate::decode::Detail;
use crate::transport::Transport;
use crate::{Destination, Error, Request, ServiceKey};

impl<T: Transport> ClientCore<T> {
    /// Sets the weight of destination `addr`:`port` of `service`, keeping
    /// its forwarding and thresholds: a listing of the service's
    /// destinations, then an edit with the listed settings and the new
    /// weight (see [`Client::set_destination_weight`](crate::Client::set_destination_weight)).
    pub(crate) async fn set_destination_weight(
        &mut self,
        service: &ServiceKey,
        addr: IpAddr,
        port: u16,
        weight: u32,
    ) -> Result<(), Error> {
        let asked =
            Request::EditDestination(*service, Destination::new(addr, port).with_weight(weight));
        asked.validate()?;
        let listed = self.list_destinations(service, Detail::Settings).await?;
        let Some(current) = listed
            .into_iter()
            .map(|entry| entry.destination)
            .find(|d| d.addr == addr && d.port == port)
        else {
            // What the kernel answers an edit of a destination it does not
            // have; nothing was sent.
            return Err(Error::Refused {
                target: Box::new(asked.target()),
                errno: libc::ENOENT,
            });
        };
        self.set(Request::EditDestination(
            *service,
            current.with_weight(weight),
        ))
        .await
    }
}

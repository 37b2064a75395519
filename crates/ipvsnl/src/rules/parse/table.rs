//! Replaying parsed rules onto an empty [`Table`], refusing what the
//! kernel would refuse at that point of the text.

use std::collections::BTreeMap;
use std::net::IpAddr;

use super::error::{BadLine, LineError, RulesError};
use super::Rules;
use crate::sync::{Table, TableDestination};
use crate::{Request, ServiceKey};

/// The table being built, with the line that added each service and
/// real server (for the messages).
#[derive(Default)]
struct Replay {
    table: Table,
    services: BTreeMap<ServiceKey, usize>,
    servers: BTreeMap<(ServiceKey, IpAddr, u16), usize>,
}

/// The short command of a request, for messages.
fn command(request: &Request) -> &'static str {
    match request {
        Request::AddService(_) => "-A",
        Request::EditService(_) => "-E",
        Request::DeleteService(_) => "-D",
        Request::AddDestination(..) => "-a",
        Request::EditDestination(..) => "-e",
        Request::DeleteDestination(..) => "-d",
        Request::Zero(_) => "-Z",
        Request::Flush => "-C",
        Request::SetTimeouts(_) => "--set",
        Request::StartDaemon(_) => "--start-daemon",
        Request::StopDaemon(_) => "--stop-daemon",
    }
}

impl Replay {
    fn need_service(&self, request: &Request, key: &ServiceKey) -> Result<(), LineError> {
        match self.table.get(key) {
            Some(_) => Ok(()),
            None => Err(LineError::NoSuchService {
                command: command(request),
                key: *key,
            }),
        }
    }

    fn need_server(
        &self,
        request: &Request,
        key: &ServiceKey,
        addr: &IpAddr,
        port: u16,
    ) -> Result<(), LineError> {
        self.need_service(request, key)?;
        match self.table.get(key).and_then(|s| s.destination(addr, port)) {
            Some(_) => Ok(()),
            None => Err(LineError::NoSuchDestination {
                command: command(request),
                key: *key,
                addr: *addr,
                port,
            }),
        }
    }

    /// Applies one request of line `line`, or says why the kernel would
    /// refuse it.
    fn apply(&mut self, line: usize, request: &Request) -> Result<(), LineError> {
        match request {
            Request::AddService(svc) => {
                if let Some(&added_on) = self.services.get(&svc.key) {
                    return Err(LineError::ServiceExists {
                        key: svc.key,
                        added_on,
                    });
                }
                self.table.insert((**svc).clone(), []);
                self.services.insert(svc.key, line);
            }
            Request::EditService(svc) => {
                self.need_service(request, &svc.key)?;
                if let Some(entry) = self.table.get_mut(&svc.key) {
                    entry.service = (**svc).clone();
                }
            }
            Request::DeleteService(key) => {
                self.need_service(request, key)?;
                self.table.remove(key);
                self.services.remove(key);
                self.servers.retain(|(k, _, _), _| k != key);
            }
            Request::AddDestination(key, dest) => {
                self.need_service(request, key)?;
                let id = (*key, dest.addr, dest.port);
                if let Some(&added_on) = self.servers.get(&id) {
                    return Err(LineError::DestinationExists {
                        key: *key,
                        addr: dest.addr,
                        port: dest.port,
                        added_on,
                    });
                }
                self.upsert(key, dest);
                self.servers.insert(id, line);
            }
            Request::EditDestination(key, dest) => {
                self.need_server(request, key, &dest.addr, dest.port)?;
                self.upsert(key, dest);
            }
            Request::DeleteDestination(key, addr, port) => {
                self.need_server(request, key, addr, *port)?;
                if let Some(entry) = self.table.get_mut(key) {
                    entry.remove(addr, *port);
                }
                self.servers.remove(&(*key, *addr, *port));
            }
            Request::Flush => *self = Replay::default(),
            Request::Zero(Some(key)) => self.need_service(request, key)?,
            Request::Zero(None) => {}
            other => {
                return Err(LineError::NotATableCommand {
                    command: command(other),
                })
            }
        }
        Ok(())
    }

    fn upsert(&mut self, key: &ServiceKey, dest: &crate::Destination) {
        if let Some(entry) = self.table.get_mut(key) {
            entry.upsert(TableDestination::new(*dest));
        }
    }
}

/// See [`Rules::to_table`].
pub(super) fn to_table(rules: &Rules) -> Result<Table, RulesError> {
    let mut replay = Replay::default();
    let mut bad = Vec::new();
    for (line, request) in rules.iter() {
        if let Err(e) = replay.apply(line, request) {
            bad.push(BadLine::new(line, e));
        }
    }
    match RulesError::from_lines(bad) {
        Some(e) => Err(e),
        None => Ok(replay.table),
    }
}

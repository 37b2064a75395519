//! First contact of the library with a real kernel: family resolution,
//! add, list, get, dump of destinations, pipelined batch with a failure.

use crate::common;

use common::*;
use ipvsnl::{Client, Destination, Request, Scheduler, Service, ServiceKey};

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn add_list_and_batch() {
    fresh_netns();
    let mut c = Client::new().unwrap();
    let info = c.info().unwrap();
    assert_eq!(info.version_string(), "1.2.1");
    let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
    c.add_service(&Service::new(key).with_scheduler(Scheduler::RoundRobin))
        .unwrap();
    let e = c.add_service(&Service::new(key)).unwrap_err();
    assert!(e.is_already_exists(), "{e}");
    c.add_destination(&key, &Destination::new("10.0.0.2".parse().unwrap(), 8080))
        .unwrap();
    let got = c.service(&key).unwrap();
    assert_eq!(got.service.scheduler, Scheduler::RoundRobin);
    let dests = c.destinations(&key).unwrap();
    assert_eq!(dests.len(), 1);
    assert_eq!(dests[0].destination.port, 8080);
    assert_eq!(
        ipvsadm_ok(&["-S", "-n"]),
        "-A -t 10.0.0.1:80 -s rr\n-a -t 10.0.0.1:80 -r 10.0.0.2:8080 -m -w 1\n"
    );
    let mut reqs = Vec::new();
    for i in 0..300u32 {
        let k = ServiceKey::tcp(std::net::IpAddr::from([10, 1, (i >> 8) as u8, i as u8]), 80);
        reqs.push(Request::add_service(Service::new(k)));
        reqs.push(Request::AddDestination(
            k,
            Destination::new("10.9.0.1".parse().unwrap(), 80),
        ));
    }
    reqs.insert(100, Request::add_service(Service::new(key))); // duplicate: EEXIST
    let out = c.apply(&reqs);
    assert_eq!(out.len(), reqs.len());
    let failed: Vec<_> = out.iter().enumerate().filter(|(_, r)| r.is_err()).collect();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0].0, 100);
    assert!(failed[0].1.as_ref().unwrap_err().is_already_exists());
    let table = c.table().unwrap();
    assert_eq!(table.len(), 301);
    assert!(table.iter().all(|t| t.destinations.len() == 1));
}

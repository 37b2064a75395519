//! Clients made in a network namespace given as an open descriptor
//! (`in_namespace_fd`), on both clients: each lists and changes the table
//! of the descriptor's namespace, whatever the caller's, after the
//! namespace's name and the caller's descriptor are gone; a descriptor of
//! anything else is refused, named.

use crate::common;

use std::fs::File;
use std::net::IpAddr;
use std::os::fd::AsFd;

use common::named_netns::NamedNetns;
use common::ops::{runtime, Ops};
use ipvsnl::{AsyncClient, Client, Service, ServiceKey};

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

/// The keys of a listing.
fn keys(table: Result<Vec<ipvsnl::ServiceEntry>, ipvsnl::Error>) -> Vec<ServiceKey> {
    table.unwrap().iter().map(|e| *e.key()).collect()
}

/// `here`: a client of the test thread's namespace; `there`: one made from
/// a descriptor of another namespace (its name deleted since, the
/// descriptor closed); `here_by_fd`: one made from a descriptor of the test
/// thread's own namespace file.
async fn each_sees_its_own_namespace<C: Ops>(here: &mut C, there: &mut C, here_by_fd: &mut C) {
    let mine = ServiceKey::tcp(ip("10.0.0.1"), 80);
    let theirs = ServiceKey::tcp(ip("10.0.0.2"), 80);
    here.add_service(&Service::new(mine)).await.unwrap();
    there.add_service(&Service::new(theirs)).await.unwrap();
    assert_eq!(keys(there.table().await), [theirs], "{}", C::NAME);
    assert_eq!(keys(here.table().await), [mine], "{}", C::NAME);
    assert_eq!(keys(here_by_fd.table().await), [mine], "{}", C::NAME);
    // The totals are read in the descriptor's namespace too.
    let totals = there.totals().await.unwrap();
    assert_eq!(totals.conns, 0, "{}", C::NAME);
}

/// A fresh namespace with a name, opened, and its name deleted: only the
/// descriptor reaches it.
fn unnamed_namespace(name: &str) -> File {
    let mut ns = NamedNetns::add(name);
    let file = File::open(ns.path()).unwrap();
    ns.delete();
    assert!(!ns.path().exists());
    file
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn blocking() {
    common::fresh_netns();
    let file = unnamed_namespace("ipvsnl-fd-blocking");
    let mut there = Client::in_namespace_fd(file.as_fd()).unwrap();
    drop(file);
    let own = File::open("/proc/thread-self/ns/net").unwrap();
    let mut here_by_fd = Client::in_namespace_fd(own).unwrap();
    let mut here = Client::new().unwrap();
    runtime().block_on(each_sees_its_own_namespace(
        &mut here,
        &mut there,
        &mut here_by_fd,
    ));
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn tokio() {
    common::fresh_netns();
    runtime().block_on(async {
        let file = unnamed_namespace("ipvsnl-fd-tokio");
        let mut there = AsyncClient::in_namespace_fd(file.as_fd()).await.unwrap();
        drop(file);
        let own = File::open("/proc/thread-self/ns/net").unwrap();
        let mut here_by_fd = AsyncClient::in_namespace_fd(own).await.unwrap();
        let mut here = AsyncClient::new().unwrap();
        each_sees_its_own_namespace(&mut here, &mut there, &mut here_by_fd).await;
    });
}

/// What `in_namespace_fd` says of a descriptor that is no network
/// namespace (another kind of namespace, a plain file).
fn assert_refused_named(e: ipvsnl::Error, fd: &File) {
    use std::os::fd::AsRawFd;
    assert!(matches!(e, ipvsnl::Error::Namespace { .. }), "{e:?}");
    assert_eq!(e.errno(), Some(libc::EINVAL), "{e}");
    let named = format!("/proc/self/fd/{}", fd.as_raw_fd());
    assert!(e.to_string().contains(&named), "{e}");
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn not_a_network_namespace_is_refused_named() {
    common::fresh_netns();
    for path in ["/proc/thread-self/ns/uts", "/proc/self/stat"] {
        let f = File::open(path).unwrap();
        assert_refused_named(Client::in_namespace_fd(&f).unwrap_err(), &f);
        let e = runtime()
            .block_on(AsyncClient::in_namespace_fd(&f))
            .unwrap_err();
        assert_refused_named(e, &f);
    }
}

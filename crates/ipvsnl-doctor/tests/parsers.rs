//! The pure parsers, on fixture files made for these tests
//! (tests/fixtures; the module images come from make-modules.py).

use ipvsnl_doctor::modfile::{self, Compression, ModfileError};
use ipvsnl_doctor::parse::{self, LoadState};

fn fixture(name: &str) -> Vec<u8> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/");
    std::fs::read(format!("{path}{name}")).unwrap_or_else(|e| panic!("fixture {name}: {e}"))
}

fn text(name: &str) -> String {
    String::from_utf8(fixture(name)).expect("fixture is UTF-8")
}

#[test]
fn proc_modules() {
    let modules = parse::parse_proc_modules(&text("proc-modules.txt"));
    let names: Vec<&str> = modules.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "ip_vs_sh",
            "ip_vs_wrr",
            "ip_vs_rr",
            "ip_vs",
            "nf_conntrack",
            "nf_defrag_ipv6",
            "nf_defrag_ipv4",
            "libcrc32c",
            "virtio_net",
            "odd_mod"
        ]
    );
    let ip_vs = &modules[3];
    assert_eq!(ip_vs.size, 204800);
    assert_eq!(ip_vs.refcount, Some(6));
    assert_eq!(ip_vs.used_by, ["ip_vs_sh", "ip_vs_wrr", "ip_vs_rr"]);
    assert_eq!(ip_vs.state, LoadState::Live);
    assert!(modules[0].used_by.is_empty());
    assert_eq!(modules[8].state, LoadState::Loading);
    assert_eq!(modules[9].refcount, None);
    assert_eq!(modules[9].state, LoadState::Unloading);
    assert!(parse::parse_proc_modules("").is_empty());
}

#[test]
fn modules_builtin() {
    assert_eq!(
        parse::parse_modules_builtin(&text("modules.builtin")),
        ["loop", "br_netfilter", "ip_vs_wlc"]
    );
}

#[test]
fn modules_builtin_modinfo() {
    assert_eq!(
        parse::parse_builtin_modinfo(&fixture("modules.builtin.modinfo")),
        ["loop", "br_netfilter", "ip_vs_wlc"]
    );
    assert!(parse::parse_builtin_modinfo(b"\xff\xfe=\0").is_empty());
}

#[test]
fn modules_dep() {
    let deps = parse::parse_modules_dep(&text("modules.dep"));
    let names: Vec<&str> = deps.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(
        names,
        ["ip_vs", "ip_vs_rr", "nf_conntrack", "libcrc32c", "dummy"]
    );
    assert_eq!(deps[0].path, "kernel/net/netfilter/ipvs/ip_vs.ko.xz");
    assert_eq!(
        deps[0].dep_names(),
        [
            "nf_conntrack",
            "nf_defrag_ipv6",
            "nf_defrag_ipv4",
            "libcrc32c"
        ]
    );
    assert_eq!(deps[1].dep_names()[0], "ip_vs");
    assert!(deps[3].deps.is_empty());
}

#[test]
fn status_and_uid_map() {
    let root = text("status-root.txt");
    assert_eq!(parse::parse_cap_eff(&root), Some(0x1ff_ffff_ffff));
    assert!(parse::has_cap_net_admin(
        parse::parse_cap_eff(&root).unwrap()
    ));
    assert_eq!(parse::parse_effective_uid(&root), Some(0));
    let nobody = text("status-nobody.txt");
    assert_eq!(parse::parse_cap_eff(&nobody), Some(0));
    assert_eq!(parse::parse_effective_uid(&nobody), Some(65534));
    assert!(parse::is_initial_uid_map(&text("uid_map-initial.txt")));
    assert!(!parse::is_initial_uid_map(&text("uid_map-userns.txt")));
}

#[test]
fn vermagic_plain_elf64() {
    let bytes = fixture("modules/ipvs-6.1.ko");
    assert_eq!(Compression::sniff(&bytes), None);
    let vermagic = modfile::vermagic_from_bytes(&bytes).unwrap();
    assert_eq!(
        vermagic,
        "6.1.0-test-amd64 SMP preempt mod_unload modversions "
    );
    assert_eq!(parse::vermagic_release(&vermagic), Some("6.1.0-test-amd64"));
    let section = modfile::modinfo_section(&bytes).unwrap();
    let entries = modfile::modinfo_entries(section);
    assert!(entries.contains(&("name".to_string(), "ip_vs".to_string())));
}

#[test]
fn vermagic_xz() {
    let bytes = fixture("modules/ipvs-6.1.ko.xz");
    assert_eq!(Compression::sniff(&bytes), Some(Compression::Xz));
    assert_eq!(
        modfile::vermagic_from_bytes(&bytes).unwrap(),
        "6.1.0-test-amd64 SMP preempt mod_unload modversions "
    );
}

#[test]
fn vermagic_zstd() {
    let bytes = fixture("modules/ipvs-6.12.ko.zst");
    assert_eq!(Compression::sniff(&bytes), Some(Compression::Zstd));
    assert_eq!(
        modfile::vermagic_from_bytes(&bytes).unwrap(),
        "6.12.0-test-amd64 SMP preempt mod_unload modversions "
    );
}

#[test]
fn vermagic_elf32_big_endian() {
    assert_eq!(
        modfile::vermagic_from_bytes(&fixture("modules/elf32-be.ko")).unwrap(),
        "5.10.0-mips SMP mod_unload "
    );
}

#[test]
fn vermagic_missing_or_corrupt() {
    assert!(matches!(
        modfile::vermagic_from_bytes(&fixture("modules/no-vermagic.ko")),
        Err(ModfileError::NoVermagic)
    ));
    // Every truncation of a valid image is an error, never a panic.
    let whole = fixture("modules/ipvs-6.1.ko");
    for len in 0..whole.len() - 1 {
        let _ = modfile::vermagic_from_bytes(&whole[..len]);
    }
    let xz = fixture("modules/ipvs-6.1.ko.xz");
    for len in 0..xz.len() - 1 {
        assert!(modfile::vermagic_from_bytes(&xz[..len]).is_err());
    }
    let zst = fixture("modules/ipvs-6.12.ko.zst");
    for len in 0..zst.len() - 1 {
        assert!(modfile::vermagic_from_bytes(&zst[..len]).is_err());
    }
    // Flipped bytes anywhere: still no panic.
    for at in 0..whole.len() {
        let mut bad = whole.clone();
        bad[at] ^= 0xff;
        let _ = modfile::vermagic_from_bytes(&bad);
    }
}

#[test]
fn decompression_is_bounded() {
    let xz = fixture("modules/ipvs-6.1.ko.xz");
    assert!(matches!(
        modfile::decompress(&xz, 100),
        Err(ModfileError::TooLarge { limit: 100 })
    ));
    let zst = fixture("modules/ipvs-6.12.ko.zst");
    assert!(matches!(
        modfile::decompress(&zst, 100),
        Err(ModfileError::TooLarge { limit: 100 })
    ));
    assert_eq!(modfile::decompress(&xz, 4096).unwrap().len(), 368);
}

#[test]
fn read_vermagic_from_file() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/modules/ipvs-6.12.ko");
    assert!(modfile::read_vermagic(&path)
        .unwrap()
        .starts_with("6.12.0-test-amd64 "));
    let err = modfile::read_vermagic(std::path::Path::new("/nonexistent/x.ko")).unwrap_err();
    assert!(err.to_string().contains("/nonexistent/x.ko"));
}

#[test]
fn file_names() {
    assert_eq!(Compression::from_file_name("a.ko"), Some(Compression::None));
    assert_eq!(
        Compression::from_file_name("a.ko.xz"),
        Some(Compression::Xz)
    );
    assert_eq!(
        Compression::from_file_name("a.ko.zst"),
        Some(Compression::Zstd)
    );
    assert_eq!(
        Compression::from_file_name("a.ko.gz"),
        Some(Compression::Gzip)
    );
    assert_eq!(Compression::from_file_name("a.o"), None);
}

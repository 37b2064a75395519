//! The `current` record and the digest a reader checks.

use ipvs_agent::fleet::current::{digest, Current};

#[test]
fn the_digest_changes_with_any_key_value_or_boundary() {
    let base = digest([("agent", &b"a"[..]), ("services/0", &b"s"[..])]);
    assert!(
        base.starts_with("sha256:") && base.len() == 7 + 64,
        "{base}"
    );
    assert_eq!(
        base,
        digest([("agent", &b"a"[..]), ("services/0", &b"s"[..])])
    );
    for other in [
        digest([("agent", &b"a"[..])]),
        digest([("agent", &b"a"[..]), ("services/0", &b"t"[..])]),
        digest([("agent", &b"a"[..]), ("services/1", &b"s"[..])]),
        digest([("agent", &b"as"[..]), ("services/0", &b""[..])]),
    ] {
        assert_ne!(base, other);
    }
}

#[test]
fn a_record_reads_back_and_a_bad_one_is_refused_with_why() {
    let c = Current::new(12, 10_000, digest([("agent", &b"a"[..])]));
    assert_eq!(Current::parse(&c.to_text()), Ok(c.clone()));
    assert_eq!(
        Current::parse("generation = 1\n"),
        Err("the first line is not \"# ipvs-agent fleet current v1\"".to_string())
    );
    let no_digest = c.to_text().replace("digest", "hash");
    assert_eq!(
        Current::parse(&no_digest),
        Err("unknown key `hash`".to_string())
    );
    let bad = c.to_text().replace("services = 10000", "services = -1");
    assert!(Current::parse(&bad).unwrap_err().contains("each needed"));
}

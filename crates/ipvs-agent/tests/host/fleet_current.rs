//! The `current` record and the digest a reader checks: a sum of the
//! keys' hashes, the same in any order, updated one key at a time.

use ipvs_agent::fleet::store::current::{digest, Current, KeySum, DIGEST_PREFIX};

#[test]
fn the_digest_changes_with_any_key_and_not_with_their_order() {
    let base = digest(["settings/aa", "services/0/bb"]);
    assert!(
        base.starts_with(DIGEST_PREFIX) && base.len() == DIGEST_PREFIX.len() + 32,
        "{base}"
    );
    assert_eq!(base, digest(["services/0/bb", "settings/aa"]));
    for other in [
        digest(["settings/aa"]),
        digest(["settings/aa", "services/0/bc"]),
        digest(["settings/aa", "services/1/bb"]),
        digest(["settings/aa", "services/0/bb", "services/0/bb"]),
        digest(std::iter::empty::<&str>()),
    ] {
        assert_ne!(base, other);
    }
}

#[test]
fn a_sum_updated_key_by_key_equals_the_digest_of_the_keys() {
    let keys: Vec<String> = (0..300).map(|i| format!("services/{i:08}/{i:x}")).collect();
    let mut sum = KeySum::default();
    for k in &keys {
        sum.add(k);
    }
    assert_eq!(sum.to_text(), digest(keys.iter().map(String::as_str)));
    // One key changed: one removed, one added.
    sum.remove(&keys[17]);
    sum.add("services/00000017/new");
    let mut changed = keys.clone();
    changed[17] = "services/00000017/new".to_string();
    assert_eq!(sum.to_text(), digest(changed.iter().map(String::as_str)));
    // Every key removed: back to the empty sum (the wrap-arounds undone).
    for k in &changed {
        sum.remove(k);
    }
    assert_eq!(sum, KeySum::default());
}

#[test]
fn a_record_reads_back_and_a_bad_one_is_refused_with_why() {
    let c = Current::new(12, 10_000, digest(["settings/aa"]));
    assert_eq!(Current::parse(&c.to_text()), Ok(c.clone()));
    assert_eq!(
        Current::parse("generation = 1\n"),
        Err("the first line is not \"# ipvs-agent fleet current v2\"".to_string())
    );
    let no_digest = c.to_text().replace("digest", "hash");
    assert_eq!(
        Current::parse(&no_digest),
        Err("unknown key `hash`".to_string())
    );
    let bad = c.to_text().replace("services = 10000", "services = -1");
    assert!(Current::parse(&bad).unwrap_err().contains("each needed"));
}

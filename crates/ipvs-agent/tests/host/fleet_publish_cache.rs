//! The publisher's cache (`--cache`) proven equivalent to the whole parse:
//! a sequence of files (changes of one service, services inserted,
//! removed and moved, the settings changed, every construct that makes
//! the publisher parse the file whole, errors in a changed section and
//! across sections, a cache gone or corrupt) each published three ways
//! to three prefixes of one etcd: the file parsed whole by
//! `config::load` and published by `write::publish` (as before the
//! cache), `--no-cache`, and `--cache` (the cache kept from one file to
//! the next). After each, the errors are the same text, or what is
//! stored under the three prefixes is the same, byte for byte.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use etcd_client::GetOptions;
use ipvs_agent::cli::parse_publish;
use ipvs_agent::config::{self, LoadError};
use ipvs_agent::fleet::publish::cache::Cache;
use ipvs_agent::fleet::publish::file::{publish_ready, read_file, PublishArgs};
use ipvs_agent::fleet::publish::write::{publish, PublishOptions};
use ipvs_agent::fleet::store::etcd::Etcd;
use ipvs_agent::fleet::store::layout::Layout;
use ipvs_agent::fleet::FleetError;

use crate::fleet_etcd::EtcdServer;

/// Service `i` of the test's files, in one of five forms (sub-tables,
/// inline tables, comments, IPv6, fwmark), its first server's weight `w`.
pub(crate) fn service(i: usize, w: u32) -> String {
    match i % 5 {
        0 => format!(
            "[[service]]\nname = \"web {i}\"\nprotocol = \"tcp\"\naddress = \"192.0.2.{i}\"\nport = 80\n\
             [[service.server]]\naddress = \"10.0.0.1\"\nweight = {w}\n\
             [[service.server]]\naddress = \"10.0.0.2\"\n"
        ),
        1 => format!(
            "[[service]]\nfwmark = {}\nscheduler = \"sh\"\nscheduler_flags = [\n  \"sh-port\",\n]\n\
             [service.persistence]\ntimeout = 300\nnetmask = \"255.255.255.0\"\n\
             [[service.server]]\naddress = \"10.0.1.1\"\nweight = {w}\nforward = \"route\"\n",
            100 + i
        ),
        2 => format!(
            "  [[service]]   # indented, with a comment\nprotocol = \"tcp\"\naddress = \"198.51.100.{i}\"\n\
             port = 443\n[service.check]\nkind = \"http\"\npath = \"/h\"\n\n\
             [[service.server]]\naddress = \"10.0.2.1\"\nport = 8443\nweight = {w}\n\
             [service.server.check]\nkind = \"tcp\"\n"
        ),
        3 => format!(
            "[[service]]\nprotocol = \"udp\"\naddress = \"2001:db8::{i:x}\"\nport = 53\n\
             quorum = {{ min_weight = 1, below = \"withdraw\" }}\n\
             [[service.server]]\naddress = \"2001:db8:1::1\"\nweight = {w}\n\
             [[service.server]]\naddress = \"2001:db8:1::2\"\n"
        ),
        _ => format!(
            "# service {i}\n[[service]]\nprotocol = \"tcp\"\naddress = \"203.0.113.{i}\"\nport = 22\n\
             sorry_server = {{ address = \"10.0.9.9\", port = 22 }}\n\
             [[service.server]]\naddress = \"10.0.3.1\"\nport = 22\nweight = {w}\n"
        ),
    }
}

/// The settings part and `n` services, service `changed`'s weight `w`.
pub(crate) fn file(n: usize, changed: usize, w: u32) -> String {
    let mut text = String::from("# the test's file\n[agent]\nresync = \"20s\"\n\n");
    for i in 0..n {
        text.push_str(&service(i, if i == changed { w } else { 1 }));
    }
    text
}

/// One etcd and three ways to publish to it.
struct Three {
    _server: EtcdServer,
    etcd: Etcd,
    endpoint: String,
    dir: PathBuf,
    generation: u64,
    /// Whether the last publish with the cache read the keys stored.
    keys_read: bool,
}

/// What one publish gave, to compare.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    /// The file's errors, one a line.
    Errors(String),
    /// Generation, services, puts, deletes, transactions.
    Published(u64, usize, usize, usize, usize),
}

impl Three {
    async fn start(name: &str) -> Three {
        let server = EtcdServer::start();
        let etcd = Etcd::connect(&server.endpoints()).await.unwrap();
        let dir = std::env::temp_dir().join(format!("ipvs-agent-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Three {
            endpoint: server.endpoint(),
            _server: server,
            etcd,
            dir,
            generation: 0,
            keys_read: true,
        }
    }

    fn cache(&self) -> PathBuf {
        self.dir.join("publish.cache")
    }

    fn args(&self, prefix: &str, cache: bool) -> PublishArgs {
        let file = self.dir.join("agent.toml");
        let cache_path = self.cache();
        let mut a = vec![
            file.to_str().unwrap(),
            "--etcd",
            &self.endpoint,
            "--prefix",
            prefix,
        ];
        if cache {
            a.extend(["--cache", cache_path.to_str().unwrap()]);
        } else {
            a.push("--no-cache");
        }
        parse_publish(&a).unwrap()
    }

    /// Publishes `text` the three ways; panics unless they agree. Returns
    /// the outcome and how many sections the cache's publish parsed.
    async fn publish(&mut self, text: &str, what: &str) -> (Outcome, usize) {
        let path = self.dir.join("agent.toml");
        std::fs::write(&path, text).unwrap();
        let whole = match config::load(&path) {
            Ok(c) => {
                let p = publish(
                    &self.etcd,
                    &Layout::new("/whole"),
                    &c,
                    PublishOptions::default(),
                )
                .await
                .unwrap();
                Outcome::Published(p.generation, p.services, p.puts, p.deletes, p.transactions)
            }
            Err(LoadError::Invalid(e)) => Outcome::Errors(e.to_string()),
            Err(e) => panic!("{what}: {e}"),
        };
        let plain = self.by_args(&self.args("/plain", false), what).await.0;
        let (cache, parsed, keys_read) = self.by_args(&self.args("/cache", true), what).await;
        self.keys_read = keys_read;
        assert_eq!(plain, whole, "{what}: --no-cache");
        assert_eq!(cache, whole, "{what}: --cache");
        if let Outcome::Published(g, ..) = whole {
            self.generation = g;
            let want = self.stored("/whole").await;
            assert_eq!(self.stored("/plain").await, want, "{what}: --no-cache");
            assert_eq!(self.stored("/cache").await, want, "{what}: --cache");
        }
        (whole, parsed)
    }

    /// A publish by `args`: what it gave, the sections it parsed, whether
    /// it read the keys stored.
    async fn by_args(&self, args: &PublishArgs, what: &str) -> (Outcome, usize, bool) {
        let ready = match read_file(args) {
            Ok(r) => r,
            Err(FleetError::File(LoadError::Invalid(e))) => {
                return (Outcome::Errors(e.to_string()), 0, true)
            }
            Err(e) => panic!("{what}: {e}"),
        };
        let parsed = ready.parsed;
        let p = publish_ready(args, ready, PublishOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        (
            Outcome::Published(p.generation, p.services, p.puts, p.deletes, p.transactions),
            parsed,
            p.keys_read,
        )
    }

    /// Every key under `prefix` (relative) and its value.
    async fn stored(&self, prefix: &str) -> BTreeMap<String, Vec<u8>> {
        let r = self
            .etcd
            .client()
            .get(format!("{prefix}/"), Some(GetOptions::new().with_prefix()))
            .await
            .unwrap();
        r.kvs()
            .iter()
            .map(|kv| {
                let k = kv.key_str().unwrap();
                (k[prefix.len()..].to_string(), kv.value().to_vec())
            })
            .collect()
    }
}

impl Drop for Three {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn published(o: &Outcome) -> (usize, usize) {
    match o {
        Outcome::Published(_, _, puts, deletes, _) => (*puts, *deletes),
        Outcome::Errors(e) => panic!("not published: {e}"),
    }
}

fn errors(o: &Outcome) -> &str {
    match o {
        Outcome::Errors(e) => e,
        Outcome::Published(..) => panic!("published, errors expected"),
    }
}

#[tokio::test]
async fn a_publish_with_the_cache_stores_what_the_whole_parse_stores() {
    let mut t = Three::start("cache-changes").await;
    let n = 40;
    let (o, parsed) = t.publish(&file(n, 0, 1), "first").await;
    assert_eq!((published(&o).0, parsed), (n + 1, n));
    // A weight changed in each form (and the one changed before back to
    // 1): only those sections parsed, each an entry deleted and one put.
    for (round, changed) in [7, 11, 12, 23, 34].into_iter().enumerate() {
        let w = 2 + round as u32;
        let (o, parsed) = t.publish(&file(n, changed, w), "one weight").await;
        let two = usize::from(round > 0) + 1;
        assert_eq!(
            (published(&o), parsed),
            ((two, two), two),
            "service {changed}"
        );
        // What the cache's publish stored is known: no key read.
        assert!(!t.keys_read, "service {changed}");
    }
    // Unchanged: nothing parsed, nothing written.
    let same = file(n, 34, 6);
    let (o, parsed) = t.publish(&same, "unchanged").await;
    assert_eq!((published(&o), parsed), ((0, 0), 0));
    // A comment changed: its section parsed again, its entry the same.
    let commented = same.replace("# service 9\n", "# service nine\n");
    let (o, parsed) = t.publish(&commented, "a comment").await;
    assert_eq!((published(&o), parsed), ((0, 0), 1));
    // A service inserted in the middle: the ones after it move (new keys,
    // their values made again from the file), only the new one parsed.
    let at = commented.find("[[service]]\nname = \"web 20\"").unwrap();
    let mut inserted = commented.clone();
    inserted.insert_str(at, &service(45, 1));
    let (o, parsed) = t.publish(&inserted, "inserted").await;
    assert_eq!(parsed, 1);
    assert_eq!(published(&o), (21, 20));
    // Removed again, and two services swapped.
    let (o, parsed) = t.publish(&commented, "removed").await;
    assert_eq!((published(&o), parsed), ((20, 21), 0));
    let s3 = service(3, 1);
    let s4 = service(4, 1);
    let swapped = commented.replacen(&format!("{s3}{s4}"), &format!("{s4}{s3}"), 1);
    assert_ne!(swapped, commented);
    // (Service 4's leading comment ends service 3's section: both
    // sections' texts changed, so both are parsed.)
    let (o, parsed) = t.publish(&swapped, "swapped").await;
    assert_eq!((published(&o), parsed), ((2, 2), 2));
    // Moved without a text of theirs changed: none parsed.
    let (s0, s1) = (service(0, 1), service(1, 1));
    let moved = swapped.replacen(&format!("{s0}{s1}"), &format!("{s1}{s0}"), 1);
    assert_ne!(moved, swapped);
    let (o, parsed) = t.publish(&moved, "moved").await;
    assert_eq!((published(&o), parsed), ((2, 2), 0));
    assert!(!t.keys_read);
    // The settings changed: another context, every section parsed.
    let settings = moved.replace("resync = \"20s\"", "resync = \"25s\"");
    let (o, parsed) = t.publish(&settings, "settings").await;
    assert_eq!((published(&o), parsed), ((1, 1), n));
    // No settings part at all.
    let bare = settings.replace("[agent]\nresync = \"25s\"\n", "");
    let (o, parsed) = t.publish(&bare, "no settings").await;
    assert_eq!((published(&o), parsed), ((0, 1), n));
    assert!(t.generation >= 12);
}

#[tokio::test]
async fn what_the_scan_cannot_be_sure_of_is_parsed_whole_with_the_same_result() {
    let mut t = Three::start("cache-whole").await;
    let n = 10;
    let base = file(n, 0, 1);
    t.publish(&base, "first").await;
    let w20 = service(5, 20);
    let no_top = base.replace("[agent]\nresync = \"20s\"\n", "");
    let cases: Vec<(&str, String)> = vec![
        (
            "a multi-line string",
            base.replace("name = \"web 5\"", "name = \"\"\"web\n[[service]]\"\"\""),
        ),
        (
            "a literal one",
            base.replace("name = \"web 0\"", "name = '''web 0'''"),
        ),
        ("CRLF", base.replace('\n', "\r\n")),
        (
            "a table after the services",
            format!("{no_top}[agent]\nresync = \"20s\"\n"),
        ),
        (
            "a quoted header",
            base.replacen("[[service]]", "[[\"service\"]]", 3),
        ),
        (
            "a spaced header",
            base.replace("[[service.server]]", "[[ service.server ]]"),
        ),
        (
            "a nested array's line",
            base.replace("  \"sh-port\",\n", "[\"sh-port\"][0],\n"),
        ),
        (
            "text after a header",
            base.replacen("[[service]]\n", "[[service]] x = 1\n", 1),
        ),
        ("a byte-order mark", format!("\u{feff}{base}")),
        ("no service", "[agent]\nresync = \"1m\"\n".to_string()),
        (
            "a weight changed after them all",
            base.replace(&service(5, 1), &w20),
        ),
    ];
    let mut valid = Vec::new();
    for (what, text) in cases {
        // Parsed whole or by sections, the same either way (`publish`).
        if let (Outcome::Published(..), _) = t.publish(&text, what).await {
            valid.push(what);
        }
    }
    assert_eq!(
        valid,
        [
            "a multi-line string",
            "a literal one",
            "CRLF",
            "a table after the services",
            "a quoted header",
            "a spaced header",
            "a byte-order mark",
            "a weight changed after them all"
        ]
    );
}

#[tokio::test]
async fn errors_in_a_changed_section_are_the_whole_parse_s_at_the_file_s_lines() {
    let mut t = Three::start("cache-errors").await;
    let n = 20;
    let base = file(n, 0, 1);
    t.publish(&base, "first").await;
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "a port out of range",
            base.replace(
                "address = \"192.0.2.15\"\nport = 80",
                "address = \"192.0.2.15\"\nport = 70000",
            ),
            "`port` must be an integer from 0 to 65535, found 70000",
        ),
        (
            "a service twice",
            base.replace("address = \"192.0.2.15\"", "address = \"192.0.2.10\""),
            "192.0.2.10:80 is configured twice (first at line",
        ),
        (
            "a name twice",
            base.replace("name = \"web 15\"", "name = \"web 5\""),
            "service name \"web 5\" is used twice (first at line",
        ),
        (
            "a server twice",
            base.replace("address = \"10.0.0.2\"", "address = \"10.0.0.1\""),
            "twice",
        ),
        (
            "a syntax error",
            base.replace("port = 53\n", "port = = 53\n"),
            "TOML syntax",
        ),
        (
            "an unknown key",
            base.replace("port = 22\n", "port = 22\nbogus = 1\n"),
            "unknown key `bogus`",
        ),
        (
            "the settings",
            base.replace("resync = \"20s\"", "resync = \"0s\""),
            ":3:10: `resync` must be longer than 0",
        ),
        (
            "a service in the settings",
            base.replace("resync = \"20s\"\n", "resync = \"20s\"\n[service]\n"),
            "",
        ),
        (
            "an array cut by a header",
            base.replace("  \"sh-port\",\n", "[[service]]\n"),
            "TOML syntax",
        ),
    ];
    for (what, text, want) in cases {
        let (o, _) = t.publish(&text, what).await;
        assert!(errors(&o).contains(want), "{what}: {o:?}");
    }
    // After the errors, the cache still spares the services it knows.
    let (o, parsed) = t.publish(&file(n, 15, 2), "fixed").await;
    assert_eq!((published(&o), parsed), ((1, 1), 1));
}

#[tokio::test]
async fn a_cache_missing_corrupt_or_of_another_file_means_a_parse_of_every_section() {
    let mut t = Three::start("cache-corrupt").await;
    let n = 15;
    t.publish(&file(n, 0, 1), "first").await;
    let cache = t.cache();
    let text = std::fs::read_to_string(&cache).unwrap();
    assert!(
        text.starts_with("# ipvs-agent publish cache v2\n"),
        "{text}"
    );
    // A byte changed: the checksum does not match.
    let at = text.find("\ncontext ").unwrap() + 1;
    let at = at + text[at..].find('\n').unwrap() + 1;
    let flipped = if text.as_bytes()[at] == b'0' {
        "1"
    } else {
        "0"
    };
    std::fs::write(
        &cache,
        format!("{}{flipped}{}", &text[..at], &text[at + 1..]),
    )
    .unwrap();

    let (o, parsed) = t.publish(&file(n, 3, 2), "corrupt").await;
    assert_eq!((published(&o), parsed), ((1, 1), n));
    // Cut short.
    let text = std::fs::read_to_string(&cache).unwrap();
    std::fs::write(&cache, &text[..text.len() / 2]).unwrap();
    let (o, parsed) = t.publish(&file(n, 3, 3), "cut").await;
    assert_eq!((published(&o), parsed), ((1, 1), n));
    // Missing.
    std::fs::remove_file(&cache).unwrap();
    let (o, parsed) = t.publish(&file(n, 3, 4), "missing").await;
    assert_eq!((published(&o), parsed), ((1, 1), n));
    // A directory where the file should be: the publish goes on without.
    std::fs::remove_file(&cache).unwrap();
    std::fs::create_dir(&cache).unwrap();
    let (o, parsed) = t.publish(&file(n, 3, 5), "a directory").await;
    assert_eq!((published(&o), parsed), ((1, 1), n));
    assert!(Path::new(&cache).is_dir());
}

#[tokio::test]
async fn a_cache_that_names_a_value_the_file_does_not_give_writes_nothing_and_is_removed() {
    let mut t = Three::start("cache-stale").await;
    let n = 10;
    t.publish(&file(n, 0, 1), "first").await;
    let path = t.cache();
    // A whole cache, well formed, one record's digest wrong.
    let mut cache = Cache::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let known = cache.sections.values_mut().next().unwrap();
    known.digest = "0".repeat(32);
    std::fs::write(&path, cache.to_text()).unwrap();
    let before = t.stored("/cache").await;
    let args = t.args("/cache", true);
    let ready = read_file(&args).unwrap();
    assert_eq!(ready.parsed, 0);
    let e = publish_ready(&args, ready, PublishOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(e, FleetError::Stale { .. }), "{e}");
    assert!(e
        .to_string()
        .contains("the publish cache named a value the file does not give"));
    assert_eq!(t.stored("/cache").await, before);
    assert!(!path.exists());
    // The next publish reads every section.
    let (o, parsed) = t.publish(&file(n, 2, 3), "after").await;
    assert_eq!((published(&o), parsed), ((1, 1), n));
}

#[tokio::test]
async fn entries_changed_since_the_cache_s_publish_are_found_and_replaced() {
    let mut t = Three::start("cache-behind").await;
    let n = 12;
    let text = file(n, 0, 1);
    t.publish(&text, "first").await;
    let stray = "entries/services/99999999-stray/00";
    // The same change under every prefix, then the same file again: each
    // publish makes the prefix hold the file's entries again.
    for (round, (delete, put)) in [(true, false), (false, true), (true, true)]
        .into_iter()
        .enumerate()
    {
        for prefix in ["/whole", "/plain", "/cache"] {
            let mut client = t.etcd.client();
            if delete {
                let keys = t.stored(prefix).await;
                let victim = keys.keys().find(|k| k.contains("/00000003-")).unwrap();
                client
                    .delete(format!("{prefix}{victim}"), None)
                    .await
                    .unwrap();
            }
            if put {
                client
                    .put(format!("{prefix}/{stray}"), "x", None)
                    .await
                    .unwrap();
            }
        }
        let (o, parsed) = t.publish(&text, "changed behind").await;
        let want = (usize::from(delete), usize::from(put));
        assert_eq!((published(&o), parsed), (want, 0), "round {round}");
        // An entry deleted: the count differs, every key is read; one
        // only added: read as written since, the others presumed.
        assert_eq!(t.keys_read, delete, "round {round}");
    }
}

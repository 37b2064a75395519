//! The keepalived import on random and mutated inputs: never a panic,
//! every line mapped or noted by a rule of its own (never the catch-all
//! note), and whatever it accepts the agent's parser accepts. (The `keepalived_import`
//! fuzz target does the same under libFuzzer, fuzz/.)

use std::path::PathBuf;

use ipvs_agent::import::{keepalived, MemFiles};

const SEED: &str = "\
global_defs {\n  router_id x\n}\n\
virtual_server_group G {\n  10.0.0.1-3 80\n  fwmark 7\n}\n\
virtual_server group G {\n  delay_loop 2\n  lb_algo sh\n  sh-port\n  lb_kind TUN type gre\n  persistence_timeout\n  persistence_granularity 255.255.255.0\n  quorum 2\n  sorry_server 10.9.9.9 80\n\
  real_server 10.0.1.1 80 {\n    weight 2\n    uthreshold 9\n    HTTP_GET {\n      url {\n        path /h\n        status_code 200-204\n      }\n      connect_port 81\n    }\n  }\n\
  real_server 10.0.1.2 80 {\n    DNS_CHECK {\n      name example.org\n      type A\n    }\n    SMTP_CHECK {\n      helo_name \"x y\"\n    }\n  }\n}\n\
virtual_server fwmark 3 {\n  ip_family inet6\n  real_server fd00::9 {\n    MISC_CHECK {\n      misc_path \"/bin/true 1\"\n    }\n  }\n}\n\
include other.conf\n";

/// A small xorshift generator: the same inputs on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n.max(1) as u64).unwrap_or(0)
    }
}

fn import_does_not_panic(text: &str) {
    let mut files = MemFiles::default();
    files
        .files
        .insert(PathBuf::from("k.conf"), text.to_string());
    files
        .files
        .insert(PathBuf::from("other.conf"), "! nothing\n".to_string());
    let result = keepalived(&files, "k.conf".as_ref());
    let notes = match &result {
        Ok(out) => &out.notes,
        Err(e) => &e.notes,
    };
    if let Some(n) = notes.iter().find(|n| n.message.contains("has no rule")) {
        panic!("a line no rule took: {n}\ninput:\n{text}");
    }
    if let Ok(out) = result {
        if let Err(e) = ipvs_agent::config::parse_str("out", &out.toml) {
            panic!(
                "accepted input, refused output: {e}\ninput:\n{text}\noutput:\n{}",
                out.toml
            );
        }
    }
}

#[test]
fn the_seed_imports() {
    let mut files = MemFiles::default();
    files
        .files
        .insert(PathBuf::from("k.conf"), SEED.to_string());
    files
        .files
        .insert(PathBuf::from("other.conf"), String::new());
    let out = keepalived(&files, "k.conf".as_ref()).unwrap();
    assert_eq!(out.services, 5, "{}", out.toml);
}

#[test]
fn mutated_inputs_never_panic() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let words: Vec<&str> = SEED.split_whitespace().collect();
    for _ in 0..3000 {
        let mut bytes: Vec<char> = SEED.chars().collect();
        for _ in 0..1 + rng.below(6) {
            let at = rng.below(bytes.len());
            match rng.below(6) {
                0 => {
                    bytes.remove(at);
                }
                1 => bytes.insert(
                    at,
                    [
                        '{', '}', '"', '!', '#', '\n', ' ', '-', '0', '@', '$', '\u{e9}',
                    ][rng.below(12)],
                ),
                2 => {
                    let w = words[rng.below(words.len())];
                    for (i, c) in format!(" {w} ").chars().enumerate() {
                        bytes.insert(at + i, c);
                    }
                }
                3 => {
                    let end = (at + rng.below(40)).min(bytes.len());
                    bytes.drain(at..end);
                }
                4 => bytes[at] = char::from(u8::try_from(rng.below(128)).unwrap()),
                _ => {
                    let end = (at + rng.below(60)).min(bytes.len());
                    let piece: Vec<char> = bytes[at..end].to_vec();
                    let to = rng.below(bytes.len());
                    for (i, c) in piece.into_iter().enumerate() {
                        bytes.insert(to + i, c);
                    }
                }
            }
        }
        import_does_not_panic(&bytes.into_iter().collect::<String>());
    }
}

#[test]
fn token_soup_never_panics() {
    let mut rng = Rng(42);
    let mut words: Vec<&str> = SEED.split_whitespace().collect();
    words.extend([
        "{",
        "}",
        "\n",
        "\n",
        "real_server",
        "virtual_server",
        "url",
        "TUN",
        "99999999999999999999",
        "-1",
        "1.",
        ".5",
        "::",
        "include",
        "*",
    ]);
    for _ in 0..2000 {
        let n = rng.below(80);
        let text: Vec<&str> = (0..n).map(|_| words[rng.below(words.len())]).collect();
        import_does_not_panic(&text.join(" "));
    }
}

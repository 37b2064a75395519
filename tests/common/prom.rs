//! The Prometheus text format as the tests of the exporter and the agent
//! read it: samples with their labels, one looked up by name and labels.

use std::collections::BTreeMap;

/// One sample of the text format: name, labels, value as written.
#[derive(Debug, Clone)]
pub struct Sample {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub value: String,
}

/// The samples of an exposition (comments skipped). Label values here
/// hold no escaped quotes, so a plain split is enough for the test.
pub fn samples(text: &str) -> Vec<Sample> {
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let (series, value) = line.rsplit_once(' ').expect("a value");
        let (name, labels) = match series.split_once('{') {
            Some((n, rest)) => (n, rest.trim_end_matches('}')),
            None => (series, ""),
        };
        let mut map = BTreeMap::new();
        for pair in labels.split("\",").filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once("=\"").expect("label=value");
            map.insert(k.to_string(), v.trim_end_matches('"').to_string());
        }
        out.push(Sample {
            name: name.to_string(),
            labels: map,
            value: value.to_string(),
        });
    }
    out
}

/// The one sample named `name` whose labels include `want`.
pub fn find<'a>(all: &'a [Sample], name: &str, want: &[(&str, &str)]) -> Option<&'a Sample> {
    let mut found = all.iter().filter(|s| {
        s.name == name
            && want
                .iter()
                .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))
    });
    let first = found.next();
    assert!(found.next().is_none(), "{name} {want:?} matches twice");
    first
}

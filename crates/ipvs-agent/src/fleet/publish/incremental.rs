//! A configuration file made ready to publish, reading only what changed:
//! the file is cut into its top part and its `[[service]]` sections (a
//! conservative scan, [`crate::config`]'s), each section is known by the
//! XXH3-128 of its text, and only the sections the [`Cache`] does not know
//! are parsed and checked; then the checks across services (a service or
//! a name twice) run on what every section gave, and the entries are
//! staged ([`Staged`]), the values of the known ones made only if put.
//!
//! Whenever this cannot be sure the file reads as the whole parse would
//! read it (the scan gives up, the top part or a section has an error, a
//! check across services fails), the file is parsed whole, as `check`
//! does: every error at its line and column, and nothing taken from the
//! cache. So a file with any error gives exactly the errors of
//! [`parse_str`], and a file without gives the entries its [`Config`]
//! gives ([`entries`](crate::fleet::store::layout::entries)).
//!
//! ```
//! use ipvs_agent::fleet::publish::cache::Cache;
//! use ipvs_agent::fleet::publish::incremental::prepare;
//! let text = "[[service]]\nprotocol = \"tcp\"\naddress = \"192.0.2.1\"\nport = 80\n\
//!             [[service.server]]\naddress = \"10.0.0.2\"\n";
//! let first = prepare("a.toml", text.into(), None).unwrap();
//! assert_eq!((first.parsed, first.known), (1, 0));
//! let again = prepare("a.toml", text.into(), first.cache).unwrap();
//! assert_eq!((again.parsed, again.known), (0, 1));
//! assert_eq!(again.staged.entries[0].0, first.staged.entries[0].0);
//! ```

use std::collections::HashSet;
use std::ops::Range;
use std::sync::Arc;

use xxhash_rust::xxh3::xxh3_128;

use crate::config::{parse_str, pieces, sections, AgentSettings, Config, ConfigErrors};
use crate::fleet::publish::cache::{context, Cache, Known};
use crate::fleet::publish::entries::{Maker, Staged};
use crate::fleet::store::current::Digests;
use crate::fleet::store::encode;
use crate::fleet::store::layout::{identity, value_digest, SETTINGS};

/// A file made ready: its entries, and the cache to keep for the next.
#[derive(Debug)]
#[non_exhaustive]
pub struct Prepared {
    /// The entries to publish.
    pub staged: Staged,
    /// The cache of this file's sections, to keep (`None` when the file was
    /// parsed whole: then the cache kept before is as good as any).
    pub cache: Option<Cache>,
    /// Sections parsed (not known from the cache); the services when the
    /// file was parsed whole.
    pub parsed: usize,
    /// Sections known from the cache.
    pub known: usize,
    /// The services.
    pub services: usize,
    /// What the cache given said the publish that wrote it stored: the
    /// revision of its `current`, its prefix and the keys of its entries
    /// ([`Cache::stored_keys`]).
    pub stored: Option<(i64, String, Vec<String>)>,
}

/// Makes the file `file` (its name, for errors) of text `text` ready,
/// with what `cache` knows (`None`: nothing).
pub fn prepare(file: &str, text: Arc<str>, cache: Option<Cache>) -> Result<Prepared, ConfigErrors> {
    let stored = cache.as_ref().and_then(|m| {
        let prefix = &m.stored.as_ref()?.1;
        let (revision, keys) = m.stored_keys(prefix)?;
        Some((revision, prefix.clone(), keys))
    });
    let mut ready = match by_sections(&text, cache) {
        Some(p) => p,
        None => whole(parse_str(file, &text)?)?,
    };
    ready.stored = stored;
    Ok(ready)
}

/// The file parsed whole.
fn whole(config: Config) -> Result<Prepared, ConfigErrors> {
    let services = config.services.len();
    Ok(Prepared {
        staged: Staged::of(&config),
        cache: None,
        parsed: services,
        known: 0,
        services,
        stored: None,
    })
}

/// The file by its sections, or `None` for the whole parse.
fn by_sections(text: &Arc<str>, cache: Option<Cache>) -> Option<Prepared> {
    let cut = sections::sections(text)?;
    let top = &text[cut.top.clone()];
    let agent = pieces::top(top)?;
    let context = context(xxh3_128(top.as_bytes()));
    let old = cache.filter(|m| m.context == context);
    let mut new = Cache::new(context);
    let mut items: Vec<(String, usize, Option<Vec<u8>>)> = Vec::with_capacity(cut.services.len());
    let mut ids: HashSet<&str, Digests> = HashSet::default();
    let mut names: HashSet<&str, Digests> = HashSet::default();
    ids.reserve(cut.services.len());
    let (mut parsed, mut known) = (0, 0);
    let mut hashes = Vec::with_capacity(cut.services.len());
    for (i, range) in cut.services.iter().enumerate() {
        let section = &text[range.clone()];
        let h = xxh3_128(section.as_bytes());
        let (k, value) = match old.as_ref().and_then(|m| m.get(h)) {
            Some(k) => {
                known += 1;
                (k.clone(), None)
            }
            None => {
                parsed += 1;
                let vs = pieces::service(section)?;
                let value = encode::service(&vs).into_bytes();
                let k = Known::new(
                    identity(&vs.service.key),
                    vs.name.clone(),
                    value_digest(&value),
                    value.len(),
                    i,
                );
                (k, Some(value))
            }
        };
        let k = Known { slot: i, ..k };
        items.push((k.key(i), k.len, value));
        new.insert(h, k);
        hashes.push(h);
    }
    // A service or a name twice: the whole parse says where.
    for h in hashes {
        let k = new.get(h)?;
        if !ids.insert(&k.identity) || k.name.as_deref().is_some_and(|n| !names.insert(n)) {
            return None;
        }
    }
    if agent != AgentSettings::default() {
        let value = encode::agent(&agent).into_bytes();
        let key = format!("{SETTINGS}{}", value_digest(&value));
        new.settings = Some(key.clone());
        items.push((key, value.len(), Some(value)));
    }
    let services = cut.services.len();
    Some(Prepared {
        staged: Staged::lazy(items, maker(Arc::clone(text), cut.services)),
        cache: Some(new),
        parsed,
        known,
        services,
        stored: None,
    })
}

/// Makes the value of service entry `i` from its section again.
fn maker(text: Arc<str>, sections: Vec<Range<usize>>) -> Maker {
    Box::new(move |i| {
        let section = text.get(sections.get(i)?.clone())?;
        Some(encode::service(&pieces::service(section)?).into_bytes())
    })
}

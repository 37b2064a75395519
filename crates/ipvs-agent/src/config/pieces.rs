//! The parts of a file ([`sections`](super::sections)) read one by one,
//! for a publisher that reads only the parts that changed: each is taken
//! only when it reads and checks without an error (on any, the caller
//! reads the file whole, for its errors at their lines and columns).

use toml::de::{DeTable, DeValue};
use toml::Spanned;

use crate::config::model::{AgentSettings, VirtualService};
use crate::config::parse::{agent_settings, TOP};
use crate::config::read::Fields;
use crate::config::source::Diagnostics;

/// The settings of a file's top part (the text before its first
/// `[[service]]`), when it reads without an error and holds no service.
pub(crate) fn top(text: &str) -> Option<AgentSettings> {
    let (root, syntax) = DeTable::parse_recoverable(text);
    if !syntax.is_empty() {
        return None;
    }
    let root = Spanned::new(root.span(), DeValue::Table(root.into_inner()));
    let mut d = Diagnostics::new("", text);
    let fields = Fields::open(&mut d, &root, "the file", TOP)?;
    if fields.get("service").is_some() {
        return None;
    }
    let agent = match fields.get("agent") {
        Some(v) => agent_settings(&mut d, v)?,
        None => AgentSettings::default(),
    };
    (d.count() == 0).then_some(agent)
}

/// The service of one `[[service]]` section, when it reads and checks
/// without an error (the checks within a service included; those across
/// services are the caller's).
pub(crate) fn service(text: &str) -> Option<VirtualService> {
    let mut config = super::parse_str("", text).ok()?;
    if config.services.len() != 1 || config.agent != AgentSettings::default() {
        return None;
    }
    config.services.pop()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_top_part_reads_alone_without_a_service() {
        let agent = top("[agent]\nresync = \"1m\"\n").unwrap();
        assert_eq!(agent.resync.as_secs(), 60);
        assert_eq!(top(""), Some(AgentSettings::default()));
        assert_eq!(top("[agent]\nresync = 1\n"), None);
        assert_eq!(top("[agent]\nbogus = 1\n"), None);
        assert_eq!(top("other = 1\n"), None);
        assert_eq!(top("service = []\n"), None);
        assert_eq!(top("[agent\n"), None);
    }

    #[test]
    fn a_section_reads_alone_or_not_at_all() {
        let text = "[[service]]\nprotocol = \"tcp\"\naddress = \"192.0.2.1\"\nport = 80\n\
                    [[service.server]]\naddress = \"10.0.0.2\"\n";
        assert_eq!(service(text).unwrap().servers.len(), 1);
        assert_eq!(service(&text.replace("80", "70000")), None);
        let twice = format!("{text}[[service.server]]\naddress = \"10.0.0.2\"\n");
        assert_eq!(service(&twice), None);
        assert_eq!(service(&format!("{text}{text}")), None);
    }
}

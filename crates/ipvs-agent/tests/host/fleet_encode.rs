//! A configuration's services and settings in the fleet's text form, read
//! back by the configuration parser into equal values.

use ipvs_agent::config::{self, Config};
use ipvs_agent::fleet::store::encode;

const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/agent.toml");

/// Every service and the settings of `c`, each encoded and parsed back.
fn round_trip(c: &Config) {
    for vs in &c.services {
        let text = encode::service(vs);
        assert!(text.starts_with(encode::SERVICE_HEADER), "{text}");
        let back = config::parse_str("value", &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(back.services, vec![vs.clone()], "{text}");
    }
    let first = encode::service(&c.services[0]);
    let both = format!("{}{}", encode::agent(&c.agent), first);
    let back = config::parse_str("value", &both).unwrap_or_else(|e| panic!("{e}\n{both}"));
    assert_eq!(back.agent, c.agent);
}

#[test]
fn the_example_reads_back_equal() {
    let c = config::load(std::path::Path::new(EXAMPLE)).unwrap();
    assert_eq!(c.services.len(), 4);
    round_trip(&c);
}

#[test]
fn quotes_backslashes_and_control_characters_are_escaped() {
    let text = "[agent]\nresync = \"1500ms\"\nstart_wait = \"250ms\"\n[[service]]\nname = \"a \\\"q\\\" \\\\ \\t b\"\nprotocol = \"sctp\"\n\
                address = \"2001:db8::1\"\nport = 0\npersistence = { timeout = 60, prefix = 64, engine = \"sip\" }\n\
                [[service.server]]\naddress = \"2001:db8::2\"\nport = 5060\nweight = 0\n\
                check = { kind = \"command\", command = [\"/bin/x\", \"a \\\"b\\\"\"], start = \"down\" }\n";
    let c = config::parse_str("a.toml", text).unwrap();
    assert_eq!(c.services[0].name.as_deref(), Some("a \"q\" \\ \t b"));
    round_trip(&c);
}

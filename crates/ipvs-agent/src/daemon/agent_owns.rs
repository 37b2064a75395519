//! An agent given its ownership record (the command layer opens it in
//! `--state-dir`; a test, in a directory of its own): what it created is
//! known as its own across restarts (`daemon/owned.rs`,
//! `daemon/retiring.rs`).

use ipvsnl::sync::Ownership;

use crate::daemon::agent::Agent;

impl Agent {
    /// Keeps `record` of the services this agent created: a service it
    /// holds that the file no longer has (removed while the agent was
    /// down) is drained, then removed, at the start; a service it does
    /// not hold is never touched (see `ipvsnl::sync::Ownership`).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ipvs_agent::daemon::{Agent, AgentOptions, Connector};
    /// use ipvs_agent::probe::NetProber;
    /// use ipvsnl::sync::Ownership;
    /// let dir = std::env::temp_dir().join(format!("agent-doc-own-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let text = "[[service]]\nprotocol = \"tcp\"\naddress = \"192.0.2.1\"\nport = 80\n\
    ///             [[service.server]]\naddress = \"10.0.0.2\"\n";
    /// let config = ipvs_agent::config::parse_str("a.toml", text).unwrap();
    /// let record = Ownership::open(dir.join("services"), "doc").unwrap();
    /// let prober = Arc::new(NetProber::new());
    /// let agent = Agent::new(config, Connector::current(), prober, AgentOptions::default())
    ///     .with_ownership(record);
    /// # drop(agent);
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    #[must_use]
    pub fn with_ownership(mut self, record: Ownership) -> Self {
        self.ownership = Some(record);
        self
    }
}

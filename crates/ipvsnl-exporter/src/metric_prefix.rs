//! The metric name prefix (`--metrics.namespace`).

use std::fmt;

/// A metric name prefix: `ipvs` (the default) gives `ipvs_up`,
/// `ipvs_connections_total` ...; `node_ipvs` gives node_exporter's names.
///
/// A valid prefix is a Prometheus metric name: ASCII letters, digits and
/// `_`, not starting with a digit (colons are left to recording rules).
///
/// ```
/// use ipvsnl_exporter::MetricPrefix;
/// let ns = MetricPrefix::new("node_ipvs").unwrap();
/// assert_eq!(ns.name("up"), "node_ipvs_up");
/// assert_eq!(MetricPrefix::default().as_str(), "ipvs");
/// assert!(MetricPrefix::new("9lives").is_err());
/// assert!(MetricPrefix::new("a-b").is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MetricPrefix {
    name: String,
}

/// Why a string is not a [`MetricPrefix`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct InvalidMetricPrefix {
    /// The refused string.
    pub given: String,
}

impl fmt::Display for InvalidMetricPrefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} is not a metric name prefix (ASCII letters, digits and '_', not starting with a digit)",
            self.given
        )
    }
}

impl std::error::Error for InvalidMetricPrefix {}

impl MetricPrefix {
    /// The prefix `name`, checked.
    pub fn new(name: &str) -> Result<Self, InvalidMetricPrefix> {
        let ok = !name.is_empty()
            && !name.as_bytes()[0].is_ascii_digit()
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if !ok {
            return Err(InvalidMetricPrefix {
                given: name.to_owned(),
            });
        }
        Ok(MetricPrefix {
            name: name.to_owned(),
        })
    }

    /// The prefix itself.
    pub fn as_str(&self) -> &str {
        &self.name
    }

    /// The full name of the metric `suffix`: `<prefix>_<suffix>`.
    pub fn name(&self, suffix: &str) -> String {
        let mut s = String::with_capacity(self.name.len() + 1 + suffix.len());
        s.push_str(&self.name);
        s.push('_');
        s.push_str(suffix);
        s
    }
}

impl Default for MetricPrefix {
    /// `ipvs`.
    fn default() -> Self {
        MetricPrefix {
            name: "ipvs".to_owned(),
        }
    }
}

impl fmt::Display for MetricPrefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

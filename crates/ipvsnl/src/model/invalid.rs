//! The error of a model value the kernel would refuse or misread.

/// A value the kernel would refuse or misread, found before anything was
/// sent: it names the field at fault and says why.
///
/// The model's checks (`validate`, [`Scheduler::new`](crate::Scheduler::new))
/// return it; [`Error::InvalidInput`](crate::Error::InvalidInput) carries it
/// when a client refuses a request.
///
/// ```
/// use ipvsnl::{AddressFamily, Service, ServiceKey};
/// let e = Service::new(ServiceKey::fwmark(0, AddressFamily::Inet))
///     .validate()
///     .unwrap_err();
/// assert_eq!(e.field(), "fwmark");
/// assert!(e.to_string().starts_with("invalid fwmark: 0 is not a mark"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {field}: {reason}")]
#[non_exhaustive]
pub struct InvalidValue {
    field: &'static str,
    reason: String,
}

impl InvalidValue {
    /// `field` is wrong, for `reason`.
    pub fn new(field: &'static str, reason: impl Into<String>) -> Self {
        InvalidValue {
            field,
            reason: reason.into(),
        }
    }

    /// The field at fault (`"weight"`, `"netmask"`, `"scheduler"`...).
    pub fn field(&self) -> &'static str {
        self.field
    }

    /// Why the value is refused.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;

    #[test]
    fn the_crate_error_wraps_it_and_prints_the_same() {
        let value = InvalidValue::new("weight", "2147483648 is above the kernel's maximum");
        let text = value.to_string();
        assert_eq!(
            text,
            "invalid weight: 2147483648 is above the kernel's maximum"
        );
        let e = Error::from(value.clone());
        assert!(e.is_invalid_input());
        assert_eq!(e.to_string(), text);
        assert!(matches!(&e, Error::InvalidInput(v) if *v == value));
        // The wrapper adds no second link to an error chain.
        assert!(std::error::Error::source(&e).is_none());
    }

    /// The model depends on nothing above it: no file of `model/` names
    /// the crate's error (which itself names model types).
    #[test]
    fn the_model_does_not_import_the_crate_error() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/model");
        let mut seen = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.file_name().and_then(|n| n.to_str()) == Some("invalid.rs") {
                continue; // this test names it
            }
            let text = std::fs::read_to_string(&path).unwrap();
            // Each `use` statement, up to its `;`, whatever its lines.
            for statement in text.split("use ").skip(1) {
                let statement = statement.split(';').next().unwrap_or_default();
                if !statement.starts_with("crate::") {
                    continue;
                }
                let mut words = statement.split(|c: char| !(c.is_alphanumeric() || c == '_'));
                let names_error = words.any(|w| w == "Error" || w == "error");
                assert!(!names_error, "{}: use {statement}", path.display());
            }
            seen += 1;
        }
        assert!(seen > 10, "read only {seen} files of {dir}");
    }
}

//! The agent's file as the import builds it: services, their servers and
//! checks, each a list of keys and values with the comments that say
//! where they came from and what changed.

use crate::import::report::Place;

/// A value of the agent's file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Val {
    /// A string.
    Str(String),
    /// A whole number.
    Int(u64),
    /// A boolean.
    Bool(bool),
    /// An array of strings.
    Strs(Vec<String>),
    /// An inline table.
    Inline(Vec<(&'static str, Val)>),
}

/// A table: its comments (above it), then its keys in order, each with a
/// comment at the end of its line, if any.
#[derive(Debug, Clone, Default)]
pub(crate) struct Table {
    /// The keepalived line it comes from: the agent's errors about the
    /// table are said there.
    pub(crate) origin: Option<Place>,
    pub(crate) comments: Vec<String>,
    pub(crate) fields: Vec<(&'static str, Val, Option<String>)>,
}

impl Table {
    /// Adds `key = value`.
    pub(crate) fn set(&mut self, key: &'static str, value: Val) {
        self.fields.push((key, value, None));
    }

    /// Adds `key = value  # comment`.
    pub(crate) fn set_noted(&mut self, key: &'static str, value: Val, comment: impl Into<String>) {
        self.fields.push((key, value, Some(comment.into())));
    }

    /// The value of `key`, if set.
    pub(crate) fn get(&self, key: &str) -> Option<&Val> {
        self.fields.iter().find(|f| f.0 == key).map(|f| &f.1)
    }

    /// Adds a comment line above the table.
    pub(crate) fn comment(&mut self, c: impl Into<String>) {
        self.comments.push(c.into());
    }
}

/// A real server and its check.
#[derive(Debug, Clone, Default)]
pub(crate) struct OutServer {
    pub(crate) table: Table,
    pub(crate) check: Option<Table>,
}

/// A virtual service.
#[derive(Debug, Clone)]
pub(crate) struct OutService {
    /// The line it comes from (a group member's own line).
    pub(crate) at: Place,
    pub(crate) table: Table,
    pub(crate) servers: Vec<OutServer>,
}

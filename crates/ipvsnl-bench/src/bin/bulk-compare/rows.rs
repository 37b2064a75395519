//! The rows of the report table.

use super::*;

/// One line of the table.
pub(crate) struct Row {
    pub(crate) op: &'static str,
    pub(crate) who: String,
    pub(crate) runs: Runs,
    /// The row this one's median wall is divided by: (its short name, its runs).
    pub(crate) base: Option<(&'static str, Runs)>,
}

pub(crate) fn row(op: &'static str, who: impl Into<String>, runs: &Runs) -> Row {
    Row {
        op,
        who: who.into(),
        runs: runs.clone(),
        base: None,
    }
}

impl Row {
    pub(crate) fn vs(mut self, name: &'static str, base: &Runs) -> Self {
        self.base = Some((name, base.clone()));
        self
    }
}

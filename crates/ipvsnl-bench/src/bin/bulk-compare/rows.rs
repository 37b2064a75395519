//! The rows of the report table and their rendering.

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

/// Prints the rows of workload `name` as Markdown table lines: the
/// median run's wall, user and sys, the wall range, the ratio.
pub(crate) fn print(name: &str, rows: &[Row]) {
    for r in rows {
        let t = r.runs.median();
        let (lo, hi) = r.runs.range();
        let range = if r.runs.0.len() > 1 {
            format!("{lo:.3}-{hi:.3} ({} runs)", r.runs.0.len())
        } else {
            "(1 run)".to_string()
        };
        let ratio = r.base.as_ref().map_or(String::new(), |(n, b)| {
            format!("{:.2}x {n}", t.wall / b.median().wall.max(1e-9))
        });
        println!(
            "| {name} | {} | {} | {:.3} | {:.3} | {:.3} | {range} | {ratio} |",
            r.op, r.who, t.wall, t.user, t.sys
        );
    }
}

//! A file's text and name, and the errors found in it by byte span:
//! turned into lines and columns at the end.

use std::ops::Range;

use crate::config::errors::{ConfigError, ConfigErrors};

/// The errors of one file, gathered by byte offset while it is read.
pub(crate) struct Diagnostics<'a> {
    file: &'a str,
    text: &'a str,
    found: Vec<(usize, String)>,
}

impl<'a> Diagnostics<'a> {
    pub(crate) fn new(file: &'a str, text: &'a str) -> Self {
        Diagnostics {
            file,
            text,
            found: Vec::new(),
        }
    }

    /// Records that what is at `span` is wrong, for `message`.
    pub(crate) fn error(&mut self, span: &Range<usize>, message: impl Into<String>) {
        self.found.push((span.start, message.into()));
    }

    /// How many errors were recorded so far.
    pub(crate) fn count(&self) -> usize {
        self.found.len()
    }

    /// The errors at their lines and columns, in the file's order
    /// (duplicates, which the TOML parser can report twice, once).
    pub(crate) fn finish(mut self) -> Result<(), ConfigErrors> {
        if self.found.is_empty() {
            return Ok(());
        }
        self.found.sort_by_key(|f| f.0);
        self.found.dedup();
        let errors = self
            .found
            .iter()
            .map(|(offset, message)| {
                let (line, column) = line_column(self.text, *offset);
                ConfigError {
                    file: self.file.to_string(),
                    line,
                    column,
                    message: message.clone(),
                }
            })
            .collect();
        Err(ConfigErrors { errors })
    }
}

/// The line and column (from 1, the column in characters) of a byte offset.
pub(crate) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns_count_from_one_in_characters() {
        let text = "a = 1\nbé = 2\n";
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 4), (1, 5));
        assert_eq!(line_column(text, 6), (2, 1));
        // After the two-byte é: the fourth character.
        assert_eq!(line_column(text, 10), (2, 4));
        assert_eq!(line_column(text, 1000), (3, 1));
    }
}

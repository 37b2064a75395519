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
        // In the file's order: the text is walked once for all of them.
        let mut cursor = Cursor::new(self.text);
        let errors = self
            .found
            .iter()
            .map(|(offset, message)| {
                let (line, column) = cursor.line_column(*offset);
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
    Cursor::new(text).line_column(offset)
}

/// Lines and columns of offsets asked in increasing order, the text read
/// once for all of them (one scan from the start for each error made a
/// file with many errors quadratic). An offset before the last one asked
/// starts the walk again from the top.
struct Cursor<'a> {
    text: &'a str,
    /// How far the walk has read.
    at: usize,
    /// The line of `at`, from 1.
    line: usize,
    /// The characters between the start of that line and `at`.
    column: usize,
}

impl<'a> Cursor<'a> {
    fn new(text: &'a str) -> Self {
        Cursor {
            text,
            at: 0,
            line: 1,
            column: 0,
        }
    }

    fn line_column(&mut self, offset: usize) -> (usize, usize) {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        if offset < self.at {
            *self = Cursor::new(self.text);
        }
        for b in self.text[self.at..offset].bytes() {
            if b == b'\n' {
                self.line += 1;
                self.column = 0;
            } else if b & 0xc0 != 0x80 {
                // Not a UTF-8 continuation byte: a character starts here.
                self.column += 1;
            }
        }
        self.at = offset;
        (self.line, self.column + 1)
    }
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

    #[test]
    fn one_walk_gives_each_offset_what_a_scan_from_the_top_gives() {
        let text = "[agent]\nré = 1\n\n  x = \"é€\"\nlast";
        // Every offset, in order, then some again out of order.
        let offsets: Vec<usize> = (0..=text.len() + 2).chain([3, 0, 12, 5]).collect();
        let mut cursor = Cursor::new(text);
        for &o in &offsets {
            let mut b = o.min(text.len());
            while !text.is_char_boundary(b) {
                b -= 1;
            }
            let before = &text[..b];
            let line = before.matches('\n').count() + 1;
            let start = before.rfind('\n').map_or(0, |i| i + 1);
            let column = before[start..].chars().count() + 1;
            assert_eq!(cursor.line_column(o), (line, column), "offset {o}");
        }
    }
}

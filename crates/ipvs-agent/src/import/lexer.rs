//! keepalived's lines cut into words: blanks separate words, a word that
//! starts with `!` or `#` starts a comment to the end of the line, a
//! `"`-quoted string is one word (its blanks kept), `{` and `}` are words
//! of their own. Every word keeps its FILE:LINE.

use std::sync::Arc;

use crate::import::report::{ImportError, Place};

/// A word of a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Token {
    /// Its text (a quoted string's without the quotes).
    pub(crate) text: String,
    /// Whether it was quoted (a quoted `{` is text, not a block).
    pub(crate) quoted: bool,
    /// Where it is.
    pub(crate) at: Place,
}

impl Token {
    /// Whether it is an unquoted `{` or `}`.
    pub(crate) fn is(&self, brace: &str) -> bool {
        !self.quoted && self.text == brace
    }
}

/// The words of line `line` of `file`.
pub(crate) fn words(file: &Arc<str>, line: u32, text: &str) -> Result<Vec<Token>, ImportError> {
    let at = Place {
        file: file.clone(),
        line,
    };
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    let mut word = String::new();
    let push = |word: &mut String, out: &mut Vec<Token>| {
        if !word.is_empty() {
            out.push(Token {
                text: std::mem::take(word),
                quoted: false,
                at: at.clone(),
            });
        }
    };
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => push(&mut word, &mut out),
            '!' | '#' if word.is_empty() => break,
            '{' | '}' => {
                push(&mut word, &mut out);
                word.push(c);
                push(&mut word, &mut out);
            }
            '"' if word.is_empty() => {
                let mut s = String::new();
                let mut closed = false;
                for q in chars.by_ref() {
                    if q == '"' {
                        closed = true;
                        break;
                    }
                    s.push(q);
                }
                if !closed {
                    return Err(ImportError::at(
                        &at,
                        "a quoted string is not closed on its line",
                    ));
                }
                out.push(Token {
                    text: s,
                    quoted: true,
                    at: at.clone(),
                });
            }
            c => word.push(c),
        }
    }
    push(&mut word, &mut out);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(s: &str) -> Vec<String> {
        words(&Arc::from("f"), 1, s)
            .unwrap()
            .into_iter()
            .map(|t| t.text)
            .collect()
    }

    #[test]
    fn comments_quotes_and_braces() {
        assert_eq!(texts("a b ! c"), ["a", "b"]);
        assert_eq!(texts("  # all"), Vec::<String>::new());
        assert_eq!(texts("x#y z"), ["x#y", "z"]);
        assert_eq!(texts("p \"a b\" {"), ["p", "a b", "{"]);
        assert_eq!(texts("url{path /}"), ["url", "{", "path", "/", "}"]);
        assert!(words(&Arc::from("f"), 3, "a \"b").is_err());
    }
}

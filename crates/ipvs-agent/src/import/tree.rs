//! The lines' words built into keepalived's tree of blocks: a statement is
//! the words of a line up to a `{`, a `}` or the line's end; a `{` opens a
//! block for the statement before it (on its line, or alone on the next
//! line); `}` closes the innermost block. A `{` with nothing to open, a
//! `}` with no block open and a block never closed are errors at their
//! lines.

use crate::import::lexer::Token;
use crate::import::report::{Place, Report};

/// A statement: its keyword, its arguments and its block, if it has one.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    /// The first word.
    pub(crate) key: Token,
    /// The words after it.
    pub(crate) args: Vec<Token>,
    /// The statements inside its `{ }`.
    pub(crate) block: Option<Vec<Node>>,
}

impl Node {
    /// Where it is.
    pub(crate) fn at(&self) -> &Place {
        &self.key.at
    }

    /// Its keyword.
    pub(crate) fn name(&self) -> &str {
        &self.key.text
    }

    /// Its argument `i`, if it has one.
    pub(crate) fn arg(&self, i: usize) -> Option<&str> {
        self.args.get(i).map(|t| t.text.as_str())
    }

    /// The statements of its block (none for a plain statement).
    pub(crate) fn children(&self) -> &[Node] {
        self.block.as_deref().unwrap_or(&[])
    }

    /// Where every statement inside its block is, at any depth.
    pub(crate) fn inner(&self, out: &mut Vec<Place>) {
        for c in self.children() {
            out.push(c.at().clone());
            c.inner(out);
        }
    }
}

/// The top-level statements of `lines`.
pub(crate) fn build(lines: Vec<Vec<Token>>, report: &mut Report) -> Vec<Node> {
    // The open blocks: each a statement and what it holds so far.
    let mut stack: Vec<(Node, Vec<Node>)> = Vec::new();
    let mut top: Vec<Node> = Vec::new();
    fn level<'a>(stack: &'a mut [(Node, Vec<Node>)], top: &'a mut Vec<Node>) -> &'a mut Vec<Node> {
        match stack.last_mut() {
            Some((_, inner)) => inner,
            None => top,
        }
    }
    for line in lines {
        let mut words: Vec<Token> = Vec::new();
        // The words of the statement being read (a `{` with none opens
        // the last statement read, on the line before).
        for tok in line {
            if tok.is("{") {
                let node = if words.is_empty() {
                    let here = level(&mut stack, &mut top);
                    match here.pop() {
                        Some(n) if n.block.is_none() => Some(n),
                        Some(n) => {
                            here.push(n);
                            None
                        }
                        None => None,
                    }
                } else {
                    let mut w = std::mem::take(&mut words).into_iter();
                    w.next().map(|key| Node {
                        key,
                        args: w.collect(),
                        block: None,
                    })
                };
                match node {
                    Some(n) => stack.push((n, Vec::new())),
                    None => report.error(&tok.at, "`{` opens no block: no keyword before it"),
                }
            } else if tok.is("}") {
                flush(&mut words, level(&mut stack, &mut top));
                match stack.pop() {
                    Some((mut n, inner)) => {
                        n.block = Some(inner);
                        level(&mut stack, &mut top).push(n);
                    }
                    None => report.error(&tok.at, "unbalanced braces: `}` closes no block"),
                }
            } else {
                words.push(tok);
            }
        }
        flush(&mut words, level(&mut stack, &mut top));
    }
    for (n, _) in stack.iter().rev() {
        report.error(
            n.at(),
            format!(
                "unbalanced braces: the block of `{}` is never closed",
                n.name()
            ),
        );
    }
    top
}

fn flush(words: &mut Vec<Token>, to: &mut Vec<Node>) {
    let mut w = std::mem::take(words).into_iter();
    if let Some(key) = w.next() {
        to.push(Node {
            key,
            args: w.collect(),
            block: None,
        });
    }
}

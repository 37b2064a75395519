//! What an import says about its input: each error and each warning at
//! the FILE:LINE it is about ([`Place`]), and why.

use std::fmt;
use std::sync::Arc;

/// A line of an input file.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Place {
    /// The file's name, as given (an include's path as the glob found it).
    pub file: Arc<str>,
    /// Its line, from 1.
    pub line: u32,
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// What a warning is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NoteKind {
    /// Mapped, but the agent's setting means something else: the output
    /// has a `#` comment saying how.
    Changed,
    /// Left out: the agent has no such setting.
    NotSupported,
    /// Not the load balancer's: the fleet mode's business (VRRP, global
    /// settings); the note says what it offers instead.
    Outside,
}

impl NoteKind {
    /// The word a warning starts with.
    pub fn label(self) -> &'static str {
        match self {
            NoteKind::Changed => "changed meaning",
            NoteKind::NotSupported => "not supported",
            NoteKind::Outside => "outside the load balancer",
        }
    }
}

/// A warning: a line that is not mapped as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Note {
    /// The line.
    pub at: Place,
    /// Of what sort.
    pub kind: NoteKind,
    /// What is done with it, and why.
    pub message: String,
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.at, self.kind.label(), self.message)
    }
}

/// An error of the input: nothing is written.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ImportError {
    /// The line, when the error has one (a file that cannot be read has
    /// the including line, or none for the file given).
    pub at: Option<Place>,
    /// What is wrong.
    pub message: String,
}

impl ImportError {
    pub(crate) fn at(at: &Place, message: impl Into<String>) -> Self {
        ImportError {
            at: Some(at.clone()),
            message: message.into(),
        }
    }
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.at {
            Some(at) => write!(f, "{at}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// Every error of an input, in the order of its lines.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ImportErrors {
    /// The errors (at least one).
    pub errors: Vec<ImportError>,
    /// The warnings of the lines read before the errors stopped the import.
    pub notes: Vec<Note>,
    /// What to run instead of keepalived's VRRP, when the input says (a
    /// file of nothing but VRRP is refused, but still has one).
    pub summary: Vec<String>,
}

impl fmt::Display for ImportErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.errors.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ImportErrors {}

/// The errors and warnings gathered while converting, and the lines
/// mapped as they are (every line must be one or the other).
#[derive(Debug, Default)]
pub(crate) struct Report {
    pub(crate) errors: Vec<ImportError>,
    pub(crate) notes: Vec<Note>,
    pub(crate) mapped: Vec<Place>,
}

impl Report {
    pub(crate) fn error(&mut self, at: &Place, message: impl Into<String>) {
        self.errors.push(ImportError::at(at, message));
    }

    /// Records that the line `at` is mapped as it is.
    pub(crate) fn mapped(&mut self, at: &Place) {
        self.mapped.push(at.clone());
    }

    pub(crate) fn note(&mut self, at: &Place, kind: NoteKind, message: impl Into<String>) {
        self.notes.push(Note {
            at: at.clone(),
            kind,
            message: message.into(),
        });
    }
}

//! What is wrong with a configuration file: each error at its file, line
//! and column, all of a file's errors together.

use std::fmt;

/// One thing wrong in a configuration file, where it is.
///
/// Prints as `FILE:LINE:COLUMN: MESSAGE` (line and column from 1, the
/// column counted in characters), the form editors and compilers use.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConfigError {
    /// The file's name as it was given.
    pub file: String,
    /// The line, from 1.
    pub line: usize,
    /// The column, from 1, in characters.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.column, self.message
        )
    }
}

impl std::error::Error for ConfigError {}

/// Every error found in one file (never empty), in the order of the file.
///
/// Prints one error a line.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConfigErrors {
    /// The errors, sorted by line and column.
    pub errors: Vec<ConfigError>,
}

impl ConfigErrors {
    /// How many errors.
    pub fn len(&self) -> usize {
        self.errors.len()
    }

    /// Never true for a value the parser returns; here for symmetry with `len`.
    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    /// The errors, one a line, as `check` prints them.
    pub fn lines(&self) -> impl Iterator<Item = String> + '_ {
        self.errors.iter().map(ToString::to_string)
    }
}

impl fmt::Display for ConfigErrors {
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

impl std::error::Error for ConfigErrors {}

/// Why a configuration could not be loaded from a path.
#[derive(Debug)]
#[non_exhaustive]
pub enum LoadError {
    /// The file could not be read.
    Read {
        /// The path as given.
        file: String,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The file was read and has errors.
    Invalid(ConfigErrors),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Read { file, source } => write!(f, "{file}: cannot read: {source}"),
            LoadError::Invalid(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for LoadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LoadError::Read { source, .. } => Some(source),
            LoadError::Invalid(_) => None,
        }
    }
}

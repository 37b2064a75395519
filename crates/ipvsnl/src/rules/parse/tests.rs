//! Unit tests of the rules reader.

//! The workspace's root package, `ipvsnl-suite`: the kernel tests, the
//! examples and the benches. Never published; this library holds only the
//! root README's examples, compiled as doctests so they stay true (the
//! published crates include their own READMEs instead, since a packaged
//! crate cannot reach files outside its directory).

/// The root README's examples.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

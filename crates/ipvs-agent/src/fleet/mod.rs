//! Fleet mode (issue 26, part 1, in progress): one desired state in etcd.
//!
//! So far [`current`] (the record naming the complete generation, with its
//! count and digest) and [`encode`]: a configuration's services and settings in a
//! stable, versioned text form (TOML the configuration parser reads back),
//! the value each etcd key of a generation will hold; [`split`]: a
//! generation's puts in transactions within etcd's limits.

pub mod current;
pub mod encode;
pub mod split;

//! The tests that reach the crate's own modules (the file store and its records, the local
//! lease, the simulated disk): built into the core's unit-test binary (`cargo test -p rimeflake
//! --lib`), where those modules are visible, instead of as integration tests, which would need
//! them public. The crate names itself `rimeflake` there, so the files read as integration
//! tests do.

mod durable;
mod file_store;
mod hung_store;
mod lease;
mod shards;
mod simulation;

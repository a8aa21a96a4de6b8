//! Code only tests use, built only for tests (`#[cfg(test)]` in lib.rs): the simulated disk.
//! It drives the crate's internals, so it lives in the crate, but in this module of its own,
//! on top of every layer, where nothing but tests can reach it.

pub mod sim_disk;

pub use sim_disk::{Fault, SimDisk};

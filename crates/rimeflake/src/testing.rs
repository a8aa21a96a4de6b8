//! Code only tests use, built only for tests (`#[cfg(test)]` in lib.rs): the simulated disk, the
//! simulated lease server with the deterministic tests of the lease protocol on it, and the
//! tests every server's `Conn` passes. It drives the crate's internals, so it lives in the crate,
//! but in this module of its own, on top of every layer, where nothing but tests can reach it.

/// The tests of the [`Conn`](crate::lease::remote::Conn) contract, run on each server.
#[cfg(any(
    feature = "redis",
    feature = "postgres",
    feature = "mysql",
    feature = "zookeeper"
))]
pub(crate) mod remote_contract;
/// The contract's tests of a namespace's settings and a server's view of itself.
#[cfg(any(
    feature = "redis",
    feature = "postgres",
    feature = "mysql",
    feature = "zookeeper"
))]
pub(crate) mod remote_settings_contract;
/// A simulated lease server, and deterministic tests of the lease protocol on it.
pub(crate) mod remote_sim;
pub mod sim_disk;

pub use sim_disk::{Fault, SimDisk};

//! Empty: the model check is `tests/loom.rs` (`make test-loom`).

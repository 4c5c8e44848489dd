//! Helpers shared by the integration tests.

pub(crate) mod walker;

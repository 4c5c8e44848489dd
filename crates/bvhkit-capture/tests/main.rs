//! Integration tests of bvhkit-capture.

mod config;
mod recorder;
mod roundtrip;

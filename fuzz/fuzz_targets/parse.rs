//! For arbitrary bytes, the checks of `common::check`: no panic, parallel
//! and one-thread parses agree, exact round trip, streaming agrees.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| common::check(data));

//! Integration tests of the core library.
mod chunked;
mod corpus;
mod edit;
mod edit_b;
mod fk;
mod hostile;
mod lenient;
mod mix_blend;
mod mix_concat;
mod mix_lanes;
mod mix_layer;
mod mix_loop;
mod mix_util;
mod retarget;
mod rotation_batch;
mod roundtrip;
mod util;

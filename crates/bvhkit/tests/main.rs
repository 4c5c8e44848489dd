//! Integration tests of the core library.
//!
//! # Implementation notes
//!
//! One integration binary (`tests/main.rs`) with `corpus`, `edit` (every
//! transform against 4x4-matrix FK and SLERP from its formula on the corpus),
//! `mix_concat`, `mix_blend`, `mix_layer`, `mix_loop` (the mix operations
//! against 3x3 Euler products, SLERP from its formula and 4x4 FK on the corpus;
//! shared references in `mix_util`; a joint's local rotation from its channels,
//! `util::local_matrix`/`local_quat`, is the one plain reference the edit,
//! rest-pose and mix tests share), `retarget` (onto its own skeleton on every
//! well-formed corpus file, and across corpus skeletons: bone directions, feet,
//! knees, against the 4x4-matrix FK), `edit_b` (mirror, root motion, joints and
//! rest pose against their own 4x4-matrix FK on every well-formed corpus file;
//! prints the mirror pairs found), `lenient` (fixtures in `tests/data/quirks`
//! with `.expected` outcomes), `hostile` (`tests/data/hostile`), `roundtrip`
//! (corpus + proptest) and `fk` (golden files + a 4x4-matrix reference
//! implementation). `BVHKIT_BLESS=1` rewrites `.expected` files for review.
mod chunked;
mod clean;
mod corpus;
mod edit;
mod edit_b;
mod edit_run;
mod fk;
mod hostile;
mod lenient;
mod mix_blend;
mod mix_concat;
mod mix_lanes;
mod mix_layer;
mod mix_loop;
mod mix_util;
mod quality;
mod quality_oracle;
mod retarget;
mod retarget_pairs;
mod rotation_batch;
mod roundtrip;
mod util;

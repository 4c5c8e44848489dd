//! Transforms of one clip: `Bvh` in, `Bvh` out, or one frame at a time on
//! caller-owned buffers. Each transform keeps names, channel layout and
//! every value it does not mean to change bit for bit.

mod local;
pub mod mirror;

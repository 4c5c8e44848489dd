//! Headless renderer for BVH skeletons.
#![deny(missing_docs)]

mod clip;

pub use crate::clip::Clip;
pub use glam;

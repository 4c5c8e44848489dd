//! Deterministic headless renderer for BVH skeletons.
//!
//! The input is a [`Clip`]: world positions of every joint over a whole
//! motion. The [`scene`] module (always compiled, glam only) holds the camera
//! and builds a [`DrawList`] of 2D shapes; the `raster` feature (on by
//! default) draws those with tiny-skia into PNG, GIF, contact sheets and
//! (through an `ffmpeg` child process) MP4.
//!
//! [`units`] re-exports the core's guess of a file's length unit
//! ([`bvhkit::units`]) and adds [`units::of_clip`], so that files in
//! different units can be drawn side by side at one scale;
//! [`Clip::from_bvh`] starts from a parsed [`bvhkit::Bvh`] (with the `bvh`
//! feature, its forward kinematics runs on all cores).
//!
//! The same input always gives the same bytes: nothing depends on the
//! clock, randomness or thread scheduling.
#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![warn(missing_debug_implementations)]

mod clip;
pub mod scene;
pub mod units;

#[cfg(feature = "raster")]
pub mod raster;

pub use crate::clip::Clip;
#[doc(inline)]
pub use crate::scene::{
    Camera, DrawList, PALETTE, Pose, Rgba, Shape, Stage, Style, figure_color, side_by_side_offsets,
};
pub use glam;

//! Camera and draw-list maths shared by the rasteriser and interactive players.
//!
//! The pipeline for one picture is:
//! 1. [`Stage::new`] lays one or more [`Clip`](crate::Clip)s side by side and
//!    measures them over all their frames (ground height, figure sizes);
//! 2. [`Stage::camera`] frames the whole motion, and a player then moves the
//!    [`Camera`] with [`Camera::orbit`], [`Camera::pan`] and [`Camera::zoom`];
//! 3. [`Stage::draw_list`] turns one [`Pose`] per figure into a [`DrawList`]
//!    of 2D [`Shape`]s in pixels, back to front, which any painter can draw.
//!
//! Conventions: world space is Y up and right-handed, as in BVH; angles are
//! in degrees; pixels have their origin at the top-left, y down.
//! This module depends only on glam and never allocates per pixel.

mod camera;
mod draw;

pub use camera::{Camera, DEFAULT_FOV_Y, FRAMING_MARGIN};
pub use draw::{
    DrawList, Outline, PALETTE, Pose, Rgba, Shape, Stage, Style, capsule_outline, figure_color,
    side_by_side_offsets,
};

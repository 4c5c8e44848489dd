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
//! ```
//! use bvhkit_render::scene::{Pose, Shape, Stage, Style};
//! use bvhkit_render::{Clip, glam::DVec3};
//! let clip = Clip {
//!     name: "stick".into(),
//!     joint_names: vec!["Hips".into(), "Head".into(), "Head_End".into()],
//!     parents: vec![None, Some(0), Some(1)],
//!     is_end_site: vec![false, false, true],
//!     frame_time: 1.0 / 30.0,
//!     n_frames: 1,
//!     positions: vec![DVec3::ZERO, DVec3::new(0.0, 1.5, 0.0), DVec3::new(0.0, 1.7, 0.0)],
//! };
//! let stage = Stage::new(&[&clip]);
//! let mut cam = stage.camera(35.0, 20.0, 320, 240);
//! cam.orbit(10.0, 0.0); // a mouse drag in a player
//! let list = stage.draw_list(&cam, &[Pose::at(&clip, 0)], &Style::default());
//! for shape in &list.shapes {
//!     match shape {
//!         Shape::Line { .. } | Shape::Circle { .. } => {}
//!         Shape::Capsule { .. } | Shape::Polygon { .. } => {}
//!     }
//! }
//! assert!(!list.shapes.is_empty());
//! ```
//!
//! Conventions: world space is Y up and right-handed, as in BVH; angles are
//! in degrees; pixels have their origin at the top-left, y down.
//! This module depends only on glam and never allocates per pixel.
//!
//! # Implementation notes
//!
//! `scene` depends only on glam: an orbit `Camera` (Y up, right-handed) and a
//! `Stage` that lays clips side by side and measures them over *all* frames
//! (except glitch frames far beyond anywhere the motion travels:
//! `Clip::glitch_frames`, the one rule, which the browser page receives in
//! `clips.json`), so framing, ground and bone sizes never jump during playback;
//! `Stage::at_frame` lays out and frames the figures as they stand in one frame
//! instead (stills: a walker late in its walk fills the picture; ground and
//! bone sizes stay the whole motion's); it turns one `Pose` per figure into a
//! `DrawList` of 2D shapes in pixels (lines, circles, tapered capsules, convex
//! polygons), depth-sorted back to front.

mod camera;
mod draw;

pub use camera::{Camera, DEFAULT_FOV_Y, FRAMING_MARGIN};
pub use draw::{
    DrawList, Outline, PALETTE, Pose, Rgba, Shape, Stage, Style, capsule_outline, figure_color,
    side_by_side_offsets,
};

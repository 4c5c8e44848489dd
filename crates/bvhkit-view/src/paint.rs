//! Painting the renderer's [`DrawList`] with egui.
//!
//! The draw list is in physical pixels of the 3D view; egui paints in
//! points. Every coordinate and width is divided by `pixels_per_point` and
//! offset by the view's top-left corner, so one draw list serves the
//! headless renderer and the player alike.

use bvhkit_render::glam::Vec2;
use bvhkit_render::{DrawList, Rgba, Shape, scene::capsule_outline};
use eframe::egui::{self, Color32, Pos2, Stroke};

/// Segments per half circle of a capsule's outline.
pub const CAPSULE_SEGMENTS: u32 = 10;

/// An egui colour from a renderer colour (straight alpha).
#[must_use]
pub fn color(c: Rgba) -> Color32 {
    Color32::from_rgba_unmultiplied(c.r, c.g, c.b, c.a)
}

/// Maps draw-list pixels to egui points.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ToScreen {
    /// Top-left corner of the 3D view, in points.
    pub origin: Pos2,
    /// Physical pixels per point.
    pub pixels_per_point: f32,
}

impl ToScreen {
    /// A draw-list point in egui points.
    #[must_use]
    pub fn pos(&self, p: Vec2) -> Pos2 {
        self.origin + egui::vec2(p.x, p.y) / self.pixels_per_point
    }

    /// A draw-list length in egui points.
    #[must_use]
    pub fn len(&self, l: f32) -> f32 {
        l / self.pixels_per_point
    }

    /// A point in egui points back in draw-list pixels.
    #[must_use]
    pub fn to_pixels(&self, p: Pos2) -> Vec2 {
        let d = (p - self.origin) * self.pixels_per_point;
        Vec2::new(d.x, d.y)
    }
}

/// The egui shapes for `list`, in order.
#[must_use]
pub fn shapes(list: &DrawList, t: ToScreen) -> Vec<egui::Shape> {
    let stroke = |o: &Option<bvhkit_render::scene::Outline>| {
        o.map_or(Stroke::NONE, |o| Stroke::new(t.len(o.width), color(o.color)))
    };
    list.shapes
        .iter()
        .filter_map(|s| match s {
            Shape::Line { a, b, width, color: c } => Some(egui::Shape::line_segment(
                [t.pos(*a), t.pos(*b)],
                Stroke::new(t.len(*width), color(*c)),
            )),
            Shape::Circle { center, radius, fill, outline } => {
                Some(egui::Shape::Circle(egui::epaint::CircleShape {
                    center: t.pos(*center),
                    radius: t.len(*radius),
                    fill: color(*fill),
                    stroke: stroke(outline),
                }))
            }
            Shape::Capsule { a, b, radius_a, radius_b, fill, outline } => {
                let pts = capsule_outline(*a, *radius_a, *b, *radius_b, CAPSULE_SEGMENTS);
                Some(egui::Shape::convex_polygon(
                    pts.into_iter().map(|p| t.pos(p)).collect(),
                    color(*fill),
                    stroke(outline),
                ))
            }
            Shape::Polygon { points, fill } if points.len() >= 3 => {
                Some(egui::Shape::convex_polygon(
                    points.iter().map(|p| t.pos(*p)).collect(),
                    color(*fill),
                    Stroke::NONE,
                ))
            }
            Shape::Polygon { .. } => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use bvhkit_render::scene::Outline;

    #[test]
    fn every_shape_is_mapped_to_points() {
        let red = Rgba::rgb(255, 0, 0);
        let list = DrawList {
            width: 100,
            height: 100,
            shapes: vec![
                Shape::Line { a: Vec2::ZERO, b: Vec2::new(10.0, 0.0), width: 2.0, color: red },
                Shape::Circle {
                    center: Vec2::new(20.0, 20.0),
                    radius: 4.0,
                    fill: red,
                    outline: Some(Outline { width: 2.0, color: red }),
                },
                Shape::Capsule {
                    a: Vec2::new(0.0, 0.0),
                    b: Vec2::new(40.0, 0.0),
                    radius_a: 4.0,
                    radius_b: 2.0,
                    fill: red.with_alpha(128),
                    outline: None,
                },
                Shape::Polygon {
                    points: vec![Vec2::ZERO, Vec2::X, Vec2::Y],
                    fill: red.with_alpha(10),
                },
                Shape::Polygon { points: vec![Vec2::ZERO], fill: red },
            ],
        };
        let t = ToScreen { origin: Pos2::new(100.0, 50.0), pixels_per_point: 2.0 };
        let out = shapes(&list, t);
        assert_eq!(out.len(), 4);
        match &out[1] {
            egui::Shape::Circle(c) => {
                assert_eq!(c.center, Pos2::new(110.0, 60.0));
                assert_eq!(c.radius, 2.0);
                assert_eq!(c.stroke.width, 1.0);
            }
            other => panic!("{other:?}"),
        }
        match &out[2] {
            egui::Shape::Path(p) => {
                assert!(p.closed);
                let max_x = p.points.iter().map(|p| p.x).fold(f32::MIN, f32::max);
                assert!((max_x - (100.0 + 21.0)).abs() < 1e-3, "{max_x}");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(t.to_pixels(t.pos(Vec2::new(7.0, 9.0))), Vec2::new(7.0, 9.0));
        assert_eq!(color(Rgba::rgb(1, 2, 3)), Color32::from_rgb(1, 2, 3));
    }
}

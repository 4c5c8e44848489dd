//! Drawing a [`DrawList`] with tiny-skia.

use tiny_skia::{FillRule, LineCap, LineJoin, Paint, Path, PathBuilder, Pixmap, Stroke, Transform};

use crate::scene::{DrawList, Outline, Rgba, Shape, capsule_outline};

fn paint(c: Rgba) -> Paint<'static> {
    let mut p = Paint::default();
    p.set_color_rgba8(c.r, c.g, c.b, c.a);
    p.anti_alias = true;
    p
}

fn polygon(points: &[glam::Vec2]) -> Option<Path> {
    let (first, rest) = points.split_first()?;
    if !points.iter().all(|p| p.is_finite()) {
        return None;
    }
    let mut pb = PathBuilder::with_capacity(points.len() + 1, points.len());
    pb.move_to(first.x, first.y);
    for p in rest {
        pb.line_to(p.x, p.y);
    }
    pb.close();
    pb.finish()
}

fn fill_and_outline(pixmap: &mut Pixmap, path: &Path, fill: Rgba, outline: Option<&Outline>) {
    if fill.a > 0 {
        pixmap.fill_path(path, &paint(fill), FillRule::Winding, Transform::identity(), None);
    }
    if let Some(o) = outline.filter(|o| o.color.a > 0 && o.width > 0.0 && o.width.is_finite()) {
        let stroke = Stroke { width: o.width, line_join: LineJoin::Round, ..Stroke::default() };
        pixmap.stroke_path(path, &paint(o.color), &stroke, Transform::identity(), None);
    }
}

/// Draws every shape of `list` over `pixmap`, in order. Shapes with
/// non-finite coordinates are skipped.
pub(crate) fn draw_shapes(pixmap: &mut Pixmap, list: &DrawList) {
    for shape in &list.shapes {
        match shape {
            Shape::Line { a, b, width, color } => {
                if !(a.is_finite() && b.is_finite() && width.is_finite() && *width > 0.0) {
                    continue;
                }
                let mut pb = PathBuilder::new();
                pb.move_to(a.x, a.y);
                pb.line_to(b.x, b.y);
                if let Some(path) = pb.finish() {
                    let stroke =
                        Stroke { width: *width, line_cap: LineCap::Round, ..Stroke::default() };
                    pixmap.stroke_path(&path, &paint(*color), &stroke, Transform::identity(), None);
                }
            }
            Shape::Circle { center, radius, fill, outline } => {
                if !(center.is_finite() && radius.is_finite()) {
                    continue;
                }
                if let Some(path) = PathBuilder::from_circle(center.x, center.y, *radius) {
                    fill_and_outline(pixmap, &path, *fill, outline.as_ref());
                }
            }
            Shape::Capsule { a, b, radius_a, radius_b, fill, outline } => {
                let segments = (radius_a.max(*radius_b) / 1.5).ceil().clamp(3.0, 16.0) as u32;
                let pts = capsule_outline(*a, *radius_a, *b, *radius_b, segments);
                if let Some(path) = polygon(&pts) {
                    fill_and_outline(pixmap, &path, *fill, outline.as_ref());
                }
            }
            Shape::Polygon { points, fill } => {
                if let Some(path) = polygon(points) {
                    fill_and_outline(pixmap, &path, *fill, None);
                }
            }
        }
    }
}

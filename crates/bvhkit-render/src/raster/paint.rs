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

/// 3x5 pixel glyphs of the digits 0-9, one row per 3 bits (MSB left).
const DIGITS: [[u8; 5]; 10] = [
    [0b111, 0b101, 0b101, 0b101, 0b111],
    [0b010, 0b110, 0b010, 0b010, 0b111],
    [0b111, 0b001, 0b111, 0b100, 0b111],
    [0b111, 0b001, 0b111, 0b001, 0b111],
    [0b101, 0b101, 0b111, 0b001, 0b001],
    [0b111, 0b100, 0b111, 0b001, 0b111],
    [0b111, 0b100, 0b111, 0b101, 0b111],
    [0b111, 0b001, 0b001, 0b001, 0b001],
    [0b111, 0b101, 0b111, 0b101, 0b111],
    [0b111, 0b101, 0b111, 0b001, 0b111],
];

/// Writes `number` in a built-in 3x5 pixel font scaled by `scale`, on a
/// translucent white box at `(x, y)` (top-left), without any font file.
pub(crate) fn draw_number(pixmap: &mut Pixmap, x: f32, y: f32, scale: f32, number: usize) {
    let text = number.to_string();
    let n = text.len() as f32;
    let pad = scale;
    let w = n * 4.0 * scale - scale + 2.0 * pad;
    let h = 5.0 * scale + 2.0 * pad;
    if let Some(r) = tiny_skia::Rect::from_xywh(x, y, w, h) {
        pixmap.fill_rect(
            r,
            &paint(Rgba::rgb(255, 255, 255).with_alpha(200)),
            Transform::identity(),
            None,
        );
    }
    let ink = paint(Rgba::rgb(30, 34, 40));
    for (i, ch) in text.bytes().enumerate() {
        let glyph = DIGITS[usize::from(ch - b'0')];
        for (row, bits) in glyph.iter().enumerate() {
            for col in 0..3 {
                if bits & (0b100 >> col) != 0 {
                    let px = x + pad + (i as f32 * 4.0 + col as f32) * scale;
                    let py = y + pad + row as f32 * scale;
                    if let Some(r) = tiny_skia::Rect::from_xywh(px, py, scale, scale) {
                        pixmap.fill_rect(r, &ink, Transform::identity(), None);
                    }
                }
            }
        }
    }
}

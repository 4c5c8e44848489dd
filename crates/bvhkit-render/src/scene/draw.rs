use glam::{DVec3, Vec2};

use crate::Clip;
use crate::scene::camera::{Camera, Projector};

/// An sRGB colour with straight (not premultiplied) alpha.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rgba {
    /// Red.
    pub r: u8,
    /// Green.
    pub g: u8,
    /// Blue.
    pub b: u8,
    /// Opacity, 255 is opaque.
    pub a: u8,
}

impl Rgba {
    /// An opaque colour.
    #[must_use]
    pub const fn rgb(r: u8, g: u8, b: u8) -> Rgba {
        Rgba { r, g, b, a: 255 }
    }

    /// The same colour with opacity `a`.
    #[must_use]
    pub const fn with_alpha(self, a: u8) -> Rgba {
        Rgba { a, ..self }
    }

    /// Blends towards `other` by `t` in `0..=1` (alpha kept).
    #[must_use]
    pub fn mix(self, other: Rgba, t: f32) -> Rgba {
        let t = t.clamp(0.0, 1.0);
        let f = |x: u8, y: u8| (f32::from(x) + (f32::from(y) - f32::from(x)) * t).round() as u8;
        Rgba { r: f(self.r, other.r), g: f(self.g, other.g), b: f(self.b, other.b), a: self.a }
    }
}

/// The figure colours: figure `i` of a scene is always drawn in
/// `PALETTE[i % PALETTE.len()]`, in the renderer and in the player alike.
pub const PALETTE: [Rgba; 8] = [
    Rgba::rgb(38, 110, 200),
    Rgba::rgb(226, 100, 30),
    Rgba::rgb(46, 150, 70),
    Rgba::rgb(200, 45, 60),
    Rgba::rgb(130, 90, 190),
    Rgba::rgb(150, 100, 70),
    Rgba::rgb(210, 90, 170),
    Rgba::rgb(20, 160, 170),
];

/// The colour of figure `i`: [`PALETTE`] cycled.
#[must_use]
pub fn figure_color(i: usize) -> Rgba {
    PALETTE[i % PALETTE.len()]
}

/// An outline drawn around a filled shape.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outline {
    /// Stroke width in pixels, centred on the shape's edge.
    pub width: f32,
    /// Stroke colour.
    pub color: Rgba,
}

/// A 2D primitive in pixel coordinates (origin top-left, y down).
///
/// Every backend must draw these anti-aliased, in list order, with
/// source-over blending. A fill whose alpha is 0 is not drawn.
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    /// A straight line with round caps.
    Line {
        /// Start point.
        a: Vec2,
        /// End point.
        b: Vec2,
        /// Width in pixels.
        width: f32,
        /// Colour.
        color: Rgba,
    },
    /// A disc.
    Circle {
        /// Centre.
        center: Vec2,
        /// Radius in pixels.
        radius: f32,
        /// Fill colour.
        fill: Rgba,
        /// Optional outline.
        outline: Option<Outline>,
    },
    /// The convex hull of two discs (a tapered, round-ended bone); its
    /// boundary is [`capsule_outline`], a convex polygon that a painter
    /// without capsules (egui: `convex_polygon`) fills directly.
    Capsule {
        /// Centre of the first end.
        a: Vec2,
        /// Centre of the second end.
        b: Vec2,
        /// Radius at `a`, in pixels.
        radius_a: f32,
        /// Radius at `b`, in pixels.
        radius_b: f32,
        /// Fill colour.
        fill: Rgba,
        /// Optional outline.
        outline: Option<Outline>,
    },
    /// A filled convex polygon (shadows), usually translucent. Stacked
    /// translucent polygons make the soft edge, so draw each one as is.
    Polygon {
        /// Vertices in order.
        points: Vec<Vec2>,
        /// Fill colour.
        fill: Rgba,
    },
}

/// A list of [`Shape`]s to draw in order, back to front, on a
/// `width` x `height` viewport.
///
/// Both the tiny-skia rasteriser and an interactive painter draw the same
/// list, so the pictures agree.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DrawList {
    /// Viewport width in pixels.
    pub width: u32,
    /// Viewport height in pixels.
    pub height: u32,
    /// Shapes, back to front.
    pub shapes: Vec<Shape>,
}

impl DrawList {
    /// Appends the shapes of `other` (drawn over the current ones).
    pub fn append(&mut self, other: DrawList) {
        self.shapes.extend(other.shapes);
    }
}

/// The boundary of a tapered capsule, the convex hull of the discs
/// `(a, radius_a)` and `(b, radius_b)`, as one closed polygon with
/// `2 * segments + 2` vertices in a consistent winding.
///
/// When one disc contains the other the result is the larger disc.
/// Non-finite or negative radii are treated as 0.
#[must_use]
pub fn capsule_outline(a: Vec2, radius_a: f32, b: Vec2, radius_b: f32, segments: u32) -> Vec<Vec2> {
    let ra = if radius_a.is_finite() { radius_a.max(0.0) } else { 0.0 };
    let rb = if radius_b.is_finite() { radius_b.max(0.0) } else { 0.0 };
    let segments = segments.max(2);
    let d = b - a;
    let len = d.length();
    let circle = |c: Vec2, r: f32| -> Vec<Vec2> {
        let n = 2 * segments + 2;
        (0..n)
            .map(|i| {
                let t = i as f32 / n as f32 * std::f32::consts::TAU;
                c + r * Vec2::new(t.cos(), t.sin())
            })
            .collect()
    };
    if len.is_nan() || len <= 1e-6 || (ra - rb).abs() >= len {
        return if ra >= rb { circle(a, ra) } else { circle(b, rb) };
    }
    let phi = d.y.atan2(d.x);
    let beta = ((ra - rb) / len).clamp(-1.0, 1.0).acos();
    let mut pts = Vec::with_capacity(2 * segments as usize + 2);
    // Around b from phi + beta down to phi - beta, then around a from
    // phi - beta down to phi + beta - 2 pi.
    for (c, r, start, sweep) in
        [(b, rb, phi + beta, 2.0 * beta), (a, ra, phi - beta, std::f32::consts::TAU - 2.0 * beta)]
    {
        for i in 0..=segments {
            let t = start - sweep * i as f32 / segments as f32;
            pts.push(c + r * Vec2::new(t.cos(), t.sin()));
        }
    }
    pts
}

/// What to draw and how; every field documents its default.
#[derive(Clone, Debug, PartialEq)]
pub struct Style {
    /// Bone radius as a fraction of the figure's size (the median diagonal
    /// of its per-frame bounding boxes). Default: `0.018`.
    pub bone_thickness: f64,
    /// A joint to mark with a ring, as `(figure index, joint index)`.
    /// Default: `None`.
    pub highlight: Option<(usize, usize)>,
    /// Draw the ground grid. Default: `true`.
    pub grid: bool,
    /// Draw a soft shadow under each figure. Default: `true`.
    pub shadows: bool,
    /// Draw a dot on every joint that is not an End Site. Default: `true`.
    pub joints: bool,
    /// Colour of the grid lines (faded with distance). Default: slate grey.
    pub grid_color: Rgba,
}

impl Default for Style {
    fn default() -> Style {
        Style {
            bone_thickness: 0.018,
            highlight: None,
            grid: true,
            shadows: true,
            joints: true,
            grid_color: Rgba::rgb(96, 108, 124),
        }
    }
}

/// The joint positions of one figure at one instant: usually a frame of a
/// clip ([`Pose::at`]), or positions a player interpolated itself.
#[derive(Clone, Copy, Debug)]
pub struct Pose<'a> {
    /// The clip giving the hierarchy (parents, names, End Sites).
    pub clip: &'a Clip,
    /// One position per joint of `clip`, world units, before the stage
    /// offset is added.
    pub positions: &'a [DVec3],
}

impl<'a> Pose<'a> {
    /// Frame `frame` of `clip`, clamped to the last frame; no positions for
    /// a clip without frames (or with a short `positions` vector).
    #[must_use]
    pub fn at(clip: &'a Clip, frame: usize) -> Pose<'a> {
        let n = clip.n_joints();
        let frame = frame.min(clip.n_frames.saturating_sub(1));
        let positions = clip.positions.get(frame * n..(frame + 1) * n).unwrap_or(&[]);
        Pose { clip, positions }
    }
}

/// Where each figure stands: one or more clips laid side by side along X,
/// sharing one ground plane.
///
/// Built once per set of clips, then used for every frame, so the camera,
/// the ground and the figure sizes do not jump while a motion plays.
#[derive(Clone, Debug, PartialEq)]
pub struct Stage {
    offsets: Vec<DVec3>,
    sizes: Vec<f64>,
    bounds: Option<(DVec3, DVec3)>,
    ground: f64,
}

impl Stage {
    /// Lays out `clips` side by side ([`side_by_side_offsets`]) and measures
    /// them over all of their frames, glitch frames aside
    /// ([`Clip::framing_bounds`]).
    #[must_use]
    pub fn new(clips: &[&Clip]) -> Stage {
        let clip_bounds: Vec<_> = clips.iter().map(|c| c.framing_bounds()).collect();
        let sizes: Vec<f64> = clips.iter().map(|c| figure_size(c)).collect();
        let offsets = side_by_side_offsets(&clip_bounds, gap(&sizes));
        let bounds = union(&clip_bounds, &offsets);
        let ground = bounds.map_or(0.0, |(lo, _)| lo.y);
        Stage { offsets, sizes, bounds, ground }
    }

    /// A stage for a still of frame `frame` (clamped to each clip): the
    /// figures are laid side by side and framed as they stand in that frame,
    /// so a walker far along its path fills the picture instead of being a
    /// small figure at one end of it. The ground and the bone sizes are the
    /// whole motion's, as with [`Stage::new`], and the framing reaches down
    /// to the ground when a figure is less than its size above it (a jump
    /// keeps its shadow in the picture).
    #[must_use]
    pub fn at_frame(clips: &[&Clip], frame: usize) -> Stage {
        let sizes: Vec<f64> = clips.iter().map(|c| figure_size(c)).collect();
        let ground = clips
            .iter()
            .filter_map(|c| c.framing_bounds())
            .map(|(lo, _)| lo.y)
            .reduce(f64::min)
            .unwrap_or(0.0);
        let pose_bounds: Vec<_> = clips
            .iter()
            .zip(&sizes)
            .map(|(c, size)| {
                let (mut lo, hi) = crate::clip::bounds_of(Pose::at(c, frame).positions)?;
                if lo.y > ground && lo.y - ground <= *size {
                    lo.y = ground;
                }
                Some((lo, hi))
            })
            .collect();
        let offsets = side_by_side_offsets(&pose_bounds, gap(&sizes));
        let bounds = union(&pose_bounds, &offsets);
        Stage { offsets, sizes, bounds, ground }
    }

    /// The offset added to every position of figure `i`.
    #[must_use]
    pub fn offsets(&self) -> &[DVec3] {
        &self.offsets
    }

    /// The size of each figure: the median diagonal of its per-frame
    /// bounding boxes (0 for an empty clip).
    #[must_use]
    pub fn sizes(&self) -> &[f64] {
        &self.sizes
    }

    /// The box the camera frames, offsets included: all figures over all
    /// frames (glitch frames aside: [`Clip::framing_bounds`]) for
    /// [`Stage::new`], the figures in one frame for [`Stage::at_frame`];
    /// `None` when no clip has a finite position.
    #[must_use]
    pub fn bounds(&self) -> Option<(DVec3, DVec3)> {
        self.bounds
    }

    /// The height of the ground plane: the lowest point over all frames of
    /// all figures, glitch frames aside (0 when there is none).
    #[must_use]
    pub fn ground_y(&self) -> f64 {
        self.ground
    }

    /// A camera looking from `azimuth`/`elevation` (degrees) that keeps
    /// every figure in the picture during the whole motion.
    #[must_use]
    pub fn camera(&self, azimuth: f64, elevation: f64, width: u32, height: u32) -> Camera {
        let (lo, hi) = self.bounds.unwrap_or((DVec3::ZERO, DVec3::ZERO));
        Camera::framing(lo, hi, azimuth, elevation, width, height)
    }

    fn scale(&self) -> f64 {
        let s = self.sizes.iter().copied().fold(0.0, f64::max);
        if s > 0.0 { s } else { 1.0 }
    }

    /// The ground grid, which does not change while the motion plays (a
    /// renderer may draw it once per animation).
    #[must_use]
    pub fn ground(&self, cam: &Camera, style: &Style) -> DrawList {
        let mut list = DrawList { width: cam.width, height: cam.height, shapes: Vec::new() };
        if !style.grid {
            return list;
        }
        let proj = Projector::new(cam);
        let scale = self.scale();
        let (lo, hi) = self.bounds.unwrap_or((DVec3::ZERO, DVec3::ZERO));
        let (lo, hi) = (lo - DVec3::splat(scale * 0.6), hi + DVec3::splat(scale * 0.6));
        let step = nice_step((hi.x - lo.x).max(hi.z - lo.z) / 12.0);
        let (i0, i1) = ((lo.x / step).floor() as i64, (hi.x / step).ceil() as i64);
        let (k0, k1) = ((lo.z / step).floor() as i64, (hi.z / step).ceil() as i64);
        if i1 - i0 > 200 || k1 - k0 > 200 {
            return list;
        }
        let y = self.ground_y();
        let center = DVec3::new((lo.x + hi.x) * 0.5, y, (lo.z + hi.z) * 0.5);
        let radius = ((hi.x - lo.x).max(hi.z - lo.z) * 0.5).max(step);
        let mut segment = |a: DVec3, b: DVec3| {
            let r = ((a + b) * 0.5 - center).length() / radius;
            let fade = (1.0 - r * r).clamp(0.0, 1.0);
            let alpha = (f64::from(style.grid_color.a) * 0.55 * fade).round() as u8;
            if alpha < 4 {
                return;
            }
            if let Some([(ax, ay, _), (bx, by, _)]) = proj.project_segment(a, b) {
                list.shapes.push(Shape::Line {
                    a: Vec2::new(ax as f32, ay as f32),
                    b: Vec2::new(bx as f32, by as f32),
                    width: 1.0,
                    color: style.grid_color.with_alpha(alpha),
                });
            }
        };
        for i in i0..=i1 {
            for k in k0..k1 {
                let x = i as f64 * step;
                segment(DVec3::new(x, y, k as f64 * step), DVec3::new(x, y, (k + 1) as f64 * step));
            }
        }
        for k in k0..=k1 {
            for i in i0..i1 {
                let z = k as f64 * step;
                segment(DVec3::new(i as f64 * step, y, z), DVec3::new((i + 1) as f64 * step, y, z));
            }
        }
        list
    }

    /// Shadows and figures for one instant: `poses[i]` is figure `i` (its
    /// offset and colour), drawn depth-sorted back to front. Extra poses
    /// beyond the stage's figures get no offset.
    #[must_use]
    pub fn figures(&self, cam: &Camera, poses: &[Pose<'_>], style: &Style) -> DrawList {
        let proj = Projector::new(cam);
        let mut list = DrawList { width: cam.width, height: cam.height, shapes: Vec::new() };
        let ground = self.ground_y();
        let mut items: Vec<(f64, Shape)> = Vec::new();
        let mut ring = None;
        for (fig, pose) in poses.iter().enumerate() {
            let offset = self.offsets.get(fig).copied().unwrap_or(DVec3::ZERO);
            let size = self.sizes.get(fig).copied().filter(|s| *s > 0.0).unwrap_or(self.scale());
            let radius = (style.bone_thickness * size).max(0.0);
            let pts: Vec<DVec3> = pose.positions.iter().map(|p| *p + offset).collect();
            if style.shadows {
                shadow(&proj, &pts, radius, size, ground, &mut list.shapes);
            }
            let fig_ctx =
                FigureCtx { proj: &proj, pose, pts: &pts, radius, color: figure_color(fig) };
            fig_ctx.body(style, &mut items);
            if let Some((f, j)) = style.highlight
                && f == fig
                && let Some(p) = pts.get(j)
                && let Some((x, y, z)) = proj.project(*p)
            {
                let r = (radius * 2.2 * proj.focal() / z).max(4.0) as f32;
                ring = Some(Shape::Circle {
                    center: Vec2::new(x as f32, y as f32),
                    radius: r,
                    fill: Rgba::rgb(255, 220, 40).with_alpha(110),
                    outline: Some(Outline { width: 2.0, color: Rgba::rgb(30, 30, 30) }),
                });
            }
        }
        // Far to near; the sort is stable, so equal depths keep their order.
        items.sort_by(|a, b| b.0.total_cmp(&a.0));
        list.shapes.extend(items.into_iter().map(|(_, s)| s));
        list.shapes.extend(ring);
        list
    }

    /// [`Stage::ground`] followed by [`Stage::figures`]: the whole picture.
    #[must_use]
    pub fn draw_list(&self, cam: &Camera, poses: &[Pose<'_>], style: &Style) -> DrawList {
        let mut list = self.ground(cam, style);
        list.append(self.figures(cam, poses, style));
        list
    }
}

struct FigureCtx<'a> {
    proj: &'a Projector,
    pose: &'a Pose<'a>,
    pts: &'a [DVec3],
    radius: f64,
    color: Rgba,
}

/// Whether joint `j` is a head (drawn as a ball): named `*head*`, not an End
/// Site, with no head among its ancestors (so `Head` -> `HeadTop` is one ball).
fn is_head(clip: &Clip, j: usize) -> bool {
    let named = |k: usize| {
        !clip.is_end_site.get(k).copied().unwrap_or(false)
            && clip.joint_names.get(k).is_some_and(|n| n.to_ascii_lowercase().contains("head"))
    };
    if !named(j) {
        return false;
    }
    // Parents precede children, so this walk ends; the bound guards bad input.
    let mut k = j;
    for _ in 0..clip.parents.len() {
        match clip.parents.get(k).copied().flatten() {
            Some(p) if p < k => {
                if named(p) {
                    return false;
                }
                k = p;
            }
            _ => break,
        }
    }
    true
}

/// Which side of the body a joint is on, from its name.
fn side(name: &str) -> f32 {
    let lower = name.to_ascii_lowercase();
    let b = name.as_bytes();
    let prefixed = |c: u8| {
        b.len() > 1 && b[0].eq_ignore_ascii_case(&c) && (b[1].is_ascii_uppercase() || b[1] == b'_')
    };
    if lower.starts_with("left") || prefixed(b'l') {
        1.0
    } else if lower.starts_with("right") || prefixed(b'r') {
        -1.0
    } else {
        0.0
    }
}

impl FigureCtx<'_> {
    fn screen_radius(&self, world: f64, depth: f64) -> f32 {
        ((world * self.proj.focal() / depth) as f32).max(0.8)
    }

    /// Pushes `(depth, shape)` items for every bone, joint and head.
    fn body(&self, style: &Style, items: &mut Vec<(f64, Shape)>) {
        let clip = self.pose.clip;
        let n = self.pts.len().min(clip.parents.len());
        let white = Rgba::rgb(255, 255, 255);
        let black = Rgba::rgb(0, 0, 0);
        for j in 0..n {
            let name = clip.joint_names.get(j).map_or("", String::as_str);
            let end = clip.is_end_site.get(j).copied().unwrap_or(false);
            let s = if end {
                clip.parents[j].and_then(|p| clip.joint_names.get(p)).map_or(0.0, |n| side(n))
            } else {
                side(name)
            };
            let base = if s > 0.0 {
                self.color.mix(white, 0.22)
            } else if s < 0.0 {
                self.color.mix(black, 0.18)
            } else {
                self.color
            };
            let outline = Outline { width: 1.0, color: base.mix(black, 0.5) };
            // The head sphere replaces the bone to the head's first child.
            let head_bone = clip.parents[j].is_some_and(|p| {
                is_head(clip, p) && (p + 1..j).all(|c| clip.parents[c] != Some(p))
            });
            if let Some(p) = clip.parents[j].filter(|p| *p < n && !head_bone) {
                let r_end = if end { self.radius * 0.75 } else { self.radius };
                self.capsule(self.pts[p], self.radius, self.pts[j], r_end, base, outline, items);
            }
            if style.joints
                && !end
                && let Some((x, y, z)) = self.proj.project(self.pts[j])
            {
                let r = self.screen_radius(self.radius * 1.25, z);
                items.push((
                    z,
                    Shape::Circle {
                        center: Vec2::new(x as f32, y as f32),
                        radius: r,
                        fill: base.mix(white, 0.35),
                        outline: Some(outline),
                    },
                ));
            }
            if is_head(clip, j) {
                let child = (j + 1..n).find(|&c| clip.parents[c] == Some(j));
                let (center, r) = match child {
                    Some(c) => {
                        let len = (self.pts[c] - self.pts[j]).length();
                        (
                            (self.pts[c] + self.pts[j]) * 0.5,
                            (len * 0.6).min(self.radius * 5.0).max(self.radius * 3.0),
                        )
                    }
                    None => (self.pts[j], self.radius * 3.0),
                };
                if let Some((x, y, z)) = self.proj.project(center) {
                    let r = self.screen_radius(r, z);
                    let c = Vec2::new(x as f32, y as f32);
                    items.push((
                        z,
                        Shape::Circle { center: c, radius: r, fill: base, outline: Some(outline) },
                    ));
                    items.push((
                        z,
                        Shape::Circle {
                            center: c - Vec2::splat(r * 0.3),
                            radius: r * 0.35,
                            fill: base.mix(white, 0.5).with_alpha(190),
                            outline: None,
                        },
                    ));
                }
            }
        }
    }

    /// A shaded bone: an outlined capsule plus a thin highlight towards the
    /// upper left.
    #[allow(clippy::too_many_arguments)]
    fn capsule(
        &self,
        a: DVec3,
        ra: f64,
        b: DVec3,
        rb: f64,
        fill: Rgba,
        outline: Outline,
        items: &mut Vec<(f64, Shape)>,
    ) {
        let Some([(ax, ay, az), (bx, by, bz)]) = self.proj.project_segment(a, b) else {
            return;
        };
        let depth = (az + bz) * 0.5;
        let (ra, rb) = (self.screen_radius(ra, az), self.screen_radius(rb, bz));
        let (pa, pb) = (Vec2::new(ax as f32, ay as f32), Vec2::new(bx as f32, by as f32));
        items.push((
            depth,
            Shape::Capsule {
                a: pa,
                b: pb,
                radius_a: ra,
                radius_b: rb,
                fill,
                outline: Some(outline),
            },
        ));
        if ra.min(rb) >= 2.5 {
            let shift = Vec2::splat(-0.3 * ra.min(rb));
            items.push((
                depth,
                Shape::Capsule {
                    a: pa + shift,
                    b: pb + shift,
                    radius_a: ra * 0.3,
                    radius_b: rb * 0.3,
                    fill: fill.mix(Rgba::rgb(255, 255, 255), 0.45).with_alpha(170),
                    outline: None,
                },
            ));
        }
    }
}

/// A soft elliptical shadow on the ground under a figure, shaped by the
/// spread of its joints and faded with its height above the ground.
fn shadow(
    proj: &Projector,
    pts: &[DVec3],
    radius: f64,
    size: f64,
    ground: f64,
    out: &mut Vec<Shape>,
) {
    let finite: Vec<DVec3> = pts.iter().copied().filter(|p| p.is_finite()).collect();
    if finite.is_empty() {
        return;
    }
    let n = finite.len() as f64;
    let mean = finite.iter().copied().sum::<DVec3>() / n;
    let (mut sxx, mut sxz, mut szz) = (0.0, 0.0, 0.0);
    let mut lowest = f64::INFINITY;
    for p in &finite {
        let (dx, dz) = (p.x - mean.x, p.z - mean.z);
        sxx += dx * dx / n;
        sxz += dx * dz / n;
        szz += dz * dz / n;
        lowest = lowest.min(p.y);
    }
    // Eigen-decomposition of the 2x2 covariance [[sxx, sxz], [sxz, szz]].
    let tr = sxx + szz;
    let det_term = (((sxx - szz) * 0.5).powi(2) + sxz * sxz).sqrt();
    let (l1, l2) = (tr * 0.5 + det_term, (tr * 0.5 - det_term).max(0.0));
    let angle = 0.5 * (2.0 * sxz).atan2(sxx - szz);
    let pad = (radius * 3.0).max(size * 0.05);
    let (r1, r2) = (2.0 * l1.sqrt() + pad, 2.0 * l2.sqrt() + pad);
    let size = if size > 0.0 { size } else { 1.0 };
    let fade = 1.0 / (1.0 + 3.0 * ((lowest - ground) / size).max(0.0));
    let (ax, az) = (angle.cos(), angle.sin());
    for (scale, alpha) in [(1.3, 0.07), (1.0, 0.08), (0.75, 0.09), (0.5, 0.1)] {
        let a = (255.0 * alpha * fade).round() as u8;
        let points: Option<Vec<Vec2>> = (0..32)
            .map(|i| {
                let t = f64::from(i) / 32.0 * std::f64::consts::TAU;
                let (u, v) = (r1 * scale * t.cos(), r2 * scale * t.sin());
                let p = DVec3::new(mean.x + u * ax - v * az, ground, mean.z + u * az + v * ax);
                proj.project(p).map(|(x, y, _)| Vec2::new(x as f32, y as f32))
            })
            .collect();
        if let Some(points) = points
            && a > 0
        {
            out.push(Shape::Polygon { points, fill: Rgba::rgb(20, 24, 32).with_alpha(a) });
        }
    }
}

/// The space between figures standing side by side: a quarter of the
/// largest figure's size.
fn gap(sizes: &[f64]) -> f64 {
    sizes.iter().copied().fold(0.0, f64::max) * 0.25
}

/// The union of `boxes`, each moved by its offset.
fn union(boxes: &[Option<(DVec3, DVec3)>], offsets: &[DVec3]) -> Option<(DVec3, DVec3)> {
    boxes
        .iter()
        .zip(offsets)
        .filter_map(|(b, off)| b.map(|(lo, hi)| (lo + *off, hi + *off)))
        .reduce(|(l, h), (lo, hi)| (l.min(lo), h.max(hi)))
}

/// A figure's size: the median diagonal of its per-frame bounding boxes,
/// over at most 15 evenly spaced frames (0 for an empty clip).
fn figure_size(clip: &Clip) -> f64 {
    let n = clip.n_joints();
    let frames = clip.n_frames.min(clip.positions.len().checked_div(n).unwrap_or(0));
    let samples = frames.min(15);
    let mut diags: Vec<f64> = (0..samples)
        .filter_map(|k| {
            let f = k * frames / samples;
            let (lo, hi) = crate::clip::bounds_of(&clip.positions[f * n..(f + 1) * n])?;
            Some((hi - lo).length())
        })
        .collect();
    diags.sort_by(f64::total_cmp);
    diags.get(diags.len() / 2).copied().unwrap_or(0.0)
}

/// A round step (1, 2 or 5 times a power of ten) close to `x`.
fn nice_step(x: f64) -> f64 {
    if !(x.is_finite() && x > 0.0) {
        return 1.0;
    }
    let p = 10f64.powf(x.log10().floor());
    let m = x / p;
    p * if m < 1.5 {
        1.0
    } else if m < 3.5 {
        2.0
    } else if m < 7.5 {
        5.0
    } else {
        10.0
    }
}

/// X offsets that put figures with the given bounding boxes side by side,
/// left to right in order, `gap` world units apart, the row centred on the
/// first figure's original position. A figure without bounds (`None`) gets
/// a zero offset and takes no room.
///
/// # Example
/// ```
/// use bvhkit_render::{side_by_side_offsets, glam::DVec3};
/// let b = Some((DVec3::new(-1.0, 0.0, 0.0), DVec3::new(1.0, 2.0, 0.0)));
/// let off = side_by_side_offsets(&[b, b], 0.5);
/// assert_eq!(off[1].x - off[0].x, 2.5);
/// ```
#[must_use]
pub fn side_by_side_offsets(bounds: &[Option<(DVec3, DVec3)>], gap: f64) -> Vec<DVec3> {
    let gap = if gap.is_finite() { gap.max(0.0) } else { 0.0 };
    let mut cursor = 0.0;
    let mut xs = Vec::with_capacity(bounds.len());
    for b in bounds {
        match b {
            Some((lo, hi)) => {
                xs.push(Some(cursor - lo.x));
                cursor += hi.x - lo.x + gap;
            }
            None => xs.push(None),
        }
    }
    let row = (cursor - gap).max(0.0);
    // Centre the row on the first figure's original centre.
    let anchor = bounds.iter().flatten().next().map_or(0.0, |(lo, hi)| (lo.x + hi.x) * 0.5);
    xs.into_iter().map(|x| x.map_or(DVec3::ZERO, |x| DVec3::X * (x + anchor - row * 0.5))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_bone_clip() -> Clip {
        Clip {
            name: "t".into(),
            joint_names: vec!["Hips".into(), "Near".into(), "Far".into()],
            parents: vec![None, Some(0), Some(0)],
            is_end_site: vec![false, true, true],
            frame_time: 1.0 / 30.0,
            n_frames: 1,
            positions: vec![
                DVec3::new(0.0, 1.0, 0.0),
                DVec3::new(0.5, 1.0, 2.0),
                DVec3::new(-0.5, 1.0, -2.0),
            ],
        }
    }

    #[test]
    fn shapes_are_sorted_back_to_front() {
        let clip = two_bone_clip();
        let stage = Stage::new(&[&clip]);
        let cam = stage.camera(0.0, 10.0, 160, 120);
        let style = Style { shadows: false, joints: false, ..Style::default() };
        let list = stage.figures(&cam, &[Pose::at(&clip, 0)], &style);
        let caps: Vec<f32> = list
            .shapes
            .iter()
            .filter_map(|s| match s {
                Shape::Capsule { radius_b, outline: Some(_), .. } => Some(*radius_b),
                _ => None,
            })
            .collect();
        // The far bone (smaller on screen) comes first.
        assert_eq!(caps.len(), 2);
        assert!(caps[0] < caps[1], "{caps:?}");
        // From behind, the order flips.
        let cam = stage.camera(180.0, 10.0, 160, 120);
        let list = stage.figures(&cam, &[Pose::at(&clip, 0)], &style);
        let first = list.shapes.iter().find_map(|s| match s {
            Shape::Capsule { b, outline: Some(_), .. } => Some(*b),
            _ => None,
        });
        let near_b = cam.project(DVec3::new(0.5, 1.0, 2.0)).unwrap();
        assert!((first.unwrap().x - near_b.0 as f32).abs() < 1e-3);
    }

    #[test]
    fn offsets_do_not_overlap() {
        let a = Some((DVec3::new(-1.0, 0.0, 0.0), DVec3::new(3.0, 1.0, 0.0)));
        let b = Some((DVec3::new(10.0, 0.0, 0.0), DVec3::new(11.0, 1.0, 0.0)));
        let off = side_by_side_offsets(&[a, None, b, a], 0.5);
        assert_eq!(off[1], DVec3::ZERO);
        let placed: Vec<(f64, f64)> = [(0, a), (2, b), (3, a)]
            .iter()
            .map(|(i, bb)| {
                let (lo, hi) = bb.unwrap();
                (lo.x + off[*i].x, hi.x + off[*i].x)
            })
            .collect();
        for w in placed.windows(2) {
            assert!((w[1].0 - w[0].1 - 0.5).abs() < 1e-12, "{placed:?}");
        }
        assert!(side_by_side_offsets(&[], 1.0).is_empty());
    }

    #[test]
    fn capsule_outline_is_hull() {
        let pts = capsule_outline(Vec2::ZERO, 2.0, Vec2::new(10.0, 0.0), 1.0, 8);
        assert_eq!(pts.len(), 18);
        let max_x = pts.iter().map(|p| p.x).fold(f32::MIN, f32::max);
        let min_x = pts.iter().map(|p| p.x).fold(f32::MAX, f32::min);
        assert!((max_x - 11.0).abs() < 1e-4 && (min_x + 2.0).abs() < 1e-4);
        // Contained disc: just the big one.
        let pts = capsule_outline(Vec2::ZERO, 5.0, Vec2::new(1.0, 0.0), 1.0, 8);
        assert!(pts.iter().all(|p| (p.length() - 5.0).abs() < 1e-4));
        assert!(!capsule_outline(Vec2::ZERO, f32::NAN, Vec2::ONE, 1.0, 4).is_empty());
    }

    #[test]
    fn degenerate_input_does_not_panic() {
        let empty = Clip {
            name: String::new(),
            joint_names: vec![],
            parents: vec![],
            is_end_site: vec![],
            frame_time: 0.0,
            n_frames: 0,
            positions: vec![],
        };
        let mut nan = two_bone_clip();
        nan.positions[1] = DVec3::NAN;
        let mut point = two_bone_clip();
        point.positions.iter_mut().for_each(|p| *p = DVec3::ONE);
        let mut short = two_bone_clip();
        short.n_frames = 5;
        let clips = [&empty, &nan, &point, &short];
        let stage = Stage::new(&clips);
        let cam = stage.camera(35.0, 20.0, 64, 48);
        let poses: Vec<Pose<'_>> = clips.iter().map(|c| Pose::at(c, 3)).collect();
        let style = Style { highlight: Some((1, 1)), ..Style::default() };
        let list = stage.draw_list(&cam, &poses, &style);
        assert!(!list.shapes.is_empty());
        let _ = Stage::new(&[]).draw_list(&cam, &[], &style);
    }

    #[test]
    fn ground_is_the_lowest_point_of_all_frames_and_clips() {
        let a = two_bone_clip();
        let mut b = two_bone_clip();
        b.n_frames = 2;
        b.positions.extend([DVec3::new(0.0, -3.0, 0.0), DVec3::ZERO, DVec3::ONE]);
        let stage = Stage::new(&[&a, &b]);
        assert_eq!(stage.ground_y(), -3.0);
        assert_eq!(stage.offsets().len(), 2);
    }

    #[test]
    fn one_head_ball_per_head_chain() {
        let mut c = two_bone_clip();
        c.joint_names = vec!["Head".into(), "HeadTop".into(), "HeadTop_End".into()];
        c.parents = vec![None, Some(0), Some(1)];
        c.is_end_site = vec![false, false, true];
        assert!(is_head(&c, 0));
        assert!(!is_head(&c, 1) && !is_head(&c, 2));
        assert_eq!(side("LeftArm"), 1.0);
        assert_eq!(side("rShldr"), -1.0);
        assert_eq!(side("RightUpLeg"), -1.0);
        assert_eq!(side("Lhand"), 0.0);
        assert_eq!(side("L_Knee"), 1.0);
    }

    #[test]
    fn palette_is_stable() {
        assert_eq!(figure_color(0), PALETTE[0]);
        assert_eq!(figure_color(9), PALETTE[1]);
        assert_eq!(nice_step(0.0), 1.0);
        assert_eq!(nice_step(23.0), 20.0);
    }
}

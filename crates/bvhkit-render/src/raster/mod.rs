//! Rasterisation of [`DrawList`]s with tiny-skia: PNG, animated GIF,
//! contact sheets and MP4 through an `ffmpeg` child process.
//!
//! Everything here is deterministic: the same clips and options give the
//! same bytes, run after run (the MP4 bytes are ffmpeg's business).
//!
//! # Implementation notes
//!
//! `raster` (feature `raster`, default) is the only place that rasterises, with
//! tiny-skia: pure Rust, CPU only, no system libraries, anti-aliased, with its
//! own golden-image tests upstream. Stills are framed per frame
//! (`Framing::Frame`, default) or on the whole motion; animations and contact
//! sheets (of one clip, or several side by side in every cell:
//! `render_contact_sheet_of`) always frame the whole motion. Labels (each
//! figure's clip name over it, in its colour, shortened with `..` where
//! neighbours would overlap; a still's frame number in the corner) are drawn in
//! a built-in 5x7 pixel font (`raster/text.rs`, no font file); the camera
//! always leaves 15% headroom for them, so a picture is framed the same with or
//! without labels.
//!
//! MP4 pipes raw RGBA frames to an `ffmpeg` child process.

mod paint;
mod quantize;
mod text;
mod video;

use std::borrow::Cow;
use std::fmt;
use std::io;
use std::ops::Range;

use tiny_skia::Pixmap;

use crate::Clip;
use glam::{DVec3, Vec2};

use crate::scene::{Camera, DrawList, Pose, Rgba, Stage, Style, figure_color};
use text::TextStyle;

pub use video::{render_mp4, render_mp4_with};

/// A rendering error.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// Reading or writing failed.
    Io(io::Error),
    /// Nothing to draw: no clips, or a clip with no frames.
    NoFrames {
        /// Name of the empty clip (empty when no clip was given).
        clip: String,
    },
    /// The image size is zero or too large for the format.
    InvalidSize {
        /// Requested width.
        width: u32,
        /// Requested height.
        height: u32,
    },
    /// The PNG or GIF encoder failed.
    Encode(String),
    /// No `ffmpeg` executable could be started.
    FfmpegNotFound {
        /// The program that was tried.
        program: String,
    },
    /// `ffmpeg` ran but failed.
    Ffmpeg {
        /// Its exit status.
        status: String,
        /// The end of its standard error.
        stderr: String,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(e) => write!(f, "i/o error: {e}"),
            Error::NoFrames { clip } if clip.is_empty() => write!(f, "nothing to render: no clip"),
            Error::NoFrames { clip } => write!(f, "nothing to render: clip '{clip}' has no frames"),
            Error::InvalidSize { width, height } => {
                write!(f, "invalid image size {width}x{height}")
            }
            Error::Encode(e) => write!(f, "encoding failed: {e}"),
            Error::FfmpegNotFound { program } => write!(
                f,
                "cannot run '{program}': MP4 output needs an ffmpeg executable on PATH \
                 (on Debian or Ubuntu: apt-get install ffmpeg)"
            ),
            Error::Ffmpeg { status, stderr } => write!(f, "ffmpeg failed ({status}): {stderr}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Error {
        Error::Io(e)
    }
}

/// A `Result` with this module's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

/// How a picture looks; every field documents its default.
#[derive(Clone, Debug, PartialEq)]
pub struct RenderOptions {
    /// Image width in pixels. Default: 640.
    pub width: u32,
    /// Image height in pixels. Default: 480.
    pub height: u32,
    /// Camera turn about +Y in degrees (0 looks from +Z). Default: 35, a
    /// 3/4 view of a figure facing +Z.
    pub azimuth: f64,
    /// Camera angle above the ground in degrees. Default: 20.
    pub elevation: f64,
    /// Background colour. GIF and MP4 treat it as opaque. Default: a light
    /// grey-blue.
    pub background: Rgba,
    /// What to draw (bone thickness, grid, shadows, highlighted joint).
    pub style: Style,
    /// How a still ([`render_frame`], [`render_png`]) is framed.
    /// Animations and contact sheets always frame the whole motion, so
    /// that the camera does not jump. Default: [`Framing::Frame`].
    pub framing: Framing,
    /// Write each figure's name (its clip's `name`) over it, in its
    /// colour, and the frame number in a still's top-left corner.
    /// Default: `true`.
    pub labels: bool,
}

/// What the camera of a still keeps in the picture.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Framing {
    /// The figures as they stand in the frame drawn ([`Stage::at_frame`]):
    /// a walker late in its walk fills the picture.
    #[default]
    Frame,
    /// Every frame of the motion ([`Stage::new`]), as animations do: the
    /// same camera for every frame.
    Motion,
}

impl Default for RenderOptions {
    fn default() -> RenderOptions {
        RenderOptions {
            width: 640,
            height: 480,
            azimuth: 35.0,
            elevation: 20.0,
            background: Rgba::rgb(236, 239, 243),
            style: Style::default(),
            framing: Framing::Frame,
            labels: true,
        }
    }
}

/// The highest frame rate of a GIF (its delays are whole centiseconds,
/// and viewers slow delays under 2 down): a higher rate is drawn at this.
pub const GIF_MAX_FPS: f64 = 50.0;

/// The highest frame rate of an MP4: a higher rate is drawn at this.
pub const MP4_MAX_FPS: f64 = 60.0;

/// Which frames an animation shows and how fast.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AnimationOptions {
    /// Frames of the first clip to play, end exclusive and clamped to the
    /// clip. Default (`None`): all of them.
    pub frames: Option<Range<usize>>,
    /// Output frames per second; source frames are picked by time, so a
    /// 120 fps clip rendered at 30 fps plays at its real speed. Default
    /// (`None`): the clip's own rate, capped at 50 for GIF and 60 for MP4.
    pub fps: Option<f64>,
}

/// The layout of a contact sheet.
#[derive(Clone, Debug, PartialEq)]
pub struct SheetOptions {
    /// Number of cells (evenly spaced frames, first and last included).
    /// Default: 12.
    pub cells: usize,
    /// Cells per row; 0 picks a near-square grid. Default: 0.
    pub columns: usize,
    /// Write the frame number in each cell's corner. Default: `true`.
    /// (The figure's name is [`RenderOptions::labels`].)
    pub labels: bool,
    /// The frames to space the cells over (of the first clip, clamped to
    /// it), framed by the camera as they stand in those frames: a close look
    /// at a few frames. `None` (the default): every frame.
    pub frames: Option<Range<usize>>,
}

impl Default for SheetOptions {
    fn default() -> SheetOptions {
        SheetOptions { cells: 12, columns: 0, labels: true, frames: None }
    }
}

/// An RGBA image, 8 bits per channel, straight alpha, rows top to bottom.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width * height * 4` bytes.
    pub data: Vec<u8>,
}

impl Image {
    /// Encodes the image as a PNG file.
    ///
    /// # Errors
    /// When the PNG encoder fails (it does not for a well-formed image).
    pub fn to_png(&self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        let mut enc = png::Encoder::new(&mut out, self.width, self.height);
        enc.set_color(png::ColorType::Rgba);
        enc.set_depth(png::BitDepth::Eight);
        let enc_err = |e: png::EncodingError| Error::Encode(e.to_string());
        let mut w = enc.write_header().map_err(enc_err)?;
        w.write_image_data(&self.data).map_err(enc_err)?;
        w.finish().map_err(enc_err)?;
        Ok(out)
    }

    fn from_pixmap(p: Pixmap) -> Image {
        let (width, height) = (p.width(), p.height());
        Image { width, height, data: p.take_demultiplied() }
    }
}

fn pixmap(width: u32, height: u32) -> Result<Pixmap> {
    if width > 16384 || height > 16384 {
        return Err(Error::InvalidSize { width, height });
    }
    Pixmap::new(width, height).ok_or(Error::InvalidSize { width, height })
}

fn skia_color(c: Rgba) -> tiny_skia::Color {
    tiny_skia::Color::from_rgba8(c.r, c.g, c.b, c.a)
}

/// Rasterises any draw list over a `background`, anti-aliased.
///
/// # Errors
/// [`Error::InvalidSize`] when the list's viewport is empty or too large.
pub fn render_list(list: &DrawList, background: Rgba) -> Result<Image> {
    let mut p = pixmap(list.width, list.height)?;
    p.fill(skia_color(background));
    paint::draw_shapes(&mut p, list);
    Ok(Image::from_pixmap(p))
}

/// Checks that there is something to draw.
fn check_clips(clips: &[&Clip]) -> Result<()> {
    if clips.is_empty() {
        return Err(Error::NoFrames { clip: String::new() });
    }
    match clips.iter().find(|c| c.n_frames == 0 || c.n_joints() == 0) {
        Some(c) => Err(Error::NoFrames { clip: c.name.clone() }),
        None => Ok(()),
    }
}

/// Renders frame `frame` (clamped to each clip) of one or more clips side
/// by side, framed on the figures in that frame ([`Framing::Frame`]) or on
/// the whole motion ([`Framing::Motion`]), with each figure's name over it
/// and the frame number in the corner when [`RenderOptions::labels`] is set.
///
/// # Errors
/// [`Error::NoFrames`] for no clips or an empty clip, [`Error::InvalidSize`]
/// for a zero or huge size.
///
/// # Example
/// ```
/// use bvhkit_render::{Clip, glam::DVec3, raster};
/// let clip = Clip {
///     name: "stick".into(),
///     joint_names: vec!["Hips".into(), "Head".into()],
///     parents: vec![None, Some(0)],
///     is_end_site: vec![false, true],
///     frame_time: 1.0 / 30.0,
///     n_frames: 1,
///     positions: vec![DVec3::ZERO, DVec3::new(0.0, 1.0, 0.0)],
/// };
/// let opts = raster::RenderOptions { width: 64, height: 48, ..Default::default() };
/// let img = raster::render_frame(&[&clip], 0, &opts)?;
/// assert_eq!(img.data.len(), 64 * 48 * 4);
/// # Ok::<(), raster::Error>(())
/// ```
pub fn render_frame(clips: &[&Clip], frame: usize, opts: &RenderOptions) -> Result<Image> {
    check_clips(clips)?;
    let stage = match opts.framing {
        Framing::Frame => Stage::at_frame(clips, frame),
        Framing::Motion => Stage::new(clips),
    };
    let cam = camera(&stage, opts);
    let poses: Vec<Pose<'_>> = clips.iter().map(|c| Pose::at(c, frame)).collect();
    let mut p = pixmap(opts.width, opts.height)?;
    p.fill(skia_color(opts.background));
    paint::draw_shapes(&mut p, &stage.draw_list(&cam, &poses, &opts.style));
    if opts.labels {
        let figures: Vec<Vec<DVec3>> = poses.iter().map(|p| p.positions.to_vec()).collect();
        draw_names(&mut p, &cam, &stage, clips, &figures);
        let style = TextStyle { scale: text_scale(opts.height), ink: Rgba::rgb(30, 34, 40) };
        text::draw_text(
            &mut p,
            style.scale * 2.0,
            style.scale * 2.0,
            &style,
            &frame_label(clips, frame),
        );
    }
    Ok(Image::from_pixmap(p))
}

/// The camera for `stage`: [`Stage::camera`] with room above the figures
/// for their names (the framed box is raised by 15% of its height), kept
/// without labels too so that a picture is framed the same either way.
fn camera(stage: &Stage, opts: &RenderOptions) -> Camera {
    match stage.bounds() {
        Some((lo, mut hi)) => {
            hi.y += 0.15 * (hi.y - lo.y);
            Camera::framing(lo, hi, opts.azimuth, opts.elevation, opts.width, opts.height)
        }
        None => stage.camera(opts.azimuth, opts.elevation, opts.width, opts.height),
    }
}

/// The frame number a still shows: `frame`, clamped as the first clip's
/// pose is.
fn frame_label(clips: &[&Clip], frame: usize) -> String {
    let last = clips.iter().map(|c| c.n_frames).max().unwrap_or(1).saturating_sub(1);
    frame.min(last).to_string()
}

/// Font pixels per image pixel for labels: 1 up to 300 pixels of height,
/// then one more per 240.
fn text_scale(height: u32) -> f32 {
    (height as f32 / 240.0).round().max(1.0)
}

/// The screen rectangle `(min, max)` of `points`, `None` when none projects.
fn screen_rect(cam: &Camera, points: impl IntoIterator<Item = DVec3>) -> Option<(Vec2, Vec2)> {
    points
        .into_iter()
        .filter_map(|p| cam.project(p))
        .filter(|(x, y, _)| x.is_finite() && y.is_finite())
        .map(|(x, y, _)| Vec2::new(x as f32, y as f32))
        .fold(None, |r, p| Some(r.map_or((p, p), |(lo, hi): (Vec2, Vec2)| (lo.min(p), hi.max(p)))))
}

/// The eight corners of a box.
fn corners((lo, hi): (DVec3, DVec3)) -> [DVec3; 8] {
    std::array::from_fn(|i| {
        DVec3::new(
            if i & 1 == 0 { lo.x } else { hi.x },
            if i & 2 == 0 { lo.y } else { hi.y },
            if i & 4 == 0 { lo.z } else { hi.z },
        )
    })
}

/// Writes each clip's name over its figure, whose points (before the
/// stage offset) are `figures[i]`: centred above the screen rectangle of
/// those points (plus 6% of its height for the head and bone radii), or under it when there is no room above, in the figure's
/// colour. Names of figures side by side are shortened (`..`) so that
/// they do not overlap.
fn draw_names(
    p: &mut Pixmap,
    cam: &Camera,
    stage: &Stage,
    clips: &[&Clip],
    figures: &[Vec<DVec3>],
) {
    let (w, h) = (p.width() as f32, p.height() as f32);
    let rects: Vec<Option<(Vec2, Vec2)>> = figures
        .iter()
        .enumerate()
        .map(|(i, pts)| {
            let off = stage.offsets().get(i).copied().unwrap_or(DVec3::ZERO);
            screen_rect(cam, pts.iter().map(|q| *q + off))
        })
        .collect();
    let centres: Vec<Option<f32>> =
        rects.iter().map(|r| r.map(|(lo, hi)| (lo.x + hi.x) * 0.5)).collect();
    let scale = text_scale(p.height());
    for (i, clip) in clips.iter().enumerate() {
        let (Some((lo, hi)), Some(cx)) = (rects[i], centres[i]) else { continue };
        // Half the distance to the nearest other figure on either side.
        let room = centres
            .iter()
            .enumerate()
            .filter(|(k, _)| *k != i)
            .filter_map(|(_, c)| *c)
            .map(|c| (c - cx).abs() - 2.0 * scale)
            .fold(w, f32::min);
        let style = TextStyle { scale, ink: figure_color(i).mix(Rgba::rgb(0, 0, 0), 0.35) };
        let name = style.fit(&clip.name, room.max(0.0).min(w));
        let tw = style.width(&name);
        let th = style.height();
        let x = (cx - tw * 0.5).clamp(0.0, (w - tw).max(0.0));
        // Room for the head ball and bone radii, which reach past the joints.
        let gap = 2.0 * scale + 0.06 * (hi.y - lo.y);
        let y = if lo.y - gap - th >= 0.0 {
            lo.y - gap - th
        } else if hi.y + gap + th <= h {
            hi.y + gap
        } else {
            0.0
        };
        text::draw_text(p, x, y, &style, &name);
    }
}

/// [`render_frame`] encoded as PNG.
///
/// # Errors
/// As [`render_frame`].
pub fn render_png(clips: &[&Clip], frame: usize, opts: &RenderOptions) -> Result<Vec<u8>> {
    render_frame(clips, frame, opts)?.to_png()
}

/// Renders the frames of an animation one by one, reusing the ground,
/// which does not move.
struct Animator<'a> {
    clips: &'a [&'a Clip],
    stage: Stage,
    cam: Camera,
    base: Pixmap,
    style: &'a Style,
    /// Source frame of each clip, per output frame.
    schedule: Vec<Vec<usize>>,
    fps: f64,
}

fn frame_time(c: &Clip) -> f64 {
    if c.frame_time.is_finite() && c.frame_time > 1e-6 { c.frame_time } else { 1.0 / 30.0 }
}

impl<'a> Animator<'a> {
    fn new(
        clips: &'a [&'a Clip],
        opts: &'a RenderOptions,
        anim: &AnimationOptions,
        max_fps: f64,
    ) -> Result<Animator<'a>> {
        check_clips(clips)?;
        let first = clips[0];
        let range = anim.frames.clone().unwrap_or(0..first.n_frames);
        let (start, end) = (range.start.min(first.n_frames), range.end.min(first.n_frames));
        if start >= end {
            return Err(Error::NoFrames { clip: first.name.clone() });
        }
        let ft = frame_time(first);
        let fps = anim.fps.filter(|f| f.is_finite() && *f > 0.0).unwrap_or(1.0 / ft).min(max_fps);
        let duration = (end - 1 - start) as f64 * ft;
        let n_out = (duration * fps + 1e-9).floor() as usize + 1;
        let t0 = start as f64 * ft;
        let schedule = (0..n_out)
            .map(|k| {
                let t = t0 + k as f64 / fps;
                clips
                    .iter()
                    .map(|c| {
                        let f = (t / frame_time(c)).round() as usize;
                        f.min(c.n_frames - 1)
                    })
                    .collect()
            })
            .collect();
        let stage = Stage::new(clips);
        let cam = camera(&stage, opts);
        let mut base = pixmap(opts.width, opts.height)?;
        base.fill(skia_color(opts.background.with_alpha(255)));
        paint::draw_shapes(&mut base, &stage.ground(&cam, &opts.style));
        if opts.labels {
            // Over the box each figure moves in: names stay put while the
            // figures move.
            let boxes: Vec<Vec<DVec3>> = clips
                .iter()
                .map(|c| c.framing_bounds().map(|b| corners(b).to_vec()).unwrap_or_default())
                .collect();
            draw_names(&mut base, &cam, &stage, clips, &boxes);
        }
        Ok(Animator { clips, stage, cam, base, style: &opts.style, schedule, fps })
    }

    /// Renders output frame `k` into `out` (premultiplied RGBA, opaque).
    fn render(&self, k: usize, out: &mut Pixmap) {
        out.data_mut().copy_from_slice(self.base.data());
        let poses: Vec<Pose<'_>> =
            self.clips.iter().zip(&self.schedule[k]).map(|(c, f)| Pose::at(c, *f)).collect();
        paint::draw_shapes(out, &self.stage.figures(&self.cam, &poses, self.style));
    }
}

/// Renders an animated, endlessly looping GIF of one or more clips side by
/// side.
///
/// The palette (256 colours) is built once from a few evenly spaced frames
/// and every frame is mapped to it without dithering; only the rectangle
/// that changed since the previous frame is stored.
///
/// # Errors
/// [`Error::NoFrames`] for no clips, an empty clip or an empty frame range;
/// [`Error::InvalidSize`] for a zero size or one above 65535.
pub fn render_gif(
    clips: &[&Clip],
    opts: &RenderOptions,
    anim: &AnimationOptions,
) -> Result<Vec<u8>> {
    let (w, h) = (opts.width, opts.height);
    let (Ok(w16), Ok(h16)) = (u16::try_from(w), u16::try_from(h)) else {
        return Err(Error::InvalidSize { width: w, height: h });
    };
    let animator = Animator::new(clips, opts, anim, GIF_MAX_FPS)?;
    let n = animator.schedule.len();
    let mut frame = pixmap(w, h)?;
    let mut hist = quantize::Histogram::new();
    let samples = n.min(8);
    for s in 0..samples {
        animator.render(s * n / samples, &mut frame);
        hist.add(frame.data());
    }
    let mut palette = hist.palette();
    let enc_err = |e: gif::EncodingError| Error::Encode(e.to_string());
    let mut out = Vec::new();
    let mut enc = gif::Encoder::new(&mut out, w16, h16, &palette.bytes()).map_err(enc_err)?;
    enc.set_repeat(gif::Repeat::Infinite).map_err(enc_err)?;
    // Frame k is shown from round(100 k / fps) centiseconds on.
    let cs = |k: usize| (k as f64 * 100.0 / animator.fps).round() as u64;
    let (mut prev, mut cur) = (Vec::new(), Vec::new());
    let mut pending: Option<(gif::Frame<'static>, u64)> = None;
    for k in 0..n {
        animator.render(k, &mut frame);
        palette.map(frame.data(), &mut cur);
        let rect = if k == 0 {
            Some((0, 0, w as usize, h as usize))
        } else {
            changed(&prev, &cur, w as usize)
        };
        if let Some((x0, y0, x1, y1)) = rect {
            if let Some((f, start)) = pending.take() {
                write_frame(&mut enc, f, cs(k) - start)?;
            }
            let mut buf = Vec::with_capacity((x1 - x0) * (y1 - y0));
            for y in y0..y1 {
                buf.extend_from_slice(&cur[y * w as usize + x0..y * w as usize + x1]);
            }
            let f = gif::Frame {
                left: x0 as u16,
                top: y0 as u16,
                width: (x1 - x0) as u16,
                height: (y1 - y0) as u16,
                buffer: Cow::Owned(buf),
                dispose: gif::DisposalMethod::Keep,
                ..gif::Frame::default()
            };
            pending = Some((f, cs(k)));
            std::mem::swap(&mut prev, &mut cur);
        }
    }
    if let Some((f, start)) = pending.take() {
        write_frame(&mut enc, f, (cs(n) - start).max(1))?;
    }
    drop(enc);
    Ok(out)
}

fn write_frame<W: io::Write>(
    enc: &mut gif::Encoder<W>,
    mut f: gif::Frame<'_>,
    delay: u64,
) -> Result<()> {
    f.delay = delay.clamp(1, u64::from(u16::MAX)) as u16;
    enc.write_frame(&f).map_err(|e| Error::Encode(e.to_string()))
}

/// The bounding rectangle `(x0, y0, x1, y1)` (end exclusive) of the pixels
/// that differ, or `None`.
fn changed(prev: &[u8], cur: &[u8], w: usize) -> Option<(usize, usize, usize, usize)> {
    let (mut x0, mut y0, mut x1, mut y1) = (usize::MAX, usize::MAX, 0, 0);
    for (y, (a, b)) in prev.chunks_exact(w).zip(cur.chunks_exact(w)).enumerate() {
        if a == b {
            continue;
        }
        let first = a.iter().zip(b).position(|(p, q)| p != q).unwrap_or(0);
        let last = a.iter().zip(b).rposition(|(p, q)| p != q).unwrap_or(0);
        x0 = x0.min(first);
        x1 = x1.max(last + 1);
        y0 = y0.min(y);
        y1 = y + 1;
    }
    (x1 > 0).then_some((x0, y0, x1, y1))
}

/// A grid of evenly spaced frames of `clip` in one PNG, each cell
/// `opts.width` x `opts.height`, all seen by the same camera (framing the
/// whole motion), with the frame number in the top-left corner when
/// `sheet.labels` is set and the clip's name over the figure when
/// `opts.labels` is.
///
/// # Errors
/// [`Error::NoFrames`] for an empty clip, [`Error::InvalidSize`] for a zero
/// cell size or a sheet above 16384 pixels a side.
pub fn render_contact_sheet(
    clip: &Clip,
    opts: &RenderOptions,
    sheet: &SheetOptions,
) -> Result<Vec<u8>> {
    render_contact_sheet_of(&[clip], opts, sheet)
}

/// [`render_contact_sheet`] of several clips side by side in every cell
/// (as [`render_frame`] lays them out): the frames are spaced over the
/// first clip (or over [`SheetOptions::frames`] of it), and each clip shows
/// that frame (clamped to its length).
///
/// # Errors
/// As [`render_contact_sheet`], for any of the clips; [`Error::NoFrames`]
/// for an empty [`SheetOptions::frames`].
pub fn render_contact_sheet_of(
    clips: &[&Clip],
    opts: &RenderOptions,
    sheet: &SheetOptions,
) -> Result<Vec<u8>> {
    check_clips(clips)?;
    let Some(range) = sheet.frames.clone() else {
        return contact_sheet(clips, opts, sheet, 0);
    };
    let start = range.start.min(clips[0].n_frames - 1);
    let end = range.end.min(clips[0].n_frames);
    if range.is_empty() || end <= start {
        return Err(Error::NoFrames { clip: clips[0].name.clone() });
    }
    let parts: Vec<Clip> = clips.iter().map(|c| c.frames(start..end)).collect();
    let refs: Vec<&Clip> = parts.iter().collect();
    contact_sheet(&refs, opts, sheet, start)
}

/// The contact sheet of `clips`, whose frame 0 is frame `first` of the
/// file (for the cells' numbers).
fn contact_sheet(
    clips: &[&Clip],
    opts: &RenderOptions,
    sheet: &SheetOptions,
    first: usize,
) -> Result<Vec<u8>> {
    let clip = clips[0];
    let n = sheet.cells.clamp(1, clip.n_frames);
    let cols =
        if sheet.columns > 0 { sheet.columns.min(n) } else { (n as f64).sqrt().ceil() as usize };
    let rows = n.div_ceil(cols);
    let (cw, ch) = (opts.width as usize, opts.height as usize);
    let (sw, sh) = (cols * cw, rows * ch);
    let too_big = |v: usize| u32::try_from(v).map_or(true, |v| v > 16384);
    if too_big(sw) || too_big(sh) {
        return Err(Error::InvalidSize { width: sw as u32, height: sh as u32 });
    }
    let mut out = pixmap(sw as u32, sh as u32)?;
    out.fill(skia_color(opts.background));
    let stage = Stage::new(clips);
    let cam = camera(&stage, opts);
    let mut base = pixmap(opts.width, opts.height)?;
    base.fill(skia_color(opts.background));
    paint::draw_shapes(&mut base, &stage.ground(&cam, &opts.style));
    let mut cell = base.clone();
    let number = TextStyle { scale: text_scale(opts.height), ink: Rgba::rgb(30, 34, 40) };
    for k in 0..n {
        let frame = if n > 1 { (k * (clip.n_frames - 1) + (n - 1) / 2) / (n - 1) } else { 0 };
        cell.data_mut().copy_from_slice(base.data());
        let poses: Vec<Pose<'_>> = clips.iter().map(|c| Pose::at(c, frame)).collect();
        paint::draw_shapes(&mut cell, &stage.figures(&cam, &poses, &opts.style));
        if opts.labels {
            let figures: Vec<Vec<DVec3>> = poses.iter().map(|p| p.positions.to_vec()).collect();
            draw_names(&mut cell, &cam, &stage, clips, &figures);
        }
        if sheet.labels {
            let s = number.scale * 2.0;
            text::draw_text(&mut cell, s, s, &number, &(first + frame).to_string());
        }
        let (cx, cy) = ((k % cols) * cw, (k / cols) * ch);
        let src = cell.data();
        let dst = out.data_mut();
        for y in 0..ch {
            let d = ((cy + y) * sw + cx) * 4;
            dst[d..d + cw * 4].copy_from_slice(&src[y * cw * 4..(y + 1) * cw * 4]);
        }
        // A thin separator on the right and bottom edges of each cell.
        if let Some(r) = tiny_skia::Rect::from_xywh(cx as f32, cy as f32, cw as f32, ch as f32) {
            let mut p = tiny_skia::Paint::default();
            p.set_color_rgba8(255, 255, 255, 255);
            let stroke = tiny_skia::Stroke { width: 2.0, ..Default::default() };
            let path = tiny_skia::PathBuilder::from_rect(r);
            out.stroke_path(&path, &p, &stroke, tiny_skia::Transform::identity(), None);
        }
    }
    Image::from_pixmap(out).to_png()
}

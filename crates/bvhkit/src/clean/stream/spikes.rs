//! `bvh clean --spikes` (and `--one-euro` after it) streamed: the whole
//! clip's glitch frames and spikes ([`crate::clean::spikes`]), the same
//! spans to the bit, in four reads of the input and memory bounded by a
//! few numbers per frame and one per joint-frame, never the clip's values.
//!
//! The whole clip decides a track's spans from its candidates (frames
//! whose one-frame excursion is above the threshold), largest first; a
//! candidate's decision reads the frames within [`REACH`] of it, and its
//! only link to the others is the frames their spans cover, within
//! [`MAX_SPAN`] of each. A span's tests but for that link
//! ([`spikes::passes`]) depend on its frames alone, so they are taken
//! while the frames stream by, and the candidates resolved afterwards in
//! the whole clip's order ([`spikes::resolve`]) from the tests' results.
//!
//! 1. **Poses.** Each frame's world positions (eight frames at a time,
//!    [`Kinematics::positions_many`], the bits of the whole clip's FK)
//!    give its pose size (the figure's size is their median) and the
//!    pose's one-frame excursion; with the four frames before it, the
//!    excursion and the gap of the spans of 2 to 4 frames that end just
//!    before it, and its step from the frame before: ten numbers a frame.
//!    At the end the glitch threshold, then every glitch span, are
//!    decided.
//! 2. **Tracks' excursions.** The glitch spans are repaired as the frames
//!    pass (a span is written when the frame after it is read), each
//!    repaired frame's pose size measured again (the spikes step's figure
//!    size is the repaired clip's), and every track's one-frame excursion
//!    kept: one number per track and frame, the bound of the stream's
//!    memory (8 bytes per joint-frame of a rotation track, and per frame
//!    of a position track). At the end each track's threshold and
//!    candidates; the excursions are dropped.
//! 3. **Tests.** The glitch spans again; each candidate's spans tested
//!    from the [`REACH`] frames on each side of it (a window of
//!    `2 · REACH + 1` frames), the spans that pass kept with their
//!    excursions; a span is tested once for the candidates that share it,
//!    and a candidate no other comes within `2 · MAX_SPAN` of stops at the
//!    first length with a span that passes (nothing can cover its frames,
//!    so its resolution stops there too). At the end each track's spans
//!    are resolved.
//! 4. **Writing.** The glitch spans, then the tracks' spans (each when the
//!    frame after it has its glitch repair), then one-euro, a frame at a
//!    time into the output, eight frames behind the reader; the summary's
//!    changes measured as the frames go.
//!
//! Memory: ten `f64` a frame in the first pass (the pose sizes, one a
//! frame, are kept to the second), one `f64` per track and frame in the
//! second, the candidates (16 bytes each, 24 in the third pass) and the
//! spans that pass, and windows of at most a few hundred frames: for the
//! 56,942 frames of the 57 tracks of the synthetic file (52 rotations, 5
//! position channels), 25 MiB of excursions against its 74 MiB of values.

use std::io::Write;

use glam::{DQuat, DVec3};

use super::{JointChange, OneEuroFrames, Options, Report, Step};
use crate::clean::spikes::{
    self, Floors, MAX_SPAN, REACH, Thresholds, excursion, glitch_span, passes, pose_dist, pose_off,
    position_span, positions, relative_to_root, resolve, rotation_dist, rotation_off,
    rotation_span, size_floor,
};
use crate::clean::{RotationBuffers, rotations_into, smooth};
use crate::edit::JointChannels;
use crate::edit::run::{EditError, Output};
use crate::error::{Warning, num};
use crate::parse::{FrameReader, FrameSource};
use crate::units::{median_size, pose_size};
use crate::write::WriteOptions;
use crate::{Kinematics, PositionChannels, Skeleton};

/// Frames read at once.
const BATCH: usize = 256;

/// Text formatted before it goes to the output's body.
const FLUSH_AT: usize = 1 << 20;

type Result<T, E> = std::result::Result<T, EditError<E>>;

/// Rows of frames `base..base + len`, `width` values each, kept in one
/// vector from which the rows no longer needed are dropped now and then.
struct Rows {
    width: usize,
    /// The frame of `data[start..]`'s first row.
    base: usize,
    start: usize,
    data: Vec<f64>,
}

impl Rows {
    fn new(width: usize) -> Rows {
        Rows { width, base: 0, start: 0, data: Vec::new() }
    }

    /// One past the last frame held.
    fn end(&self) -> usize {
        self.base + (self.data.len() - self.start) / self.width
    }

    fn push(&mut self, row: &[f64]) {
        self.data.extend_from_slice(row);
    }

    /// Frames `a..=b`, one after the other.
    fn range(&self, a: usize, b: usize) -> &[f64] {
        let at = self.start + (a - self.base) * self.width;
        &self.data[at..at + (b + 1 - a) * self.width]
    }

    fn range_mut(&mut self, a: usize, b: usize) -> &mut [f64] {
        let at = self.start + (a - self.base) * self.width;
        &mut self.data[at..at + (b + 1 - a) * self.width]
    }

    fn row(&self, f: usize) -> &[f64] {
        self.range(f, f)
    }

    /// Forgets the frames before `f`.
    fn drop_before(&mut self, f: usize) {
        if f <= self.base {
            return;
        }
        let f = f.min(self.end());
        self.start += (f - self.base) * self.width;
        self.base = f;
        // Moved down when the dead part is the larger.
        if self.start > (1 << 16) && 2 * self.start > self.data.len() {
            self.data.drain(..self.start);
            self.start = 0;
        }
    }
}

/// Reads the input from its start, [`BATCH`] frames at a time, handing
/// each batch to `each` with its first frame; returns the reader's
/// warnings.
fn pass<R: FrameSource, E>(
    open: &mut super::Open<'_, R>,
    release: &mut Option<&mut (dyn FnMut(usize) + Send)>,
    mut each: impl FnMut(usize, &[f64]) -> Result<(), E>,
) -> Result<Vec<Warning>, E> {
    let mut rdr: FrameReader<R> = open().map_err(EditError::Read)?;
    let mut batch = Vec::new();
    let mut at = 0;
    loop {
        batch.clear();
        let got = rdr.read_frames(&mut batch, BATCH).map_err(EditError::Read)?;
        if got == 0 {
            break;
        }
        each(at, &batch)?;
        at += got;
        if let Some(r) = release.as_deref_mut() {
            r(rdr.bytes_consumed());
        }
    }
    Ok(rdr.take_warnings())
}

/// How much a step changed one joint ([`super::super::changes`], a frame
/// at a time).
#[derive(Clone, Copy, Default)]
struct Most {
    rotation: f64,
    position: f64,
    any: bool,
}

impl Most {
    /// Adds frame `a` (before) against `b` (after) of joint `c`.
    fn add(&mut self, c: &JointChannels, a: &[f64], b: &[f64], width: usize, q: &mut QuatBuf) {
        let ri = &c.rot_index[..c.n_rot as usize];
        if ri.iter().any(|&i| a[i].to_bits() != b[i].to_bits()) {
            self.any = true;
            let d = q.one(c, a, width).angle_between(q.one(c, b, width)).to_degrees();
            self.rotation = self.rotation.max(if d.is_nan() { f64::INFINITY } else { d });
        }
        for &i in &c.pos_index[..c.n_pos as usize] {
            if a[i].to_bits() != b[i].to_bits() {
                self.any = true;
                self.position = self.position.max((a[i] - b[i]).abs());
            }
        }
    }

    fn changes(most: &[Most]) -> Vec<JointChange> {
        most.iter()
            .enumerate()
            .filter(|(_, m)| m.any)
            .map(|(joint, m)| JointChange { joint, rotation_deg: m.rotation, position: m.position })
            .collect()
    }
}

/// Rotations of rows as [`crate::clean::rotations`] takes them (the same
/// bits), through buffers kept between calls.
#[derive(Default)]
struct QuatBuf {
    b: RotationBuffers,
    q: Vec<DQuat>,
}

impl QuatBuf {
    /// The rotations of `c` in `rows`.
    fn all(&mut self, c: &JointChannels, rows: &[f64], width: usize) -> &[DQuat] {
        rotations_into(c, rows, width, &mut self.b, &mut self.q);
        &self.q
    }

    /// The rotation of `c` in one row.
    fn one(&mut self, c: &JointChannels, row: &[f64], width: usize) -> DQuat {
        self.all(c, row, width)[0]
    }
}

/// A track: a joint's rotation or its position channels.
#[derive(Clone, Copy)]
struct TrackOf {
    joint: usize,
    rotation: bool,
}

/// What the first pass leaves: per frame, the pose's size, its one-frame
/// excursion and its step to the next; per span of 1 to 4 frames starting
/// at a frame, its gap and (2 to 4 frames) its excursion.
struct Poses {
    sizes: Vec<f64>,
    /// Frames 1 to n - 2, at `f - 1` (the whole clip's `devs`).
    devs: Vec<f64>,
    /// `steps[i]`: frame `i` to `i + 1`.
    steps: Vec<f64>,
    /// `gaps[len - 1][a - 1]`: frame `a - 1` to `a + len`.
    gaps: [Vec<f64>; MAX_SPAN],
    /// `exc[len - 1][a - 1]`: the excursion of `a..a + len` (`len` from 2).
    exc: [Vec<f64>; MAX_SPAN],
}

/// The glitch spans and what the spans of the tracks need, decided as the
/// passes go.
struct Plan<'a> {
    skel: &'a Skeleton,
    layouts: &'a [JointChannels],
    width: usize,
    n: usize,
    k: f64,
    /// Glitch spans, in frame order, and the position tolerance of their
    /// repair.
    glitch: Vec<(usize, usize)>,
    pos_tol: f64,
}

impl Plan<'_> {
    /// Applies to `rows` (the input's frames, repaired as they go) the
    /// glitch spans that end just before frame `g`, the frame `rows` got
    /// last; `next` is the first span not yet applied. `each(a, b, before,
    /// after)` is told of each span repaired, its rows before and after.
    fn glitch_upto(
        &self,
        rows: &mut Rows,
        g: usize,
        next: &mut usize,
        tmp: &mut Vec<f64>,
        mut each: impl FnMut(usize, usize, &[f64], &[f64]),
    ) {
        while let Some(&(a, b)) = self.glitch.get(*next) {
            if b + 1 > g {
                break;
            }
            *next += 1;
            tmp.clear();
            tmp.extend_from_slice(rows.range(a - 1, b + 1));
            let out = rows.range_mut(a, b);
            glitch_span(self.layouts, self.width, self.pos_tol, tmp, out);
            let w = self.width;
            each(a, b, &tmp[w..tmp.len() - w], rows.range(a, b));
        }
    }

    /// The frames of `rows` whose glitch repair is done, once frame `g`
    /// is read: those a span ending after `g - 1` cannot reach.
    fn glitch_final(&self, g: usize) -> usize {
        (g + 1).saturating_sub(MAX_SPAN)
    }
}

/// [`super::stream`] with `--spikes=k` (see the module documentation).
pub(super) fn stream<R: FrameSource, O: Output>(
    open: &mut super::Open<'_, R>,
    options: &Options,
    k: f64,
    out: &mut O,
    mut release: Option<&mut (dyn FnMut(usize) + Send)>,
) -> Result<(Report, Vec<Warning>), O::Error> {
    if !(k > 0.0 && k.is_finite()) {
        return Err(EditError::GaveUp);
    }
    let (skel, frame_time) = {
        let rdr = open().map_err(EditError::Read)?;
        (rdr.skeleton().clone(), rdr.frame_time())
    };
    // The whole clip's checks of the options: it gives their errors.
    let checked = smooth::joint_mask(&skel, options.joints.as_deref())
        .and_then(|mask| smooth::strengths(&skel, &mask, &options.strength));
    let euro = match options.one_euro {
        Some(p) => {
            let f = OneEuroFrames::new(
                &skel,
                p,
                1.0 / frame_time,
                options.joints.as_deref(),
                &options.strength,
            );
            match f {
                Ok(f) => Some((p, f)),
                Err(_) => return Err(EditError::GaveUp),
            }
        }
        None => None,
    };
    let width = skel.n_channels();
    let layouts: Vec<JointChannels> = skel.joints().iter().map(JointChannels::of).collect();
    let fk = Kinematics::new(&skel, PositionChannels::Replace);
    if checked.is_err() || width == 0 || fk.len() != layouts.len() {
        return Err(EditError::GaveUp);
    }

    let poses = first_pass(open, &mut release, &fk, width)?;
    let n = poses.sizes.len();
    let mut plan =
        Plan { skel: &skel, layouts: &layouts, width, n, k, glitch: Vec::new(), pos_tol: 0.0 };
    let size = median_size(poses.sizes.clone());
    plan.pos_tol = size_floor(size, spikes::FRAME_JOINT_TOL_SIZE);
    plan.glitch = glitch_spans(&poses, n, k, size_floor(size, spikes::FRAME_FLOOR_SIZE));
    let Poses { mut sizes, .. } = poses;

    let (tracks, glitch_step) = second_pass(open, &mut release, &plan, &fk, &mut sizes)?;
    let floors = Floors::new(&skel, median_size(sizes));
    let tracks: Vec<Candidates> = tracks
        .into_iter()
        .filter_map(|(t, devs)| {
            let (floor, one) = if t.rotation {
                floors.rotation(t.joint)
            } else {
                (floors.position, floors.position)
            };
            let th = Thresholds::of(&devs, k, floor, one)?;
            let order = spikes::candidates(&devs, th);
            (!order.is_empty()).then_some(Candidates { track: t, th, order, passed: Vec::new() })
        })
        .collect();

    let spans = third_pass(open, &mut release, &plan, tracks)?;
    let (report, warnings) =
        write_pass(open, &mut release, &plan, &spans, euro, frame_time, out, glitch_step)?;
    Ok((report, warnings))
}

/// Pass 1 (see the module documentation).
fn first_pass<R: FrameSource, E>(
    open: &mut super::Open<'_, R>,
    release: &mut Option<&mut (dyn FnMut(usize) + Send)>,
    fk: &Kinematics,
    width: usize,
) -> Result<Poses, E> {
    let nj = fk.len();
    let mut lanes = fk.lanes_scratch();
    let mut run = Vec::new();
    // The last MAX_SPAN + 2 poses, frame `f` at `f % RING`.
    const RING: usize = MAX_SPAN + 2;
    let mut ring = vec![DVec3::ZERO; RING * nj];
    let mut p = Poses {
        sizes: Vec::new(),
        devs: Vec::new(),
        steps: Vec::new(),
        gaps: Default::default(),
        exc: Default::default(),
    };
    pass(open, release, |at, batch| {
        if batch.iter().any(|v| !v.is_finite()) {
            return Err(EditError::GaveUp);
        }
        let count = batch.len() / width;
        run.resize(count * nj, DVec3::ZERO);
        fk.positions_many(batch, &mut lanes, &mut run);
        for (i, world) in run.chunks_exact(nj).enumerate() {
            let g = at + i;
            p.sizes.push(pose_size(world));
            let slot = &mut ring[(g % RING) * nj..(g % RING + 1) * nj];
            slot.copy_from_slice(world);
            relative_to_root(slot);
            let pose = |f: usize| &ring[(f % RING) * nj..(f % RING + 1) * nj];
            if g >= 1 {
                p.steps.push(pose_dist(pose(g - 1), pose(g)));
            }
            if g >= 2 {
                p.devs.push(pose_off(pose(g - 2), pose(g), pose(g - 1), 0.5));
            }
            for len in 1..=MAX_SPAN {
                // The span a..=g - 1 of `len` frames, frame a - 1 before it.
                if g < len + 1 {
                    break;
                }
                let a = g - len;
                p.gaps[len - 1].push(pose_dist(pose(a - 1), pose(g)));
                if len > 1 {
                    let e = excursion(a, g - 1, |i, s| pose_off(pose(a - 1), pose(g), pose(i), s));
                    p.exc[len - 1].push(e);
                }
            }
        }
        Ok(())
    })?;
    Ok(p)
}

/// The glitch spans of the poses, in frame order ([`spikes::repair_frames`]'s).
fn glitch_spans(p: &Poses, n: usize, k: f64, floor: f64) -> Vec<(usize, usize)> {
    if n < 3 {
        return Vec::new();
    }
    let Some(th) = Thresholds::of(&p.devs, k, floor, floor) else { return Vec::new() };
    let order = spikes::candidates(&p.devs, th);
    let mut covered = vec![false; n];
    let mut buf = Vec::new();
    let mut spans = resolve(n, order, th, &mut covered, |a, len| {
        let b = a + len - 1;
        let e =
            if len == 1 { excursion(a, a, |_, _| p.devs[a - 1]) } else { p.exc[len - 1][a - 1] };
        let gap = || p.gaps[len - 1][a - 1];
        passes(n, a, b, e, gap, th.at(len), |i| p.steps[i], &mut buf).then_some(e)
    });
    spans.sort_unstable();
    spans
}

/// What pass 2 leaves: each track with its one-frame excursions (frames
/// 1 to n - 2), and the glitch step of the summary.
type Excursions = Vec<(TrackOf, Vec<f64>)>;

/// Pass 2 (see the module documentation): `sizes` patched where the
/// glitch repair changed a frame.
fn second_pass<R: FrameSource, E>(
    open: &mut super::Open<'_, R>,
    release: &mut Option<&mut (dyn FnMut(usize) + Send)>,
    plan: &Plan<'_>,
    fk: &Kinematics,
    sizes: &mut [f64],
) -> Result<(Excursions, Step), E> {
    let (layouts, width, n) = (plan.layouts, plan.width, plan.n);
    let mut tracks: Excursions = Vec::new();
    if n >= 3 {
        for (joint, c) in layouts.iter().enumerate() {
            let devs = || Vec::with_capacity(n - 2);
            if c.n_rot > 0 {
                tracks.push((TrackOf { joint, rotation: true }, devs()));
            }
            if c.n_pos > 0 {
                tracks.push((TrackOf { joint, rotation: false }, devs()));
            }
        }
    }
    let mut rows = Rows::new(width);
    let mut next = 0;
    let mut tmp = Vec::new();
    let mut most = vec![Most::default(); layouts.len()];
    let mut changed: Vec<Vec<usize>> = vec![Vec::new(); layouts.len()];
    let mut q = QuatBuf::default();
    let (mut scratch, mut world) = (fk.scratch(), vec![DVec3::ZERO; fk.len()]);
    // Frames 1.. whose excursions are still to be taken.
    let mut todo = 1;
    let excursions =
        |rows: &Rows, upto: usize, todo: &mut usize, tracks: &mut Excursions, q: &mut QuatBuf| {
            // Frames todo..upto - 1, each with the frames around it.
            if upto < *todo + 2 {
                return;
            }
            let (lo, hi) = (*todo - 1, upto - 1);
            let window = rows.range(lo, hi);
            for (t, devs) in tracks.iter_mut() {
                let c = &layouts[t.joint];
                if t.rotation {
                    let qs = q.all(c, window, width);
                    devs.extend(qs.windows(3).map(|w| rotation_off(w[0], w[2], w[1], 0.5)));
                } else {
                    let ps = positions(c, window, width);
                    devs.extend(ps.windows(3).map(|w| w[0].lerp(w[2], 0.5).distance(w[1])));
                }
            }
            *todo = hi;
        };
    pass(open, release, |at, batch| {
        for (i, row) in batch.chunks_exact(width).enumerate() {
            let g = at + i;
            rows.push(row);
            plan.glitch_upto(&mut rows, g, &mut next, &mut tmp, |a, b, before, after| {
                for (k, (x, y)) in
                    before.chunks_exact(width).zip(after.chunks_exact(width)).enumerate()
                {
                    for (j, c) in layouts.iter().enumerate() {
                        if spikes::joint_differs(c, x, y) {
                            changed[j].push(a + k);
                        }
                        most[j].add(c, x, y, width, &mut q);
                    }
                    fk.positions_with(y, &mut scratch, &mut world);
                    sizes[a + k] = pose_size(&world);
                }
                debug_assert!(b < n);
            });
            let done = plan.glitch_final(g);
            if done >= todo + BATCH {
                excursions(&rows, done, &mut todo, &mut tracks, &mut q);
                rows.drop_before((todo - 1).min(g.saturating_sub(MAX_SPAN + 1)));
            }
        }
        Ok(())
    })?;
    excursions(&rows, n, &mut todo, &mut tracks, &mut q);
    debug_assert!(tracks.iter().all(|(_, d)| d.len() == n.saturating_sub(2)));
    let repaired =
        changed.into_iter().enumerate().flat_map(|(j, fs)| fs.into_iter().map(move |f| (j, f)));
    let step = Step {
        name: format!("glitch frames (k = {})", num(plan.k)),
        repaired: repaired.collect(),
        spans: 0,
        changes: Most::changes(&most),
    };
    Ok((tracks, step))
}

/// A track's candidates (largest first) and the spans around them that
/// pass, with their excursions (`(a, len, e)`).
struct Candidates {
    track: TrackOf,
    th: Thresholds,
    order: Vec<(usize, f64)>,
    passed: Vec<(usize, usize, f64)>,
}

/// A repaired span of a track: its frames and the track.
#[derive(Clone, Copy)]
struct Repair {
    a: usize,
    b: usize,
    track: TrackOf,
}

/// Pass 3 (see the module documentation): every track's spans, ordered
/// by the frame after them.
fn third_pass<R: FrameSource, E>(
    open: &mut super::Open<'_, R>,
    release: &mut Option<&mut (dyn FnMut(usize) + Send)>,
    plan: &Plan<'_>,
    mut tracks: Vec<Candidates>,
) -> Result<Vec<Repair>, E> {
    let (layouts, width, n) = (plan.layouts, plan.width, plan.n);
    if tracks.is_empty() {
        return Ok(Vec::new());
    }
    // Every candidate in frame order: (frame, track).
    let mut todo: Vec<(usize, usize)> = tracks
        .iter()
        .enumerate()
        .flat_map(|(t, c)| c.order.iter().map(move |&(f, _)| (f, t)))
        .collect();
    todo.sort_unstable();
    // Each track's candidates in frame order (frame, excursion), to find a
    // candidate's excursion and whether another is near enough to meet it.
    let by_frame: Vec<Vec<(usize, f64)>> = tracks
        .iter()
        .map(|c| {
            let mut d: Vec<(usize, f64)> = c.order.clone();
            d.sort_unstable_by_key(|x| x.0);
            d
        })
        .collect();
    let mut seen = vec![0usize; tracks.len()];
    // Each track's spans tested for the candidates before, which the next
    // candidates may share (a span of a frame near them): (a, len, passed).
    let mut tested: Vec<Vec<(usize, usize, bool)>> = vec![Vec::new(); tracks.len()];
    let mut rows = Rows::new(width);
    let (mut next, mut tmp, mut buf) = (0, Vec::new(), Vec::new());
    let mut q = QuatBuf::default();
    let mut at_todo = 0;
    // Tests the candidates whose frames within REACH are all repaired
    // (frames below `upto`); returns the first frame still needed.
    let mut test = |rows: &Rows, upto: usize, tracks: &mut [Candidates], q: &mut QuatBuf| {
        while let Some(&(f, t)) = todo.get(at_todo) {
            let hi = (f + REACH).min(n - 1);
            if hi >= upto {
                break;
            }
            at_todo += 1;
            let (fs, k) = (&by_frame[t], seen[t]);
            let dev = fs[k].1;
            // Alone: no other candidate's span can cover a frame its spans
            // look at, so the resolution stops at the first length with a
            // span that passes, and so do the tests.
            let near = |g: Option<&(usize, f64)>| g.is_some_and(|g| g.0.abs_diff(f) < 2 * MAX_SPAN);
            let alone = !near(k.checked_sub(1).map(|i| &fs[i])) && !near(fs.get(k + 1));
            seen[t] += 1;
            let lo = f.saturating_sub(REACH);
            let cand = &mut tracks[t];
            let tested = &mut tested[t];
            tested.retain(|x| x.0 + MAX_SPAN > f);
            let (c, rotation, th) = (&layouts[cand.track.joint], cand.track.rotation, cand.th);
            let window = rows.range(lo, hi);
            let mut try_spans =
                |dist: &dyn Fn(usize, usize) -> f64,
                 off: &dyn Fn(usize, usize, usize, f64) -> f64| {
                    // The window's steps, each taken once, when a test
                    // first needs it.
                    let steps = [const { std::cell::Cell::new(None::<f64>) }; 2 * REACH];
                    let step = |i: usize| {
                        let c = &steps[i - lo];
                        c.get().unwrap_or_else(|| {
                            let d = dist(i, i + 1);
                            c.set(Some(d));
                            d
                        })
                    };
                    for len in 1..=MAX_SPAN {
                        if dev <= th.at(len) {
                            break;
                        }
                        let mut any = false;
                        for a in (f + 1).saturating_sub(len).max(1)..=f {
                            let b = a + len - 1;
                            if b + 1 >= n {
                                continue;
                            }
                            if let Some(x) = tested.iter().find(|x| (x.0, x.1) == (a, len)) {
                                any |= x.2;
                                continue;
                            }
                            let e = excursion(a, b, |i, s| off(i, a - 1, b + 1, s));
                            let gap = || dist(a - 1, b + 1);
                            let pass = passes(n, a, b, e, gap, th.at(len), step, &mut buf);
                            if pass {
                                cand.passed.push((a, len, e));
                            }
                            tested.push((a, len, pass));
                            any |= pass;
                        }
                        if alone && any {
                            break;
                        }
                    }
                };
            if rotation {
                let qs = q.all(c, window, width);
                try_spans(&|i, j| rotation_dist(qs[i - lo], qs[j - lo]), &|i, a, b, s| {
                    rotation_off(qs[a - lo], qs[b - lo], qs[i - lo], s)
                });
            } else {
                let ps = positions(c, window, width);
                try_spans(&|i, j| ps[i - lo].distance(ps[j - lo]), &|i, a, b, s| {
                    ps[a - lo].lerp(ps[b - lo], s).distance(ps[i - lo])
                });
            }
        }
        todo.get(at_todo).map_or(upto, |&(f, _)| f.saturating_sub(REACH))
    };
    pass(open, release, |at, batch| {
        for (i, row) in batch.chunks_exact(width).enumerate() {
            let g = at + i;
            rows.push(row);
            plan.glitch_upto(&mut rows, g, &mut next, &mut tmp, |_, _, _, _| {});
            let done = plan.glitch_final(g);
            let keep = test(&rows, done, &mut tracks, &mut q);
            rows.drop_before(keep.min(g.saturating_sub(MAX_SPAN + 1)));
        }
        Ok(())
    })?;
    test(&rows, n, &mut tracks, &mut q);

    let mut covered = vec![false; n];
    let mut out = Vec::new();
    for cand in &mut tracks {
        cand.passed.sort_unstable_by_key(|x| (x.0, x.1));
        cand.passed.dedup_by_key(|x| (x.0, x.1));
        let passed = &cand.passed;
        let spans = resolve(n, cand.order.iter().copied(), cand.th, &mut covered, |a, len| {
            passed.binary_search_by(|x| (x.0, x.1).cmp(&(a, len))).ok().map(|i| passed[i].2)
        });
        for &(a, b) in &spans {
            covered[a..=b].iter_mut().for_each(|c| *c = false);
            out.push(Repair { a, b, track: cand.track });
        }
    }
    out.sort_by_key(|r| r.b);
    Ok(out)
}

/// Pass 4 (see the module documentation): the output and the summary.
#[allow(clippy::too_many_arguments)]
fn write_pass<R: FrameSource, O: Output>(
    open: &mut super::Open<'_, R>,
    release: &mut Option<&mut (dyn FnMut(usize) + Send)>,
    plan: &Plan<'_>,
    spans: &[Repair],
    mut euro: Option<(super::super::OneEuro, OneEuroFrames)>,
    frame_time: f64,
    out: &mut O,
    glitch_step: Step,
) -> Result<(Report, Vec<Warning>), O::Error> {
    let (layouts, width, n) = (plan.layouts, plan.width, plan.n);
    let write = WriteOptions::new();
    let mut room = Vec::new();
    write.write_header(plan.skel, n, frame_time, &mut room)?;
    let mut body = out.begin(&room).map_err(EditError::Output)?;

    // The input repaired as it goes by the glitch spans, and the same
    // frames repaired by the tracks' spans too.
    let mut glitched = Rows::new(width);
    let mut fixed = Rows::new(width);
    let (mut next, mut tmp) = (0, Vec::new());
    let mut at_span = 0;
    let mut q = QuatBuf::default();
    let mut spike_most = vec![Most::default(); layouts.len()];
    let mut euro_most = vec![(0.0f64, 0.0f64, false); layouts.len()];
    let mut euro_rot = vec![0.0f64; layouts.len()];
    let mut frame = vec![0.0; width];
    let mut text: Vec<u8> = Vec::with_capacity(FLUSH_AT + FLUSH_AT / 4);
    let mut next_out = 0;

    // Frame `g` has its glitch repair: the tracks' spans that end just
    // before it are repaired.
    let mut repair_upto = |glitched: &Rows, fixed: &mut Rows, g: usize, q: &mut QuatBuf| {
        fixed.push(glitched.row(g));
        while let Some(&Repair { a, b, track }) = spans.get(at_span) {
            if b + 1 > g {
                break;
            }
            at_span += 1;
            let c = &layouts[track.joint];
            let (ra, rb) = (glitched.row(a - 1), glitched.row(b + 1));
            let input = glitched.range(a, b);
            if track.rotation {
                let (qa, qb) = (q.one(c, ra, width), q.one(c, rb, width));
                rotation_span(c, qa, qb, width, input, fixed.range_mut(a, b));
            } else {
                let (pa, pb) = (positions(c, ra, width)[0], positions(c, rb, width)[0]);
                position_span(c, pa, pb, width, fixed.range_mut(a, b));
            }
        }
    };
    // Frame `o` is done: measured, filtered, written.
    let mut emit = |glitched: &Rows,
                    fixed: &Rows,
                    o: usize,
                    text: &mut Vec<u8>,
                    q: &mut QuatBuf|
     -> Result<(), O::Error> {
        let (x, y) = (glitched.row(o), fixed.row(o));
        for (c, m) in layouts.iter().zip(spike_most.iter_mut()) {
            m.add(c, x, y, width, q);
        }
        frame.copy_from_slice(y);
        if let Some((_, f)) = euro.as_mut() {
            f.filter_measured(&mut frame, Some(&mut euro_rot));
            super::measure(layouts, y, &frame, &mut euro_most);
        }
        write.write_frame(&frame, text)?;
        Ok(())
    };
    let lag = MAX_SPAN; // a track's span ends within MAX_SPAN of its frames
    let warnings = pass(open, release, |at, batch| {
        for (i, row) in batch.chunks_exact(width).enumerate() {
            let g = at + i;
            glitched.push(row);
            plan.glitch_upto(&mut glitched, g, &mut next, &mut tmp, |_, _, _, _| {});
            // Frames below `done` have their glitch repair.
            let done = plan.glitch_final(g);
            while fixed.end() < done {
                let f = fixed.end();
                repair_upto(&glitched, &mut fixed, f, &mut q);
                if let Some(o) = f.checked_sub(lag) {
                    emit(&glitched, &fixed, o, &mut text, &mut q)?;
                    next_out = o + 1;
                }
            }
            let keep = fixed.end().saturating_sub(lag + MAX_SPAN + 1);
            glitched.drop_before(keep);
            fixed.drop_before(keep);
        }
        if text.len() >= FLUSH_AT {
            body.write_all(&text).map_err(EditError::Write)?;
            text.clear();
        }
        Ok(())
    })?;
    while fixed.end() < n {
        let f = fixed.end();
        repair_upto(&glitched, &mut fixed, f, &mut q);
    }
    for o in next_out..n {
        emit(&glitched, &fixed, o, &mut text, &mut q)?;
    }
    body.write_all(&text).map_err(EditError::Write)?;
    body.flush().map_err(EditError::Write)?;
    let mut header = Vec::with_capacity(room.len());
    write.write_header(plan.skel, n, frame_time, &mut header)?;
    out.accept(&warnings, n).map_err(EditError::Output)?;
    out.finish(body, &room, &header).map_err(EditError::Output)?;

    // The spikes step's joint-frames: each joint's frames of either track.
    let mut frames: Vec<std::collections::BTreeSet<usize>> =
        vec![Default::default(); layouts.len()];
    for r in spans {
        frames[r.track.joint].extend(r.a..=r.b);
    }
    let repaired =
        frames.into_iter().enumerate().flat_map(|(j, fs)| fs.into_iter().map(move |f| (j, f)));
    let mut steps = vec![
        glitch_step,
        Step {
            name: format!("spikes (k = {})", num(plan.k)),
            repaired: repaired.collect(),
            spans: 0,
            changes: Most::changes(&spike_most),
        },
    ];
    if let Some((p, _)) = euro {
        steps.push(super::one_euro_step(p, &euro_most, &euro_rot));
    }
    let report = Report { steps, joint_names: plan.skel.display_names(), notes: Vec::new() };
    Ok((report, warnings))
}

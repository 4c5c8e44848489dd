//! The lint of a clip read a batch of frames at a time ([`LintStream`]):
//! the report of [`super::lint`], bit for bit, without the parsed clip or
//! its world positions.
//!
//! Each batch's world positions are computed into a buffer reused from
//! batch to batch (joint-major, with the last three frames of the batch
//! before in front, so that the steps, accelerations and jerks across the
//! seam are measured as in the whole clip), on rayon's pool in pieces of
//! [`PIECE`] frames, [`RUN`] frames per FK call: the bits of
//! [`super::world_positions`]. Of them are kept only what the whole-clip
//! statistics need: per frame its pose size (the unit guess); per joint
//! and frame its acceleration and step (the median and MAD of the
//! spikes, the 95th percentile of the pops), 16 bytes where the parsed
//! values and the positions took 48; the positions of the feet's points
//! (contacts and ground), the lengths of bones with position channels,
//! the joint-frames farther from the hips than half the far-joint limit
//! the caller's sampled figure size gives, and running sums and extremes
//! (jitter, the lowest point). The pass over the channels runs on each
//! batch's rows beside the positions, starting each piece from the frame
//! before it (the previous batch's last row at a seam), as
//! [`super::lint`]'s pieces do.
//!
//! What the stream cannot know before the end, it is given and checks:
//! the metres per file unit (the caller's guess, from a sample of frames;
//! [`LintStream::finish`] gives `None` when the whole clip's guess
//! differs), and the up axis (the caller's, detected on sampled frames
//! that it checks itself). [`LintStream::finish`] also gives `None`
//! where a metric would need distances it did not keep (a whole clip's
//! figure size less than half the sampled one) and for a clip without
//! frames; the loop seam (`--loop`) is
//! not streamed ([`LintStream::new`] gives `None`). The caller then runs
//! [`super::lint`] on the parsed clip: the same report, at the old cost.

use glam::DVec3;

use super::feet::{self, Foot};
use super::{
    ChannelPiece, Channels, Ground, Options, PIECE, RUN, Report, Smoothness, channel_findings,
    channel_piece, combine, far_finding, join, judge, stretch, stretching, units_of, up_of,
};
use crate::edit::axes::SignedAxis;
use crate::kinematics::Kinematics;
use crate::retarget::names::{Bone, classify};
use crate::skeleton::Skeleton;
use crate::units::{Limbs, UnitGuess, pose_size};

/// Every joint's steps (from frame `f` to `f + 1`, m) and accelerations
/// (at frame `f`, `acc[f - 1]`, m/s²), joint after joint in one
/// allocation written in place (no per-joint growth checks in the pass
/// over the positions). Joint `j`'s steps are `data[2j * cap..][..steps]`,
/// its accelerations `data[(2j + 1) * cap..][..accs]`.
///
/// Not advised to use huge pages: tried (twice), it cut the system time
/// by about a seventh but made every page resident from the first batch
/// (each 2 MiB page holds stripes of several joints' curves), 52 MiB more
/// at the peak of the 105 MB synthetic file.
#[derive(Default)]
struct Curves {
    data: Vec<f64>,
    cap: usize,
    steps: usize,
    accs: usize,
}

impl Curves {
    /// Room for `frames` values per curve of `nj` joints, copying what is
    /// kept; `false` (nothing changed) when the allocator refuses it.
    fn realloc(&mut self, nj: usize, frames: usize) -> bool {
        let Some(len) = frames.checked_mul(2 * nj) else { return false };
        // Ask first whether the room is there (the zeroed vector below
        // would abort where the allocator refuses); zeros come from the
        // allocator as untouched pages, written once by the pass.
        if Vec::<f64>::new().try_reserve_exact(len).is_err() {
            return false;
        }
        let mut data = vec![0.0; len];
        let (old, cap) = (&self.data, self.cap);
        for k in 0..2 * nj {
            let n = if k % 2 == 0 { self.steps } else { self.accs };
            data[k * frames..k * frames + n].copy_from_slice(&old[k * cap..k * cap + n]);
        }
        (self.data, self.cap) = (data, frames);
        true
    }

    /// Room for `more` values per curve (doubling).
    fn grow(&mut self, nj: usize, more: usize) {
        let need = (self.steps + more).max(1);
        if need > self.cap {
            let frames = need.max(2 * self.cap);
            assert!(self.realloc(nj, frames), "out of memory for {frames} frames of {nj} joints");
        }
    }

    fn step(&self, j: usize) -> &[f64] {
        &self.data[2 * j * self.cap..][..self.steps]
    }

    fn acc(&self, j: usize) -> &[f64] {
        &self.data[(2 * j + 1) * self.cap..][..self.accs]
    }
}

/// What one joint keeps of the frames streamed so far (its steps and
/// accelerations are in [`Curves`]).
#[derive(Default)]
struct JointState {
    /// The sum and count of the finite jerks (jitter), in frame order.
    jerk_sum: f64,
    jerk_count: usize,
    /// This batch's jerks (the per-frame curve).
    d3: Vec<f64>,
    /// The frames farther from the hips than the stream's `far_keep`,
    /// with that distance (m).
    far: Vec<(usize, f64)>,
    /// The lowest finite height along the up axis so far (m).
    low: f64,
    /// Every position, for the feet's points.
    keep: bool,
    kept: Vec<DVec3>,
    /// The bone to this parent, per frame (joints with position channels).
    parent: Option<usize>,
    lens: Vec<f64>,
}

/// The lint of a clip fed a batch of frames at a time; see the module
/// documentation.
pub struct LintStream {
    skel: Skeleton,
    o: Options,
    fk: Kinematics,
    fps: f64,
    dt: f64,
    mpu: f64,
    far_keep: f64,
    up: SignedAxis,
    up_detected: bool,
    u: DVec3,
    notes: Vec<String>,
    names: Vec<String>,
    feet: Vec<Foot>,
    feet_notes: Vec<String>,
    hips: usize,
    ch: Channels,
    n: usize,
    sizes: Vec<f64>,
    joints: Vec<JointState>,
    curves: Curves,
    /// The last `carry_len` (at most three) frames' positions of each
    /// joint, three slots per joint.
    carry: Vec<DVec3>,
    carry_len: usize,
    /// This batch's positions, joint-major, the carried frames first.
    pos: Vec<DVec3>,
    /// The last frame's values.
    prev_row: Vec<f64>,
    pieces: Vec<ChannelPiece>,
    jerk: Vec<f64>,
}

impl std::fmt::Debug for LintStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LintStream")
            .field("joints", &self.joints.len())
            .field("frames", &self.n)
            .field("metres_per_unit", &self.mpu)
            .field("up", &self.up)
            .finish_non_exhaustive()
    }
}

impl LintStream {
    /// A lint of frames of `skel`, `frame_time` seconds apart, with
    /// `options`; `detected` is the up axis detected on the clip (used
    /// when `options.up` is `None`; `None`: not found, +Y with a note as
    /// [`super::lint`] says) and `metres_per_unit` the scale to metres
    /// (`options.metres_per_unit`, else a guess that [`LintStream::finish`]
    /// checks); `figure_size` is the figure's size in metres as a sample
    /// of frames gives it: the stream keeps the distances from the hips
    /// above half of [`Options::far_factor`] times it, and
    /// [`LintStream::finish`] checks that the whole clip's far-joint limit
    /// is not below them (0 keeps every distance). `None` for what is not
    /// streamed: the loop seam, a skeleton without joints or channels.
    pub fn new(
        skel: &Skeleton,
        frame_time: f64,
        options: &Options,
        detected: Option<SignedAxis>,
        metres_per_unit: f64,
        figure_size: f64,
    ) -> Option<LintStream> {
        if options.seam || skel.is_empty() || skel.n_channels() == 0 {
            return None;
        }
        let mpu = options.metres_per_unit.unwrap_or(metres_per_unit);
        let mut notes = Vec::new();
        let (up, up_detected) = up_of(options.up, || detected, &mut notes);
        let bones = classify(skel);
        let names = skel.display_names();
        let mut feet_notes = Vec::new();
        let feet = feet::find(skel, &bones, &names, options.feet.as_deref(), &mut feet_notes);
        let hips = bones.iter().position(|b| *b == Some(Bone::Hips)).unwrap_or(0);
        let nj = skel.len();
        let mut joints: Vec<JointState> =
            (0..nj).map(|_| JointState { low: f64::INFINITY, ..JointState::default() }).collect();
        for foot in &feet {
            for &j in foot.points.iter().chain([&foot.skate_point, &foot.toe_point]) {
                joints[j].keep = true;
            }
        }
        for (j, parent) in stretching(skel) {
            joints[j].parent = Some(parent);
        }
        Some(LintStream {
            skel: skel.clone(),
            o: options.clone(),
            fk: Kinematics::new(skel, options.position_channels),
            fps: 1.0 / frame_time,
            dt: frame_time,
            mpu,
            far_keep: options.far_factor * figure_size / 2.0,
            up,
            up_detected,
            u: up.vector(),
            notes,
            names,
            feet,
            feet_notes,
            hips,
            ch: Channels::new(skel),
            n: 0,
            sizes: Vec::new(),
            joints,
            curves: Curves::default(),
            carry: vec![DVec3::ZERO; nj * 3],
            carry_len: 0,
            pos: Vec::new(),
            prev_row: Vec::new(),
            pieces: Vec::new(),
            jerk: Vec::new(),
        })
    }

    /// Room for `frames` more frames in what the stream keeps per frame
    /// (each joint's steps and accelerations, the feet's points, the
    /// stretching bones, the frame sizes and the jerk curve), so that
    /// these arrays are not copied, and their pages touched twice, as they
    /// grow. A hint (a file's declared frame count, bounded by what its
    /// size can hold): fewer or more frames may follow, and room the
    /// allocator refuses is not taken (the arrays then grow as before).
    pub fn reserve(&mut self, frames: usize) {
        let _ = self.sizes.try_reserve(frames);
        let _ = self.jerk.try_reserve(frames);
        let more = self.curves.steps.saturating_add(frames);
        if more > self.curves.cap {
            self.curves.realloc(self.joints.len(), more);
        }
        for s in &mut self.joints {
            if s.keep {
                let _ = s.kept.try_reserve(frames);
            }
            if s.parent.is_some() {
                let _ = s.lens.try_reserve(frames);
            }
        }
    }

    /// The next `frames` frames, `values` holding them one after the other.
    ///
    /// # Panics
    /// When `values` does not hold `frames` frames of the skeleton's
    /// channels.
    pub fn push(&mut self, frames: usize, values: &[f64]) {
        let w = self.skel.n_channels();
        assert_eq!(values.len(), frames * w, "values must hold the frames");
        if frames == 0 {
            return;
        }
        let nj = self.joints.len();
        let (n0, c) = (self.n, self.carry_len);
        let m = c + frames;
        self.pos.resize(nj * m, DVec3::ZERO);
        self.sizes.resize(n0 + frames, 0.0);
        let (fk, mpu) = (&self.fk, self.mpu);
        let (pos, sizes, carry) = (&mut self.pos, &mut self.sizes[n0..], &self.carry);
        let (ch, names, o, prev_row) = (&self.ch, &self.names, &self.o, &self.prev_row);
        let row_of = |f: usize| {
            if f >= n0 { &values[(f - n0) * w..(f - n0 + 1) * w] } else { &prev_row[..] }
        };
        let ((), mut pieces) = join(
            || {
                // The carried frames, then this batch's positions in their
                // rows, pieces of frames on the pool.
                let mut parts: Vec<Vec<&mut [DVec3]>> =
                    (0..frames.div_ceil(PIECE)).map(|_| Vec::with_capacity(nj)).collect();
                for (j, row) in pos.chunks_mut(m).enumerate() {
                    let (old, new) = row.split_at_mut(c);
                    old.copy_from_slice(&carry[j * 3..j * 3 + c]);
                    for (k, part) in new.chunks_mut(PIECE).enumerate() {
                        parts[k].push(part);
                    }
                }
                let work =
                    |(k, (mut out, sizes)): (usize, (Vec<&mut [DVec3]>, &mut [f64])),
                     (lanes, run): &mut (crate::FkLanes, Vec<DVec3>)| {
                        let f0 = k * PIECE;
                        for (r, sizes) in sizes.chunks_mut(RUN).enumerate() {
                            let (a, len) = (f0 + r * RUN, sizes.len());
                            run.resize(len * nj, DVec3::ZERO);
                            fk.positions_many(&values[a * w..(a + len) * w], lanes, run);
                            for (s, p) in sizes.iter_mut().zip(run.chunks_exact(nj)) {
                                *s = pose_size(p);
                            }
                            for (j, row) in out.iter_mut().enumerate() {
                                let dst = &mut row[r * RUN..r * RUN + len];
                                let src = run[j..].iter().step_by(nj);
                                if mpu == 1.0 {
                                    dst.iter_mut().zip(src).for_each(|(d, p)| *d = *p);
                                } else {
                                    dst.iter_mut().zip(src).for_each(|(d, p)| *d = *p * mpu);
                                }
                            }
                        }
                    };
                #[cfg(feature = "parallel")]
                {
                    use rayon::prelude::*;
                    parts
                        .into_par_iter()
                        .zip(sizes.par_chunks_mut(PIECE))
                        .enumerate()
                        .for_each_init(|| (fk.lanes_scratch(), Vec::new()), |st, it| work(it, st));
                }
                #[cfg(not(feature = "parallel"))]
                {
                    let mut st = (fk.lanes_scratch(), Vec::new());
                    for it in parts.into_iter().zip(sizes.chunks_mut(PIECE)).enumerate() {
                        work(it, &mut st);
                    }
                }
            },
            || {
                let piece = |k: usize| {
                    let frames = n0 + k * PIECE..n0 + ((k + 1) * PIECE).min(frames);
                    channel_piece(ch, names, o, frames, row_of)
                };
                #[cfg(feature = "parallel")]
                {
                    use rayon::prelude::*;
                    (0..frames.div_ceil(PIECE)).into_par_iter().map(piece).collect::<Vec<_>>()
                }
                #[cfg(not(feature = "parallel"))]
                {
                    (0..frames.div_ceil(PIECE)).map(piece).collect::<Vec<_>>()
                }
            },
        );
        self.pieces.append(&mut pieces);
        self.take_positions(c, m);

        // This batch's jerks per frame: the mean over the joints, in joint
        // order (as `smoothness` sums them), pieces of frames on the pool.
        let k = self.joints[0].d3.len();
        let j0 = self.jerk.len();
        self.jerk.resize(j0 + k, 0.0);
        let (joints, nj_f) = (&self.joints, nj as f64);
        let mean = |(p, out): (usize, &mut [f64])| {
            let f0 = p * PIECE;
            for s in joints {
                for (a, d) in out.iter_mut().zip(&s.d3[f0..]) {
                    *a += d / nj_f;
                }
            }
        };
        #[cfg(feature = "parallel")]
        {
            use rayon::prelude::*;
            self.jerk[j0..].par_chunks_mut(PIECE).enumerate().for_each(mean);
        }
        #[cfg(not(feature = "parallel"))]
        self.jerk[j0..].chunks_mut(PIECE).enumerate().for_each(mean);
        // Carry the last three frames.
        let c2 = m.min(3);
        for (j, row) in self.pos.chunks(m).enumerate() {
            self.carry[j * 3..j * 3 + c2].copy_from_slice(&row[m - c2..]);
        }
        self.carry_len = c2;
        self.prev_row.clear();
        self.prev_row.extend_from_slice(&values[(frames - 1) * w..]);
        self.n += frames;
    }

    /// Each joint's scalars of this batch's positions (rows of `m`, the
    /// first `c` carried), a joint per task on the pool.
    ///
    /// Per joint-frame the step, acceleration and jerk vectors are the
    /// differences of the last three steps, each taken once from the one
    /// before it (`v = p[i] - p[i - 1]`, `a = v - v'`, `d = a - a'`: the
    /// operations of the nested differences, the same bits), in one pass
    /// over the positions; their squared lengths written first and their
    /// square roots taken afterwards over the batch's slice at once (a
    /// loop the compiler puts on SIMD lanes: `sqrt` is correctly rounded
    /// there as in a scalar, the same bits); the distance from the hips is
    /// rooted only where it may pass the limit kept ([`far_floor`]).
    fn take_positions(&mut self, c: usize, m: usize) {
        let fps2 = self.fps * self.fps;
        let fps3 = fps2 * self.fps;
        let (pos, hips, u, far_keep, n0) = (&self.pos, self.hips, self.u, self.far_keep, self.n);
        let floor = far_floor(far_keep);
        let lowest = self.o.ground == Ground::Lowest;
        let row = |j: usize| &pos[j * m..(j + 1) * m];
        // The first frames of the clip (no carried frames before them)
        // have no step, acceleration or jerk yet: the curves start at
        // `first(1)`, `first(2)` and `first(3)` (each at most 3).
        let first = |k: usize| c.max(k).min(m);
        let (i1, i2, i3) = (first(1), first(2), first(3));
        let nj = self.joints.len();
        self.curves.grow(nj, m - i1);
        let (steps0, accs0, cap) = (self.curves.steps, self.curves.accs, self.curves.cap);
        let each = |((j, s), curves): ((usize, &mut JointState), &mut [f64])| {
            let (p, h) = (row(j), row(hips));
            let (step, acc) = curves.split_at_mut(cap);
            let step = &mut step[steps0..steps0 + m - i1];
            let acc = &mut acc[accs0..accs0 + m - i2];
            s.d3.clear();
            s.d3.resize(m - i3, 0.0);
            let d3 = &mut s.d3[..];
            let (mut v0, mut a0) = (DVec3::ZERO, DVec3::ZERO);
            for i in 1..m.min(3) {
                let v = p[i] - p[i - 1];
                if i >= i1 {
                    step[i - i1] = v.length_squared();
                }
                if i >= 2 {
                    let a = v - v0;
                    if i >= i2 {
                        acc[i - i2] = a.length_squared();
                    }
                    a0 = a;
                }
                v0 = v;
            }
            // From the fourth row on, every curve has a value per row.
            for i in 3..m {
                let v = p[i] - p[i - 1];
                let a = v - v0;
                let d = a - a0;
                step[i - i1] = v.length_squared();
                acc[i - i2] = a.length_squared();
                d3[i - i3] = d.length_squared();
                (v0, a0) = (v, a);
            }
            for x in step.iter_mut() {
                *x = x.sqrt();
            }
            for x in acc.iter_mut() {
                *x = x.sqrt() * fps2;
            }
            for x in d3.iter_mut() {
                *x = x.sqrt() * fps3;
            }
            for &d3 in &s.d3 {
                if d3.is_finite() {
                    s.jerk_sum += d3;
                    s.jerk_count += 1;
                }
            }
            for i in c..m {
                let d2 = (p[i] - h[i]).length_squared();
                // NaN goes the exact way too.
                if d2 >= floor || d2.is_nan() {
                    let dist = d2.sqrt();
                    if dist > far_keep {
                        s.far.push((n0 + i - c, dist));
                    }
                }
            }
            if lowest {
                for q in &p[c..] {
                    let height = q.dot(u);
                    if height.is_finite() {
                        s.low = s.low.min(height);
                    }
                }
            }
            if let Some(q) = s.parent.map(row) {
                s.lens.extend((c..m).map(|i| (p[i] - q[i]).length()));
            }
            if s.keep {
                s.kept.extend_from_slice(&p[c..]);
            }
        };
        let curves = self.curves.data.chunks_mut(2 * cap);
        #[cfg(feature = "parallel")]
        {
            use rayon::prelude::*;
            let curves = curves.collect::<Vec<_>>();
            self.joints.par_iter_mut().enumerate().zip(curves).for_each(each);
        }
        #[cfg(not(feature = "parallel"))]
        self.joints.iter_mut().enumerate().zip(curves).for_each(each);
        self.curves.steps += m - i1;
        self.curves.accs += m - i2;
    }

    /// The report of the frames pushed: [`super::lint`]'s of the same clip,
    /// or `None` where the stream cannot give it (see the module
    /// documentation): the caller then runs [`super::lint`].
    pub fn finish(self) -> Option<Report> {
        let n = self.n;
        let o = &self.o;
        if n == 0 {
            return None;
        }
        let guess = UnitGuess::of_pose_sizes(self.sizes).named(&Limbs::of(&self.skel));
        let mpu = o.metres_per_unit.unwrap_or_else(|| guess.metres_per_unit());
        if mpu.to_bits() != self.mpu.to_bits() {
            return None;
        }
        let size = guess.size * mpu;
        let far = size.is_finite() && size > 0.0;
        let limit = o.far_factor * size;
        // (A NaN sampled size kept nothing: not confirmed either.)
        if far && (limit < self.far_keep || self.far_keep.is_nan()) {
            return None;
        }
        let mut notes = self.notes;
        let units = units_of(o, &guess, &mut notes);
        notes.extend(self.feet_notes);
        let (fps, u, names, joints) = (self.fps, self.u, &self.names, &self.joints);
        let lowest = || joints.iter().map(|s| s.low).fold(f64::INFINITY, f64::min);
        let (feet_data, (smooth, chan)) = join(
            || feet::measure(&self.feet, |j| &joints[j].kept[..], lowest, n, fps, u, o),
            || {
                join(
                    || smoothness(joints, &self.curves, n, o),
                    || {
                        channel_findings(
                            &self.ch,
                            &self.skel,
                            names,
                            o,
                            self.pieces,
                            n,
                            (fps, self.dt),
                        )
                    },
                )
            },
        );
        let mut smooth = smooth;
        smooth.jerk = self.jerk;
        let (mut metrics, mut findings, series, ground) =
            combine(&self.feet, feet_data, Some((smooth, chan)), names, lowest, o, &mut notes);
        for (j, parent) in stretching(&self.skel) {
            stretch(j, parent, &joints[j].lens, size, names, o, &mut metrics, &mut findings);
        }
        // Joints far from the hips: every frame beyond the limit was kept.
        if far {
            let hips = &names[self.hips];
            for (j, s) in joints.iter().enumerate() {
                let mut any = false;
                let beyond = s.far.iter().filter(|(_, d)| *d > limit);
                let mut runs: Vec<(usize, usize, f64)> = Vec::new();
                for &(f, d) in beyond {
                    match runs.last_mut() {
                        Some(r) if r.1 + 1 == f => {
                            r.1 = f;
                            r.2 = r.2.max(d);
                        }
                        _ => runs.push((f, f, 0.0f64.max(d))),
                    }
                }
                for (a, b, worst) in runs {
                    any = true;
                    findings.push(far_finding(j, (a, b), worst, &names[j], hips, size));
                }
                metrics.far_joints += usize::from(any);
            }
        }
        findings.sort_by_key(|f| (f.kind, f.frames.0));
        Some(Report {
            units,
            metres_per_unit: mpu,
            up: self.up,
            up_detected: self.up_detected,
            fps,
            frames: n,
            joint_names: self.names,
            feet: self.feet,
            ground,
            size,
            metrics,
            findings,
            series,
            notes,
        })
    }
}

/// [`super::smoothness`] from the kept accelerations and steps (the jerk
/// curve is the stream's own).
///
/// The joints are judged on the pool, each thread reusing one buffer for
/// the selections (sized for the whole clip once, its pages touched once).
fn smoothness(joints: &[JointState], curves: &Curves, n: usize, o: &Options) -> Smoothness {
    let judge_one = |buf: &mut Vec<f64>, j: usize| judge(j, curves.acc(j), curves.step(j), o, buf);
    let judged: Vec<_> = crate::par::map_with_scratch(joints.len(), Vec::new, judge_one);
    let (sum, count) = joints.iter().fold((0.0, 0), |(s, c), r| (s + r.jerk_sum, c + r.jerk_count));
    // Per frame the largest ratio over the joints, in joint order, pieces
    // of frames on the pool (frame `f`'s acceleration is `acc[f - 1]`).
    let mut spike_ratio = vec![0.0f64; n];
    let ratio = |(k, out): (usize, &mut [f64])| {
        let f0 = k * PIECE;
        for (j, r) in judged.iter().enumerate() {
            let Some(t) = r.spike_t else { continue };
            let (skip, from) = if f0 == 0 { (1, 0) } else { (0, f0 - 1) };
            let acc = curves.acc(j);
            for (a, acc) in out.iter_mut().skip(skip).zip(acc.get(from..).unwrap_or(&[])) {
                *a = a.max(acc / t);
            }
        }
    };
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        spike_ratio.par_chunks_mut(PIECE).enumerate().for_each(ratio);
    }
    #[cfg(not(feature = "parallel"))]
    spike_ratio.chunks_mut(PIECE).enumerate().for_each(ratio);
    Smoothness {
        jitter: (count > 0).then(|| sum / count as f64),
        spikes: judged.iter().flat_map(|r| r.spikes.iter().copied()).collect(),
        pops: judged.iter().flat_map(|r| r.pops.iter().copied()).collect(),
        spike_ratio,
        jerk: Vec::new(),
    }
}

/// A squared distance below which a distance cannot pass `limit`: its
/// square root is then below `limit` whatever the rounding (a margin of
/// 1e-9, far above the few ulps the rounding of the square and of the root
/// can move them); minus infinity, every distance rooted and compared,
/// where the square of `limit` is not a normal number or `limit` is 0,
/// negative or NaN.
fn far_floor(limit: f64) -> f64 {
    let sq = limit * limit * (1.0 - 1e-9);
    if limit > 0.0 && sq.is_normal() { sq } else { f64::NEG_INFINITY }
}

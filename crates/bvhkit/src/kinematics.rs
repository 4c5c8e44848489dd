//! Forward kinematics: local and world transforms of every joint.
//!
//! A joint's local transform is a translation followed by a rotation,
//! `local = T(t) · R`, acting on column vectors, where
//! - `R` is the product of the joint's rotation channels in the order they
//!   are listed (`Zrotation Xrotation Yrotation` gives `Rz · Rx · Ry`),
//!   angles in degrees;
//! - `t` is the `OFFSET`, with the components named by position channels
//!   replaced by (default, [`PositionChannels::Replace`]) or added to
//!   ([`PositionChannels::Add`]) the channel values.
//!
//! `world = parent_world · local`. End Sites have the identity rotation.
//! Units are the file's; nothing is converted.
//!
//! # Implementation notes
//!
//! `Kinematics`, a skeleton compiled into a flat per-joint program (parent
//! index, offset, channel indices); `local`, `world` (sines one channel at a
//! time), `local_with`, `world_with` (the frame's sines in one batch into a
//! caller-owned `FkScratch`, the same bits), `positions`, `positions_with`
//! (caller-owned `FkScratch`: the frame's sines and cosines in one batch, then
//! one pass in file order where each joint right-multiplies a copy of its
//! parent's world rotation), `positions_from_rotations` (positions when the
//! world rotations are already known: no sines or cosines), `subset` (the
//! program of an ancestor-closed set of joints on a compact frame of their
//! channels, with the channel gather list), `with_ancestors` (the joints a
//! subset needs to reach some), `positions_over` (the world positions of a
//! few chosen joints over a clip, handed to the caller frame by frame: the
//! one place for "a joint's ancestors, `subset`, gather each frame's
//! channels, FK" where positions are what is kept), `positions_all` (rayon over frames,
//! one scratch per thread), `positions_many` (the world positions of up to
//! eight frames at once, one frame per SIMD lane: `FkLanes` holds the frames'
//! sines, cosines and world matrices by component, and each joint's program
//! step runs on all lanes; AVX-512F/AVX2 dispatch, no FMA, so the bits are
//! `positions_with`'s frame by frame; `FkLanes::sin_cos` hands out the last
//! group's sines and cosines, lane by lane, for callers that need the frames'
//! local rotations too; `bvh positions` runs it on pieces of each batch on the
//! pool, the dataset export's `Kernel` eight frames at a time).
//!
//! `FkScratch::sin_cos` hands out the sines and cosines the last
//! `positions_with`/`world_with`/`local_with` computed, so a caller needing the
//! frame's local rotations too does not compute them again.

use glam::{DAffine3, DMat3, DVec3};

use crate::channel::Channel;
use crate::motion::Motion;
use crate::rotation::{Axis, apply_axis_rotation, sin_cos_deg, sin_cos_deg_slice};
use crate::simd::{Simd, simd_kernel};
use crate::skeleton::Skeleton;

/// How position channels combine with a joint's `OFFSET`.
///
/// Real files (Bandai Namco, Perception Neuron, Geno, Truebones, ...) repeat
/// each joint's `OFFSET` in its position channels, so `Replace` is what they
/// mean and what Blender and bvhio do. The format texts (and three.js) add
/// the channels to the `OFFSET`; `Add` reads them that way. The two agree
/// whenever joints with position channels have a zero `OFFSET`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum PositionChannels {
    /// A position channel replaces the `OFFSET` component it names.
    #[default]
    Replace,
    /// A position channel is added to the `OFFSET` component it names.
    Add,
}

#[derive(Clone, Copy, Debug)]
struct Program {
    parent: Option<u32>,
    offset: DVec3,
    n_rot: u8,
    rot_axis: [Axis; 3],
    rot_chan: [u32; 3],
    n_pos: u8,
    pos_axis: [u8; 3],
    pos_chan: [u32; 3],
}

/// Buffers that [`Kinematics::positions_with`] reuses from frame to frame:
/// world rotations of the joints and the sines and cosines of the frame's
/// channels. Make one with [`Kinematics::scratch`] (one per thread).
#[derive(Clone, Debug)]
pub struct FkScratch {
    rot: Vec<DMat3>,
    sin: Vec<f64>,
    cos: Vec<f64>,
}

impl FkScratch {
    /// The sines and cosines of the frame's channels (every channel, in
    /// degrees through [`sin_cos_deg_slice`], so the same bits as
    /// [`crate::rotation::sin_cos_deg`]) that the last call to
    /// [`Kinematics::positions_with`], [`Kinematics::world_with`] or
    /// [`Kinematics::local_with`] with this scratch computed: a caller that
    /// needs them for the same frame (its local rotations, say) takes them
    /// here instead of computing them again. Zeros before any call.
    #[must_use]
    pub fn sin_cos(&self) -> (&[f64], &[f64]) {
        (&self.sin, &self.cos)
    }
}

/// A skeleton compiled for forward kinematics.
///
/// Build it once per skeleton; every call then fills a caller-owned buffer
/// with one entry per joint (End Sites included), in file order.
///
/// # Example
/// ```
/// use bvhkit::{Bvh, Kinematics, PositionChannels};
/// use bvhkit::glam::DVec3;
///
/// let bvh = Bvh::parse("HIERARCHY ROOT Hips { OFFSET 0 0 0 CHANNELS 3 Zrotation Xrotation Yrotation
///     End Site { OFFSET 0 10 0 } }
///     MOTION Frames: 1 Frame Time: 0.1
///     90 0 0")?;
/// let fk = Kinematics::new(bvh.skeleton(), PositionChannels::Replace);
/// let mut out = vec![DVec3::ZERO; bvh.skeleton().len()];
/// fk.positions(bvh.motion().frame(0), &mut out);
/// // Zrotation 90 turns the bone from +Y to -X.
/// assert!((out[1] - DVec3::new(-10.0, 0.0, 0.0)).length() < 1e-12);
/// # Ok::<(), bvhkit::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Kinematics {
    program: Vec<Program>,
    n_channels: usize,
    mode: PositionChannels,
}

impl Kinematics {
    /// Compiles `skeleton`.
    pub fn new(skeleton: &Skeleton, mode: PositionChannels) -> Kinematics {
        let program = skeleton
            .joints()
            .iter()
            .map(|j| {
                let mut p = Program {
                    parent: j.parent().map(|p| p.index() as u32),
                    offset: j.offset(),
                    n_rot: 0,
                    rot_axis: [Axis::X; 3],
                    rot_chan: [0; 3],
                    n_pos: 0,
                    pos_axis: [0; 3],
                    pos_chan: [0; 3],
                };
                for (k, &c) in j.channels().iter().enumerate() {
                    let idx = (j.first_channel() + k) as u32;
                    if c.is_rotation() {
                        p.rot_axis[p.n_rot as usize] = c.axis();
                        p.rot_chan[p.n_rot as usize] = idx;
                        p.n_rot += 1;
                    } else {
                        p.pos_axis[p.n_pos as usize] = match c {
                            Channel::Xposition => 0,
                            Channel::Yposition => 1,
                            _ => 2,
                        };
                        p.pos_chan[p.n_pos as usize] = idx;
                        p.n_pos += 1;
                    }
                }
                p
            })
            .collect();
        Kinematics { program, n_channels: skeleton.n_channels(), mode }
    }

    /// The same forward kinematics restricted to the joints `keep` (indices
    /// into this skeleton, ascending, each joint's parent kept before it),
    /// for callers that need only some joints' transforms (a retarget
    /// reads the mapped joints, the hips and the feet, and not the
    /// fingers): a `Kinematics` whose joint `i` is joint `keep[i]` here,
    /// reading a compact frame of just their channels, and where each of
    /// that frame's channels comes from (`frame[gather[k]]` is channel `k`;
    /// fill the compact frame with it before each call). Transforms are
    /// the same, bit for bit, as those of the kept joints on the whole
    /// frame.
    ///
    /// # Panics
    /// When `keep` is not ascending, names a joint that is not in the
    /// skeleton, or leaves out the parent of a joint it keeps.
    ///
    /// # Example
    /// ```
    /// use bvhkit::{Bvh, Kinematics, PositionChannels};
    /// use bvhkit::glam::DAffine3;
    /// let bvh = Bvh::parse("HIERARCHY ROOT A { OFFSET 0 0 0 CHANNELS 1 Zrotation
    ///     JOINT B { OFFSET 0 1 0 CHANNELS 1 Xrotation End Site { OFFSET 0 1 0 } }
    ///     JOINT C { OFFSET 1 0 0 CHANNELS 1 Yrotation End Site { OFFSET 1 0 0 } } }
    ///     MOTION Frames: 1 Frame Time: 0.1
    ///     30 40 50")?;
    /// let fk = Kinematics::new(bvh.skeleton(), PositionChannels::Replace);
    /// let (sub, gather) = fk.subset(&[0, 3, 4]); // A, C and C's End Site
    /// let frame = bvh.motion().frame(0);
    /// let compact: Vec<f64> = gather.iter().map(|&c| frame[c]).collect();
    /// assert_eq!(compact, [30.0, 50.0]);
    /// let (mut all, mut part) = (vec![DAffine3::IDENTITY; 5], vec![DAffine3::IDENTITY; 3]);
    /// fk.world(frame, &mut all);
    /// sub.world(&compact, &mut part);
    /// assert_eq!(part, [all[0], all[3], all[4]]);
    /// # Ok::<(), bvhkit::Error>(())
    /// ```
    #[must_use]
    pub fn subset(&self, keep: &[usize]) -> (Kinematics, Vec<usize>) {
        let mut index = vec![u32::MAX; self.program.len()];
        let mut gather = Vec::new();
        let mut program = Vec::with_capacity(keep.len());
        for (i, &j) in keep.iter().enumerate() {
            assert!(i == 0 || keep[i - 1] < j, "subset: joints must be ascending");
            let mut p = self.program[j];
            if let Some(q) = p.parent {
                let q = index[q as usize];
                assert!(q != u32::MAX, "subset: the parent of joint {j} is left out");
                p.parent = Some(q);
            }
            for c in
                p.rot_chan[..p.n_rot as usize].iter_mut().chain(&mut p.pos_chan[..p.n_pos as usize])
            {
                gather.push(*c as usize);
                *c = (gather.len() - 1) as u32;
            }
            index[j] = i as u32;
            program.push(p);
        }
        (Kinematics { program, n_channels: gather.len(), mode: self.mode }, gather)
    }

    /// `joints` and every ancestor of each, ascending, once each: the
    /// ancestor-closed set [`Kinematics::subset`] takes to reach them.
    /// Indices past the skeleton are left out.
    #[must_use]
    pub fn with_ancestors(&self, joints: &[usize]) -> Vec<usize> {
        let mut need = vec![false; self.program.len()];
        for &start in joints {
            let mut at = Some(start);
            while let Some(i) = at.filter(|&i| i < need.len() && !need[i]) {
                need[i] = true;
                at = self.program[i].parent.map(|p| p as usize);
            }
        }
        (0..need.len()).filter(|&j| need[j]).collect()
    }

    /// The world positions of a few chosen `joints` over a clip: for every
    /// frame of `motion` in order, on the calling thread, `each(f,
    /// positions)` with the positions of `joints` in frame `f`, in the order
    /// `joints` lists them (repeats allowed). The caller keeps what it
    /// needs of them (all of them, one coordinate, a height), with no
    /// per-frame allocation.
    ///
    /// Forward kinematics runs over the chosen joints and their ancestors
    /// alone ([`Kinematics::with_ancestors`], [`Kinematics::subset`] on a
    /// compact frame of their channels, [`Kinematics::positions_with`]),
    /// so each position has the bits of [`Kinematics::positions_with`] on
    /// the whole frame, for a fraction of the work where the joints are
    /// few (a foot and the joints above it: a tenth of a full body).
    ///
    /// # Panics
    /// When `joints` names a joint past the skeleton, or `motion` does not
    /// belong to this skeleton (a frame shorter than its channels).
    ///
    /// # Example
    /// ```
    /// use bvhkit::{Bvh, Kinematics, PositionChannels};
    /// use bvhkit::glam::DVec3;
    /// let bvh = Bvh::parse("HIERARCHY ROOT A { OFFSET 0 0 0 CHANNELS 1 Zrotation
    ///     JOINT B { OFFSET 0 1 0 CHANNELS 1 Xrotation End Site { OFFSET 0 1 0 } }
    ///     JOINT C { OFFSET 1 0 0 CHANNELS 1 Yrotation End Site { OFFSET 1 0 0 } } }
    ///     MOTION Frames: 2 Frame Time: 0.1
    ///     30 40 50
    ///     90 0 0")?;
    /// let fk = Kinematics::new(bvh.skeleton(), PositionChannels::Replace);
    /// // C's End Site (joint 4), then B (joint 1): their heights per frame.
    /// let mut heights = Vec::new();
    /// fk.positions_over(bvh.motion(), &[4, 1], |_, p| heights.push([p[0].y, p[1].y]));
    /// let mut all = vec![DVec3::ZERO; 5];
    /// for (f, h) in heights.iter().enumerate() {
    ///     fk.positions(bvh.motion().frame(f), &mut all);
    ///     assert_eq!(*h, [all[4].y, all[1].y]);
    /// }
    /// # Ok::<(), bvhkit::Error>(())
    /// ```
    pub fn positions_over(
        &self,
        motion: &Motion,
        joints: &[usize],
        mut each: impl FnMut(usize, &[DVec3]),
    ) {
        let keep = self.with_ancestors(joints);
        // Where each chosen joint stands among the kept ones; none needed
        // when the caller chose the kept set itself.
        let pick: Option<Vec<usize>> = (joints != keep.as_slice()).then(|| {
            joints
                .iter()
                .map(|j| keep.binary_search(j).expect("positions_over: a joint past the skeleton"))
                .collect()
        });
        let (fk, gather) = self.subset(&keep);
        let mut scratch = fk.scratch();
        let mut compact = vec![0.0; gather.len()];
        let mut kept = vec![DVec3::ZERO; keep.len()];
        let mut chosen = vec![DVec3::ZERO; joints.len()];
        for (f, frame) in motion.frames().enumerate() {
            for (v, &c) in compact.iter_mut().zip(&gather) {
                *v = frame[c];
            }
            fk.positions_with(&compact, &mut scratch, &mut kept);
            match &pick {
                None => each(f, &kept),
                Some(pick) => {
                    for (o, &k) in chosen.iter_mut().zip(pick) {
                        *o = kept[k];
                    }
                    each(f, &chosen);
                }
            }
        }
    }

    /// Number of joints (End Sites included): the length of every output.
    pub fn len(&self) -> usize {
        self.program.len()
    }

    /// Whether the skeleton has no joints.
    pub fn is_empty(&self) -> bool {
        self.program.is_empty()
    }

    /// How position channels are read.
    pub fn mode(&self) -> PositionChannels {
        self.mode
    }

    /// Right-multiplies `r` by the joint's rotation channels, in listed
    /// order, `sin_cos(channel)` giving each channel's sine and cosine.
    /// Starting from the parent's world rotation this gives the joint's
    /// world rotation without a full 3x3 product.
    #[inline(always)]
    fn rotate(p: &Program, r: &mut DMat3, sin_cos: impl Fn(usize) -> (f64, f64)) {
        for k in 0..p.n_rot as usize {
            let (s, c) = sin_cos(p.rot_chan[k] as usize);
            apply_axis_rotation(r, p.rot_axis[k], s, c);
        }
    }

    /// The joint's translation relative to its parent.
    #[inline(always)]
    fn translation_of(&self, p: &Program, frame: &[f64]) -> DVec3 {
        let mut t = p.offset;
        for k in 0..p.n_pos as usize {
            let v = frame[p.pos_chan[k] as usize];
            let a = p.pos_axis[k] as usize;
            match self.mode {
                PositionChannels::Replace => t[a] = v,
                PositionChannels::Add => t[a] += v,
            }
        }
        t
    }

    fn check(&self, frame: &[f64], out_len: usize) {
        assert_eq!(frame.len(), self.n_channels, "frame must hold one value per channel");
        assert_eq!(out_len, self.program.len(), "output must hold one entry per joint");
    }

    /// Local transforms (relative to the parent) of frame `frame`.
    ///
    /// Sines and cosines are computed one channel at a time; with buffers
    /// kept between frames, [`Kinematics::local_with`] computes the frame's
    /// in one batch (the same bits).
    ///
    /// # Panics
    /// When `frame` does not hold one value per channel or `out` one entry
    /// per joint.
    pub fn local(&self, frame: &[f64], out: &mut [DAffine3]) {
        self.check(frame, out.len());
        self.local_by(frame, out, |ch| sin_cos_deg(frame[ch]));
    }

    /// [`Kinematics::local`] with buffers the caller keeps between frames
    /// (from [`Kinematics::scratch`]): the sines and cosines of the whole
    /// frame in one branch-free pass ([`sin_cos_deg_slice`]), the same bits.
    ///
    /// # Panics
    /// As for [`Kinematics::local`], and when `scratch` was made for a
    /// skeleton of another shape.
    pub fn local_with(&self, frame: &[f64], scratch: &mut FkScratch, out: &mut [DAffine3]) {
        self.check(frame, out.len());
        let (sin, cos) = Self::batch(frame, scratch);
        self.local_by(frame, out, |ch| (sin[ch], cos[ch]));
    }

    #[inline(always)]
    fn local_by(&self, frame: &[f64], out: &mut [DAffine3], sin_cos: impl Fn(usize) -> (f64, f64)) {
        for (p, o) in self.program.iter().zip(out.iter_mut()) {
            let mut r = DMat3::IDENTITY;
            Self::rotate(p, &mut r, &sin_cos);
            *o = DAffine3 { matrix3: r, translation: self.translation_of(p, frame) };
        }
    }

    /// The frame's sines and cosines, computed into `scratch`.
    fn batch<'s>(frame: &[f64], scratch: &'s mut FkScratch) -> (&'s [f64], &'s [f64]) {
        let FkScratch { sin, cos, .. } = scratch;
        assert!(
            sin.len() == frame.len() && cos.len() == frame.len(),
            "scratch was made for another skeleton"
        );
        sin_cos_deg_slice(frame, sin, cos);
        (sin, cos)
    }

    /// World transforms of frame `frame`.
    ///
    /// Sines and cosines are computed one channel at a time;
    /// [`Kinematics::world_with`] computes them in one batch (the same
    /// bits).
    ///
    /// # Panics
    /// As for [`Kinematics::local`].
    pub fn world(&self, frame: &[f64], out: &mut [DAffine3]) {
        self.check(frame, out.len());
        self.world_by(frame, out, |ch| sin_cos_deg(frame[ch]));
    }

    /// [`Kinematics::world`] with buffers the caller keeps between frames
    /// (from [`Kinematics::scratch`]): the sines and cosines of the whole
    /// frame in one batch ([`sin_cos_deg_slice`]), the same bits.
    ///
    /// # Panics
    /// As for [`Kinematics::local_with`].
    pub fn world_with(&self, frame: &[f64], scratch: &mut FkScratch, out: &mut [DAffine3]) {
        self.check(frame, out.len());
        let (sin, cos) = Self::batch(frame, scratch);
        self.world_by(frame, out, |ch| (sin[ch], cos[ch]));
    }

    #[inline(always)]
    fn world_by(&self, frame: &[f64], out: &mut [DAffine3], sin_cos: impl Fn(usize) -> (f64, f64)) {
        for i in 0..self.program.len() {
            let p = &self.program[i];
            let t = self.translation_of(p, frame);
            let mut w = match p.parent {
                None => DAffine3 { matrix3: DMat3::IDENTITY, translation: t },
                Some(q) => {
                    let pw = out[q as usize];
                    DAffine3 { matrix3: pw.matrix3, translation: pw.matrix3 * t + pw.translation }
                }
            };
            Self::rotate(p, &mut w.matrix3, &sin_cos);
            out[i] = w;
        }
    }

    /// World positions of frame `frame` when every joint's world rotation
    /// is already known (`rotations`, one per joint, e.g. the ones the
    /// frame's angles were written from): the joints in file order, each
    /// its parent's position plus the parent's world rotation times its own
    /// translation, as in [`Kinematics::positions_with`], without a sine or
    /// cosine. Equals [`Kinematics::positions_with`] within rounding when
    /// `rotations` are the frame's world rotations.
    ///
    /// # Panics
    /// When `frame` does not hold one value per channel, or `rotations` or
    /// `out` one entry per joint.
    pub fn positions_from_rotations(&self, frame: &[f64], rotations: &[DMat3], out: &mut [DVec3]) {
        self.check(frame, out.len());
        assert_eq!(rotations.len(), out.len(), "rotations must hold one entry per joint");
        for i in 0..self.program.len() {
            let p = &self.program[i];
            let t = self.translation_of(p, frame);
            out[i] = match p.parent {
                None => t,
                Some(q) => rotations[q as usize] * t + out[q as usize],
            };
        }
    }

    /// Buffers for [`Kinematics::positions_with`], sized for this skeleton.
    #[must_use]
    pub fn scratch(&self) -> FkScratch {
        FkScratch {
            rot: vec![DMat3::IDENTITY; self.program.len()],
            sin: vec![0.0; self.n_channels],
            cos: vec![0.0; self.n_channels],
        }
    }

    /// World positions of frame `frame`, with buffers the caller keeps
    /// between frames (from [`Kinematics::scratch`]): nothing is allocated.
    ///
    /// The sines and cosines of the whole frame are computed first, in one
    /// branch-free pass ([`sin_cos_deg_slice`]), then the joints in file
    /// order: a joint's world rotation is its parent's, right-multiplied in
    /// place by its rotation channels in listed order.
    ///
    /// # Panics
    /// As for [`Kinematics::local`], and when `scratch` was made for a
    /// skeleton of another shape.
    pub fn positions_with(&self, frame: &[f64], scratch: &mut FkScratch, out: &mut [DVec3]) {
        self.check(frame, out.len());
        let FkScratch { rot, sin, cos } = scratch;
        assert!(
            rot.len() == out.len() && sin.len() == frame.len() && cos.len() == frame.len(),
            "scratch was made for another skeleton"
        );
        sin_cos_deg_slice(frame, sin, cos);
        for i in 0..self.program.len() {
            let p = &self.program[i];
            let t = self.translation_of(p, frame);
            let mut r = match p.parent {
                None => {
                    out[i] = t;
                    DMat3::IDENTITY
                }
                Some(q) => {
                    let q = q as usize;
                    out[i] = rot[q] * t + out[q];
                    rot[q]
                }
            };
            Self::rotate(p, &mut r, |ch| (sin[ch], cos[ch]));
            rot[i] = r;
        }
    }

    /// World positions of frame `frame`.
    ///
    /// # Panics
    /// As for [`Kinematics::local`].
    pub fn positions(&self, frame: &[f64], out: &mut [DVec3]) {
        self.positions_with(frame, &mut self.scratch(), out);
    }

    /// World positions of every joint in every frame, frame-major
    /// (`n_frames × len()`), computed in parallel over frames.
    ///
    /// # Panics
    /// When `motion` does not belong to this skeleton (channel counts differ).
    pub fn positions_all(&self, motion: &Motion) -> Vec<DVec3> {
        let n = self.program.len();
        let mut out = vec![DVec3::ZERO; motion.n_frames() * n];
        if n == 0 {
            return out;
        }
        let work = |(f, chunk): (usize, &mut [DVec3]), scratch: &mut FkScratch| {
            self.positions_with(motion.frame(f), scratch, chunk);
        };
        #[cfg(feature = "parallel")]
        {
            use rayon::prelude::*;
            out.par_chunks_mut(n)
                .enumerate()
                .with_min_len(64)
                .for_each_init(|| self.scratch(), |scratch, item| work(item, scratch));
        }
        #[cfg(not(feature = "parallel"))]
        {
            let mut scratch = self.scratch();
            for item in out.chunks_mut(n).enumerate() {
                work(item, &mut scratch);
            }
        }
        out
    }

    /// World transforms of every joint in every frame, frame-major
    /// (`n_frames × len()`), computed in parallel over frames.
    ///
    /// # Panics
    /// When `motion` does not belong to this skeleton.
    pub fn world_all(&self, motion: &Motion) -> Vec<DAffine3> {
        self.all(motion, |frame, out| self.world(frame, out))
    }

    /// Local transforms of every joint in every frame, frame-major
    /// (`n_frames × len()`), computed in parallel over frames.
    ///
    /// # Panics
    /// When `motion` does not belong to this skeleton.
    pub fn local_all(&self, motion: &Motion) -> Vec<DAffine3> {
        self.all(motion, |frame, out| self.local(frame, out))
    }

    fn all(&self, motion: &Motion, f: impl Fn(&[f64], &mut [DAffine3]) + Sync) -> Vec<DAffine3> {
        let n = self.program.len();
        let mut out = vec![DAffine3::IDENTITY; motion.n_frames() * n];
        if n == 0 {
            return out;
        }
        #[cfg(feature = "parallel")]
        {
            use rayon::prelude::*;
            out.par_chunks_mut(n)
                .enumerate()
                .with_min_len(64)
                .for_each(|(i, chunk)| f(motion.frame(i), chunk));
        }
        #[cfg(not(feature = "parallel"))]
        for (i, chunk) in out.chunks_mut(n).enumerate() {
            f(motion.frame(i), chunk);
        }
        out
    }

    /// World positions of every joint in every frame on the calling thread
    /// only (the baseline of the parallel version).
    pub fn positions_all_serial(&self, motion: &Motion) -> Vec<DVec3> {
        let n = self.program.len();
        let mut out = vec![DVec3::ZERO; motion.n_frames() * n];
        let mut scratch = self.scratch();
        if n > 0 {
            for (f, chunk) in out.chunks_mut(n).enumerate() {
                self.positions_with(motion.frame(f), &mut scratch, chunk);
            }
        }
        out
    }
}

/// Frames per lane group of [`Kinematics::positions_many`]: one AVX-512
/// register of `f64`s (two AVX2 ones).
const LANES: usize = 8;

/// Eight `f64` lanes, one frame each.
type Lanes = [f64; LANES];

/// Buffers that [`Kinematics::positions_many`] reuses from call to call:
/// the channels, sines and cosines of eight frames, channel-major, and each
/// joint's world rotation and position on eight lanes. Make one with
/// [`Kinematics::lanes_scratch`] (one per thread).
#[derive(Clone, Debug)]
pub struct FkLanes {
    values: Vec<f64>,
    sin: Vec<f64>,
    cos: Vec<f64>,
    /// Per joint, the columns of its world rotation (`x_axis`, `y_axis`,
    /// `z_axis`, three components each).
    rot: Vec<[Lanes; 9]>,
    pos: Vec<[Lanes; 3]>,
    /// Whether a joint's rotation is read by a child (End Sites' are not).
    parent_of_some: Vec<bool>,
}

impl FkLanes {
    /// Frames [`Kinematics::positions_many`] computes at a time, one per
    /// SIMD lane.
    pub const LANES: usize = LANES;

    /// The sines and cosines of the last group of [`FkLanes::LANES`] frames
    /// that the last call to [`Kinematics::positions_many`] with this
    /// scratch computed (every channel, through [`sin_cos_deg_slice`]: the
    /// same bits as [`crate::rotation::sin_cos_deg`]), channel-major:
    /// channel `ch` of the group's frame `l` at `ch * LANES + l` (lanes past
    /// the frames of a short last group repeat its last frame). A caller
    /// that needs them for the same frames (their local rotations, say)
    /// takes them here instead of computing them again, as
    /// [`FkScratch::sin_cos`] hands them out for one frame. Zeros before
    /// any call.
    #[must_use]
    pub fn sin_cos(&self) -> (&[f64], &[f64]) {
        (&self.sin, &self.cos)
    }
}

impl Kinematics {
    /// Buffers for [`Kinematics::positions_many`].
    pub fn lanes_scratch(&self) -> FkLanes {
        let mut parent_of_some = vec![false; self.program.len()];
        for p in &self.program {
            if let Some(q) = p.parent {
                parent_of_some[q as usize] = true;
            }
        }
        FkLanes {
            values: vec![0.0; self.n_channels * LANES],
            sin: vec![0.0; self.n_channels * LANES],
            cos: vec![0.0; self.n_channels * LANES],
            rot: vec![[[0.0; LANES]; 9]; self.program.len()],
            pos: vec![[[0.0; LANES]; 3]; self.program.len()],
            parent_of_some,
        }
    }

    /// World positions of several frames: `frames` holds them one after the
    /// other (one value per channel each), `out` gets `len()` positions per
    /// frame, frame-major. The same bits as [`Kinematics::positions_with`]
    /// frame by frame, in fewer instructions: eight frames at a time, one
    /// per SIMD lane (AVX-512F or AVX2 where the CPU has it, no FMA, so every
    /// operation rounds as in the scalar code).
    ///
    /// # Panics
    /// When `out` does not hold `len()` positions for each frame of
    /// `frames`, or `scratch` was made for a skeleton of another shape.
    ///
    /// # Example
    /// ```
    /// use bvhkit::{Bvh, Kinematics, PositionChannels};
    /// use bvhkit::glam::DVec3;
    ///
    /// let bvh = Bvh::parse("HIERARCHY ROOT Hips { OFFSET 0 0 0 CHANNELS 3 Zrotation Xrotation Yrotation
    ///     End Site { OFFSET 0 10 0 } }
    ///     MOTION Frames: 3 Frame Time: 0.1
    ///     90 0 0
    ///     0 90 0
    ///     10 20 30")?;
    /// let fk = Kinematics::new(bvh.skeleton(), PositionChannels::Replace);
    /// let mut many = vec![DVec3::ZERO; 3 * fk.len()];
    /// fk.positions_many(bvh.motion().values(), &mut fk.lanes_scratch(), &mut many);
    /// let mut one = vec![DVec3::ZERO; fk.len()];
    /// for f in 0..3 {
    ///     fk.positions(bvh.motion().frame(f), &mut one);
    ///     assert_eq!(&many[f * fk.len()..(f + 1) * fk.len()], &one[..]);
    /// }
    /// # Ok::<(), bvhkit::Error>(())
    /// ```
    pub fn positions_many(&self, frames: &[f64], scratch: &mut FkLanes, out: &mut [DVec3]) {
        let joints = self.program.len();
        if joints == 0 {
            assert!(out.is_empty(), "output must hold one entry per joint and frame");
            return;
        }
        assert_eq!(out.len() % joints, 0, "output must hold one entry per joint and frame");
        let n = out.len() / joints;
        assert_eq!(frames.len(), n * self.n_channels, "frames must hold one value per channel");
        assert!(
            scratch.rot.len() == joints && scratch.values.len() == self.n_channels * LANES,
            "scratch was made for another skeleton"
        );
        many_on(Simd::best(), self, frames, n, scratch, out);
    }

    /// [`Kinematics::positions_many`]'s loop: groups of eight frames (the
    /// last group's spare lanes repeat its last frame and are not written).
    #[inline(always)]
    fn many(&self, frames: &[f64], n: usize, s: &mut FkLanes, out: &mut [DVec3]) {
        let (nc, joints) = (self.n_channels, self.program.len());
        for g in (0..n).step_by(LANES) {
            let used = LANES.min(n - g);
            // Channel-major: channel ch of lane l at ch * LANES + l.
            for l in 0..LANES {
                let f = g + l.min(used - 1);
                for (ch, &v) in frames[f * nc..(f + 1) * nc].iter().enumerate() {
                    s.values[ch * LANES + l] = v;
                }
            }
            sin_cos_deg_slice(&s.values, &mut s.sin, &mut s.cos);
            self.lanes_pass(s);
            for l in 0..used {
                let o = &mut out[(g + l) * joints..(g + l + 1) * joints];
                for (o, p) in o.iter_mut().zip(&s.pos) {
                    *o = DVec3::new(p[0][l], p[1][l], p[2][l]);
                }
            }
        }
    }

    /// [`Kinematics::positions_with`]'s pass over the joints, on lanes:
    /// the same operations in the same order.
    #[inline(always)]
    fn lanes_pass(&self, s: &mut FkLanes) {
        let FkLanes { values, sin, cos, rot, pos, parent_of_some } = s;
        let at = |v: &[f64], ch: u32| -> Lanes {
            let ch = ch as usize * LANES;
            v[ch..ch + LANES].try_into().expect("eight lanes")
        };
        for (i, p) in self.program.iter().enumerate() {
            // The translation (translation_of).
            let mut t = [[p.offset.x; LANES], [p.offset.y; LANES], [p.offset.z; LANES]];
            for k in 0..p.n_pos as usize {
                let v = at(values, p.pos_chan[k]);
                let a = &mut t[p.pos_axis[k] as usize];
                for l in 0..LANES {
                    match self.mode {
                        PositionChannels::Replace => a[l] = v[l],
                        PositionChannels::Add => a[l] += v[l],
                    }
                }
            }
            let mut r: [Lanes; 9];
            match p.parent {
                None => {
                    pos[i] = t;
                    r = [[0.0; LANES]; 9];
                    for d in [0, 4, 8] {
                        r[d] = [1.0; LANES];
                    }
                }
                Some(q) => {
                    let q = q as usize;
                    r = rot[q];
                    let pq = pos[q];
                    // rot[q] * t + out[q], as glam's DMat3 * DVec3 then +.
                    let mut w = [[0.0; LANES]; 3];
                    for (c, w) in w.iter_mut().enumerate() {
                        for l in 0..LANES {
                            w[l] = r[c][l] * t[0][l]
                                + r[3 + c][l] * t[1][l]
                                + r[6 + c][l] * t[2][l]
                                + pq[c][l];
                        }
                    }
                    pos[i] = w;
                }
            }
            if !parent_of_some[i] {
                continue;
            }
            // apply_axis_rotation on lanes: columns a and b of the pair the
            // axis turns, a' = a cos + b sin, b' = b cos - a sin (for Y, the
            // pair is (z, x)).
            for k in 0..p.n_rot as usize {
                let (sn, cs) = (at(sin, p.rot_chan[k]), at(cos, p.rot_chan[k]));
                match p.rot_axis[k] {
                    Axis::X => turn(&mut r, 3, 6, &sn, &cs),
                    Axis::Y => turn_y(&mut r, &sn, &cs),
                    Axis::Z => turn(&mut r, 0, 3, &sn, &cs),
                }
            }
            rot[i] = r;
        }
    }
}

simd_kernel! {
    /// [`Kinematics::many`] on the given SIMD build (no FMA: the same bits).
    fn many_on(simd: Simd, k: &Kinematics, frames: &[f64], n: usize, s: &mut FkLanes, out: &mut [DVec3]) {
        k.many(frames, n, s, out)
    }
}

/// Columns `a` and `b` (first rows `a`, `b`) turned as
/// [`apply_axis_rotation`] turns them for X (`y`, `z`) and Z (`x`, `y`):
/// `a' = a·cos + b·sin`, `b' = b·cos - a·sin`.
#[inline(always)]
fn turn(r: &mut [Lanes; 9], a: usize, b: usize, sin: &Lanes, cos: &Lanes) {
    for c in 0..3 {
        let (ca, cb) = (r[a + c], r[b + c]);
        for l in 0..LANES {
            r[a + c][l] = ca[l] * cos[l] + cb[l] * sin[l];
            r[b + c][l] = cb[l] * cos[l] - ca[l] * sin[l];
        }
    }
}

/// [`apply_axis_rotation`] for Y: `x' = x·cos - z·sin`, `z' = x·sin + z·cos`.
#[inline(always)]
fn turn_y(r: &mut [Lanes; 9], sin: &Lanes, cos: &Lanes) {
    for c in 0..3 {
        let (c0, c2) = (r[c], r[6 + c]);
        for l in 0..LANES {
            r[c][l] = c0[l] * cos[l] - c2[l] * sin[l];
            r[6 + c][l] = c0[l] * sin[l] + c2[l] * cos[l];
        }
    }
}

/// Whether the reading of position channels matters for this file: some
/// joint with position channels has a non-zero `OFFSET` component named by
/// one of them, so [`PositionChannels::Replace`] and [`PositionChannels::Add`]
/// give different poses. Returns a joint's name and whether its first-frame
/// channel values repeat its `OFFSET` (the signature of files meant to be
/// read with `Replace`): the first joint that does, else the first such
/// joint (often the root, whose channels carry the motion).
pub fn position_channel_ambiguity(
    skeleton: &Skeleton,
    first_frame: Option<&[f64]>,
) -> Option<(String, bool)> {
    let mut first = None;
    for j in skeleton.joints() {
        let mut differs = false;
        let mut repeats = true;
        for (k, &c) in j.channels().iter().enumerate() {
            if c.is_rotation() {
                continue;
            }
            let a = match c.axis() {
                Axis::X => 0,
                Axis::Y => 1,
                Axis::Z => 2,
            };
            let off = j.offset().to_array()[a];
            if off != 0.0 {
                differs = true;
            }
            if let Some(f) = first_frame {
                let v = f[j.first_channel() + k];
                if (v - off).abs() > 1e-6 * off.abs().max(1.0) {
                    repeats = false;
                }
            }
        }
        if differs {
            if first_frame.is_some() && repeats {
                return Some((j.name().to_string(), true));
            }
            first.get_or_insert_with(|| (j.name().to_string(), false));
        }
    }
    first
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Bvh;

    #[test]
    fn ambiguity_prefers_a_joint_whose_first_frame_repeats_its_offset() {
        // The root has a non-zero OFFSET and moves; J repeats its OFFSET.
        let text = "HIERARCHY ROOT R { OFFSET 0 90 0 CHANNELS 3 Xposition Yposition Zposition\n\
            JOINT J { OFFSET 0 5 0 CHANNELS 3 Xposition Yposition Zposition End Site { OFFSET 0 1 0 } } }\n\
            MOTION\nFrames: 1\nFrame Time: 0.1\n3 91 0 0 5 0\n";
        let b = Bvh::parse(text).unwrap();
        let f = Some(b.motion().frame(0));
        assert_eq!(position_channel_ambiguity(b.skeleton(), f), Some(("J".into(), true)));
        // Without a frame there is no evidence: the first such joint.
        assert_eq!(position_channel_ambiguity(b.skeleton(), None), Some(("R".into(), false)));
        // J no longer repeats its OFFSET: the root is named, without the sign.
        let text = text.replace("3 91 0 0 5 0", "3 91 0 0 6 0");
        let b = Bvh::parse(text).unwrap();
        let f = Some(b.motion().frame(0));
        assert_eq!(position_channel_ambiguity(b.skeleton(), f), Some(("R".into(), false)));
        // All OFFSETs named by position channels are zero: the reading does not matter.
        let text = "HIERARCHY ROOT R { OFFSET 0 0 0 CHANNELS 1 Yposition }\nMOTION\nFrames: 1\nFrame Time: 0.1\n4\n";
        let b = Bvh::parse(text).unwrap();
        assert_eq!(position_channel_ambiguity(b.skeleton(), Some(b.motion().frame(0))), None);
    }

    #[test]
    fn positions_over_gives_the_bits_of_the_whole_frame_s_fk() {
        // Chosen joints out of order, with a repeat, deep in a large
        // skeleton, and a kept set chosen whole: each position has the bits
        // of FK on the whole frame, frame by frame, every frame once.
        let text = bvhkit_testdata::synth_text(5, 30, 60);
        let b = Bvh::parse(&text).unwrap();
        let nj = b.skeleton().len();
        for mode in [PositionChannels::Replace, PositionChannels::Add] {
            let fk = Kinematics::new(b.skeleton(), mode);
            let chosen = [nj - 1, nj / 2, 3, nj / 2];
            let closed = fk.with_ancestors(&chosen);
            assert!(closed.windows(2).all(|w| w[0] < w[1]) && closed.contains(&0), "{closed:?}");
            assert!(closed.len() < nj, "{closed:?}");
            for joints in [&chosen[..], &closed[..]] {
                let mut all = vec![DVec3::ZERO; nj];
                let mut seen = 0;
                fk.positions_over(b.motion(), joints, |f, p| {
                    assert_eq!(f, seen);
                    seen += 1;
                    fk.positions(b.motion().frame(f), &mut all);
                    assert_eq!(p.len(), joints.len());
                    for (&j, q) in joints.iter().zip(p) {
                        assert_eq!(
                            q.to_array().map(f64::to_bits),
                            all[j].to_array().map(f64::to_bits)
                        );
                    }
                });
                assert_eq!(seen, b.motion().n_frames());
            }
        }
        // Past the skeleton: left out of the closure.
        let fk = Kinematics::new(b.skeleton(), PositionChannels::Replace);
        assert_eq!(fk.with_ancestors(&[nj + 3]), Vec::<usize>::new());
    }

    #[test]
    fn batched_world_and_local_give_the_same_bits() {
        let text = bvhkit_testdata::synth_text(7, 40, 50);
        let b = Bvh::parse(&text).unwrap();
        for mode in [PositionChannels::Replace, PositionChannels::Add] {
            let fk = Kinematics::new(b.skeleton(), mode);
            let mut scratch = fk.scratch();
            let n = fk.len();
            let (mut a, mut c) = (vec![DAffine3::IDENTITY; n], vec![DAffine3::IDENTITY; n]);
            let bits = |x: &[DAffine3]| -> Vec<u64> {
                x.iter().flat_map(|t| t.to_cols_array()).map(f64::to_bits).collect()
            };
            for f in b.motion().frames() {
                fk.world(f, &mut a);
                fk.world_with(f, &mut scratch, &mut c);
                assert_eq!(bits(&a), bits(&c));
                fk.local(f, &mut a);
                fk.local_with(f, &mut scratch, &mut c);
                assert_eq!(bits(&a), bits(&c));
            }
        }
    }
}

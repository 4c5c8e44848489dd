//! The distance between two clips: MPJPE, root-aligned MPJPE, PA-MPJPE
//! (a similarity Procrustes fit per frame) and the geodesic error of the
//! joints' rotations.
//!
//! Two ways, one result. [`diff`] takes two parsed clips: each clip's unit
//! guess comes first from one size per frame, then runs of 512 frames of A
//! are measured on the pool, each computing the world positions of its
//! frames and of the B frames it reads into buffers its thread reuses
//! (scaled to metres as they are read). [`diff_stream`] takes two
//! [`FrameReader`]s of the same frame rate and reads the frames of the next
//! batch of whole runs from both while the batch before is measured (the
//! pool's threads take the batch's runs and the windows of either clip as
//! they come free, and read on while another finishes: no thread waits
//! for another's last run), each a window of input at a time into buffers the runs read
//! in place (`FrameReader::read_window` hands a window's values over
//! without a copy; only a group of frames that spans two windows is
//! copied, for FK). FK runs once per frame: each frame's size for the unit
//! guess comes from the positions the run measures; the unit is guessed
//! from the sizes of the first batch's frames (its runs take their
//! positions first and are measured once the unit is known: no second FK
//! of those frames) and confirmed by every frame's size at the end, or
//! the caller reads again with the units found ([`Streamed::Units`]). Both
//! measure a run with `Plan::measure` and add the runs' sums in run order,
//! so neither the threads nor the way the frames came change a bit.
//!
//! The rotation error of a pair is the geodesic angle between its channel
//! rotations in A and in B, as matrices built from the sines and cosines
//! forward kinematics takes for the positions anyway: at the same rate
//! each group of [`FkLanes::LANES`] frames is measured right after FK of
//! that group of both clips, from its lanes (`Plan::positions_rotations`);
//! with B at another rate, from B's nearest frames laid out as FK lays
//! them (`Plan::measure_rotations`), the same bits per frame.

mod horn;
mod lanes;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use glam::{DMat3, DQuat, DVec3};

use super::world_positions;
use crate::kinematics::{Kinematics, PositionChannels};
use crate::parse::{FrameReader, FrameSource};
use crate::retarget::map::JointMap;
use crate::retarget::names::{Bone, classify};
use crate::rotation::{Axis, sin_cos_deg_slice};
use crate::units::{FrameSizes, Limbs, UnitGuess, pose_size};
use crate::{Bvh, Error, FkLanes, Result, Skeleton};

/// Choices of [`diff`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DiffOptions {
    /// Metres per file unit of both clips; `None` guesses each clip's unit.
    pub metres_per_unit: Option<f64>,
    /// How position channels are read.
    pub position_channels: PositionChannels,
    /// Joint pairs (index in A, index in B); `None` pairs joints by name,
    /// else by the retarget name families when no name is shared.
    pub pairs: Option<Vec<(usize, usize)>>,
    /// How many worst frames and joints to report (0: 10).
    pub worst: usize,
}

/// One joint pair's errors.
#[derive(Clone, Debug, PartialEq)]
pub struct JointDiff {
    /// The joint's name in A.
    pub a: String,
    /// The joint's name in B.
    pub b: String,
    /// Mean position error (m).
    pub mpjpe: f64,
    /// Mean geodesic rotation error of the joint's channels (degrees);
    /// `None` for joints without rotation channels in either clip.
    pub rotation_deg: Option<f64>,
}

/// What [`diff`] measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Diff {
    /// Frames compared.
    pub frames: usize,
    /// Frames per second of the comparison (A's).
    pub fps: f64,
    /// Mean per-joint position error over frames and joint pairs (m).
    pub mpjpe: f64,
    /// The same with each clip's hips subtracted in every frame.
    pub mpjpe_root: f64,
    /// The same after B's joints are fitted onto A's in every frame by a
    /// rotation, a uniform scale and a translation (Procrustes).
    pub pa_mpjpe: f64,
    /// Mean geodesic angle between the paired joints' channel rotations
    /// (degrees); `None` when no pair has rotation channels on both sides.
    pub rotation_deg: Option<f64>,
    /// Per pair, in A's joint order.
    pub joints: Vec<JointDiff>,
    /// Per frame: the MPJPE of that frame (m).
    pub per_frame: Vec<f64>,
    /// The worst frames, (frame, MPJPE), worst first.
    pub worst_frames: Vec<(usize, f64)>,
    /// Indices into `joints`, worst MPJPE first.
    pub worst_joints: Vec<usize>,
    /// What was done to make the clips comparable (resampling, a shorter
    /// span, a map by name families).
    pub notes: Vec<String>,
}

/// The joint pairs by exact name (End Sites named as `bvh positions` names
/// them), or by [`JointMap::auto`] when no name is shared.
fn pairs_by_name(a: &Skeleton, b: &Skeleton, notes: &mut Vec<String>) -> Vec<(usize, usize)> {
    let (na, nb) = (a.display_names(), b.display_names());
    let pairs: Vec<(usize, usize)> = na
        .iter()
        .enumerate()
        .filter_map(|(i, name)| nb.iter().position(|m| m == name).map(|k| (i, k)))
        .collect();
    if !pairs.is_empty() {
        return pairs;
    }
    let map = JointMap::auto(a, b);
    notes.push("no joint name is shared: joints paired by the retarget name families".into());
    map.pairs().iter().map(|p| (p.source, p.target)).collect()
}

/// The hips joint of `skeleton` as [`super::hips_of`] takes it: the joint
/// the name families call the hips, else the first.
fn hips_index(skeleton: &Skeleton) -> usize {
    classify(skeleton).iter().position(|b| *b == Some(Bone::Hips)).unwrap_or(0)
}

/// A joint's rotation channels: their axes and their indices in a frame.
type RotChannels = (Vec<Axis>, Vec<usize>);

/// A pair's rotation channels for [`Plan::measure`]: the pair, then the
/// axes of its channels in A and in B, each with its index in a frame.
type RotSlots = (usize, Vec<(Axis, usize)>, Vec<(Axis, usize)>);

/// What the whole-clip and the streamed diff share: the joint pairs, the
/// pair the root-aligned error subtracts, each pair's rotation channels,
/// and the measure of a run of frames ([`Plan::measure`]).
struct Plan {
    pairs: Vec<(usize, usize)>,
    /// The hips pair when it is paired, else the first pair.
    root: (usize, usize),
    /// Per pair with rotation channels on both sides: the pair, and the
    /// axes of its channels in A and in B with the index of each.
    rot_slots: Vec<RotSlots>,
    /// Whether a pair has rotation channels on both sides.
    rotating: Vec<bool>,
    any_rotating: bool,
    /// Positions per frame of A's and of B's forward kinematics.
    joints: (usize, usize),
}

impl Plan {
    /// The pairs given, else by name; `joints` are the FK's positions per
    /// frame of each clip.
    ///
    /// # Errors
    /// When no joint pairs, or a pair names a joint outside the skeletons.
    fn new(
        a: &Skeleton,
        b: &Skeleton,
        given: Option<&[(usize, usize)]>,
        joints: (usize, usize),
        notes: &mut Vec<String>,
    ) -> Result<Plan> {
        let pairs = match given {
            Some(p) => p.to_vec(),
            None => pairs_by_name(a, b, notes),
        };
        let (la, lb) = (a.len(), b.len());
        if pairs.is_empty() {
            return Err(Error::invalid(
                "no joints to compare: no name is shared and no name family matches (give a map)",
            ));
        }
        if let Some(&(i, k)) = pairs.iter().find(|&&(i, k)| i >= la || k >= lb) {
            return Err(Error::invalid(format!(
                "joint pair ({i}, {k}) is outside the skeletons ({la} and {lb} joints)"
            )));
        }
        // A similarity transform fits two points exactly, and one pair is
        // its own root: those figures are 0 whatever the motion.
        let hint =
            if given.is_none() { " (--map auto pairs joints by the name families)" } else { "" };
        match pairs.len() {
            1 => notes.push(format!(
                "only 1 joint pair: root-aligned MPJPE and PA-MPJPE are 0 by construction{hint}"
            )),
            2 => notes.push(format!(
                "only 2 joint pairs: PA-MPJPE is 0 by construction (a rotation, scale and \
                 translation fit two points exactly){hint}"
            )),
            _ => {}
        }
        let root = {
            let (ha, hb) = (hips_index(a), hips_index(b));
            pairs
                .iter()
                .copied()
                .find(|&(i, _)| i == ha)
                .or_else(|| pairs.iter().copied().find(|&(_, k)| k == hb))
                .unwrap_or(pairs[0])
        };
        let rot_channels = |skel: &Skeleton, j: usize| -> RotChannels {
            let joint = &skel.joints()[j];
            joint
                .channels()
                .iter()
                .enumerate()
                .filter(|(_, c)| c.is_rotation())
                .map(|(k, c)| (c.axis(), joint.first_channel() + k))
                .unzip()
        };
        let rots: Vec<_> =
            pairs.iter().map(|&(i, k)| (rot_channels(a, i), rot_channels(b, k))).collect();
        let rotating: Vec<bool> =
            rots.iter().map(|((aa, _), (ab, _))| !aa.is_empty() && !ab.is_empty()).collect();
        let any_rotating = rotating.iter().any(|&r| r);
        let slots = rots
            .iter()
            .enumerate()
            .filter(|&(p, _)| rotating[p])
            .map(|(p, ((axa, cha), (axb, chb)))| {
                let zip = |ax: &[Axis], ch: &[usize]| {
                    ax.iter().copied().zip(ch.iter().copied()).collect()
                };
                (p, zip(axa, cha), zip(axb, chb))
            })
            .collect();
        Ok(Plan { pairs, root, rot_slots: slots, rotating, any_rotating, joints })
    }

    /// The sums of the run `r` and each of its frames' MPJPE into `out`
    /// (one slot per frame of A in the run).
    ///
    /// The positions a block of [`lanes::FRAME_LANES`] frames at a time
    /// (the block's frames on SIMD lanes, each frame's sums over its pairs
    /// in pair order, then added in frame order); the rotations pair by pair over
    /// chunks of [`lanes::ROT_LANES`] frames (the frames on SIMD lanes, each
    /// pair's sum in frame order), taken already by
    /// [`Plan::positions_rotations`] where `r.rotations_done`: every sum
    /// adds the same terms in the same order as one loop over frames and
    /// pairs would.
    fn measure(&self, r: &RunIn<'_>, out: &mut [f64], w: &mut Work) -> Sums {
        let mut part = Sums::new(self.pairs.len());
        self.measure_positions(r, out, w, &mut part);
        if r.rotations_done {
            part.rot.copy_from_slice(&w.rot);
        } else if self.any_rotating {
            self.measure_rotations(r, out.len(), w, &mut part);
        }
        part
    }

    /// The position errors of [`Plan::measure`]: MPJPE, root-aligned and
    /// PA-MPJPE, a block of [`lanes::FRAME_LANES`] frames at a time (lane
    /// `l` of every array the block's frame `l`; a short last block
    /// repeats its last frame and drops it): each pair's errors and each
    /// frame's sums and Procrustes input on the lanes, every sum in the
    /// frame-by-frame order (each frame's over its pairs in pair order,
    /// and across frames in frame order).
    fn measure_positions(&self, r: &RunIn<'_>, out: &mut [f64], w: &mut Work, part: &mut Sums) {
        const L: usize = lanes::FRAME_LANES;
        let np = self.pairs.len();
        let (nja, njb) = self.joints;
        let (mpu_a, mpu_b) = r.mpu;
        let (ra, rb) = self.root;
        let (wa, wb, f0, b0, nfb) = (r.a, r.b, r.f0, r.b0, r.nfb);
        let Work { blocks, fits, eigen, ep: e, er, .. } = w;
        blocks.resize_with(FIT_BLOCK / L, Default::default);
        for blk in blocks.iter_mut() {
            blk.xs.resize(np);
            blk.ys.resize(np);
        }
        // Blocks whose fits wait in `fits`.
        let mut held = 0;
        for (c, slots) in out.chunks_mut(L).enumerate() {
            let m = slots.len();
            let blk = &mut blocks[held];
            let (mut roots_a, mut roots_b) = ([[0.0; L]; 3], [[0.0; L]; 3]);
            for l in 0..L {
                let k = c * L + l.min(m - 1);
                let f = f0 + k;
                let u = r.at[k];
                let a = &wa[(f - f0) * nja..][..nja];
                // B at `u`: its frame `lo`, or between it and the next.
                let lo = (u.floor() as usize).min(nfb - 1);
                let frac = u - lo as f64;
                let b_lo = &wb[(lo - b0) * njb..][..njb];
                let b_hi = if frac <= 0.0 || lo + 1 >= nfb {
                    None
                } else {
                    Some(&wb[(lo + 1 - b0) * njb..][..njb])
                };
                let pos_b = |j: usize| -> DVec3 {
                    let p0 = b_lo[j] * mpu_b;
                    match b_hi {
                        None => p0,
                        Some(hi) => p0 + (hi[j] * mpu_b - p0) * frac,
                    }
                };
                let (root_a, root_b) = (a[ra] * mpu_a, pos_b(rb));
                for (d, (x, y)) in root_a.to_array().into_iter().zip(root_b.to_array()).enumerate()
                {
                    (roots_a[d][l], roots_b[d][l]) = (x, y);
                }
                blk.ys.fill(l, self.pairs.iter().map(|&(i, _)| a[i] * mpu_a));
                match b_hi {
                    None => blk.xs.fill(l, self.pairs.iter().map(|&(_, j)| b_lo[j] * mpu_b)),
                    Some(_) => blk.xs.fill(l, self.pairs.iter().map(|&(_, j)| pos_b(j))),
                }
            }
            let got = lanes::errors(&blk.ys, &blk.xs, (roots_a, roots_b), e, er);
            for (joint, e) in part.joint.iter_mut().zip(e.iter()) {
                for &e in &e[..m] {
                    *joint += e;
                }
            }
            for l in 0..m {
                for er in er.iter() {
                    part.root += er[l];
                }
                slots[l] = got.sum[l] / np as f64;
                part.sum += got.sum[l];
            }
            // The frames whose points differ: their fits.
            blk.fit = [false; L];
            blk.fit[..m].copy_from_slice(&got.differ[..m]);
            if blk.fit.iter().any(|&d| d) {
                let sums = lanes::fit_sums(&blk.xs, &blk.ys);
                for l in (0..m).filter(|&l| blk.fit[l]) {
                    fits.push(FitInput::of_lane(&sums, l));
                }
                held += 1;
                if held == blocks.len() {
                    Self::fit_residuals(&blocks[..held], fits, eigen, part);
                    held = 0;
                }
            }
        }
        Self::fit_residuals(&blocks[..held], fits, eigen, part);
    }

    /// The Procrustes fits of the frames in `fits` (their points in the
    /// lanes of `blocks` marked [`Block::fit`], in the same order): each by
    /// [`FitInput::similarity_fast`], the few it leaves by their full
    /// eigenproblems on SIMD lanes ([`lanes::jacobi4`]: [`jacobi4`]'s
    /// bits); then each frame's residuals (a block's frames on lanes)
    /// added to `part.pa` in frame order; `fits` left empty.
    fn fit_residuals(
        blocks: &[Block],
        fits: &mut Vec<FitInput>,
        eigen: &mut Eigenproblems,
        part: &mut Sums,
    ) {
        if fits.is_empty() {
            return;
        }
        let (mats, out, sims) = eigen;
        mats.clear();
        sims.clear();
        // A fast fit, or the index of the frame's matrix among `mats`.
        sims.extend(fits.iter_mut().map(|f| {
            f.similarity_fast().ok_or_else(|| {
                mats.push(f.n);
                mats.len() - 1
            })
        }));
        if !mats.is_empty() {
            lanes::jacobi4(mats, out);
        }
        let mut each = fits.iter().zip(sims.iter());
        let mut lane_fits = lanes::Fits::default();
        for blk in blocks {
            for l in (0..lanes::FRAME_LANES).filter(|&l| blk.fit[l]) {
                if let Some((f, sim)) = each.next() {
                    let fit = match *sim {
                        Ok(fit) => fit,
                        Err(k) => f.similarity(out[k].0, out[k].1),
                    };
                    lane_fits.set(l, &fit);
                }
            }
            let sums = lanes::residuals(&lane_fits, &blk.xs, &blk.ys);
            for l in (0..lanes::FRAME_LANES).filter(|&l| blk.fit[l]) {
                part.pa += sums[l];
            }
        }
        fits.clear();
    }

    /// The world positions of a run's frames of A and of B (file units,
    /// frame-major, into each side's `out`), a group of
    /// [`FkLanes::LANES`] frames of each clip in turn; with `n` > 0 (B's
    /// frames are A's: the same rate), each pair's rotation errors of the
    /// run's first `n` frames too, into `w.rot` (each pair's sum in frame
    /// order, from 0), from the sines and cosines FK has just taken of the
    /// group, still in its lanes: no second conversion, no copy. Returns
    /// whether it measured the rotations.
    fn positions_rotations(
        &self,
        mut a: FkSide<'_>,
        mut b: FkSide<'_>,
        n: usize,
        w: &mut Work,
    ) -> bool {
        const G: usize = FkLanes::LANES;
        let fused = n > 0 && self.any_rotating && a.width > 0 && b.width > 0;
        if !fused {
            a.positions(0..a.frames());
            b.positions(0..b.frames());
            return false;
        }
        let (na, nb) = (a.frames(), b.frames());
        w.rot.clear();
        w.rot.resize(self.pairs.len(), 0.0);
        let deg = &mut w.e;
        for g in (0..na.max(nb)).step_by(G) {
            a.positions(g..(g + G).min(na).max(g));
            b.positions(g..(g + G).min(nb).max(g));
            if g < n {
                let m = G.min(n - g);
                deg.resize(m, 0.0);
                let ((sa, ca), (sb, cb)) = (a.lanes.sin_cos(), b.lanes.sin_cos());
                for (p, axes_a, axes_b) in &self.rot_slots {
                    lanes::pair_angles((axes_a, sa, ca), (axes_b, sb, cb), deg);
                    let sum = &mut w.rot[*p];
                    for &d in deg.iter() {
                        *sum += d;
                    }
                }
            }
        }
        true
    }

    /// The rotation errors of [`Plan::measure`] of the run's first `n`
    /// frames where [`Plan::positions_rotations`] did not take them (B at
    /// another rate): chunk by chunk of [`FkLanes::LANES`] frames, A's
    /// frames and B's nearest ones laid out channel by channel as FK lays
    /// them, their sines and cosines as FK takes them (the same bits), then
    /// [`Plan::positions_rotations`]' angles and sums.
    fn measure_rotations(&self, r: &RunIn<'_>, n: usize, w: &mut Work, part: &mut Sums) {
        const G: usize = FkLanes::LANES;
        fn row(rows: &[f64], base: usize, f: usize, width: usize) -> &[f64] {
            let at = (f - base) * width;
            &rows[at..at + width]
        }
        // Frames `frames` (the last repeated to fill the lanes) channel by
        // channel into `v`, their sines and cosines into `s` and `c`.
        let lay = |(rows, base): (&[f64], usize),
                   width: usize,
                   frames: &[usize],
                   (v, s, c): (&mut Vec<f64>, &mut Vec<f64>, &mut Vec<f64>)| {
            for x in [&mut *v, &mut *s, &mut *c] {
                x.resize(width * G, 0.0);
            }
            for l in 0..G {
                let f = frames[l.min(frames.len() - 1)];
                for (ch, &x) in row(rows, base, f, width).iter().enumerate() {
                    v[ch * G + l] = x;
                }
            }
            sin_cos_deg_slice(v, s, c);
        };
        let Work { fa, fb, e: deg, va, vb, .. } = w;
        for c0 in (0..n).step_by(G) {
            let m = G.min(n - c0);
            fa.clear();
            fa.extend((c0..c0 + m).map(|k| r.f0 + k));
            // B's rotations at its nearest frame.
            fb.clear();
            fb.extend(r.at[c0..c0 + m].iter().map(|u| (u.round() as usize).min(r.nfb - 1)));
            lay(r.rows_a, r.widths.0, fa, (&mut va.0, &mut va.1, &mut va.2));
            lay(r.rows_b, r.widths.1, fb, (&mut vb.0, &mut vb.1, &mut vb.2));
            deg.resize(m, 0.0);
            for (p, axes_a, axes_b) in &self.rot_slots {
                lanes::pair_angles((axes_a, &va.1, &va.2), (axes_b, &vb.1, &vb.2), deg);
                let sum = &mut part.rot[*p];
                for &d in deg.iter() {
                    *sum += d;
                }
            }
        }
    }

    /// The [`Diff`] of the sums of every run (added in run order),
    /// `per_frame` the MPJPE of each frame compared.
    #[allow(clippy::too_many_arguments)]
    fn finish(
        &self,
        (na, nb): (&Skeleton, &Skeleton),
        frames: usize,
        fps: f64,
        sums: &Sums,
        per_frame: Vec<f64>,
        worst: usize,
        notes: Vec<String>,
    ) -> Diff {
        let np = self.pairs.len();
        let total = (frames * np) as f64;
        let mut rot_sum = 0.0;
        let mut rot_count = 0usize;
        let mut joints = Vec::with_capacity(np);
        let (na, nb) = (na.display_names(), nb.display_names());
        for (p, &(i, k)) in self.pairs.iter().enumerate() {
            let rotation_deg = self.rotating[p].then(|| sums.rot[p] / frames as f64);
            if let Some(r) = rotation_deg {
                rot_sum += r;
                rot_count += 1;
            }
            joints.push(JointDiff {
                a: na[i].clone(),
                b: nb[k].clone(),
                mpjpe: sums.joint[p] / frames as f64,
                rotation_deg,
            });
        }
        let worst = if worst == 0 { 10 } else { worst };
        // The worst frames: the first `worst` in a total order (ties by
        // frame), selected before they alone are sorted.
        let by_error =
            |x: &usize, y: &usize| per_frame[*y].total_cmp(&per_frame[*x]).then(x.cmp(y));
        let mut order: Vec<usize> = (0..frames).collect();
        if worst < order.len() {
            order.select_nth_unstable_by(worst, by_error);
            order.truncate(worst);
        }
        order.sort_by(by_error);
        let worst_frames = order.iter().map(|&f| (f, per_frame[f])).collect();
        let mut jorder: Vec<usize> = (0..np).collect();
        jorder.sort_by(|&x, &y| joints[y].mpjpe.total_cmp(&joints[x].mpjpe).then(x.cmp(&y)));
        jorder.truncate(worst);
        Diff {
            frames,
            fps,
            mpjpe: sums.sum / total,
            mpjpe_root: sums.root / total,
            pa_mpjpe: sums.pa / total,
            rotation_deg: (rot_count > 0).then(|| rot_sum / rot_count as f64),
            joints,
            per_frame,
            worst_frames,
            worst_joints: jorder,
            notes,
        }
    }
}

/// One run of frames for [`Plan::measure`].
struct RunIn<'v> {
    /// A's first frame in the run.
    f0: usize,
    /// B's frame (fractional) at each of the run's frames of A.
    at: &'v [f64],
    /// A's world positions of the run's frames (file units, frame-major).
    a: &'v [DVec3],
    /// B's world positions from its frame `b0` on, as far as `at` reads.
    b: &'v [DVec3],
    b0: usize,
    /// B's frames: no frame at or past it is read (a bound is enough where
    /// every `at` is a whole frame).
    nfb: usize,
    /// Metres per file unit of A and of B.
    mpu: (f64, f64),
    /// Channel values of A and of B, each from the frame with the index given.
    rows_a: (&'v [f64], usize),
    rows_b: (&'v [f64], usize),
    /// Channels per frame of A and of B.
    widths: (usize, usize),
    /// Whether [`Plan::positions_rotations`] measured the rotation errors
    /// (into [`Work::rot`]).
    rotations_done: bool,
}

/// One clip's side of a run's forward kinematics: its FK, its frames'
/// values (`width` each), its lanes and the buffer of its positions (as
/// many frames as `values` holds; frame-major).
struct FkSide<'x> {
    fk: &'x Kinematics,
    values: Rows<'x>,
    width: usize,
    lanes: &'x mut FkLanes,
    out: &'x mut [DVec3],
}

/// Where an [`FkSide`]'s frames are: one slice (frame 0's values first),
/// or a clip's [`Windows`] from the frame given on, with a buffer for a
/// piece of frames that spans two windows (copied there; every other
/// piece is read where the reader left it).
enum Rows<'x> {
    Slice(&'x [f64]),
    Windows(&'x Windows, usize, &'x mut Vec<f64>),
}

impl FkSide<'_> {
    fn frames(&self) -> usize {
        self.out.len() / self.fk.len().max(1)
    }

    /// The world positions of `frames` (relative to the side's first),
    /// [`FK_RUN`] frames per call of [`Kinematics::positions_many`].
    fn positions(&mut self, frames: std::ops::Range<usize>) {
        let (nj, w) = (self.fk.len(), self.width);
        if nj == 0 || frames.is_empty() {
            return;
        }
        let FkSide { fk, values, lanes, out, .. } = self;
        let out = &mut out[frames.start * nj..frames.end * nj];
        if w == 0 {
            fk.positions_many(&[], lanes, out);
            return;
        }
        let values = match values {
            Rows::Slice(v) => &v[frames.start * w..frames.end * w],
            Rows::Windows(win, from, copy) => {
                win.rows(*from + frames.start..*from + frames.end, w, copy)
            }
        };
        for (rows, vals) in out.chunks_mut(FK_RUN * nj).zip(values.chunks(FK_RUN * w)) {
            fk.positions_many(vals, lanes, rows);
        }
    }
}

/// Buffers of [`Plan::measure`] a thread reuses from run to run: blocks
/// of frames' paired positions of B and of A, each pair's errors in a
/// block, a pair's angles over a chunk of frames, each pair's rotation
/// error sum of the run; where B is at another rate, a chunk's frames of
/// A and of B, and their values, sines and cosines channel by channel.
#[derive(Default)]
struct Work {
    /// Blocks of frames' paired points; those before the one being
    /// filled hold frames whose fits wait in `fits`.
    blocks: Vec<Block>,
    fits: Vec<FitInput>,
    /// The fits' matrices and their eigenproblems' answers.
    eigen: Eigenproblems,
    /// A chunk's angles of a pair.
    e: Vec<f64>,
    /// A block's error of each pair, and its root-aligned error.
    ep: Vec<lanes::F4>,
    er: Vec<lanes::F4>,
    rot: Vec<f64>,
    fa: Vec<usize>,
    fb: Vec<usize>,
    va: (Vec<f64>, Vec<f64>, Vec<f64>),
    vb: (Vec<f64>, Vec<f64>, Vec<f64>),
}

/// A block of [`lanes::FRAME_LANES`] frames of [`Plan::measure`]: the
/// paired points of B and of A, and which frames have a Procrustes fit
/// (their points differ; a short block's missing frames have none).
#[derive(Default)]
struct Block {
    xs: lanes::Points4,
    ys: lanes::Points4,
    fit: [bool; lanes::FRAME_LANES],
}

/// A block's fits: the matrices left to [`lanes::jacobi4`], its answers,
/// and each frame's fit (or the index of its matrix).
type Eigenproblems =
    (Vec<[[f64; 4]; 4]>, Vec<lanes::Eigen>, Vec<std::result::Result<Similarity, usize>>);

/// Sums over a run of frames, or over every run so far (added in run
/// order: the same sums whatever the threads or the way the frames came).
struct Sums {
    sum: f64,
    root: f64,
    pa: f64,
    joint: Vec<f64>,
    rot: Vec<f64>,
}

impl Sums {
    fn new(np: usize) -> Sums {
        Sums { sum: 0.0, root: 0.0, pa: 0.0, joint: vec![0.0; np], rot: vec![0.0; np] }
    }

    /// Adds a later run's sums.
    fn add(&mut self, part: &Sums) {
        self.sum += part.sum;
        self.root += part.root;
        self.pa += part.pa;
        for (s, p) in self.joint.iter_mut().zip(&part.joint) {
            *s += p;
        }
        for (s, p) in self.rot.iter_mut().zip(&part.rot) {
            *s += p;
        }
    }
}

/// Frames per run: the unit of work on the pool, and of the sums added in
/// order.
const RUN: usize = 512;

/// Frames whose Procrustes fits [`Plan::measure`] solves together (their
/// eigenproblems, those [`FitInput::similarity_fast`] leaves on SIMD lanes,
/// [`lanes::jacobi4`]).
const FIT_BLOCK: usize = 64;

/// Whether two frame times are the same rate.
fn same_rate(ta: f64, tb: f64) -> bool {
    (ta - tb).abs() <= 1e-9 * ta.abs().max(tb.abs())
}

/// Compares clip `b` with clip `a` (the reference): see [`Diff`].
///
/// Positions are compared in metres. Where the frame rates differ, B's
/// positions are interpolated linearly at A's frame times (with a note);
/// where the lengths differ, the common span is compared (with a note).
///
/// # Errors
/// When no joint pairs, when a clip has no frames, or when the pairs name
/// joints outside the skeletons.
///
/// # Example
/// ```
/// use bvhkit::{Bvh, quality};
/// let a = Bvh::parse("HIERARCHY ROOT Hips { OFFSET 0 0 0 CHANNELS 3 Xposition Yposition Zposition
///     End Site { OFFSET 0 1 0 } } MOTION Frames: 2 Frame Time: 0.1
///     0 0 0
///     1 0 0")?;
/// let d = quality::diff(&a, &a, &quality::DiffOptions { metres_per_unit: Some(1.0), ..Default::default() })?;
/// assert_eq!((d.mpjpe, d.pa_mpjpe), (0.0, 0.0));
/// # Ok::<(), bvhkit::Error>(())
/// ```
pub fn diff(a: &Bvh, b: &Bvh, o: &DiffOptions) -> Result<Diff> {
    let mut notes = Vec::new();
    let fk_a = Kinematics::new(a.skeleton(), o.position_channels);
    let fk_b = Kinematics::new(b.skeleton(), o.position_channels);
    let (nja, njb) = (fk_a.len(), fk_b.len());
    let plan = Plan::new(a.skeleton(), b.skeleton(), o.pairs.as_deref(), (nja, njb), &mut notes)?;
    let (ma, mb) = (a.motion(), b.motion());
    if ma.n_frames() == 0 || mb.n_frames() == 0 {
        return Err(Error::invalid("a clip has no frames to compare"));
    }
    // Metres per unit of each clip, both clips at once: the unit guess
    // takes every frame's size, so it comes first, from a pass that keeps
    // no positions; the positions are computed again run by run below.
    let mpu = super::join(
        || metres_per_unit(a, o.position_channels, o.metres_per_unit),
        || metres_per_unit(b, o.position_channels, o.metres_per_unit),
    );
    let (fa, fb) = (ma.fps(), mb.fps());
    let same_rate = same_rate(ma.frame_time(), mb.frame_time());
    // B's frame (as a fractional index) at each of A's frames.
    let at: Vec<f64> = if same_rate {
        (0..ma.n_frames().min(mb.n_frames())).map(|f| f as f64).collect()
    } else {
        notes.push(format!("frame rates differ ({fa:.4} and {fb:.4} fps): B interpolated linearly at A's frame times"));
        (0..ma.n_frames())
            .map(|f| f as f64 * ma.frame_time() / mb.frame_time())
            .take_while(|&u| u <= (mb.n_frames() - 1) as f64 + 1e-9)
            .collect()
    };
    let frames = at.len();
    let (na, nb) = (ma.n_frames(), mb.n_frames());
    // At other rates the clips' durations say what is compared.
    let durations = || {
        let (da, db) = (na as f64 * ma.frame_time(), nb as f64 * mb.frame_time());
        format!("durations differ ({da:.3} and {db:.3} s)")
    };
    if same_rate && na != nb {
        notes.push(lengths_note(na, nb, frames));
    } else if !same_rate && frames < na {
        notes.push(format!("{}: the first {frames} frames of A compared", durations()));
    } else if let Some(&last) = at.last().filter(|&&u| u < (nb - 1) as f64 - 1e-9) {
        // B goes on after A's last frame: its end is left out (said, as
        // where A is the longer).
        let used = (last - 1e-9).ceil() as usize + 1;
        notes.push(format!(
            "{}: A compared with B's first {used} frames, its last {} left out",
            durations(),
            nb - used
        ));
    }
    let nfb = mb.n_frames();
    /// A thread's buffers: FK lanes and the run's positions of each clip.
    struct Scratch {
        lanes_a: FkLanes,
        lanes_b: FkLanes,
        a: Vec<DVec3>,
        b: Vec<DVec3>,
        work: Work,
    }
    let scratch = || Scratch {
        lanes_a: fk_a.lanes_scratch(),
        lanes_b: fk_b.lanes_scratch(),
        a: Vec::new(),
        b: Vec::new(),
        work: Work::default(),
    };
    let mut per_frame = vec![0.0; frames];
    let widths = (ma.n_channels(), mb.n_channels());
    let measure = |(r, out): (usize, &mut [f64]), sc: &mut Scratch| -> Sums {
        // This run's world positions of A and of the frames of B it reads
        // (frame-major, in file units: the scale to metres is applied as
        // they are read, the bits of scaling them in place).
        let (f0, f1) = (r * RUN, r * RUN + out.len());
        let b0 = (at[f0].floor() as usize).min(nfb - 1);
        let b1 = (at[f1 - 1].floor() as usize + 1).min(nfb - 1);
        sc.a.resize((f1 - f0) * nja, DVec3::ZERO);
        sc.b.resize((b1 + 1 - b0) * njb, DVec3::ZERO);
        let (wa, wb) = widths;
        let a = FkSide {
            fk: &fk_a,
            values: Rows::Slice(&ma.values()[f0 * wa..f1 * wa]),
            width: wa,
            lanes: &mut sc.lanes_a,
            out: &mut sc.a,
        };
        let b = FkSide {
            fk: &fk_b,
            values: Rows::Slice(&mb.values()[b0 * wb..(b1 + 1) * wb]),
            width: wb,
            lanes: &mut sc.lanes_b,
            out: &mut sc.b,
        };
        // At the same rate B's frame `f` is A's: the rotations with FK.
        let n = if same_rate { f1 - f0 } else { 0 };
        let rotations_done = plan.positions_rotations(a, b, n, &mut sc.work);
        let run = RunIn {
            f0,
            at: &at[f0..f1],
            a: &sc.a,
            b: &sc.b,
            b0,
            nfb,
            mpu,
            rows_a: (ma.values(), 0),
            rows_b: (mb.values(), 0),
            widths,
            rotations_done,
        };
        plan.measure(&run, out, &mut sc.work)
    };
    #[cfg(feature = "parallel")]
    let parts: Vec<Sums> = {
        use rayon::prelude::*;
        per_frame
            .par_chunks_mut(RUN)
            .enumerate()
            .map_init(scratch, |sc, x| measure(x, sc))
            .collect()
    };
    #[cfg(not(feature = "parallel"))]
    let parts: Vec<Sums> = {
        let mut sc = scratch();
        per_frame.chunks_mut(RUN).enumerate().map(|x| measure(x, &mut sc)).collect()
    };
    let mut sums = Sums::new(plan.pairs.len());
    for part in &parts {
        sums.add(part);
    }
    Ok(plan.finish((a.skeleton(), b.skeleton()), frames, fa, &sums, per_frame, o.worst, notes))
}

/// The note of clips of different lengths.
fn lengths_note(na: usize, nb: usize, frames: usize) -> String {
    format!("lengths differ ({na} and {nb} frames): the first {frames} frames of each compared")
}

/// What [`diff_stream`] found.
#[derive(Clone, Debug, PartialEq)]
pub enum Streamed {
    /// The diff: the same as [`diff`] of the whole clips.
    Done(Box<Diff>),
    /// The unit of a clip guessed from its first frames was not the guess
    /// from all of them: the stream must run again, over new readers, with
    /// these metres per unit (A's, B's) given.
    Units(f64, f64),
    /// The stream cannot give [`diff`]'s answer, for the reason given: the
    /// caller parses the whole clips and calls [`diff`] (which also gives
    /// the errors, in its order).
    Whole(&'static str),
}

/// Values per batch of frames of [`diff_stream`] (of the clip with more
/// channels), rounded to whole runs.
const STREAM_VALUES: usize = 512 * 1024;

/// [`diff`] of two clips read a batch of frames at a time from `ra` and
/// `rb`, both at once and while the frames before are measured, all on
/// rayon's pool, in memory independent of their length: per frame only
/// its MPJPE and each clip's figure size are kept. The runs of frames and
/// the order of every sum are [`diff`]'s, so the result is the same.
///
/// `units` are the metres per unit of A and of B when known (the second
/// pass after [`Streamed::Units`]); else [`DiffOptions::metres_per_unit`];
/// else each clip's unit is guessed from its first batch of frames, and
/// checked at the end against the guess from every frame
/// ([`crate::units::UnitGuess::of_bvh`]'s). `consumed(a, b)` is told, as
/// the reads of each batch after the first start (on the thread that reads
/// A, beside the other's work), how many input bytes each reader will not
/// look at again (a caller may release a mapped file's pages behind them).
///
/// Clips of different frame rates, without channels or frames, or whose
/// joint pairs fail are [`Streamed::Whole`], and so is a clip its reader
/// warns about (read leniently): the whole clips' parse gives the
/// warnings to the caller, and the diff.
///
/// # Errors
/// A reader's error (a bad frame).
pub fn diff_stream<RA: FrameSource + Send, RB: FrameSource + Send>(
    ra: FrameReader<RA>,
    rb: FrameReader<RB>,
    o: &DiffOptions,
    units: Option<(f64, f64)>,
    consumed: impl FnMut(usize, usize) + Send,
) -> Result<Streamed> {
    diff_stream_in(ra, rb, o, units, consumed, STREAM_VALUES)
}

/// [`diff_stream`] in batches of about `values` values (at least two runs).
fn diff_stream_in<RA: FrameSource + Send, RB: FrameSource + Send>(
    mut ra: FrameReader<RA>,
    mut rb: FrameReader<RB>,
    o: &DiffOptions,
    units: Option<(f64, f64)>,
    mut consumed: impl FnMut(usize, usize) + Send,
    values: usize,
) -> Result<Streamed> {
    let (sa, sb) = (ra.skeleton().clone(), rb.skeleton().clone());
    let mode = o.position_channels;
    let frame_time = ra.frame_time();
    if !same_rate(frame_time, rb.frame_time()) {
        return Ok(Streamed::Whole("the frame rates differ"));
    }
    let warned = |ra: &FrameReader<RA>, rb: &FrameReader<RB>| {
        !ra.warnings().is_empty() || !rb.warnings().is_empty()
    };
    if warned(&ra, &rb) {
        return Ok(Streamed::Whole("a reader warned"));
    }
    let (fk_a, fk_b) = (Kinematics::new(&sa, mode), Kinematics::new(&sb, mode));
    let (wa, wb) = (sa.n_channels(), sb.n_channels());
    if wa == 0 || wb == 0 || fk_a.is_empty() || fk_b.is_empty() {
        return Ok(Streamed::Whole("a clip has no channels"));
    }
    let mut notes = Vec::new();
    let (nja, njb) = (fk_a.len(), fk_b.len());
    let Ok(plan) = Plan::new(&sa, &sb, o.pairs.as_deref(), (nja, njb), &mut notes) else {
        return Ok(Streamed::Whole("the joint pairs fail"));
    };
    let np = plan.pairs.len();
    let per_batch = RUN * (values / (RUN * wa.max(wb))).max(2);
    // A run's buffers, one set per run of a batch, kept from batch to batch.
    let mut scratch: Vec<Mutex<Scratch>> = (0..per_batch / RUN)
        .map(|_| Scratch {
            lanes_a: fk_a.lanes_scratch(),
            lanes_b: fk_b.lanes_scratch(),
            a: Vec::new(),
            b: Vec::new(),
            at: Vec::new(),
            copy_a: Vec::new(),
            copy_b: Vec::new(),
            work: Work::default(),
            rotations_done: false,
        })
        .map(Mutex::new)
        .collect();
    // Run `i` of the batch from frame `g`, `ka` frames of A in `ca` and
    // `kb` of B in `cb` (from frame `g` on): the world positions of its
    // frames of each clip (kept in `sc` for `measure`) and their sizes.
    let positions = |sc: &mut Scratch,
                     i: usize,
                     g: usize,
                     (ca, ka): (&Windows, usize),
                     (cb, kb): (&Windows, usize)|
     -> RunOut {
        let s = i * RUN;
        let (na, nb) = (ka.saturating_sub(s).min(RUN), kb.saturating_sub(s).min(RUN));
        let Scratch { lanes_a, lanes_b, a, b, copy_a, copy_b, work, rotations_done, .. } = sc;
        a.resize(na * nja, DVec3::ZERO);
        b.resize(nb * njb, DVec3::ZERO);
        let n = na.min(nb);
        *rotations_done = plan.positions_rotations(
            FkSide {
                fk: &fk_a,
                values: Rows::Windows(ca, g + s, copy_a),
                width: wa,
                lanes: lanes_a,
                out: a,
            },
            FkSide {
                fk: &fk_b,
                values: Rows::Windows(cb, g + s, copy_b),
                width: wb,
                lanes: lanes_b,
                out: b,
            },
            n,
            work,
        );
        let sizes_a = a.chunks_exact(nja).map(pose_size).collect();
        let sizes_b = b.chunks_exact(njb).map(pose_size).collect();
        RunOut { sums: None, sizes_a, sizes_b, per_frame: Vec::new() }
    };
    // The measure of the frames both clips have of run `i` (`positions`
    // done) into its `out`, with metres per unit `mpu`.
    let measure =
        |sc: &mut Scratch, i: usize, g: usize, kb: usize, mpu: (f64, f64), out: &mut RunOut| {
            let Scratch { a, b, at, work, rotations_done, .. } = sc;
            let n = (a.len() / nja).min(b.len() / njb);
            out.per_frame = vec![0.0; n];
            if n == 0 {
                return;
            }
            let s = i * RUN;
            at.clear();
            at.extend((g + s..g + s + n).map(|f| f as f64));
            let r = RunIn {
                f0: g + s,
                at,
                a,
                b,
                b0: g + s,
                // Every `at` is a whole frame that B has.
                nfb: g + kb,
                mpu,
                // Read only at another rate, which the stream leaves.
                rows_a: (&[], g),
                rows_b: (&[], g),
                widths: (wa, wb),
                rotations_done: *rotations_done,
            };
            out.sums = Some(plan.measure(&r, &mut out.per_frame, work));
        };
    let stream = || -> Result<Streamed> {
        // Each clip's windows of frames, the buffers of windows left behind
        // (for the reader to fill again) and the windows just read.
        let (mut ca, mut cb) = (Windows::default(), Windows::default());
        let (mut spare_a, mut spare_b) = (Vec::new(), Vec::new());
        let (mut got_a, mut got_b) = (Vec::new(), Vec::new());
        let (ea, eb) = super::join(
            || read_until(&mut ra, 0, per_batch, &mut spare_a, &mut got_a),
            || read_until(&mut rb, 0, per_batch, &mut spare_b, &mut got_b),
        );
        let (mut ended_a, mut ended_b) = (ea?.0, eb?.0);
        ca.take(&mut got_a);
        cb.take(&mut got_b);
        let (mut ka, mut kb) = (ca.end().min(per_batch), cb.end().min(per_batch));
        // Each clip's unit: given, or guessed from its first batch (after
        // its positions, from their sizes).
        let mut mpu = units.or(o.metres_per_unit.map(|m| (m, m)));
        let (mut sizes_a, mut sizes_b) = (Vec::new(), Vec::new());
        let mut per_frame = Vec::new();
        let mut sums = Sums::new(np);
        let mut g = 0;
        while ka > 0 || kb > 0 {
            let runs = ka.max(kb).div_ceil(RUN);
            // The next batch's frames are read while this one is measured,
            // both on the pool's threads ([`Share::work`]): each takes the
            // batch's runs one at a time from a shared count as long as one
            // is left to start, then reads windows of a clip the other is
            // not reading until both hold frame `until` (or end), then, while
            // the other still works, reads on (up to a batch more): no
            // thread waits for another's last run or read more than a
            // window. (A's thread first releases the input behind the
            // readers.)
            let until = g + 2 * per_batch;
            let ahead = until + per_batch;
            let behind = (ra.bytes_consumed(), rb.bytes_consumed());
            let each = |i: usize| -> (usize, RunOut) {
                let mut sc = scratch[i].lock().unwrap_or_else(PoisonError::into_inner);
                let mut out = positions(&mut sc, i, g, (&ca, ka), (&cb, kb));
                if let Some(m) = mpu {
                    measure(&mut sc, i, g, kb, m, &mut out);
                }
                (i, out)
            };
            let clip_a = Mutex::new(Clip {
                rdr: &mut ra,
                spare: &mut spare_a,
                got: &mut got_a,
                have: ca.end(),
                ended: ended_a,
                failed: None,
            });
            let clip_b = Mutex::new(Clip {
                rdr: &mut rb,
                spare: &mut spare_b,
                got: &mut got_b,
                have: cb.end(),
                ended: ended_b,
                failed: None,
            });
            let share = Share {
                runs,
                next: AtomicUsize::new(0),
                finished: AtomicUsize::new(0),
                each: &each,
                clips: (&clip_a, &clip_b),
                until,
                ahead,
            };
            // A worker per thread of the pool (at least two: a clip each
            // on one thread too, so that neither clip waits for the other's
            // reads).
            let (outs_a, outs_b) = super::join(
                || {
                    consumed(behind.0, behind.1);
                    share.work(0)
                },
                || each_worker(&share),
            );
            let (clip_a, clip_b) = (
                clip_a.into_inner().unwrap_or_else(PoisonError::into_inner),
                clip_b.into_inner().unwrap_or_else(PoisonError::into_inner),
            );
            // A read's error once the batch's runs are done.
            let next = (
                clip_a.failed.map_or(Ok(clip_a.ended), Err),
                clip_b.failed.map_or(Ok(clip_b.ended), Err),
            );
            let mut outs: Vec<(usize, RunOut)> =
                outs_a.into_iter().chain(outs_b.into_iter().flatten()).collect();
            outs.sort_unstable_by_key(|o| o.0);
            let mut outs: Vec<RunOut> = outs.into_iter().map(|o| o.1).collect();
            if mpu.is_none() {
                // The first batch: each clip's unit guessed from the sizes
                // of its frames in the batch, as `FrameSizes::guess` of
                // those frames guesses it (the rest pose's without
                // frames), then the batch's measure.
                let guess = |skel: &Skeleton, b: bool| {
                    let sizes: Vec<f64> = outs
                        .iter()
                        .flat_map(|o| if b { &o.sizes_b } else { &o.sizes_a })
                        .copied()
                        .collect();
                    if sizes.is_empty() {
                        FrameSizes::new(skel, mode).guess().metres_per_unit()
                    } else {
                        UnitGuess::of_pose_sizes(sizes).named(&Limbs::of(skel)).metres_per_unit()
                    }
                };
                let m = (guess(&sa, false), guess(&sb, true));
                let measured = each_run(&mut scratch[..runs], |sc, i| {
                    let mut out = RunOut::default();
                    measure(sc, i, g, kb, m, &mut out);
                    out
                });
                for (out, done) in outs.iter_mut().zip(measured) {
                    (out.sums, out.per_frame) = (done.sums, done.per_frame);
                }
                mpu = Some(m);
            }
            for out in outs {
                if let Some(part) = &out.sums {
                    sums.add(part);
                }
                sizes_a.extend(out.sizes_a);
                sizes_b.extend(out.sizes_b);
                per_frame.extend(out.per_frame);
            }
            g += per_batch;
            (ended_a, ended_b) = (next.0?, next.1?);
            ca.take(&mut got_a);
            cb.take(&mut got_b);
            ca.drop_before(g, &mut spare_a);
            cb.drop_before(g, &mut spare_b);
            ka = ca.end().saturating_sub(g).min(per_batch);
            kb = cb.end().saturating_sub(g).min(per_batch);
        }
        // (The last warnings, such as a frame count other than the one
        // declared, arrive at the end.)
        if warned(&ra, &rb) {
            return Ok(Streamed::Whole("a reader warned"));
        }
        let (na, nb) = (sizes_a.len(), sizes_b.len());
        // (Without frames no batch was measured, so no unit was guessed.)
        let (true, Some(mpu)) = (na > 0 && nb > 0, mpu) else {
            return Ok(Streamed::Whole("a clip has no frames"));
        };
        if units.is_none() && o.metres_per_unit.is_none() {
            let all = |sizes: Vec<f64>, skel: &Skeleton| {
                UnitGuess::of_pose_sizes(sizes).named(&Limbs::of(skel)).metres_per_unit()
            };
            let m = super::join(|| all(sizes_a, &sa), || all(sizes_b, &sb));
            if m.0.to_bits() != mpu.0.to_bits() || m.1.to_bits() != mpu.1.to_bits() {
                return Ok(Streamed::Units(m.0, m.1));
            }
        }
        let frames = na.min(nb);
        if na != nb {
            notes.push(lengths_note(na, nb, frames));
        }
        let fps = 1.0 / frame_time;
        let d = plan.finish((&sa, &sb), frames, fps, &sums, per_frame, o.worst, notes);
        Ok(Streamed::Done(Box::new(d)))
    };
    // The loop itself on a worker of the pool (as `edit::run::read_batches`).
    #[cfg(feature = "parallel")]
    {
        rayon::scope(|_| stream())
    }
    #[cfg(not(feature = "parallel"))]
    {
        stream()
    }
}

/// A thread's buffers in [`diff_stream`]: FK lanes, a run's positions of
/// each clip, B's frame at each frame of A, each clip's frames that span
/// two windows ([`Rows::Windows`]) and [`Plan::measure`]'s.
struct Scratch {
    lanes_a: FkLanes,
    lanes_b: FkLanes,
    a: Vec<DVec3>,
    b: Vec<DVec3>,
    at: Vec<f64>,
    copy_a: Vec<f64>,
    copy_b: Vec<f64>,
    work: Work,
    /// Whether [`Plan::positions_rotations`] measured the run's rotations.
    rotations_done: bool,
}

/// A clip's frames in [`diff_stream`] as its reader handed them out, a
/// window of input at a time ([`FrameReader::read_window`], which gives a
/// window's values without copying them): each buffer with its frame
/// count, in order, the first buffer's first frame being frame `first`.
#[derive(Default)]
struct Windows {
    bufs: std::collections::VecDeque<(Vec<f64>, usize)>,
    first: usize,
    /// Frames in `bufs`.
    held: usize,
}

impl Windows {
    /// The frame after the last one held.
    fn end(&self) -> usize {
        self.first + self.held
    }

    /// Appends the windows read (emptying `got`).
    fn take(&mut self, got: &mut Vec<(Vec<f64>, usize)>) {
        for (buf, k) in got.drain(..) {
            self.held += k;
            self.bufs.push_back((buf, k));
        }
    }

    /// Hands the buffers of windows wholly before frame `f` to `spare`.
    fn drop_before(&mut self, f: usize, spare: &mut Vec<Vec<f64>>) {
        while self.bufs.front().is_some_and(|&(_, k)| self.first + k <= f) {
            if let Some((buf, k)) = self.bufs.pop_front() {
                self.first += k;
                self.held -= k;
                spare.push(buf);
            }
        }
    }

    /// The values of `frames` (`width` per frame; frames held): where
    /// they lie in one window, read in place; else copied into `copy`.
    fn rows<'s>(
        &'s self,
        frames: std::ops::Range<usize>,
        width: usize,
        copy: &'s mut Vec<f64>,
    ) -> &'s [f64] {
        copy.clear();
        let mut at = self.first;
        for (buf, k) in &self.bufs {
            let (lo, hi) = (frames.start.max(at), frames.end.min(at + k));
            if lo < hi {
                let piece = &buf[(lo - at) * width..(hi - at) * width];
                if (lo, hi) == (frames.start, frames.end) {
                    return piece;
                }
                copy.extend_from_slice(piece);
            }
            at += k;
            if at >= frames.end {
                break;
            }
        }
        copy
    }
}

/// Frames a window buffer of [`read_until`] holds at least (but at a
/// clip's end): a reader that hands out few frames a window (a file whose
/// lines are frames, a small read buffer) tops it up.
const MIN_WINDOW: usize = 64;

/// Reads windows of frames from `rdr` (holding frames up to `have`) into
/// `got`, each into a buffer of `spare` when there is one, until frame
/// `until` is held or the clip ends; whether it ended, and the frames then
/// held.
///
/// # Errors
/// The reader's.
fn read_until<R: FrameSource>(
    rdr: &mut FrameReader<R>,
    mut have: usize,
    until: usize,
    spare: &mut Vec<Vec<f64>>,
    got: &mut Vec<(Vec<f64>, usize)>,
) -> Result<(bool, usize)> {
    while have < until {
        let mut buf = spare.pop().unwrap_or_default();
        buf.clear();
        let mut k = 0;
        let mut ended = false;
        while k < MIN_WINDOW {
            // Any number of frames: a whole window's are taken without a copy.
            let n = rdr.read_window(&mut buf, usize::MAX)?;
            if n == 0 {
                ended = true;
                break;
            }
            k += n;
        }
        if k > 0 {
            got.push((buf, k));
            have += k;
        } else {
            spare.push(buf);
        }
        if ended {
            return Ok((true, have));
        }
    }
    Ok((false, have))
}

/// A clip's reading in a batch of [`diff_stream`]: its reader, its spare
/// window buffers, the windows read, the frames held, whether it ended
/// and the error a read gave.
struct Clip<'r, R: FrameSource> {
    rdr: &'r mut FrameReader<R>,
    spare: &'r mut Vec<Vec<f64>>,
    got: &'r mut Vec<(Vec<f64>, usize)>,
    have: usize,
    ended: bool,
    failed: Option<crate::Error>,
}

impl<R: FrameSource> Clip<'_, R> {
    /// Whether it has frames to read before frame `to`.
    fn wants(&self, to: usize) -> bool {
        !self.ended && self.failed.is_none() && self.have < to
    }
}

/// Reads a window of `clip` when no other thread is reading it and it
/// has frames to read before frame `to`; whether it read (or another
/// thread is reading it, with `busy`).
fn try_window<R: FrameSource>(clip: &Mutex<Clip<'_, R>>, to: usize, busy: &mut bool) -> bool {
    let Ok(mut c) = clip.try_lock() else {
        *busy = true;
        return false;
    };
    if !c.wants(to) {
        return false;
    }
    let c = &mut *c;
    // One window (`have + 1`: at least a frame).
    match read_until(c.rdr, c.have, c.have + 1, c.spare, c.got) {
        Ok((ended, have)) => (c.ended, c.have) = (ended, have),
        Err(e) => c.failed = Some(e),
    }
    true
}

/// A batch of [`diff_stream`] shared by the threads: `each(i)` measures
/// run `i`; `next` is the next run not yet started, `finished` how many
/// are done; the clips' readings, which must hold frame `until` (or end)
/// when the batch is done, and may read on to `ahead`.
struct Share<'s, 'c, F, RA: FrameSource, RB: FrameSource> {
    runs: usize,
    next: AtomicUsize,
    finished: AtomicUsize,
    each: &'s F,
    clips: (&'s Mutex<Clip<'c, RA>>, &'s Mutex<Clip<'c, RB>>),
    until: usize,
    ahead: usize,
}

impl<F, RA, RB> Share<'_, '_, F, RA, RB>
where
    F: Fn(usize) -> (usize, RunOut) + Sync,
    RA: FrameSource + Send,
    RB: FrameSource + Send,
{
    /// Worker `k`'s share (even `k` first tries A, odd B): runs as long as
    /// one is left to start, then windows of a clip no other thread reads
    /// up to `until`, then, while another thread still works, windows on
    /// up to `ahead`, so that no thread waits for another's last run or
    /// read more than a window. The runs it measured, with their indices.
    fn work(&self, k: usize) -> Vec<(usize, RunOut)> {
        let mut outs = Vec::new();
        let (a, b) = self.clips;
        let window = |to: usize, busy: &mut bool| match k % 2 {
            0 => try_window(a, to, busy) || try_window(b, to, busy),
            _ => try_window(b, to, busy) || try_window(a, to, busy),
        };
        loop {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            if i < self.runs {
                outs.push((self.each)(i));
                self.finished.fetch_add(1, Ordering::Release);
                continue;
            }
            let mut busy = self.finished.load(Ordering::Acquire) < self.runs;
            if window(self.until, &mut busy) || (busy && window(self.ahead, &mut busy)) {
                continue;
            }
            break;
        }
        outs
    }
}

/// [`Share::work`] of workers 1 on: one, and with the `parallel` feature
/// one more per thread of rayon's pool past the second, on the pool.
fn each_worker<F, RA, RB>(share: &Share<'_, '_, F, RA, RB>) -> Vec<Vec<(usize, RunOut)>>
where
    F: Fn(usize) -> (usize, RunOut) + Sync,
    RA: FrameSource + Send,
    RB: FrameSource + Send,
{
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        let workers = rayon::current_num_threads().max(2);
        (1..workers).into_par_iter().map(|k| share.work(k)).collect()
    }
    #[cfg(not(feature = "parallel"))]
    {
        vec![share.work(1)]
    }
}

/// What a run of [`diff_stream`] gives: its sums (when it compares
/// frames), each of its frames' size in A and in B, and the MPJPE of each
/// frame compared.
#[derive(Default)]
struct RunOut {
    sums: Option<Sums>,
    sizes_a: Vec<f64>,
    sizes_b: Vec<f64>,
    per_frame: Vec<f64>,
}

/// `f(scratch, i)` of each run `i` of a batch, on rayon's pool (with the
/// `parallel` feature), in run order.
fn each_run<T: Send>(
    scratch: &mut [Mutex<Scratch>],
    f: impl Fn(&mut Scratch, usize) -> T + Sync + Send,
) -> Vec<T> {
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        scratch
            .par_iter_mut()
            .enumerate()
            .map(|(i, s)| f(s.get_mut().unwrap_or_else(PoisonError::into_inner), i))
            .collect()
    }
    #[cfg(not(feature = "parallel"))]
    {
        scratch
            .iter_mut()
            .enumerate()
            .map(|(i, s)| f(s.get_mut().unwrap_or_else(PoisonError::into_inner), i))
            .collect()
    }
}

/// Metres per file unit of `bvh`: `given`, else its unit guess (the guess
/// of [`world_positions`], one size per frame, no positions kept).
fn metres_per_unit(bvh: &Bvh, mode: PositionChannels, given: Option<f64>) -> f64 {
    if let Some(m) = given {
        return m;
    }
    let m = bvh.motion();
    let fk_empty = Kinematics::new(bvh.skeleton(), mode).is_empty();
    if m.n_frames() == 0 || m.n_channels() == 0 || fk_empty {
        return world_positions(bvh, mode, None, false).mpu;
    }
    UnitGuess::of_bvh(bvh, mode).metres_per_unit()
}

/// Frames per call of [`Kinematics::positions_many`] in [`diff`].
const FK_RUN: usize = 64;

/// A similarity transform: `scale * rotation * x + translation`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Similarity {
    /// The rotation.
    pub rotation: DMat3,
    /// The uniform scale.
    pub scale: f64,
    /// The translation.
    pub translation: DVec3,
}

impl Similarity {
    /// The transform of `x`.
    pub fn apply(&self, x: DVec3) -> DVec3 {
        self.scale * (self.rotation * x) + self.translation
    }
}

/// The similarity transform (proper rotation, uniform scale, translation)
/// that brings the points `x` closest to `y` in the least-squares sense
/// (Umeyama 1991). The rotation comes from Horn's quaternion method (the
/// eigenvector of the largest eigenvalue of a symmetric 4×4 matrix: by
/// Newton's method on its characteristic polynomial and inverse iteration,
/// by Jacobi rotations where that cannot vouch for its
/// answer); the scale is that eigenvalue over the spread of `x`.
///
/// # Panics
/// When `x` and `y` differ in length.
pub fn procrustes(x: &[DVec3], y: &[DVec3]) -> Similarity {
    assert_eq!(x.len(), y.len(), "procrustes: point counts differ");
    fit_points(x.len(), |p| x[p], |p| y[p])
}

/// [`procrustes`] of the `len` points `x(p)` and `y(p)`.
fn fit_points(len: usize, x: impl Fn(usize) -> DVec3, y: impl Fn(usize) -> DVec3) -> Similarity {
    let mut input = FitInput::of(len, x, y);
    if let Some(fit) = input.similarity_fast() {
        return fit;
    }
    let (values, vectors) = jacobi4(&mut input.n);
    input.similarity(values, vectors)
}

/// What a Procrustes fit needs besides the eigenproblem: the centroids,
/// the spread of `x`, and Horn's symmetric 4×4 matrix `n` (its
/// eigenvector of the largest eigenvalue is the rotation).
struct FitInput {
    mx: DVec3,
    my: DVec3,
    spread: f64,
    /// The spread of `y` about its centroid.
    spread_y: f64,
    /// The cross-covariance `Σ (x - mx)(y - my)ᵀ`, by rows.
    s: [[f64; 3]; 3],
    n: [[f64; 4]; 4],
}

impl FitInput {
    /// Of the `len` points `x(p)` and `y(p)`.
    #[inline]
    fn of(len: usize, x: impl Fn(usize) -> DVec3, y: impl Fn(usize) -> DVec3) -> FitInput {
        let count = len.max(1) as f64;
        let mx = (0..len).map(&x).fold(DVec3::ZERO, |a, b| a + b) / count;
        let my = (0..len).map(&y).fold(DVec3::ZERO, |a, b| a + b) / count;
        let mut s = [[0.0f64; 3]; 3];
        let (mut spread, mut spread_y) = (0.0, 0.0);
        for p in 0..len {
            let (a, b) = (x(p) - mx, y(p) - my);
            spread += a.length_squared();
            spread_y += b.length_squared();
            let (a, b) = (a.to_array(), b.to_array());
            for (r, ar) in s.iter_mut().zip(a) {
                for (c, bc) in r.iter_mut().zip(b) {
                    *c += ar * bc;
                }
            }
        }
        FitInput::of_sums(mx, my, spread, spread_y, s)
    }

    /// Of lane `l`'s sums of [`lanes::fit_sums`] (the same as
    /// [`FitInput::of`] of that frame's points).
    fn of_lane(sums: &lanes::FitSums, l: usize) -> FitInput {
        let v = |c: &[lanes::F4; 3]| DVec3::new(c[0][l], c[1][l], c[2][l]);
        let s = sums.s.map(|row| row.map(|c| c[l]));
        FitInput::of_sums(v(&sums.mx), v(&sums.my), sums.spread[l], sums.spread_y[l], s)
    }

    /// Of the centroids, the spreads and the cross-covariance: Horn's
    /// matrix.
    #[inline]
    fn of_sums(mx: DVec3, my: DVec3, spread: f64, spread_y: f64, s: [[f64; 3]; 3]) -> FitInput {
        let [[sxx, sxy, sxz], [syx, syy, syz], [szx, szy, szz]] = s;
        let n = [
            [sxx + syy + szz, syz - szy, szx - sxz, sxy - syx],
            [syz - szy, sxx - syy - szz, sxy + syx, szx + sxz],
            [szx - sxz, sxy + syx, -sxx + syy - szz, syz + szy],
            [sxy - syx, szx + sxz, syz + szy, -sxx - syy + szz],
        ];
        FitInput { mx, my, spread, spread_y, s, n }
    }

    /// The fit from the largest eigenvalue of `n` and its eigenvector
    /// without a full eigendecomposition ([`horn::largest`]); `None` where
    /// that cannot vouch for its answer (degenerate point sets, non-finite
    /// values), which [`jacobi4`] then gives.
    fn similarity_fast(&self) -> Option<Similarity> {
        let (value, v) = horn::largest(&self.n, &self.s, self.spread, self.spread_y)?;
        Some(self.similarity_of(value, v))
    }

    /// The fit from the eigenvalues and eigenvectors (columns) of `n`.
    fn similarity(&self, values: [f64; 4], vectors: [[f64; 4]; 4]) -> Similarity {
        let best = (0..4).max_by(|&i, &j| values[i].total_cmp(&values[j])).unwrap_or(0);
        self.similarity_of(values[best], vectors.map(|row| row[best]))
    }

    /// The fit from the largest eigenvalue of `n` and its eigenvector
    /// `v` (`w, x, y, z`).
    fn similarity_of(&self, value: f64, v: [f64; 4]) -> Similarity {
        let FitInput { mx, my, spread, .. } = *self;
        let q = DQuat::from_xyzw(v[1], v[2], v[3], v[0]).normalize();
        let rotation = DMat3::from_quat(q);
        let scale = if spread > 0.0 { value / spread } else { 0.0 };
        Similarity { rotation, scale, translation: my - scale * (rotation * mx) }
    }
}

/// Eigenvalues and eigenvectors (columns) of a symmetric 4×4 matrix by
/// cyclic Jacobi rotations.
fn jacobi4(a: &mut [[f64; 4]; 4]) -> ([f64; 4], [[f64; 4]; 4]) {
    let mut v = [[0.0; 4]; 4];
    for (i, row) in v.iter_mut().enumerate() {
        row[i] = 1.0;
    }
    for _ in 0..64 {
        let off: f64 = (0..4)
            .flat_map(|i| (0..4).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| a[i][j] * a[i][j])
            .sum();
        let diag: f64 = (0..4).map(|i| a[i][i] * a[i][i]).sum();
        if off <= 1e-32 * diag.max(f64::MIN_POSITIVE) || off == 0.0 {
            break;
        }
        for p in 0..3 {
            for q in p + 1..4 {
                if a[p][q] == 0.0 {
                    continue;
                }
                let theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let t = if theta == 0.0 { 1.0 } else { t };
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for row in a.iter_mut() {
                    let (akp, akq) = (row[p], row[q]);
                    row[p] = c * akp - s * akq;
                    row[q] = s * akp + c * akq;
                }
                let (rp, rq) = (a[p], a[q]);
                for k in 0..4 {
                    a[p][k] = c * rp[k] - s * rq[k];
                    a[q][k] = s * rp[k] + c * rq[k];
                }
                for row in v.iter_mut() {
                    let (vkp, vkq) = (row[p], row[q]);
                    row[p] = c * vkp - s * vkq;
                    row[q] = s * vkp + c * vkq;
                }
            }
        }
    }
    ([a[0][0], a[1][1], a[2][2], a[3][3]], v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ReadOptions;

    /// A figure of six joints (no name the unit guess knows), each with
    /// position and rotation channels, `n` frames at `fps`, moving with
    /// `phase`; its lengths (the position channels) times `scale.1` from
    /// frame `scale.0` on.
    fn clip(n: usize, fps: f64, phase: f64, scale: (usize, f64)) -> String {
        const OFFSETS: [[f64; 3]; 6] = [
            [0.0, 90.0, 0.0],
            [0.0, 10.0, 0.0],
            [15.0, 30.0, 0.0],
            [9.0, 0.0, 0.0],
            [0.0, -42.0, 0.0],
            [-9.0, 0.0, 0.0],
        ];
        let ch = "CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation";
        let mut s = format!(
            "HIERARCHY\nROOT J0\n{{\nOFFSET 0 0 0\n{ch}\n\
             JOINT J1\n{{\nOFFSET 0 10 0\n{ch}\n\
             JOINT J2\n{{\nOFFSET 15 30 0\n{ch}\nEnd Site\n{{\nOFFSET 25 0 0\n}}\n}}\n}}\n\
             JOINT J3\n{{\nOFFSET 9 0 0\n{ch}\n\
             JOINT J4\n{{\nOFFSET 0 -42 0\n{ch}\nEnd Site\n{{\nOFFSET 0 -42 0\n}}\n}}\n}}\n\
             JOINT J5\n{{\nOFFSET -9 0 0\n{ch}\nEnd Site\n{{\nOFFSET 0 -84 0\n}}\n}}\n}}\n"
        );
        s += &format!("MOTION\nFrames: {n}\nFrame Time: {}\n", 1.0 / fps);
        for f in 0..n {
            let t = f as f64 * 0.05 + phase;
            let k = if f >= scale.0 { scale.1 } else { 1.0 };
            let mut row = Vec::new();
            for (j, o) in OFFSETS.iter().enumerate() {
                let a = (t * (1.0 + j as f64 * 0.3)).sin();
                let drift =
                    if j == 0 { [3.0 * t.sin(), t.cos(), 0.5 * f as f64] } else { [0.0; 3] };
                row.extend((0..3).map(|i| k * (o[i] + drift[i])));
                row.extend([20.0 * a, 35.0 * (t + j as f64).cos(), 5.0 * a * a]);
            }
            let row: Vec<String> = row.iter().map(|v| format!("{v:.6}")).collect();
            s += &row.join(" ");
            s.push('\n');
        }
        s
    }

    /// The streamed diff in batches of two runs, a second pass when it
    /// names the units.
    fn streamed(a: &str, b: &str, o: &DiffOptions) -> Streamed {
        let read = ReadOptions::new();
        let run = |units| {
            let ra = read.frame_reader_slice(a.as_bytes()).unwrap();
            let rb = read.frame_reader_slice(b.as_bytes()).unwrap();
            diff_stream_in(ra, rb, o, units, |_, _| {}, 1).unwrap()
        };
        match run(None) {
            Streamed::Units(ma, mb) => match run(Some((ma, mb))) {
                Streamed::Units(..) => panic!("a second pass with the units named them again"),
                s => s,
            },
            s => s,
        }
    }

    /// One or two joint pairs make PA-MPJPE (and with one, the root-aligned
    /// figure) 0 whatever the motion: a note says so (a human against an
    /// elephant sharing only "Hips" read "PA-MPJPE 0.000000 m" without a
    /// word).
    #[test]
    fn too_few_pairs_for_the_aligned_figures_have_a_note() {
        let (a, b) = (clip(30, 30.0, 0.0, (0, 1.0)), clip(30, 30.0, 0.7, (0, 1.0)));
        let (a, b) = (Bvh::parse(&a).unwrap(), Bvh::parse(&b).unwrap());
        let run = |pairs: Vec<(usize, usize)>| {
            let o = DiffOptions { pairs: Some(pairs), ..DiffOptions::default() };
            diff(&a, &b, &o).unwrap()
        };
        let one = run(vec![(0, 0)]);
        assert_eq!(
            one.notes[0],
            "only 1 joint pair: root-aligned MPJPE and PA-MPJPE are 0 by construction"
        );
        let two = run(vec![(0, 0), (2, 2)]);
        assert!(
            two.notes[0].starts_with("only 2 joint pairs: PA-MPJPE is 0 by construction"),
            "{:?}",
            two.notes
        );
        assert!(run(vec![(0, 0), (2, 2), (4, 4)]).notes.iter().all(|n| !n.starts_with("only")));
        assert!(diff(&a, &b, &DiffOptions::default()).unwrap().notes.is_empty());
    }

    /// Where the lengths differ, the note says what was compared and what
    /// was left out, whichever clip is the longer (a longer B at another
    /// rate had no note; a longer B at the same rate read "the first 600
    /// frames of A compared", all of A).
    #[test]
    fn the_note_of_different_lengths_says_what_is_left_out() {
        let notes = |a: &str, b: &str| {
            diff(&Bvh::parse(a).unwrap(), &Bvh::parse(b).unwrap(), &DiffOptions::default())
                .unwrap()
                .notes
        };
        let c = |n, fps| clip(n, fps, 0.0, (0, 1.0));
        let has = |notes: Vec<String>, text: &str| {
            assert!(notes.iter().any(|n| n == text), "{notes:?}");
        };
        has(
            notes(&c(60, 30.0), &c(90, 30.0)),
            "lengths differ (60 and 90 frames): the first 60 frames of each compared",
        );
        has(
            notes(&c(90, 30.0), &c(60, 30.0)),
            "lengths differ (90 and 60 frames): the first 60 frames of each compared",
        );
        // B at 60 fps: 4 s against A's 2 s; frames 0..=118 of B compared.
        has(
            notes(&c(60, 30.0), &c(241, 60.0)),
            "durations differ (2.000 and 4.017 s): A compared with B's first 119 frames, its last 122 left out",
        );
        has(
            notes(&c(90, 30.0), &c(61, 60.0)),
            "durations differ (3.000 and 1.017 s): the first 31 frames of A compared",
        );
        // As many frames at another rate: B is the shorter.
        has(
            notes(&c(2, 30.0), &c(2, 60.0)),
            "durations differ (0.067 and 0.033 s): the first 1 frames of A compared",
        );
        // The same span at another rate: nothing left out, no note of it.
        let n = notes(&c(61, 30.0), &c(121, 60.0));
        assert!(!n.iter().any(|n| n.starts_with("durations") || n.starts_with("lengths")), "{n:?}");
    }

    #[test]
    fn the_stream_gives_the_whole_clips_diff() {
        let o = DiffOptions::default();
        let cm = DiffOptions { metres_per_unit: Some(0.01), worst: 7, ..Default::default() };
        let cases = [
            // Several batches, the last one short, on both sides.
            (clip(2600, 30.0, 0.0, (0, 1.0)), clip(2600, 30.0, 0.4, (0, 1.0)), &o),
            // Lengths differ, either way, in another run than the last.
            (clip(2600, 30.0, 0.0, (0, 1.0)), clip(1500, 30.0, 0.4, (0, 1.0)), &o),
            (clip(700, 30.0, 0.0, (0, 1.0)), clip(2100, 30.0, 0.4, (0, 1.0)), &cm),
            // B's first batch in metres, the rest (and so its unit) in
            // centimetres: the unit guessed from the first batch fails and
            // a second pass runs with the units found.
            (clip(2600, 30.0, 0.0, (0, 1.0)), clip(2600, 30.0, 0.0, (1024, 0.01)), &o),
            (clip(2600, 30.0, 0.0, (0, 0.01)), clip(2600, 30.0, 0.0, (700, 100.0)), &o),
            // Identical clips, one frame.
            (clip(1, 30.0, 0.0, (0, 1.0)), clip(1, 30.0, 0.0, (0, 1.0)), &o),
        ];
        for (k, (a, b, o)) in cases.iter().enumerate() {
            let (ba, bb) = (Bvh::parse(a).unwrap(), Bvh::parse(b).unwrap());
            let whole = diff(&ba, &bb, o).unwrap();
            assert!(whole.mpjpe > 0.0 || k == 5, "case {k}: the clips differ");
            match streamed(a, b, o) {
                Streamed::Done(d) => assert_eq!(*d, whole, "case {k}"),
                s => panic!("case {k}: {s:?}"),
            }
        }
        // The fourth case's first pass: the units of every frame.
        let read = ReadOptions::new();
        let (a, b) = (clip(2600, 30.0, 0.0, (0, 1.0)), clip(2600, 30.0, 0.0, (1024, 0.01)));
        let ra = read.frame_reader_slice(a.as_bytes()).unwrap();
        let rb = read.frame_reader_slice(b.as_bytes()).unwrap();
        let first = diff_stream_in(ra, rb, &o, None, |_, _| {}, 1).unwrap();
        // A in centimetres throughout; B guessed so from its first batch,
        // and otherwise from all its frames.
        assert!(matches!(first, Streamed::Units(ma, mb) if ma == 0.01 && mb != 0.01), "{first:?}");
    }

    #[test]
    fn the_stream_gives_the_whole_clips_diff_from_windows_that_split_runs() {
        // Read from `Read` sources, a window of input is a few hundred
        // frames of these clips: the runs and batches start inside
        // windows, and runs and FK's groups of frames span two of them.
        let (a, b) = (clip(5000, 30.0, 0.0, (0, 1.0)), clip(4700, 30.0, 0.4, (0, 1.0)));
        let read = ReadOptions::new();
        let mut rdr = read.frame_reader(a.as_bytes()).unwrap();
        let (mut buf, mut windows) = (Vec::new(), Vec::new());
        loop {
            buf.clear();
            match rdr.read_window(&mut buf, usize::MAX).unwrap() {
                0 => break,
                k => windows.push(k),
            }
        }
        assert!(windows.len() > 4, "{windows:?}");
        assert!(windows.iter().any(|k| k % RUN != 0 && *k > MIN_WINDOW), "{windows:?}");
        for o in [
            DiffOptions::default(),
            DiffOptions { metres_per_unit: Some(0.01), worst: 3, ..Default::default() },
        ] {
            let whole = diff(&Bvh::parse(&a).unwrap(), &Bvh::parse(&b).unwrap(), &o).unwrap();
            assert!(whole.mpjpe > 0.0 && whole.rotation_deg.is_some());
            for values in [1, 3 * RUN * 36] {
                let ra = read.frame_reader(a.as_bytes()).unwrap();
                let rb = read.frame_reader(b.as_bytes()).unwrap();
                match diff_stream_in(ra, rb, &o, None, |_, _| {}, values).unwrap() {
                    Streamed::Done(d) => assert_eq!(*d, whole, "{values}"),
                    s => panic!("{values}: {s:?}"),
                }
            }
        }
    }

    #[test]
    fn the_stream_leaves_other_rates_and_bad_frames_to_the_whole_clips() {
        let read = ReadOptions::new();
        let (a, b) = (clip(600, 30.0, 0.0, (0, 1.0)), clip(1200, 60.0, 0.0, (0, 1.0)));
        let ra = read.frame_reader_slice(a.as_bytes()).unwrap();
        let rb = read.frame_reader_slice(b.as_bytes()).unwrap();
        let s = diff_stream(ra, rb, &DiffOptions::default(), None, |_, _| {}).unwrap();
        assert_eq!(s, Streamed::Whole("the frame rates differ"));
        // A bad value in B's last batch: the reader's error, not a diff.
        let bad = clip(1300, 30.0, 0.0, (0, 1.0));
        let bad = {
            let mut lines: Vec<&str> = bad.lines().collect();
            let at = lines.len() - 3;
            let broken = format!("{} nope", lines[at]);
            lines[at] = &broken;
            lines.join("\n")
        };
        let ra = read.frame_reader_slice(a.as_bytes()).unwrap();
        let rb = read.frame_reader_slice(bad.as_bytes()).unwrap();
        assert!(diff_stream_in(ra, rb, &DiffOptions::default(), None, |_, _| {}, 1).is_err());
        assert!(Bvh::parse(&bad).is_err());
        // A clip without frames, either way round (no unit is guessed).
        let none = clip(0, 30.0, 0.0, (0, 1.0));
        for (x, y) in [(&a, &none), (&none, &a), (&none, &none)] {
            let ra = read.frame_reader_slice(x.as_bytes()).unwrap();
            let rb = read.frame_reader_slice(y.as_bytes()).unwrap();
            let s = diff_stream_in(ra, rb, &DiffOptions::default(), None, |_, _| {}, 1).unwrap();
            assert_eq!(s, Streamed::Whole("a clip has no frames"));
        }
    }

    #[test]
    fn procrustes_recovers_a_similarity() {
        let x: Vec<DVec3> = (0..7)
            .map(|i| {
                let i = f64::from(i);
                DVec3::new(i.sin() * 3.0, (i * 0.7).cos(), i * 0.3 - 1.0)
            })
            .collect();
        let r =
            DMat3::from_quat(DQuat::from_axis_angle(DVec3::new(1.0, 2.0, -0.5).normalize(), 2.4));
        let t = DVec3::new(0.3, -5.0, 2.0);
        let y: Vec<DVec3> = x.iter().map(|p| 1.7 * (r * *p) + t).collect();
        let fit = procrustes(&x, &y);
        assert!((fit.scale - 1.7).abs() < 1e-12, "{}", fit.scale);
        assert!((fit.translation - t).length() < 1e-12);
        for (a, b) in x.iter().zip(&y) {
            assert!((fit.apply(*a) - *b).length() < 1e-12);
        }
        assert!((fit.rotation.determinant() - 1.0).abs() < 1e-12);
    }

    /// Point sets: `k` points of a spread figure, turned, scaled, moved and
    /// bent by `noise`; mirrored where `mirror`.
    fn point_sets(seed: u64, k: usize, noise: f64, mirror: bool) -> (Vec<DVec3>, Vec<DVec3>) {
        let mut s = seed.wrapping_mul(2862933555777941757).wrapping_add(3037000493);
        let mut u = || {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        let x: Vec<DVec3> = (0..k).map(|_| DVec3::new(0.6 * u(), 1.8 * u(), 0.3 * u())).collect();
        let axis = DVec3::new(u(), u(), u()).normalize();
        let r = DMat3::from_axis_angle(axis, 6.0 * u());
        let t = DVec3::new(u(), u(), u()) * 4.0;
        let y = x
            .iter()
            .map(|p| {
                let p = if mirror { DVec3::new(-p.x, p.y, p.z) } else { *p };
                1.1 * (r * p) + t + DVec3::new(u(), u(), u()) * noise
            })
            .collect();
        (x, y)
    }

    /// The fit by Jacobi, as before the fast path.
    fn jacobi_fit(x: &[DVec3], y: &[DVec3]) -> Similarity {
        let mut input = FitInput::of(x.len(), |p| x[p], |p| y[p]);
        let (values, vectors) = jacobi4(&mut input.n);
        input.similarity(values, vectors)
    }

    /// The mean residual of `fit`.
    fn mean_residual(fit: &Similarity, x: &[DVec3], y: &[DVec3]) -> f64 {
        x.iter().zip(y).map(|(a, b)| (fit.apply(*a) - *b).length()).sum::<f64>() / x.len() as f64
    }

    #[test]
    fn the_fast_fit_is_jacobis() {
        // Figures of 3 to 65 points, fitted closely or badly, mirrored or
        // not: the fast path answers and agrees with Jacobi's fit.
        let (mut fast, mut all, mut worst) = (0, 0, 0.0f64);
        for seed in 0..3000u64 {
            let k = [3, 4, 7, 23, 65][(seed % 5) as usize];
            let noise = [0.0, 1e-9, 1e-3, 0.05, 0.5, 3.0][(seed % 6) as usize];
            let (x, y) = point_sets(seed, k, noise, seed % 7 < 3);
            let input = FitInput::of(k, |p| x[p], |p| y[p]);
            all += 1;
            let Some(got) = input.similarity_fast() else { continue };
            fast += 1;
            let want = jacobi_fit(&x, &y);
            let dr = (got.rotation - want.rotation).to_cols_array();
            let dr = dr.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            assert!(dr <= 1e-11, "{seed}: rotation {dr:e}");
            assert!((got.scale - want.scale).abs() <= 1e-11 * want.scale, "{seed}");
            let (g, w) = (mean_residual(&got, &x, &y), mean_residual(&want, &x, &y));
            // Near zero the residuals are rounding (1e-15 m for a figure
            // of a metre): within 1e-13 m, else relative.
            let err = (g - w).abs();
            assert!(err <= 1e-12 * w || err <= 1e-13, "{seed}: residual {g} against {w}");
            if w > 1e-6 {
                worst = worst.max(err / w);
            }
        }
        assert!(fast * 100 >= all * 95, "only {fast} of {all} fits took the fast path");
        eprintln!("fast fits: {fast} of {all}, residuals within {worst:e}");
    }

    #[test]
    fn degenerate_fits_keep_jacobis_answer() {
        // Collinear points, one point, all points alike, NaN and infinity:
        // the fast path steps aside and the fit is Jacobi's, bit for bit.
        let line: Vec<DVec3> = (0..9).map(|i| DVec3::new(1.0, 2.0, 3.0) * f64::from(i)).collect();
        let turned: Vec<DVec3> =
            line.iter().map(|p| DMat3::from_rotation_z(0.7) * *p * 2.0 + DVec3::X).collect();
        let same = vec![DVec3::new(0.5, 0.5, 0.5); 5];
        let mut nan = line.clone();
        nan[3].y = f64::NAN;
        let mut inf = line.clone();
        inf[2].x = f64::INFINITY;
        let cases: [(&[DVec3], &[DVec3]); 6] = [
            (&line, &turned),
            (&line, &line),
            (&line[..1], &turned[..1]),
            (&same, &line[..5]),
            (&nan, &line),
            (&line, &inf),
        ];
        for (k, (x, y)) in cases.iter().enumerate() {
            let input = FitInput::of(x.len(), |p| x[p], |p| y[p]);
            assert!(input.similarity_fast().is_none(), "case {k}");
            let (got, want) = (procrustes(x, y), jacobi_fit(x, y));
            let bits = |f: &Similarity| {
                let mut b: Vec<u64> =
                    f.rotation.to_cols_array().iter().map(|v| v.to_bits()).collect();
                b.push(f.scale.to_bits());
                b.extend(f.translation.to_array().map(f64::to_bits));
                b
            };
            assert_eq!(bits(&got), bits(&want), "case {k}");
        }
        // A collinear fit still lands the line on the line.
        let fit = procrustes(&line, &turned);
        assert!(mean_residual(&fit, &line, &turned) < 1e-12);
    }

    #[test]
    fn geodesic_of_known_turns() {
        let deg = |a: DMat3, b: DMat3| lanes::geodesic_deg(&a.to_cols_array(), &b.to_cols_array());
        let axis = DVec3::new(0.3, -1.0, 0.5).normalize();
        let a = DMat3::from_rotation_y(0.3) * DMat3::from_rotation_x(-1.1);
        for want in [40.0, 1e-7, 90.0, 179.9999, 180.0] {
            let b = a * DMat3::from_axis_angle(axis, f64::to_radians(want));
            let got = deg(a, b);
            assert!((got - want).abs() < 1e-11, "{want}: {got}");
        }
        assert_eq!(deg(a, a).to_bits(), 0);
    }
}

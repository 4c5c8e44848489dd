//! The lint of a clip read a batch of frames at a time ([`LintStream`]):
//! the report of [`super::lint`], bit for bit, without the parsed clip or
//! its world positions.
//!
//! Each batch's world positions are computed on rayon's pool in pieces of
//! [`PIECE`] frames (cut where a block of the kept curves ends), [`RUN`]
//! frames per FK call (the bits of
//! [`super::world_positions`]), and each run goes straight into the
//! per-joint scalars while it is in cache, no batch of positions kept
//! (each piece starts its differences from the three frames before it:
//! the batch before's, carried, or its own computed again, so that the
//! steps, accelerations and jerks across any seam are measured as in the
//! whole clip). Of them are kept only what the whole-clip
//! statistics need: per frame its pose size (the unit guess); per joint
//! and frame its acceleration and step (the median and MAD of the
//! spikes, the 95th percentile of the pops), 16 bytes where the parsed
//! values and the positions took 48, in blocks of frames written in
//! order (`Curves`: huge pages, only the blocks reached resident); the
//! positions of the feet's points (contacts and ground), the lengths of
//! bones with position channels, the joint-frames farther from the hips than half the far-joint limit
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
    channel_piece, combine, far_finding, join, judge, stretch_of, stretching, units_of, up_of,
};
use crate::edit::axes::SignedAxis;
use crate::kinematics::Kinematics;
use crate::retarget::names::{Bone, classify};
use crate::simd::{Simd, simd_kernel};
use crate::skeleton::Skeleton;
use crate::units::{Limbs, UnitGuess, pose_size};

/// Every joint's steps (m) and accelerations (m/s²), kept for the whole
/// clip's statistics, in blocks of [`BLOCK`] frames: block `k` holds
/// frames `k * BLOCK..` of every curve, curve after curve (joint `j`'s
/// steps are curve `2j`, its accelerations `2j + 1`), one block after the
/// other in one allocation written in place. Curves are indexed by the
/// frame whose arrival gives the value ("slots"): slot `g` of the steps
/// holds the step from frame `g - 1` to `g` (`g >= 1`), slot `g` of the
/// accelerations frame `g - 1`'s acceleration (`g >= 2`).
///
/// The frames arrive in order, so the pages are written in order, each
/// batch's few at a time: the allocation is advised to use huge pages
/// ([`crate::buffer::zeroed`]) and only the blocks reached are resident.
/// (Joint after joint, as before, every batch wrote 130 stripes far apart
/// on the synthetic file, one 4 KiB page fault or populated page each,
/// and huge pages made every page resident from the first batch: 52 MiB
/// more at the peak.) The whole-clip selections gather a joint's curve
/// from its blocks into a buffer each thread reuses ([`Curves::gather`]).
///
/// Measured (2-core EPYC virtual machine, `bvh lint -q` of the 105 MB
/// synthetic file): 0.91x the CPU of the joint-major curves on one
/// thread, 0.95x on two; without the huge-page advice the blocks alone
/// change nothing (1.005x). Huge pages fresh from the kernel are not
/// always warm: about one run in eight spent some 80 ms instead of 10 ms
/// clearing them, slower than 4 KiB pages (likely because that guest
/// reports its free 2 MiB blocks to the host, virtio-balloon free page
/// reporting, which must back them again when they are touched).
///
/// The blocks of each batch are populated by one call
/// ([`Curves::populate`]) instead of faulted in page by page by the
/// pass's first writes.
#[derive(Default)]
struct Curves {
    data: Vec<f64>,
    nj: usize,
    /// The frames there is room for: a multiple of [`BLOCK`].
    cap: usize,
    /// The frames pushed: slots `..n` of every curve hold their values.
    n: usize,
    /// The frames whose blocks are populated (a multiple of [`BLOCK`], or
    /// `usize::MAX` when the kernel refused the advice).
    populated: usize,
}

/// The frames of a block of [`Curves`]: 16 KiB of each curve, 2 MiB a
/// block on the 65 joints of the synthetic file.
const BLOCK: usize = 2048;

impl Curves {
    /// The values of one block.
    fn block(&self) -> usize {
        2 * self.nj * BLOCK
    }

    /// Room for `frames` frames (rounded up to whole blocks) of `nj`
    /// joints' curves, copying what is kept; `false` (nothing changed)
    /// when the allocator refuses it.
    fn realloc(&mut self, nj: usize, frames: usize) -> bool {
        let Some(frames) = frames.checked_next_multiple_of(BLOCK) else { return false };
        let Some(len) = frames.checked_mul(2 * nj) else { return false };
        // Ask first whether the room is there (the zeroed vector below
        // would abort where the allocator refuses); zeros come from the
        // allocator as untouched pages, written once by the pass.
        if Vec::<f64>::new().try_reserve_exact(len).is_err() {
            return false;
        }
        let mut data = crate::buffer::zeroed(len);
        // The blocks written so far, whole (the layout does not depend on
        // the room).
        let used = self.n.div_ceil(BLOCK) * self.block();
        data[..used].copy_from_slice(&self.data[..used]);
        self.populated = self.n.next_multiple_of(BLOCK);
        (self.data, self.cap, self.nj) = (data, frames, nj);
        true
    }

    /// The blocks holding frames up to `need` populated, by one
    /// `madvise(MADV_POPULATE_WRITE)`: the kernel's work of the pass's
    /// first writes to them without a page fault each. A page only partly
    /// in the first block, or past the vector's last whole page, is left
    /// to fault as before, and a kernel without the advice (before Linux
    /// 5.14) leaves them all so.
    fn populate(&mut self, need: usize) {
        if need <= self.populated || self.cap == 0 {
            return;
        }
        let to = need.next_multiple_of(BLOCK).min(self.cap);
        #[cfg(target_os = "linux")]
        {
            const PAGE: usize = 4096;
            let base = self.data.as_mut_ptr() as usize;
            let last = (base + self.data.len() * 8) / PAGE * PAGE;
            let bytes = |frames: usize| frames / BLOCK * self.block() * 8;
            let first = (base + bytes(self.populated)).next_multiple_of(PAGE);
            let end = (base + bytes(to)).next_multiple_of(PAGE).min(last);
            if end > first {
                // SAFETY: [first, end) lies inside the vector's own
                // allocation (blocks `populated / BLOCK..to / BLOCK` in
                // whole pages: the first page only partly in them left
                // out, the last one taken whole, and none past the
                // vector's last whole page), page aligned as madvise
                // requires.
                // MADV_POPULATE_WRITE faults the pages in as a write
                // would, without writing: it neither reads, changes,
                // frees nor moves memory, so every pointer and value
                // stays as it was. A failure (an older kernel, memory
                // refused) only leaves the pages to fault on their
                // first write.
                #[allow(unsafe_code)]
                let r = unsafe {
                    libc::madvise(
                        first as *mut libc::c_void,
                        end - first,
                        libc::MADV_POPULATE_WRITE,
                    )
                };
                if r != 0 {
                    // Not tried again: the pass's writes fault them.
                    self.populated = usize::MAX;
                    return;
                }
            }
        }
        self.populated = to;
    }

    /// Room for `more` frames (doubling).
    fn grow(&mut self, nj: usize, more: usize) {
        let need = (self.n + more).max(1);
        if need > self.cap {
            let frames = need.max(2 * self.cap);
            assert!(self.realloc(nj, frames), "out of memory for {frames} frames of {nj} joints");
        }
    }

    /// Slots `from..to` of curve `c`, a slice per block.
    fn segments(&self, c: usize, from: usize, to: usize) -> impl Iterator<Item = &[f64]> {
        let block = self.block();
        let mut g = from;
        std::iter::from_fn(move || {
            if g >= to {
                return None;
            }
            let (k, r) = (g / BLOCK, g % BLOCK);
            let len = (BLOCK - r).min(to - g);
            let at = k * block + c * BLOCK + r;
            g += len;
            Some(&self.data[at..at + len])
        })
    }

    /// Slots `from..n` of curve `c` into `out` (cleared first).
    fn gather(&self, c: usize, from: usize, out: &mut Vec<f64>) {
        out.clear();
        self.segments(c, from, self.n).for_each(|s| out.extend_from_slice(s));
    }

    /// Joint `j`'s steps (`step[f]`: frame `f` to `f + 1`) into `out`.
    fn step(&self, j: usize, out: &mut Vec<f64>) {
        self.gather(2 * j, 1, out);
    }

    /// Joint `j`'s accelerations (`acc[f - 1]`: frame `f`'s) into `out`.
    fn acc(&self, j: usize, out: &mut Vec<f64>) {
        self.gather(2 * j + 1, 2, out);
    }

    /// Per piece of frames (`pieces`, in order, each within one block,
    /// from frame `n` on, within the room there is) per joint, its slots
    /// of the steps (from frame 1 on) and of the accelerations (from frame
    /// 2 on) to write.
    #[allow(clippy::type_complexity)]
    fn pieces_mut(&mut self, pieces: &[(usize, usize)]) -> Vec<(Vec<&mut [f64]>, Vec<&mut [f64]>)> {
        let (nj, block) = (self.nj, self.block());
        let mut out: Vec<(Vec<&mut [f64]>, Vec<&mut [f64]>)> =
            pieces.iter().map(|_| (Vec::with_capacity(nj), Vec::with_capacity(nj))).collect();
        let Some(&(a0, _)) = pieces.first() else { return out };
        let k0 = a0 / BLOCK;
        let mut p0 = 0;
        for (k, blk) in self.data.chunks_mut(block).enumerate().skip(k0) {
            let start = k * BLOCK;
            let p1 = p0 + pieces[p0..].iter().take_while(|&&(a, _)| a < start + BLOCK).count();
            if p1 == p0 {
                break;
            }
            for (c, curve) in blk.chunks_mut(BLOCK).enumerate() {
                let t = if c % 2 == 0 { 1 } else { 2 };
                let mut rest = curve;
                let mut at = start;
                for (p, &(a, b)) in pieces[p0..p1].iter().enumerate() {
                    debug_assert!(a >= start && b <= start + BLOCK);
                    let from = a.max(t).min(b);
                    let skipped = std::mem::take(&mut rest).split_at_mut(from - at).1;
                    let (x, r) = skipped.split_at_mut(b - from);
                    rest = r;
                    at = b;
                    let o = &mut out[p0 + p];
                    if c % 2 == 0 { o.0.push(x) } else { o.1.push(x) }
                }
            }
            p0 = p1;
        }
        out
    }
}

/// What one joint keeps of the frames streamed so far (its steps and
/// accelerations are in [`Curves`]).
#[derive(Default)]
struct JointState {
    /// The sum and count of the finite jerks (jitter), in frame order.
    jerk_sum: f64,
    jerk_count: usize,
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
    /// This batch's jerks, joint-major (`frames` per joint).
    d3: Vec<f64>,
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
            d3: Vec::new(),
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
        let more = self.curves.n.saturating_add(frames);
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
        let g1 = n0 + frames;
        // Values per curve from frame `t` on (steps from 1, accelerations
        // from 2, jerks from 3) of global frames `a..b`.
        let count = |a: usize, b: usize, t: usize| b.saturating_sub(a.max(t));
        self.curves.grow(nj, frames);
        let j0 = self.jerk.len();
        // The arrays grown for the batch (their new pages first touched
        // here, zeroed), the joints' on the pool beside the frames'.
        let (sizes, jerk, d3) = (&mut self.sizes, &mut self.jerk, &mut self.d3);
        let curves = &mut self.curves;
        join(
            || {
                curves.populate(g1);
                sizes.resize(g1, 0.0);
                jerk.resize(j0 + count(n0, g1, 3), 0.0);
                // Every value read is written first: grown, never cleared.
                if d3.len() < nj * frames {
                    d3.resize(nj * frames, 0.0);
                }
            },
            || {
                each_joint(&mut self.joints, |_, s| {
                    if s.keep {
                        s.kept.resize(g1, DVec3::ZERO);
                    }
                    if s.parent.is_some() {
                        s.lens.resize(g1, 0.0);
                    }
                })
            },
        );
        let parents: Vec<Option<usize>> = self.joints.iter().map(|s| s.parent).collect();
        // The pieces of the pass: [`PIECE`] frames, cut where a block of
        // the curves ends, so that each writes its curves within one.
        let mut pieces: Vec<(usize, usize)> = Vec::with_capacity(frames.div_ceil(PIECE) + 2);
        let mut a = n0;
        while a < g1 {
            let b = (a + PIECE).min((a / BLOCK + 1) * BLOCK).min(g1);
            pieces.push((a, b));
            a = b;
        }

        // Every piece's share of what the batch writes: per joint its
        // steps, accelerations, jerks, bone lengths and kept positions.
        let mut outs: Vec<PieceOut> = Vec::with_capacity(pieces.len());
        {
            let mut sizes = &mut self.sizes[n0..];
            let mut jerk = &mut self.jerk[j0..];
            let curves = self.curves.pieces_mut(&pieces);
            for (&(a, b), (step, acc)) in pieces.iter().zip(curves) {
                let (x, rest) = std::mem::take(&mut sizes).split_at_mut(b - a);
                sizes = rest;
                let (y, rest) = std::mem::take(&mut jerk).split_at_mut(count(a, b, 3));
                jerk = rest;
                outs.push(PieceOut {
                    f0: a - n0,
                    sizes: x,
                    jerk: y,
                    step,
                    acc,
                    d3: Vec::with_capacity(nj),
                    lens: Vec::with_capacity(nj),
                    kept: Vec::with_capacity(nj),
                });
            }
            for (d3, s) in self.d3.chunks_mut(frames).zip(self.joints.iter_mut()) {
                let mut d3 = &mut d3[..count(n0, g1, 3)];
                let mut lens = if s.parent.is_some() { &mut s.lens[n0..] } else { &mut [][..] };
                let mut kept = if s.keep { &mut s.kept[n0..] } else { &mut [][..] };
                for (&(a, b), out) in pieces.iter().zip(&mut outs) {
                    let (x, r) = std::mem::take(&mut d3).split_at_mut(count(a, b, 3));
                    d3 = r;
                    out.d3.push(x);
                    let len = if lens.is_empty() { 0 } else { b - a };
                    let (x, r) = std::mem::take(&mut lens).split_at_mut(len);
                    lens = r;
                    out.lens.push(x);
                    let len = if kept.is_empty() { 0 } else { b - a };
                    let (x, r) = std::mem::take(&mut kept).split_at_mut(len);
                    kept = r;
                    out.kept.push(x);
                }
            }
        }

        let (fk, mpu, fps) = (&self.fk, self.mpu, self.fps);
        let (hips, u, far_keep) = (self.hips, self.u, self.far_keep);
        let lowest = self.o.ground == Ground::Lowest;
        let carry = &self.carry;
        let (ch, names, o, prev_row) = (&self.ch, &self.names, &self.o, &self.prev_row);
        let row_of = |f: usize| {
            if f >= n0 { &values[(f - n0) * w..(f - n0 + 1) * w] } else { &prev_row[..] }
        };
        let pass = Pass {
            fk,
            values,
            w,
            nj,
            n0,
            c,
            carry,
            mpu,
            fps,
            hips,
            u,
            far_keep,
            lowest,
            parents: &parents,
        };
        let (found, mut pieces) = join(
            || {
                let work = |sc: &mut Scratch, out: PieceOut| pass.piece(out, sc);
                #[cfg(feature = "parallel")]
                {
                    use rayon::prelude::*;
                    outs.into_par_iter().map_init(|| Scratch::new(fk, nj), work).collect::<Vec<_>>()
                }
                #[cfg(not(feature = "parallel"))]
                {
                    let mut sc = Scratch::new(fk, nj);
                    outs.into_iter().map(|out| work(&mut sc, out)).collect::<Vec<_>>()
                }
            },
            || {
                let n_pieces = frames.div_ceil(PIECE);
                let piece = |k: usize| {
                    let frames = n0 + k * PIECE..n0 + ((k + 1) * PIECE).min(frames);
                    channel_piece(ch, names, o, frames, row_of)
                };
                #[cfg(feature = "parallel")]
                {
                    use rayon::prelude::*;
                    (0..n_pieces).into_par_iter().map(piece).collect::<Vec<_>>()
                }
                #[cfg(not(feature = "parallel"))]
                {
                    (0..n_pieces).map(piece).collect::<Vec<_>>()
                }
            },
        );
        self.pieces.append(&mut pieces);
        // The far frames and lowest points, piece after piece (each
        // joint's in frame order), the joints on the pool. Not advised:
        // reserving each list for the frames expected at its rate so far
        // (page faults unchanged, 1.00x CPU: their faults are the lists'
        // first writes, not copies as they double).
        each_joint(&mut self.joints, |j, s| {
            for f in &found {
                s.far.extend_from_slice(&f.far[j]);
                s.low = s.low.min(f.low[j]);
            }
        });
        // The jitter's sums, each joint's jerks in frame order: groups of
        // joints on the pool, each frame's joints of a group one after the
        // other (their sums' additions independent of each other, not
        // each waiting for the one before it). Not advised: eight frames
        // of a joint at a time without a branch (a jerk not finite adding
        // +0, the same bits): no change, about 2% of the samples either way
        // (bound, it seems, by reading the batch's 0.7 MB of jerks back
        // rather than by the additions).
        const GROUP: usize = 16;
        let n3 = count(n0, g1, 3);
        let d3 = &self.d3;
        let sum = |(g, joints): (usize, &mut [JointState])| {
            let mut sums = [0.0f64; GROUP];
            let mut counts = [0usize; GROUP];
            for (k, s) in joints.iter().enumerate() {
                (sums[k], counts[k]) = (s.jerk_sum, s.jerk_count);
            }
            let rows: Vec<&[f64]> =
                (0..joints.len()).map(|k| &d3[(g * GROUP + k) * frames..][..n3]).collect();
            for f in 0..n3 {
                for (k, row) in rows.iter().enumerate() {
                    let d = row[f];
                    if d.is_finite() {
                        sums[k] += d;
                        counts[k] += 1;
                    }
                }
            }
            for (k, s) in joints.iter_mut().enumerate() {
                (s.jerk_sum, s.jerk_count) = (sums[k], counts[k]);
            }
        };
        #[cfg(feature = "parallel")]
        {
            use rayon::prelude::*;
            self.joints.par_chunks_mut(GROUP).enumerate().for_each(sum);
        }
        #[cfg(not(feature = "parallel"))]
        self.joints.chunks_mut(GROUP).enumerate().for_each(sum);
        self.curves.n = g1;

        // Carry the last three frames' positions.
        let t = (c + frames).min(3);
        let new = t.min(frames);
        let old = t - new;
        let mut run = vec![DVec3::ZERO; new * nj];
        fk.positions_many(&values[(frames - new) * w..], &mut fk.lanes_scratch(), &mut run);
        let mut next = vec![DVec3::ZERO; nj * 3];
        for j in 0..nj {
            next[j * 3..j * 3 + old].copy_from_slice(&self.carry[j * 3 + c - old..j * 3 + c]);
            for i in 0..new {
                let p = run[i * nj + j];
                next[j * 3 + old + i] = if mpu == 1.0 { p } else { p * mpu };
            }
        }
        self.carry = next;
        self.carry_len = t;
        self.prev_row.clear();
        self.prev_row.extend_from_slice(&values[(frames - 1) * w..]);
        self.n += frames;
    }

    /// The report of the frames pushed: [`super::lint`]'s of the same clip,
    /// or `None` where the stream cannot give it (see the module
    /// documentation): the caller then runs [`super::lint`].
    pub fn finish(self) -> Option<Report> {
        let LintStream {
            skel,
            o,
            fps,
            dt,
            mpu: sampled_mpu,
            far_keep,
            up,
            up_detected,
            u,
            notes,
            names,
            feet,
            feet_notes,
            hips,
            ch,
            n,
            sizes,
            joints: mut states,
            curves,
            d3,
            pieces,
            jerk,
            ..
        } = self;
        give_back(d3);
        if n == 0 {
            return None;
        }
        let o = &o;
        // The feet's points and the bones' lengths, taken out of the joints
        // so that each is given back where it was last read, on the pool,
        // not by one thread at the end.
        let kept: Vec<Vec<DVec3>> =
            states.iter_mut().map(|s| std::mem::take(&mut s.kept)).collect();
        let bones = stretching(&skel);
        let lens: Vec<Vec<f64>> =
            bones.iter().map(|&(j, _)| std::mem::take(&mut states[j].lens)).collect();
        let joints = &states;
        let lowest = || joints.iter().map(|s| s.low).fold(f64::INFINITY, f64::min);
        // Everything at once: the unit guess over every frame and what it
        // decides (the caller's guess confirmed, the figure's size, then
        // the stretching bones and the joints far from the hips: a clip
        // the stream cannot report only finds out after the rest is done,
        // the caller then runs the whole lint), beside the feet, the
        // smoothness and the channels' findings. The steps and
        // accelerations (16 bytes a joint-frame) are given back as soon as
        // the spikes and pops are judged, while the rest may still be
        // measured.
        let (whole, (feet_data, (smooth, chan))) = join(
            || {
                let guess = UnitGuess::of_pose_sizes(sizes).named(&Limbs::of(&skel));
                let mpu = o.metres_per_unit.unwrap_or_else(|| guess.metres_per_unit());
                if mpu.to_bits() != sampled_mpu.to_bits() {
                    return None;
                }
                let size = guess.size * mpu;
                let far = size.is_finite() && size > 0.0;
                let limit = o.far_factor * size;
                // (A NaN sampled size kept nothing: not confirmed either.)
                if far && (limit < far_keep || far_keep.is_nan()) {
                    return None;
                }
                let mut unit_notes = Vec::new();
                let units = units_of(o, &guess, &mut unit_notes);
                let stretched = super::per_joint(bones.len(), |k| {
                    let (j, parent) = bones[k];
                    stretch_of(j, parent, &lens[k], size, &names, o)
                });
                drop(lens);
                // Joints far from the hips: every frame beyond the limit
                // was kept. The joints' findings (a message each) on the
                // pool, in joint order.
                let far_found = far.then(|| {
                    let hips = &names[hips];
                    super::per_joint(joints.len(), |j| {
                        let beyond = joints[j].far.iter().filter(|(_, d)| *d > limit);
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
                        runs.into_iter()
                            .map(|(a, b, worst)| {
                                far_finding(j, (a, b), worst, &names[j], hips, size)
                            })
                            .collect::<Vec<_>>()
                    })
                });
                Some((mpu, size, units, unit_notes, stretched, far_found))
            },
            || {
                join(
                    || {
                        let measured = feet::measure(&feet, |j| &kept[j][..], lowest, n, fps, u, o);
                        give_back(kept);
                        measured
                    },
                    || {
                        join(
                            || {
                                let smooth = smoothness(joints, &curves, n, o);
                                give_back(curves);
                                smooth
                            },
                            || channel_findings(&ch, &skel, &names, o, pieces, n, (fps, dt)),
                        )
                    },
                )
            },
        );
        let (mpu, size, units, unit_notes, stretched, far_found) = whole?;
        let mut notes = notes;
        notes.extend(unit_notes);
        notes.extend(feet_notes);
        let mut smooth = smooth;
        smooth.jerk = jerk;
        let (mut metrics, mut findings, series, ground) =
            combine(&feet, feet_data, Some((smooth, chan)), &names, lowest, o, &mut notes);
        // The joints' far frames (300,000 on the synthetic file) too.
        give_back(states);
        for found in stretched.into_iter().flatten() {
            super::stretched(found, &mut metrics, &mut findings);
        }
        for found in far_found.into_iter().flatten() {
            metrics.far_joints += usize::from(!found.is_empty());
            findings.extend(found);
        }
        super::sort_findings(&mut findings);
        Some(Report {
            units,
            metres_per_unit: mpu,
            up,
            up_detected,
            fps,
            frames: n,
            joint_names: names,
            feet,
            ground,
            size,
            metrics,
            findings,
            series,
            notes,
        })
    }
}

/// One piece's share of what a batch writes ([`LintStream::push`]): its
/// frames' pose sizes and mean jerks, and per joint its steps,
/// accelerations, jerks (squared lengths until [`Pass::piece`] roots
/// them), bone lengths and kept positions (empty where the joint keeps
/// none).
struct PieceOut<'a> {
    /// The piece's first frame in the batch.
    f0: usize,
    sizes: &'a mut [f64],
    jerk: &'a mut [f64],
    step: Vec<&'a mut [f64]>,
    acc: Vec<&'a mut [f64]>,
    d3: Vec<&'a mut [f64]>,
    lens: Vec<&'a mut [f64]>,
    kept: Vec<&'a mut [DVec3]>,
}

/// What a piece found besides its slices: per joint the frames beyond
/// the stream's `far_keep` with that distance, in frame order, and the
/// lowest finite height (with `Ground::Lowest`).
struct Found {
    far: Vec<Vec<(usize, f64)>>,
    low: Vec<f64>,
}

/// `x` freed on rayon's pool, in a task of its own that nothing waits
/// for (with the `parallel` feature; else at once): the curves' 59 MB of
/// the synthetic file took 5 to 7 ms to unmap, the last thing the report's
/// threads did, one of them alone, while the rest of the report (the
/// findings' order, their text) waited for it.
fn give_back<T: Send + 'static>(x: T) {
    #[cfg(feature = "parallel")]
    rayon::spawn(move || drop(x));
    #[cfg(not(feature = "parallel"))]
    drop(x);
}

/// `f(j, joint)` for every joint, on rayon's pool with the `parallel`
/// feature.
fn each_joint(joints: &mut [JointState], f: impl Fn(usize, &mut JointState) + Sync + Send) {
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        joints.par_iter_mut().enumerate().for_each(|(j, s)| f(j, s));
    }
    #[cfg(not(feature = "parallel"))]
    joints.iter_mut().enumerate().for_each(|(j, s)| f(j, s));
}

/// A thread's buffers for [`Pass::piece`]: the FK lanes, a run of
/// positions (frame-major), each joint's last three positions with how
/// many frames are behind them (at most 3), and one joint's run laid out
/// for [`diffs`].
struct Scratch {
    lanes: crate::FkLanes,
    run: Vec<DVec3>,
    have: Vec<u8>,
    /// Each joint's last three positions fed, oldest first (the first
    /// `3 - have` of them stale).
    hist: Vec<[DVec3; 3]>,
    /// One joint's positions of a run, the three frames before it first,
    /// one coordinate a vector.
    xyz: [Vec<f64>; 3],
}

impl Scratch {
    fn new(fk: &Kinematics, nj: usize) -> Scratch {
        Scratch {
            lanes: fk.lanes_scratch(),
            run: Vec::new(),
            have: vec![0; nj],
            hist: vec![[DVec3::ZERO; 3]; nj],
            xyz: [Vec::new(), Vec::new(), Vec::new()],
        }
    }

    /// Joint `j`'s next position `p`, one of the clip's first three
    /// frames or of a piece's three frames before it: its step's and
    /// acceleration's squared lengths where the frames behind it give
    /// them (`v = p - p'`, `a = v - v'`: the operations of [`diffs`], the
    /// same bits).
    #[inline]
    fn feed(&mut self, j: usize, p: DVec3) -> (Option<f64>, Option<f64>) {
        let have = self.have[j];
        let [_, h1, h2] = self.hist[j];
        let v = p - h2;
        let step = (have >= 1).then(|| v.length_squared());
        let acc = (have >= 2).then(|| (v - (h2 - h1)).length_squared());
        self.hist[j] = [h1, h2, p];
        self.have[j] = (have + 1).min(3);
        (step, acc)
    }
}

/// What every piece of one batch reads ([`LintStream::push`]).
struct Pass<'a> {
    fk: &'a Kinematics,
    values: &'a [f64],
    w: usize,
    nj: usize,
    /// The batch's first frame in the clip, and the frames carried
    /// before it.
    n0: usize,
    c: usize,
    carry: &'a [DVec3],
    mpu: f64,
    fps: f64,
    hips: usize,
    u: DVec3,
    far_keep: f64,
    lowest: bool,
    parents: &'a [Option<usize>],
}

impl Pass<'_> {
    /// The positions of the batch's frames `a..b` into `sc.run`,
    /// frame-major, unscaled.
    fn positions(&self, a: usize, b: usize, sc: &mut Scratch) {
        sc.run.resize((b - a) * self.nj, DVec3::ZERO);
        self.fk.positions_many(&self.values[a * self.w..b * self.w], &mut sc.lanes, &mut sc.run);
    }

    /// `sc.run` in metres.
    fn scale(&self, sc: &mut Scratch) {
        if self.mpu != 1.0 {
            let mpu = self.mpu;
            sc.run.iter_mut().for_each(|p| *p *= mpu);
        }
    }

    /// Piece `k` of the batch ([`PIECE`] frames): its positions [`RUN`]
    /// frames per FK call, each run's per-joint scalars taken while its
    /// positions are in cache, each joint's differences started from the
    /// three frames before the piece (carried from the batch before, or
    /// computed again: a frame's positions are the same bits in any run);
    /// each joint's run laid out a coordinate a vector, the three frames
    /// before it first, and its steps, accelerations and jerks taken and
    /// rooted on the CPU's widest lanes ([`diffs`]: `sqrt` is correctly
    /// rounded there as in a scalar, the same bits; the clip's first three
    /// frames one at a time, [`Scratch::feed`] and [`root`]); at the end each
    /// frame's mean jerk over the joints, in joint order. The distance from
    /// the hips is rooted only where it may pass the limit kept
    /// ([`far_floor`]).
    fn piece(&self, mut out: PieceOut, sc: &mut Scratch) -> Found {
        let nj = self.nj;
        let f0 = out.f0;
        let f1 = f0 + out.sizes.len();
        let g0 = self.n0 + f0;
        // Where each curve's slice of this piece starts (frames of the
        // clip): steps from frame 1 on, accelerations from 2, jerks from 3.
        let (sb, ab, db) = (g0.max(1), g0.max(2), g0.max(3));
        sc.have.fill(0);
        // The three frames before the piece, as many as the clip has: the
        // carried ones the batch does not hold, then the batch's own.
        let own = f0.min(3);
        let carried = (3 - own).min(self.c);
        for j in 0..nj {
            for i in self.c - carried..self.c {
                sc.feed(j, self.carry[j * 3 + i]);
            }
        }
        if own > 0 {
            self.positions(f0 - own, f0, sc);
            self.scale(sc);
            for i in 0..own {
                for j in 0..nj {
                    let p = sc.run[i * nj + j];
                    sc.feed(j, p);
                }
            }
        }
        let floor = far_floor(self.far_keep);
        let fps2 = self.fps * self.fps;
        let fps3 = fps2 * self.fps;
        let simd = Simd::best();
        let mut found = Found { far: vec![Vec::new(); nj], low: vec![f64::INFINITY; nj] };
        for r0 in (f0..f1).step_by(RUN) {
            let r1 = (r0 + RUN).min(f1);
            let len = r1 - r0;
            self.positions(r0, r1, sc);
            for (s, p) in out.sizes[r0 - f0..r1 - f0].iter_mut().zip(sc.run.chunks_exact(nj)) {
                *s = pose_size(p);
            }
            self.scale(sc);
            let ga = self.n0 + r0;
            for j in 0..nj {
                let (step, acc, d3) = (&mut *out.step[j], &mut *out.acc[j], &mut *out.d3[j]);
                let mut i = 0;
                // The clip's first frames: not every curve has a value.
                while i < len && sc.have[j] < 3 {
                    let g = ga + i;
                    let (s, a) = sc.feed(j, sc.run[i * nj + j]);
                    if let Some(s) = s {
                        step[g - sb] = s;
                    }
                    if let Some(a) = a {
                        acc[g - ab] = a;
                    }
                    i += 1;
                }
                // The first frames' squared lengths rooted (the clip's
                // first frames only: the rest are rooted by `diffs`).
                let at = |b: usize| ga.max(b) - b..(ga + i).max(b) - b;
                root::<false>(simd, &mut step[at(sb)], 1.0);
                root::<true>(simd, &mut acc[at(ab)], fps2);
                root::<true>(simd, &mut d3[at(db)], fps3);
                if i < len {
                    // The rest of the run with three frames behind every
                    // frame: each coordinate in a vector of its own, the
                    // three frames before first, the differences and
                    // their lengths on SIMD lanes.
                    let m = len - i;
                    let h = sc.hist[j];
                    let [xs, ys, zs] = &mut sc.xyz;
                    xs.resize(m + 3, 0.0);
                    ys.resize(m + 3, 0.0);
                    zs.resize(m + 3, 0.0);
                    let points = h.iter().chain(sc.run[i * nj + j..].iter().step_by(nj));
                    for (((p, x), y), z) in points.zip(&mut *xs).zip(&mut *ys).zip(&mut *zs) {
                        (*x, *y, *z) = (p.x, p.y, p.z);
                    }
                    let g = ga + i;
                    diffs(
                        simd,
                        [&sc.xyz[0], &sc.xyz[1], &sc.xyz[2]],
                        &mut step[g - sb..][..m],
                        &mut acc[g - ab..][..m],
                        &mut d3[g - db..][..m],
                        (fps2, fps3),
                    );
                    // The last three positions laid out (of the run, or
                    // the ones before it where the run is shorter).
                    let [xs, ys, zs] = &sc.xyz;
                    let last = |k: usize| DVec3::new(xs[m + k], ys[m + k], zs[m + k]);
                    sc.hist[j] = [last(0), last(1), last(2)];
                }
                let run = &sc.run;
                for i in 0..len {
                    let d2 = (run[i * nj + j] - run[i * nj + self.hips]).length_squared();
                    // NaN goes the exact way too.
                    if d2 >= floor || d2.is_nan() {
                        let dist = d2.sqrt();
                        if dist > self.far_keep {
                            found.far[j].push((ga + i, dist));
                        }
                    }
                }
                if self.lowest {
                    let low = &mut found.low[j];
                    for i in 0..len {
                        let height = run[i * nj + j].dot(self.u);
                        if height.is_finite() {
                            *low = low.min(height);
                        }
                    }
                }
                if let Some(q) = self.parents[j] {
                    for (i, l) in out.lens[j][r0 - f0..r1 - f0].iter_mut().enumerate() {
                        *l = (run[i * nj + j] - run[i * nj + q]).length();
                    }
                }
                if !out.kept[j].is_empty() {
                    for (i, kp) in out.kept[j][r0 - f0..r1 - f0].iter_mut().enumerate() {
                        *kp = run[i * nj + j];
                    }
                }
            }
        }
        let nj_f = nj as f64;
        for d3 in &out.d3 {
            for (a, d) in out.jerk.iter_mut().zip(d3.iter()) {
                *a += d / nj_f;
            }
        }
        found
    }
}

simd_kernel! {
    /// Per frame of a joint whose positions' coordinates are `xyz` (three
    /// frames before the first first): the length of its step, its
    /// acceleration times `fps2` and its jerk times `fps3` (`v = p - p'`,
    /// `a = v - v'`, `d = a - a'`, each squared length `x*x + y*y + z*z`
    /// rooted: the operations of [`Scratch::feed`] and [`root`], each
    /// difference taken again from the positions rather than carried,
    /// the same bits), on the CPU's widest lanes.
    ///
    /// Not advised: the distances from the hips taken the same way (the
    /// hips' run laid out a coordinate a vector, each joint's squared
    /// distances on lanes, then compared with the far floor): 1.2% and
    /// 1.8% more CPU than one at a time in two sets of 11 pairs.
    fn diffs(
        simd: Simd,
        xyz: [&[f64]; 3],
        step: &mut [f64],
        acc: &mut [f64],
        d3: &mut [f64],
        fps: (f64, f64),
    ) {
        let n = step.len();
        let (acc, d3) = (&mut acc[..n], &mut d3[..n]);
        let [xs, ys, zs] = xyz.map(|p| &p[..n + 3]);
        // The step, acceleration and jerk of one coordinate at frame k + 3.
        #[inline(always)]
        fn dva(p: &[f64], k: usize) -> (f64, f64, f64) {
            let v = p[k + 3] - p[k + 2];
            let v1 = p[k + 2] - p[k + 1];
            let v2 = p[k + 1] - p[k];
            let a = v - v1;
            (v, a, a - (v1 - v2))
        }
        for k in 0..n {
            let (vx, ax, dx) = dva(xs, k);
            let (vy, ay, dy) = dva(ys, k);
            let (vz, az, dz) = dva(zs, k);
            step[k] = (vx * vx + vy * vy + vz * vz).sqrt();
            acc[k] = (ax * ax + ay * ay + az * az).sqrt() * fps.0;
            d3[k] = (dx * dx + dy * dy + dz * dz).sqrt() * fps.1;
        }
    }
}

simd_kernel! {
    /// Every value of `xs` rooted, then times `k` when `SCALE` (the
    /// operations of the scalar loop, on the CPU's widest lanes: `sqrt` is
    /// correctly rounded on every build, the same bits).
    fn root<const SCALE: bool>(simd: Simd, xs: &mut [f64], k: f64) {
        if SCALE {
            xs.iter_mut().for_each(|x| *x = x.sqrt() * k);
        } else {
            xs.iter_mut().for_each(|x| *x = x.sqrt());
        }
    }
}

/// [`super::smoothness`] from the kept accelerations and steps (the jerk
/// curve is the stream's own).
///
/// The joints are judged on the pool, each thread reusing its buffers:
/// one for the selections and one for each of the joint's curves gathered
/// from their blocks ([`Curves::gather`]; sized for the whole clip once,
/// their pages touched once).
fn smoothness(joints: &[JointState], curves: &Curves, n: usize, o: &Options) -> Smoothness {
    type Bufs = (Vec<f64>, Vec<f64>, Vec<f64>);
    let judge_one = |(buf, acc, step): &mut Bufs, j: usize| {
        curves.acc(j, acc);
        curves.step(j, step);
        judge(j, acc, step, o, buf)
    };
    let judged: Vec<_> = crate::par::map_with_scratch(joints.len(), Bufs::default, judge_one);
    let (sum, count) = joints.iter().fold((0.0, 0), |(s, c), r| (s + r.jerk_sum, c + r.jerk_count));
    // Per frame the largest ratio over the joints, in joint order, pieces
    // of frames on the pool (frame `f`'s acceleration is `acc[f - 1]`).
    let mut spike_ratio = vec![0.0f64; n];
    let ratio = |(k, out): (usize, &mut [f64])| {
        let f0 = k * PIECE;
        for (j, r) in judged.iter().enumerate() {
            let Some(t) = r.spike_t else { continue };
            // Frame `f`'s acceleration is slot `f + 1`, from frame 1 on.
            let skip = usize::from(f0 == 0);
            let mut at = skip;
            let slots = curves.segments(2 * j + 1, f0 + skip + 1, (f0 + out.len() + 1).min(n));
            for seg in slots {
                for (a, acc) in out[at..].iter_mut().zip(seg) {
                    *a = a.max(acc / t);
                }
                at += seg.len();
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

#[cfg(test)]
mod tests {
    use super::{BLOCK, Curves, diffs, root};
    use crate::simd::Simd;
    use glam::DVec3;

    /// The steps, accelerations and jerks of [`diffs`] on every build the
    /// CPU runs are the bits of the nested differences of the positions
    /// (`v = p - p'`, `a = v - v'`, `d = a - a'`, as the pass took them
    /// one frame at a time before, each carried to the next frame): large
    /// and tiny coordinates, subnormals, infinities and NaN, over lengths
    /// that leave a tail after the lanes.
    #[test]
    fn differences_on_lanes_are_the_nested_differences() {
        let mut next = crate::xorshift(0x2545_f491_4f6c_dd1du64);
        let mut coord = |i: usize| {
            let x = (next() >> 11) as f64 / (1u64 << 40) as f64 - 2000.0;
            match i % 23 {
                5 => 1e300,
                9 => -f64::MIN_POSITIVE / 7.0,
                13 => f64::INFINITY,
                17 => f64::NAN,
                _ => x,
            }
        };
        let points: Vec<DVec3> =
            (0..70).map(|i| DVec3::new(coord(i), coord(i + 7), coord(i + 11))).collect();
        let (fps2, fps3) = (14_400.0, 1.728e6);
        for simd in Simd::available() {
            for n in [0, 1, 3, 4, 5, 8, 9, 31, 67] {
                let p = &points[..n + 3];
                let xyz = [0, 1, 2].map(|c| p.iter().map(|q| q[c]).collect::<Vec<f64>>());
                let (mut step, mut acc, mut d3) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
                diffs(
                    simd,
                    [&xyz[0], &xyz[1], &xyz[2]],
                    &mut step,
                    &mut acc,
                    &mut d3,
                    (fps2, fps3),
                );
                let mut v0 = p[1] - p[0];
                let mut a0 = (p[2] - p[1]) - v0;
                v0 = p[2] - p[1];
                for k in 0..n {
                    let v = p[k + 3] - p[k + 2];
                    let a = v - v0;
                    let d = a - a0;
                    (v0, a0) = (v, a);
                    let want = [
                        v.length_squared().sqrt(),
                        a.length_squared().sqrt() * fps2,
                        d.length_squared().sqrt() * fps3,
                    ];
                    let got = [step[k], acc[k], d3[k]];
                    assert!(
                        got.iter().zip(want).all(|(g, w)| g.to_bits() == w.to_bits()),
                        "{simd:?} n {n} frame {k}: {got:?} against {want:?}"
                    );
                }
            }
        }
    }

    /// The roots on every build the CPU runs are the scalar loop's bits:
    /// zeros, subnormals, huge values, infinities and NaN, over lengths
    /// that leave a tail after the lanes.
    #[test]
    fn roots_on_lanes_are_the_scalar_bits() {
        let mut next = crate::xorshift(0x9e37_79b9_7f4a_7c15u64);
        let values: Vec<f64> = (0..67)
            .map(|i| {
                let x = next();
                match i % 9 {
                    0 => 0.0,
                    1 => f64::MIN_POSITIVE / 3.0,
                    2 => 1e300,
                    3 => f64::INFINITY,
                    4 => f64::NAN,
                    _ => (x >> 11) as f64 / (1u64 << 30) as f64,
                }
            })
            .collect();
        for simd in Simd::available() {
            for n in [0, 1, 3, 7, 8, 9, 67] {
                for k in [1.0, 14_400.0, 1.7e6] {
                    let mut got = values[..n].to_vec();
                    root::<true>(simd, &mut got, k);
                    let want = values[..n].iter().map(|v| v.sqrt() * k);
                    assert!(got.iter().zip(want).all(|(a, b)| a.to_bits() == b.to_bits()));
                }
                let mut got = values[..n].to_vec();
                root::<false>(simd, &mut got, 2.0);
                let want = values[..n].iter().map(|v| v.sqrt());
                assert!(got.iter().zip(want).all(|(a, b)| a.to_bits() == b.to_bits()), "{simd:?}");
            }
        }
    }

    /// The curves' blocks: every piece's slices are its own slots (steps
    /// from frame 1, accelerations from 2), whatever the pieces (one
    /// frame, the first ones, up to a block's end); a realloc between
    /// batches and populating the pages change no value; and each curve
    /// gathered from its blocks is its slots in frame order, the rest
    /// still zero.
    #[test]
    fn curves_in_blocks_keep_every_value_in_its_slot() {
        let nj = 3;
        let value = |c: usize, g: usize| (c * 100_003 + g) as f64 + 0.25;
        let mut c = Curves::default();
        assert!(c.realloc(nj, 100));
        assert_eq!(c.cap, BLOCK, "whole blocks");
        // Batches of frames and their pieces, each within one block.
        let batches: [&[usize]; 4] = [
            &[0, 1, 2, 3, 700],
            &[700, BLOCK - 1, BLOCK],
            &[BLOCK, BLOCK + 5],
            &[BLOCK + 5, 3 * BLOCK + 9],
        ];
        for cuts in batches {
            let (n0, g1) = (cuts[0], *cuts.last().unwrap());
            let mut pieces: Vec<(usize, usize)> = cuts.windows(2).map(|w| (w[0], w[1])).collect();
            if g1 > 2 * BLOCK {
                pieces = vec![(n0, 2 * BLOCK), (2 * BLOCK, 3 * BLOCK), (3 * BLOCK, g1)];
            }
            c.grow(nj, g1 - n0);
            c.populate(g1);
            assert!(c.populated >= g1 && c.populated % BLOCK == 0);
            for (&(a, b), (steps, accs)) in pieces.iter().zip(c.pieces_mut(&pieces)) {
                assert!(steps.len() == nj && accs.len() == nj);
                for (j, (s, x)) in steps.into_iter().zip(accs).enumerate() {
                    assert_eq!(s.len(), b.saturating_sub(a.max(1)));
                    assert_eq!(x.len(), b.saturating_sub(a.max(2)));
                    let (s0, x0) = (b - s.len(), b - x.len());
                    s.iter_mut().enumerate().for_each(|(i, v)| *v = value(2 * j, s0 + i));
                    x.iter_mut().enumerate().for_each(|(i, v)| *v = value(2 * j + 1, x0 + i));
                }
            }
            c.n = g1;
            let mut got = Vec::new();
            for j in 0..nj {
                c.step(j, &mut got);
                assert!(got.iter().enumerate().all(|(f, &x)| x == value(2 * j, f + 1)));
                assert_eq!(got.len(), g1 - 1);
                c.acc(j, &mut got);
                assert!(got.iter().enumerate().all(|(f, &x)| x == value(2 * j + 1, f + 2)));
                assert_eq!(got.len(), g1 - 2);
                let tail: Vec<&[f64]> = c.segments(2 * j, g1, c.cap).collect();
                assert!(tail.iter().all(|s| s.iter().all(|&x| x == 0.0)));
                if c.cap > BLOCK {
                    let parts: Vec<usize> =
                        c.segments(2 * j + 1, 5, BLOCK + 3).map(<[f64]>::len).collect();
                    assert_eq!(parts, [BLOCK - 5, 3]);
                }
            }
        }
        assert_eq!(c.cap, 4 * BLOCK);
        c.populate(1);
        assert_eq!(c.populated, 4 * BLOCK, "never back");
    }
}

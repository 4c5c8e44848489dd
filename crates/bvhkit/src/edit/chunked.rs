//! [`ChunkedMap`]: a [`FrameMap`] run over runs of frames on rayon's pool,
//! with exactly the output of mapping the frames one at a time in order.
//!
//! # Implementation notes
//!
//! `SplitFrameMap` (a `FrameMap` whose state is decided by the frames it wrote;
//! `absorb` gathers statistics such as `LayoutMap`'s largest error) and
//! `ChunkedMap` / `map_frames_chunked`, which map runs of frames on rayon's
//! pool with exactly the output of one frame at a time: the first part of a run
//! continues the map, every other part starts from a fresh copy that first maps
//! the frame before it; in order, a part whose guessed frame before is not bit
//! for bit the exact one is mapped again from the exact state (Euler continuity
//! guesses right unless angles have wandered a full turn from their principal
//! range), unless the map maps the run itself (`SplitFrameMap::map_many`:
//! `order::Rewrite`, the joints whose rotation channels are written again each
//! frame for `OrderMap`, `AxesMap` and `LayoutMap`, runs groups of joints
//! through every frame on the pool, each joint's continuity being its own, each
//! group writing its own block of columns of every output frame (the joints in
//! file order, so the blocks are side by side): the map's other channels in the
//! block (the copy, the axis moves, the layout's base values and copies) and
//! then the group's angles, with no buffer of angles in between; the layout's
//! error in a pass of its own over pieces of frames; `ScaleMap`, which keeps
//! nothing from frame to frame, maps pieces of frames on the pool).
//!
//! `ChunkedMap` checks every guessed state against the exact frame before it
//! and maps a part again when they differ (maps with `map_many` guess nothing:
//! each group of joints goes through every frame in order), so `bvh edit`'s
//! streamed and whole-clip outputs and `map_frames_chunked` never depend on
//! thread count, batch size or part size (`tests/chunked.rs`, CLI
//! `edit_output_does_not_depend_on_the_thread_count_nor_the_batches`).

use super::FrameMap;

/// A [`FrameMap`] whose runs of frames [`ChunkedMap`] may map on several
/// threads.
///
/// The contract (which every per-frame transform of [`crate::edit`] keeps):
/// the state a map carries from one frame to the next is decided by the
/// output frames it wrote, so two copies of a map that wrote the same
/// output frame for the same input frame map every later frame the same.
/// State that does not change the output (statistics, such as the largest
/// error seen) may differ, and [`SplitFrameMap::absorb`] gathers it.
pub trait SplitFrameMap: FrameMap + Clone + Send + Sync {
    /// Takes in the statistics of `earlier`, a copy of this map that
    /// mapped the frames before the ones this copy mapped. The default
    /// does nothing (maps that keep no statistics).
    fn absorb(&mut self, earlier: &Self) {
        let _ = earlier;
    }

    /// Maps `frames` frames (`input` and `output` hold them one after the
    /// other) exactly as [`FrameMap::map`] one frame at a time in order
    /// would, when the map has a better way than [`ChunkedMap`]'s guesses
    /// (for instance on several threads over joints whose state from
    /// frame to frame is their own); returns `false`, having done nothing,
    /// otherwise. The default returns `false`.
    fn map_many(&mut self, frames: usize, input: &[f64], output: &mut [f64]) -> bool {
        let _ = (frames, input, output);
        false
    }
}

/// Frames before a part that a fresh copy maps to guess the state there:
/// one, the frame whose output is then compared with the exact one (so
/// statistics a copy gathers on the way are those of exact frames only).
const WARM_FRAMES: usize = 1;

/// Values per run of frames handed to one task.
const PART_VALUES: usize = 32 * 1024;

/// Maps runs of frames through a [`SplitFrameMap`] on rayon's pool (with
/// the `parallel` feature; one thread without it), and gives exactly the
/// frames that mapping them one at a time, in order, through one map gives:
/// the output does not depend on the thread count nor on how the frames
/// are cut into runs.
///
/// How: a run of frames is cut into parts. The first part continues the
/// map as it stands; every other part starts from a fresh copy of the map
/// (one that has mapped nothing) which first maps the frame before the
/// part, a guess of the state there. Then, in order, each
/// guess is checked: when the guessed copy wrote, for the frame before the
/// part, bit for bit the frame that the exact run wrote, it carries the
/// same state (the [`SplitFrameMap`] contract) and its part is exact;
/// otherwise the part is mapped again from the exact state (counted by
/// [`ChunkedMap::redone`]). Euler continuity guesses right whenever the
/// angles have not wandered a full turn from their principal range, which
/// is what motion capture nearly always does.
///
/// # Example
/// ```
/// use bvhkit::Bvh;
/// use bvhkit::edit::{ChunkedMap, FrameMap, map_frames, order::OrderMap};
/// use bvhkit::rotation::RotationOrder;
/// let bvh = Bvh::parse("HIERARCHY ROOT A { OFFSET 0 0 0 CHANNELS 3 Zrotation Xrotation Yrotation }
///     MOTION Frames: 3 Frame Time: 0.1
///     0 0 170
///     0 0 179
///     0 0 -172")?;
/// let map = OrderMap::all(bvh.skeleton(), RotationOrder::XYZ);
/// let one_by_one = map_frames(&bvh, &mut map.clone())?;
/// let mut chunked = ChunkedMap::new(map);
/// let mut out = vec![0.0; 9];
/// chunked.map(3, bvh.motion().values(), &mut out);
/// assert_eq!(out, one_by_one.motion().values());
/// # Ok::<(), bvhkit::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct ChunkedMap<M: SplitFrameMap> {
    #[cfg_attr(not(feature = "parallel"), allow(dead_code))]
    fresh: M,
    current: M,
    n_in: usize,
    n_out: usize,
    redone: usize,
}

impl<M: SplitFrameMap> ChunkedMap<M> {
    /// Wraps `map`, which must not have mapped a frame yet.
    pub fn new(map: M) -> ChunkedMap<M> {
        let n_out = map.output_skeleton().n_channels();
        ChunkedMap { fresh: map.clone(), current: map, n_in: usize::MAX, n_out, redone: 0 }
    }

    /// The map in the state after the last frame mapped, its statistics
    /// gathered over every frame (for what it reports at the end).
    pub fn get(&self) -> &M {
        &self.current
    }

    /// How many parts were mapped again because their guessed state was
    /// wrong (the cost of a guess, never a difference in the output).
    pub fn redone(&self) -> usize {
        self.redone
    }

    /// Maps the next `frames` frames, `input` holding them one after the
    /// other (`frames` times the input channel count), into `output`
    /// (`frames` times the output channel count).
    ///
    /// # Panics
    /// When the lengths do not fit `frames`.
    pub fn map(&mut self, frames: usize, input: &[f64], output: &mut [f64]) {
        if frames == 0 {
            return;
        }
        assert_eq!(input.len() % frames, 0, "input must hold whole frames");
        let n_in = input.len() / frames;
        if self.n_in == usize::MAX {
            self.n_in = n_in;
        }
        assert_eq!(n_in, self.n_in, "input frames must keep one length");
        let n_out = self.n_out;
        assert_eq!(output.len(), frames * n_out, "output must hold one frame per input frame");
        if n_out > 0 && self.current.map_many(frames, input, output) {
            return;
        }
        let part = (PART_VALUES / n_in.max(n_out).max(1)).max(WARM_FRAMES + 1);
        if frames <= part || n_out == 0 || !cfg!(feature = "parallel") {
            run(&mut self.current, n_in, n_out, input, output, 0..frames);
            return;
        }
        self.map_parts(frames, part, input, output);
    }

    #[cfg(not(feature = "parallel"))]
    fn map_parts(&mut self, frames: usize, _: usize, input: &[f64], output: &mut [f64]) {
        run(&mut self.current, self.n_in, self.n_out, input, output, 0..frames);
    }

    #[cfg(feature = "parallel")]
    fn map_parts(&mut self, frames: usize, part: usize, input: &[f64], output: &mut [f64]) {
        use rayon::prelude::*;
        let (n_in, n_out) = (self.n_in, self.n_out);
        let starts: Vec<usize> = (0..frames).step_by(part).collect();
        let mut pieces: Vec<(usize, &mut [f64])> = Vec::with_capacity(starts.len());
        let mut rest = &mut output[..];
        for &s in &starts {
            let n = part.min(frames - s);
            let (head, tail) = rest.split_at_mut(n * n_out);
            pieces.push((s, head));
            rest = tail;
        }
        let (first, others) = pieces.split_first_mut().expect("at least one part");
        let current = &mut self.current;
        let fresh = &self.fresh;
        // Each guessed part: the copy after its part, and the frame it wrote
        // for the frame before the part.
        let (_, guesses): ((), Vec<(M, Vec<f64>)>) = rayon::join(
            || {
                run_into(current, n_in, n_out, input, &mut *first.1, 0, part.min(frames));
            },
            || {
                others
                    .par_iter_mut()
                    .map(|(s, out)| {
                        let s = *s;
                        let mut m = fresh.clone();
                        let mut before = vec![0.0; n_out];
                        for f in s - WARM_FRAMES.min(s)..s {
                            m.map(&input[f * n_in..(f + 1) * n_in], &mut before);
                        }
                        let n = part.min(frames - s);
                        run_into(&mut m, n_in, n_out, input, out, s, n);
                        (m, before)
                    })
                    .collect()
            },
        );
        // Check the guesses in order; `state` is the exact map after the
        // parts checked so far.
        let mut state = self.current.clone();
        for ((m, before), &s) in guesses.into_iter().zip(&starts[1..]) {
            let exact_before = &output[(s - 1) * n_out..s * n_out];
            let same = before.iter().zip(exact_before).all(|(a, b)| a.to_bits() == b.to_bits());
            if same {
                let mut m = m;
                m.absorb(&state);
                state = m;
            } else {
                let n = part.min(frames - s);
                let out = &mut output[s * n_out..(s + n) * n_out];
                run_into(&mut state, n_in, n_out, input, out, s, n);
                self.redone += 1;
            }
        }
        self.current = state;
    }
}

/// Maps frames `range` of `input` into the same frames of `output`.
fn run<M: FrameMap>(
    m: &mut M,
    n_in: usize,
    n_out: usize,
    input: &[f64],
    output: &mut [f64],
    range: std::ops::Range<usize>,
) {
    let n = range.len();
    let s = range.start;
    run_into(m, n_in, n_out, input, &mut output[s * n_out..(s + n) * n_out], s, n);
}

/// Maps `n` frames of `input` from frame `s` into `out` (those frames only).
fn run_into<M: FrameMap>(
    m: &mut M,
    n_in: usize,
    n_out: usize,
    input: &[f64],
    out: &mut [f64],
    s: usize,
    n: usize,
) {
    for k in 0..n {
        let f = s + k;
        m.map(&input[f * n_in..(f + 1) * n_in], &mut out[k * n_out..(k + 1) * n_out]);
    }
}

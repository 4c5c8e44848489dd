//! The plan of a streamed edit: [`Steps`], the frame steps and per-frame
//! maps a clip runs through one batch of frames at a time, in constant
//! memory.
//!
//! An edit is a list of transforms in a given order. Those that work frame
//! by frame become steps: a frame range ([`FrameSpan`]), every Nth frame,
//! or a per-frame map ([`Stage`], one of this module's transforms as a
//! [`FrameMap`], run on all cores by [`ChunkedMap`]). Transforms that need
//! the whole clip (reversing, resampling, scaling to a height) are not
//! steps: a caller that meets one runs the whole-clip functions instead.
//!
//! Some maps must see frames before the stream starts (the up axis, the
//! length unit, the root-motion carrier, a rest-pose frame): the caller
//! reads them through the steps before them, either again from the start
//! ([`Steps::run`] on a copy of the steps) or, behind frame steps alone,
//! only the input frames that become the sampled output frames
//! ([`Steps::input_frames`], chosen for [`Steps::expected`] frames). A map
//! set up on a guess says at the end whether the whole clip confirmed it
//! ([`Steps::failed`], [`Stage::failed`]); the caller then runs the
//! whole clip instead. `bvh edit` (`crates/bvhkit-cli/src/edit/`) is the
//! caller: it parses the flags, reads the input, looks ahead and writes.
//!
//! # Example
//! ```
//! use bvhkit::Bvh;
//! use bvhkit::edit::plan::{FrameSpan, Stage, Steps};
//! use bvhkit::edit::scale::ScaleMap;
//!
//! let bvh = Bvh::parse("HIERARCHY ROOT Hips { OFFSET 0 0 0 CHANNELS 3 Xposition Yposition Zposition
//!     End Site { OFFSET 0 10 0 } }
//!     MOTION Frames: 4 Frame Time: 0.1
//!     0 1 0
//!     1 1 0
//!     2 1 0
//!     3 1 0")?;
//! // Frames 1.., every second one, scaled by 10.
//! let mut steps = Steps::new();
//! steps.push_range(FrameSpan::new(Some(1), None));
//! steps.push_every(2);
//! steps.push_map(Stage::Scale(ScaleMap::new(bvh.skeleton(), 10.0)?));
//! assert_eq!(steps.expected(Some(4)), 2);
//! let mut out = Vec::new();
//! let left = steps.run(4, bvh.motion().values(), 3, &mut out);
//! assert_eq!((left.count, left.in_batch), (2, false));
//! assert_eq!(out, [10.0, 10.0, 0.0, 30.0, 10.0, 0.0]);
//! # Ok::<(), bvhkit::Error>(())
//! ```

use crate::PositionChannels;
use crate::edit::axes::AxesMap;
use crate::edit::joints::RemoveJoints;
use crate::edit::layout::LayoutMap;
use crate::edit::mirror::Mirror;
use crate::edit::order::OrderMap;
use crate::edit::portable::PortableMap;
use crate::edit::rest::RestMap;
use crate::edit::root::{Extract, InPlace, ToOrigin};
use crate::edit::scale::ScaleMap;
use crate::edit::{ChunkedMap, FrameMap, SplitFrameMap};
use crate::parse::join;
use crate::skeleton::Skeleton;
use crate::units::{FrameSizes, Units};

/// A range of frames counted in the frames that reach its step: `start..end`,
/// either side open (`None`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameSpan {
    start: Option<usize>,
    end: Option<usize>,
}

impl FrameSpan {
    /// The frames `start..end` (`None`: from the first, to the last).
    pub fn new(start: Option<usize>, end: Option<usize>) -> FrameSpan {
        FrameSpan { start, end }
    }

    /// The first frame of the range.
    pub fn first(self) -> usize {
        self.start.unwrap_or(0)
    }

    /// Whether frame `f` is in the range (for streams of unknown length).
    pub fn contains(self, f: usize) -> bool {
        f >= self.start.unwrap_or(0) && self.end.is_none_or(|e| f < e)
    }

    /// Whether no frame at or after `f` can be in the range.
    pub fn past(self, f: usize) -> bool {
        self.end.is_some_and(|e| f >= e)
    }

    /// Whether the range ends (so that reading can stop once it is past).
    pub fn is_bounded(self) -> bool {
        self.end.is_some()
    }

    /// How many of the frames `0..n` the range holds.
    pub fn count_in(self, n: usize) -> usize {
        self.end.unwrap_or(n).min(n).saturating_sub(self.first())
    }

    /// The range against the `n` frames reaching it, as `bvh edit --frames`
    /// says it: an error when it selects none of them (it starts past their
    /// end: `--frames 5000..: the clip has only 10 frames (0..10) here; the
    /// range selects none of them`), a note when it ends past them (fewer
    /// frames kept than it spans: `--frames 8..20: the clip has 10 frames
    /// (0..10) here; keeping 8..10`), else nothing. "Here" is the step: the
    /// count is of the frames the earlier options leave.
    ///
    /// # Errors
    /// The message when the range starts past the end of `n` frames.
    pub fn check(self, n: usize) -> Result<Option<String>, String> {
        let frames = |n: usize| match n {
            1 => "1 frame (0)".to_string(),
            _ => format!("{n} frames (0..{n})"),
        };
        if self.first() >= n && self.first() > 0 {
            return Err(match n {
                0 => format!("--frames {self}: the clip has no frames here"),
                _ => format!(
                    "--frames {self}: the clip has only {} here; the range selects none of them",
                    frames(n)
                ),
            });
        }
        match self.end {
            Some(end) if end > n && n > 0 => Ok(Some(format!(
                "--frames {self}: the clip has {} here; keeping {}..{n}",
                frames(n),
                self.first()
            ))),
            _ => Ok(None),
        }
    }
}

/// `A..B`, either side left out when open.
impl std::fmt::Display for FrameSpan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(a) = self.start {
            write!(f, "{a}")?;
        }
        f.write_str("..")?;
        if let Some(b) = self.end {
            write!(f, "{b}")?;
        }
        Ok(())
    }
}

/// A per-frame transform of a plan: one of this module's [`FrameMap`]s,
/// which [`ChunkedMap`] maps on all cores with the output of one frame at
/// a time.
#[derive(Clone, Debug)]
pub enum Stage {
    /// Rotation channel order ([`crate::edit::order`]).
    Order(OrderMap),
    /// Up and forward axes ([`crate::edit::axes`]).
    Axes(AxesMap),
    /// Lengths times a factor ([`crate::edit::scale`]).
    Scale(ScaleMap),
    /// Lengths converted from a unit guessed on sampled frames, with what
    /// the whole clip must confirm.
    Units(ScaleMap, Box<GuessCheck>),
    /// Channel layout ([`crate::edit::layout`]).
    Layout(Box<LayoutMap>),
    /// Left for right ([`crate::edit::mirror`]).
    Mirror(Box<Mirror>),
    /// Joints removed, with its input skeleton (its size scales the
    /// tolerance of [`RemoveJoints::max_position_error`]).
    Remove(Box<RemoveJoints>, Box<Skeleton>),
    /// A new rest pose, with its input skeleton.
    Rest(Box<RestMap>, Box<Skeleton>),
    /// Root motion removed ([`crate::edit::root`]).
    InPlace(Box<InPlace>),
    /// The first frame's root moved to the origin.
    ToOrigin(Box<ToOrigin>),
    /// Root motion extracted onto a new root joint.
    Extract(Box<Extract>),
    /// Position channels every reader reads alike
    /// ([`crate::edit::portable`]), planned on the frames observed first.
    Portable(Box<PortableMap>),
}

/// A unit guessed on sampled frames, and the sizes of every frame the
/// real pass maps: the guess holds when the sizes of the whole clip (as it
/// reaches the step) give the same unit ([`Stage::failed`] otherwise).
#[derive(Clone, Debug)]
pub struct GuessCheck {
    sizes: FrameSizes,
    sampled: Units,
}

impl GuessCheck {
    /// A check of the unit `sampled`, guessed from some of the frames of
    /// `skeleton`, to be measured on every frame.
    pub fn new(skeleton: &Skeleton, mode: PositionChannels, sampled: Units) -> GuessCheck {
        GuessCheck { sizes: FrameSizes::new(skeleton, mode), sampled }
    }

    /// The sizes of every frame mapped so far.
    pub fn sizes(&self) -> &FrameSizes {
        &self.sizes
    }

    /// The unit guessed on the sample.
    pub fn sampled(&self) -> Units {
        self.sampled
    }
}

impl Stage {
    fn inner(&self) -> &dyn FrameMap {
        match self {
            Stage::Order(m) => m,
            Stage::Axes(m) => m,
            Stage::Scale(m) | Stage::Units(m, _) => m,
            Stage::Layout(m) => &**m,
            Stage::Mirror(m) => &**m,
            Stage::Remove(m, _) => &**m,
            Stage::Rest(m, _) => &**m,
            Stage::InPlace(m) => &**m,
            Stage::ToOrigin(m) => &**m,
            Stage::Extract(m) => &**m,
            Stage::Portable(m) => &**m,
        }
    }

    /// Whether a frame failed (the whole clip gives the error, naming it),
    /// or the whole clip did not confirm a guess made on a sample.
    pub fn failed(&self) -> bool {
        match self {
            Stage::Units(_, check) => check.sizes.guess().units != check.sampled,
            Stage::InPlace(m) => m.failed(),
            Stage::ToOrigin(m) => m.failed(),
            Stage::Extract(m) => m.failed(),
            _ => false,
        }
    }
}

impl FrameMap for Stage {
    fn output_skeleton(&self) -> &Skeleton {
        self.inner().output_skeleton()
    }

    fn map(&mut self, input: &[f64], output: &mut [f64]) {
        match self {
            Stage::Order(m) => m.map(input, output),
            Stage::Axes(m) => m.map(input, output),
            Stage::Scale(m) => m.map(input, output),
            Stage::Units(m, check) => {
                m.map(input, output);
                check.sizes.push(input);
            }
            Stage::Layout(m) => m.map(input, output),
            Stage::Mirror(m) => m.map(input, output),
            Stage::Remove(m, _) => m.map(input, output),
            Stage::Rest(m, _) => m.map(input, output),
            Stage::InPlace(m) => m.map(input, output),
            Stage::ToOrigin(m) => m.map(input, output),
            Stage::Extract(m) => m.map(input, output),
            Stage::Portable(m) => m.map(input, output),
        }
    }
}

impl SplitFrameMap for Stage {
    fn absorb(&mut self, earlier: &Self) {
        match (self, earlier) {
            (Stage::Layout(m), Stage::Layout(e)) => m.absorb(e),
            (Stage::Remove(m, _), Stage::Remove(e, _)) => m.absorb(e),
            (Stage::Rest(m, _), Stage::Rest(e, _)) => m.absorb(e),
            (Stage::InPlace(m), Stage::InPlace(e)) => m.absorb(e),
            (Stage::ToOrigin(m), Stage::ToOrigin(e)) => m.absorb(e),
            (Stage::Extract(m), Stage::Extract(e)) => m.absorb(e),
            _ => {}
        }
    }

    fn map_many(&mut self, frames: usize, input: &[f64], output: &mut [f64]) -> bool {
        match self {
            Stage::Order(m) => m.map_many(frames, input, output),
            Stage::Axes(m) => m.map_many(frames, input, output),
            Stage::Scale(m) => m.map_many(frames, input, output),
            Stage::Units(m, check) => {
                // The frames measured while they are scaled; the whole run
                // is mapped here (never cut by `ChunkedMap`, whose copies
                // would measure their parts apart).
                // `ScaleMap::map_many` declines only frames without channels
                // (or lengths that do not fit, which `ChunkedMap` rules out):
                // those are mapped, and measured, one by one through `map`.
                if m.output_skeleton().n_channels() == 0 {
                    return false;
                }
                let (scaled, ()) = join(
                    || m.map_many(frames, input, output),
                    || check.sizes.push_many(frames, input),
                );
                debug_assert!(scaled, "ScaleMap maps any run of whole frames");
                scaled
            }
            Stage::Layout(m) => m.map_many(frames, input, output),
            Stage::Mirror(m) => m.map_many(frames, input, output),
            Stage::Remove(m, _) => m.map_many(frames, input, output),
            Stage::Rest(m, _) => m.map_many(frames, input, output),
            Stage::InPlace(m) => m.map_many(frames, input, output),
            Stage::ToOrigin(m) => m.map_many(frames, input, output),
            Stage::Extract(m) => m.map_many(frames, input, output),
            // Channels copied or moved by a constant: `ChunkedMap` cuts
            // the run, every part exact (the map keeps no state).
            Stage::Portable(_) => false,
        }
    }
}

/// One step of a streamed edit.
#[derive(Clone)]
enum Step {
    /// A frame range, and the number of frames that reached it so far.
    Range(FrameSpan, usize),
    /// Every Nth frame, and the number of frames that reached it so far.
    Every(usize, usize),
    /// The map, and its output buffer (reused from batch to batch).
    Map(Box<ChunkedMap<Stage>>, Vec<f64>),
}

/// The steps of a streamed edit, in order: frame ranges, every Nth frame
/// and per-frame maps, run one batch of frames at a time ([`Steps::run`]).
/// A copy runs the frames again from the start (the original is not moved
/// on), as a look at frames before the stream does.
#[derive(Clone, Default)]
pub struct Steps(Vec<Step>);

/// What [`Steps::run`] leaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Left {
    /// Frames left.
    pub count: usize,
    /// Whether they are the batch itself (no step changed it), else in the
    /// output vector.
    pub in_batch: bool,
    /// Whether later frames can still be kept (a frame range that is past
    /// stops the reading).
    pub more: bool,
}

impl std::fmt::Debug for Steps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut list = f.debug_list();
        for step in &self.0 {
            match step {
                Step::Range(r, seen) => list.entry(&("Range", r, seen)),
                Step::Every(n, seen) => list.entry(&("Every", n, seen)),
                Step::Map(m, _) => list.entry(&("Map", m.get())),
            };
        }
        list.finish()
    }
}

impl Steps {
    /// No step: frames go through unchanged.
    pub fn new() -> Steps {
        Steps(Vec::new())
    }

    /// Keeps the frames of `span` of those reaching this step.
    pub fn push_range(&mut self, span: FrameSpan) {
        self.0.push(Step::Range(span, 0));
    }

    /// Keeps every `n`th of the frames reaching this step, from the first.
    pub fn push_every(&mut self, n: usize) {
        self.0.push(Step::Every(n, 0));
    }

    /// Maps every frame reaching this step.
    pub fn push_map(&mut self, stage: Stage) {
        self.0.push(Step::Map(Box::new(ChunkedMap::new(stage)), Vec::new()));
    }

    /// The maps, in order.
    pub fn maps(&self) -> impl Iterator<Item = &Stage> {
        self.0.iter().filter_map(|s| if let Step::Map(m, _) = s { Some(m.get()) } else { None })
    }

    /// Whether a map failed on a frame or its guess was not confirmed: the
    /// whole clip must decide ([`Stage::failed`]).
    pub fn failed(&self) -> bool {
        self.maps().any(Stage::failed)
    }

    /// Each frame range, in order, with the frames that reached it so far
    /// ([`Steps::run`]) and whether that count is its last: the reading
    /// went to the end (`ended`), or a range before it is past (no later
    /// frame can reach it).
    pub fn ranges_reached(&self, ended: bool) -> Vec<(FrameSpan, usize, bool)> {
        let mut last = ended;
        let mut list = Vec::new();
        for step in &self.0 {
            if let Step::Range(r, seen) = *step {
                list.push((r, seen, last));
                last |= seen > 0 && r.past(seen - 1);
            }
        }
        list
    }

    /// The frames the steps leave of `n` input frames, and whether a frame
    /// range among them is past once they have met those frames (so that
    /// no later input frame can leave them).
    pub fn through(&self, mut n: usize) -> (usize, bool) {
        let mut past = false;
        for step in &self.0 {
            n = match step {
                Step::Range(r, _) => {
                    past |= n > 0 && r.past(n - 1);
                    r.count_in(n)
                }
                Step::Every(e, _) => n.div_ceil((*e).max(1)),
                Step::Map(..) => n,
            };
        }
        (n, past)
    }

    /// The frames the steps should leave of the `declared` input frames
    /// (`Frames:`; none: 0), to size what is written before any frame is
    /// read, or to choose a sample (a wrong guess must cost a copy or a
    /// second pass, never a wrong output).
    pub fn expected(&self, declared: Option<u64>) -> usize {
        let n = declared.map_or(0, |d| usize::try_from(d).unwrap_or(usize::MAX));
        self.through(n).0
    }

    /// The input frames that the frame steps turn into their output frames
    /// `wanted` (ascending, so are they); `None` when a step is a map
    /// (which could change the values) or the numbers overflow.
    pub fn input_frames(&self, wanted: &[usize]) -> Option<Vec<usize>> {
        wanted
            .iter()
            .map(|&k| {
                self.0.iter().rev().try_fold(k, |k, step| match step {
                    Step::Range(r, _) => k.checked_add(r.first()),
                    Step::Every(n, _) => k.checked_mul(*n),
                    Step::Map(..) => None,
                })
            })
            .collect()
    }

    /// Runs the steps on one batch of `frames` input frames of `n_in`
    /// values. The frames left are in `a`, or still in `batch` when no step
    /// changed them ([`Left`]).
    pub fn run(&mut self, frames: usize, batch: &[f64], n_in: usize, a: &mut Vec<f64>) -> Left {
        // The frames so far: `batch` itself until a step writes them into `a`.
        let mut in_batch = true;
        let mut width = n_in;
        let mut count = frames;
        let mut more = true;
        for step in self.0.iter_mut() {
            let keep: Box<dyn Fn(usize) -> bool> = match step {
                Step::Range(r, i) => {
                    let first = *i;
                    *i += count;
                    if count > 0 && r.past(first + count - 1) {
                        more = false;
                    }
                    let r = *r;
                    Box::new(move |k| r.contains(first + k))
                }
                Step::Every(n, i) => {
                    let first = *i;
                    *i += count;
                    let n = *n;
                    Box::new(move |k| (first + k) % n == 0)
                }
                Step::Map(m, buf) => {
                    let w = m.get().output_skeleton().n_channels();
                    buf.clear();
                    buf.resize(count * w, 0.0);
                    m.map(count, if in_batch { batch } else { &a[..count * width] }, buf);
                    std::mem::swap(a, buf);
                    in_batch = false;
                    width = w;
                    continue;
                }
            };
            // Keep the selected frames, in order, at the front of `a`.
            let mut n = 0;
            for k in 0..count {
                if keep(k) {
                    if in_batch {
                        if n == 0 {
                            a.clear();
                        }
                        a.extend_from_slice(&batch[k * width..(k + 1) * width]);
                    } else {
                        a.copy_within(k * width..(k + 1) * width, n * width);
                    }
                    n += 1;
                }
            }
            if in_batch && n == 0 {
                a.clear();
            }
            in_batch = false;
            count = n;
            a.truncate(count * width);
        }
        Left { count, in_batch, more }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_span_check_says_the_frames_there_are() {
        let span = |a, b| FrameSpan::new(a, b);
        assert_eq!(span(Some(2), Some(5)).check(10), Ok(None));
        assert_eq!(span(None, None).check(0), Ok(None));
        assert_eq!(
            span(Some(8), Some(20)).check(10),
            Ok(Some("--frames 8..20: the clip has 10 frames (0..10) here; keeping 8..10".into()))
        );
        assert_eq!(
            span(None, Some(3)).check(1),
            Ok(Some("--frames ..3: the clip has 1 frame (0) here; keeping 0..1".into()))
        );
        assert_eq!(
            span(Some(5000), None).check(10),
            Err("--frames 5000..: the clip has only 10 frames (0..10) here; the range selects \
                 none of them"
                .into())
        );
        assert_eq!(
            span(Some(1), Some(2)).check(1),
            Err("--frames 1..2: the clip has only 1 frame (0) here; the range selects none of \
                 them"
                .into())
        );
        assert_eq!(
            span(Some(3), None).check(0),
            Err("--frames 3..: the clip has no frames here".into())
        );
    }

    fn steps(list: &[(&str, usize)]) -> Steps {
        let mut s = Steps::new();
        for &(kind, n) in list {
            match kind {
                "from" => s.push_range(FrameSpan::new(Some(n), None)),
                "to" => s.push_range(FrameSpan::new(None, Some(n))),
                _ => s.push_every(n),
            }
        }
        s
    }

    #[test]
    fn frame_steps_count_and_trace_their_frames() {
        // Output frame k of `--frames 10.. --every 3` is input 10 + 3k.
        let s = steps(&[("from", 10), ("every", 3)]);
        assert_eq!(s.input_frames(&[0, 1, 5]), Some(vec![10, 13, 25]));
        assert_eq!(steps(&[("every", 2), ("from", 4)]).input_frames(&[0, 1]), Some(vec![8, 10]));
        assert_eq!(steps(&[("every", usize::MAX)]).input_frames(&[2]), None);
        // 100 input frames leave 30 of those steps.
        assert_eq!(s.through(100), (30, false));
        assert_eq!(s.expected(Some(100)), 30);
        assert_eq!(s.expected(None), 0);
        let bounded = steps(&[("from", 10), ("to", 10), ("every", 3)]);
        assert_eq!(bounded.through(50), (4, true));
        assert_eq!(bounded.through(15), (2, false));
    }

    #[test]
    fn runs_in_any_batches_keep_the_frames_of_one_run() {
        // Frames of two values, frame f = [f, -f].
        let n = 37;
        let values: Vec<f64> = (0..n).flat_map(|f| [f as f64, -(f as f64)]).collect();
        let expect: Vec<f64> = (0..n)
            .filter(|f| (3..30).contains(f) && (f - 3) % 4 == 0)
            .flat_map(|f| [f as f64, -(f as f64)])
            .collect();
        for batch in [1, 2, 5, 37] {
            let mut s = steps(&[("from", 3), ("to", 27), ("every", 4)]);
            let (mut got, mut a, mut more) = (Vec::new(), Vec::new(), true);
            for b in values.chunks(batch * 2) {
                let left = s.run(b.len() / 2, b, 2, &mut a);
                assert!(!left.in_batch);
                got.extend_from_slice(&a[..left.count * 2]);
                more = left.more;
            }
            assert_eq!(got, expect, "batches of {batch}");
            assert!(!more, "the range was past");
        }
        // No step: the batch itself.
        let left = Steps::new().run(3, &values[..6], 2, &mut Vec::new());
        assert_eq!(left, Left { count: 3, in_batch: true, more: true });
    }
}

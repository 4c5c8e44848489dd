//! What `bvh edit`'s stream looks at before it starts: a mapped file read
//! again from the start through the steps before a transform
//! ([`Lookahead::frames`], [`Lookahead::batches`], stopping as soon as the
//! transform has decided), or, behind frame steps alone (and no later
//! bounded `--frames`), only the lines of the input frames that become the
//! sampled frames (`Steps::input_frames` for `Steps::expected` frames,
//! `sample::Sample::read` over `ReadOptions::sample_frames`), which the
//! real pass then confirms (`sample::SampleCheck`: the sampled input frames
//! bit for bit and the count of frames the steps left; any difference gives
//! up to the whole clip after the pass, like a failed map).
//!
//! The up axis (`--up` and root motion without `--source-up`) is detected
//! on the frames `edit::axes::sampled_frames` names
//! ([`Lookahead::detect_up`]: on sampled lines, else in one pass that keeps
//! only those frames, `clip::detect_up_in_one_pass`). The unit guess of
//! `--units` without `--source-units` is made on the same sampled lines
//! ([`Lookahead::sampled_units`]) and confirmed by the stage itself
//! (`plan::Stage::Units` measures every frame it scales), else on every
//! frame's size in a first pass, a batch at a time on lanes
//! ([`Lookahead::batches`]).

use anyhow::{Result, anyhow};
use bvhkit::edit::axes::UpAxis;
use bvhkit::edit::plan::Steps;
use bvhkit::units::{FrameSizes, Units};
use bvhkit::{PositionChannels, ReadOptions, Skeleton};

use super::transform::stops_reading;
use super::{NEEDS_WHOLE_CLIP, Transform};
use crate::io::{Input, located};
use crate::sample::{FrameSteps, Sample, SampleCheck};

/// An input that can be read again from the start: the bytes of a mapped
/// (or small, read) regular file.
#[derive(Clone, Copy)]
pub(super) struct Lookahead<'a> {
    pub(super) opts: &'a ReadOptions,
    pub(super) bytes: &'a [u8],
    /// The input, to name in errors.
    pub(super) input: &'a Input,
}

impl Lookahead<'_> {
    /// [`bvhkit::edit::axes::detect_up`] of the frames as they leave `steps` (frames of `n_in`
    /// values in, of `skel`'s channels out); `None` when the number of
    /// frames differs from the one `declared` promised through the steps,
    /// on which the sample was chosen (the whole clip then decides).
    ///
    /// When `steps` are frame steps only (`--frames`, `--every`) and no
    /// later step can stop the reading (`later_stops`: a later `--frames`
    /// with an end), the sampled frames are read from their own lines
    /// alone ([`Lookahead::sampled_up`]) and `checks` gets what the real
    /// pass must confirm; otherwise (or when the lines are not the frames)
    /// in one pass over the whole motion that keeps only the sampled frames
    /// (`crate::clip::detect_up_in_one_pass`).
    fn detect_up(
        &self,
        steps: &Steps,
        n_in: usize,
        skel: &Skeleton,
        declared: Option<u64>,
        later_stops: bool,
        checks: &mut Vec<SampleCheck<Steps>>,
    ) -> Result<Option<UpAxis>> {
        if !later_stops && let Some((up, check)) = self.sampled_up(steps, n_in, skel, declared)? {
            checks.push(check);
            return Ok(Some(up));
        }
        let n = steps.expected(declared);
        crate::clip::detect_up_in_one_pass(skel, n, |each| {
            self.frames(steps, n_in, skel.n_channels(), each)
        })
    }

    /// [`bvhkit::edit::axes::detect_up`] of the frames [`bvhkit::edit::axes::sampled_frames`]
    /// names among the `declared` frames as they leave `steps`, which must
    /// be frame steps only: the input frames they come from, found by
    /// index arithmetic, are read from their lines alone
    /// ([`ReadOptions::sample_frames`], no other frame is parsed), with
    /// the [`SampleCheck`] that the real pass must pass for the answer to
    /// be the whole clip's. `None` when a step is a map or the motion's
    /// lines are visibly not its frames.
    fn sampled_up(
        &self,
        steps: &Steps,
        n_in: usize,
        skel: &Skeleton,
        declared: Option<u64>,
    ) -> Result<Option<(UpAxis, SampleCheck<Steps>)>> {
        let Some(sample) = self.sample(steps, n_in, skel, declared)? else {
            return Ok(None);
        };
        let up = sample.up(skel);
        Ok(Some((up, sample.check(steps.clone()))))
    }

    /// The unit [`FrameSizes`] guesses from the frames
    /// [`bvhkit::edit::axes::sampled_frames`] names among the `declared`
    /// frames as they leave `steps` (frame steps only), read from their
    /// lines alone as [`Lookahead::sampled_up`] reads them. A guess only:
    /// the real pass measures every frame and must confirm it
    /// ([`bvhkit::edit::plan::GuessCheck`]). `None` when the frames cannot be sampled.
    pub(super) fn sampled_units(
        &self,
        steps: &Steps,
        n_in: usize,
        skel: &Skeleton,
        declared: Option<u64>,
        mode: PositionChannels,
    ) -> Result<Option<Units>> {
        let Some(sample) = self.sample(steps, n_in, skel, declared)? else {
            return Ok(None);
        };
        let mut sizes = FrameSizes::new(skel, mode);
        for frame in sample.values() {
            sizes.push(frame);
        }
        Ok(Some(sizes.guess().units))
    }

    /// The input frames that become the sampled frames
    /// ([`bvhkit::edit::axes::sampled_frames`] of the frames `steps` should
    /// leave of the `declared` ones), read from their lines alone
    /// ([`Sample::read`]), chosen for that expected count; `None` when a
    /// step is a map, the frames have no values, or the motion's lines are
    /// visibly not its frames.
    fn sample(
        &self,
        steps: &Steps,
        n_in: usize,
        skel: &Skeleton,
        declared: Option<u64>,
    ) -> Result<Option<Sample>> {
        let expected = steps.expected(declared);
        let wanted = bvhkit::edit::axes::sampled_frames(expected);
        let Some(frames) = steps.input_frames(&wanted) else { return Ok(None) };
        if skel.n_channels() != n_in {
            return Ok(None);
        }
        Sample::read(self.opts, self.bytes, self.input, frames, n_in, expected)
    }

    /// Reads the frames again from the start through `steps` (a copy: the
    /// stream's own steps are not moved on), handing each frame they leave
    /// (of `width` values) to `each` until it says it has seen enough, the
    /// steps keep no later frame, or the frames end. Reading stops there:
    /// most clips decide in their first batch. The next batch is parsed
    /// while the steps and `each` run on the one before
    /// ([`crate::io::read_batches`]).
    pub(super) fn frames(
        &self,
        steps: &Steps,
        n_in: usize,
        width: usize,
        mut each: impl FnMut(&[f64]) -> bool + Send,
    ) -> Result<()> {
        self.batches(steps, n_in, |count, values| {
            (0..count).any(|k| each(&values[k * width..(k + 1) * width]))
        })
    }

    /// [`Lookahead::frames`] a batch at a time: `each(count, values)` gets
    /// the frames of each batch that `steps` leave, one after the other,
    /// and says whether it has seen enough.
    pub(super) fn batches(
        &self,
        steps: &Steps,
        n_in: usize,
        mut each: impl FnMut(usize, &[f64]) -> bool + Send,
    ) -> Result<()> {
        let located = |e: bvhkit::Error| anyhow!(located(self.input, &e));
        let mut rdr = self.opts.frame_reader_slice(self.bytes).map_err(located)?;
        let mut steps = steps.clone();
        let mut a = Vec::new();
        let read = crate::io::read_batches(&mut rdr, |n, batch| {
            let left = steps.run(n, batch, n_in, &mut a);
            let values = if left.in_batch { batch } else { &a[..] };
            if each(left.count, values) {
                return Ok(false);
            }
            Ok(left.more)
        })?;
        read.map_err(located)
    }
}

/// `bvh edit`'s frame steps before a transform that sampled frames: the
/// [`SampleCheck`] counts the frames they leave.
impl FrameSteps for Steps {
    fn through(&self, n: usize) -> (usize, bool) {
        Steps::through(self, n)
    }
}

/// The up axis a transform detects from the frames as they leave `steps`
/// ([`Lookahead::detect_up`]; `later` are the transforms after it, whose
/// frame ranges may stop the reading early): [`NEEDS_WHOLE_CLIP`] without a
/// mapped input or when the sample cannot decide.
pub(super) fn up_of(
    again: Option<Lookahead<'_>>,
    steps: &Steps,
    n_in: usize,
    skel: &Skeleton,
    declared: Option<u64>,
    later: &[Transform],
    checks: &mut Vec<SampleCheck<Steps>>,
) -> Result<UpAxis> {
    let Some(again) = again else { return Err(NEEDS_WHOLE_CLIP.into()) };
    let up = again.detect_up(steps, n_in, skel, declared, stops_reading(later), checks)?;
    up.ok_or_else(|| NEEDS_WHOLE_CLIP.into())
}

//! What a streamed edit looks at before it starts: the input's bytes read
//! again from the start through the steps before a transform
//! ([`Lookahead::frames`], [`Lookahead::batches`], stopping as soon as the
//! transform has decided), or, behind frame steps alone (and no later
//! bounded frame range), only the lines of the input frames that become
//! the sampled frames (`Steps::input_frames` for `Steps::expected` frames,
//! [`Sample::read`] over `ReadOptions::sample_frames`), which the real
//! pass then confirms ([`SampleCheck`]: the sampled input frames bit for
//! bit and the count of frames the steps left; any difference gives up to
//! the whole clip after the pass, like a failed map).
//!
//! The up axis (`Step::Up` and root motion without a source up axis) is
//! detected on the frames [`sampled_frames`] names ([`Lookahead::up`]: on
//! sampled lines, else in one pass that keeps only those frames,
//! [`detect_up_in_one_pass`]). The unit guess of `Step::Units` without a
//! source unit is made on the same sampled lines
//! ([`Lookahead::sampled_units`]) and confirmed by the stage itself
//! (`plan::Stage::Units` measures every frame it scales), else on every
//! frame's size in a first pass, a batch at a time on lanes
//! ([`Lookahead::batches`]). `--portable` observes every frame the steps
//! leave in a first pass ([`Lookahead::portable`]): which position channels
//! stay constant decides the output's header.

use crate::PositionChannels;
use crate::edit::axes::{UpAxis, detect_up_sampled, sampled_frames};
use crate::edit::plan::Steps;
use crate::edit::portable::{Observer, PortableMap, PortableReport, Scope};
use crate::error::Result;
use crate::parse::{FrameReader, FrameSource, ReadOptions};
use crate::skeleton::Skeleton;
use crate::units::{FrameSizes, Units};

use super::sample::{Sample, SampleCheck};

/// Values per batch of frames handed on by [`read_batches`].
pub const BATCH_VALUES: usize = 256 * 1024;

/// An input that can be read again from the start: the bytes of a mapped
/// (or read) regular file.
#[derive(Clone, Copy)]
pub(super) struct Lookahead<'a> {
    pub(super) opts: &'a ReadOptions,
    pub(super) bytes: &'a [u8],
    /// Called as the search for sampled lines goes over `bytes`
    /// ([`Sample::read_releasing`]), when the caller may drop what it
    /// searched (`Edit::stream_bytes_releasing`).
    pub(super) release: Option<&'a (dyn Fn(usize) + Sync)>,
}

impl Lookahead<'_> {
    /// [`crate::edit::axes::detect_up`] of the frames as they leave `steps`
    /// (frames of `n_in` values in, of `skel`'s channels out); `None` when
    /// the number of frames differs from the one `declared` promised
    /// through the steps, on which the sample was chosen (the whole clip
    /// then decides).
    ///
    /// When `steps` are frame steps only and no later step can stop the
    /// reading (`later_stops`: a later frame range with an end), the
    /// sampled frames are read from their own lines alone
    /// ([`Lookahead::sampled_up`]) and `checks` gets what the real pass must
    /// confirm; otherwise (or when the lines are not the frames) in one
    /// pass over the whole motion that keeps only the sampled frames.
    pub(super) fn up(
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
        detect_up_in_one_pass(skel, n, |each| self.frames(steps, n_in, skel.n_channels(), each))
    }

    /// The up axis of the frames [`sampled_frames`] names among the
    /// `declared` frames as they leave `steps`, which must be frame steps
    /// only: the input frames they come from, found by index arithmetic,
    /// are read from their lines alone, with the [`SampleCheck`] that the
    /// real pass must pass for the answer to be the whole clip's. `None`
    /// when a step is a map or the motion's lines are visibly not its
    /// frames.
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

    /// The unit [`FrameSizes`] guesses from the frames [`sampled_frames`]
    /// names among the `declared` frames as they leave `steps` (frame steps
    /// only), read from their lines alone as [`Lookahead::sampled_up`]
    /// reads them. A guess only: the real pass measures every frame and
    /// must confirm it ([`crate::edit::plan::GuessCheck`]). `None` when the
    /// frames cannot be sampled.
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

    /// The input frames that become the sampled frames ([`sampled_frames`]
    /// of the frames `steps` should leave of the `declared` ones), read
    /// from their lines alone ([`Sample::read`]), chosen for that expected
    /// count; `None` when a step is a map, the frames have no values, or
    /// the motion's lines are visibly not its frames.
    fn sample(
        &self,
        steps: &Steps,
        n_in: usize,
        skel: &Skeleton,
        declared: Option<u64>,
    ) -> Result<Option<Sample>> {
        let expected = steps.expected(declared);
        let wanted = sampled_frames(expected);
        let Some(frames) = steps.input_frames(&wanted) else { return Ok(None) };
        if skel.n_channels() != n_in {
            return Ok(None);
        }
        Sample::read_releasing(self.opts, self.bytes, frames, n_in, expected, self.release)
    }

    /// The portable map of the frames as they leave `steps` (frames of
    /// `n_in` values in, of `skel`'s channels out, position channels read
    /// as `mode`) and what it changes: which position channels are the same
    /// in every frame is known only after the last one, so every frame the
    /// steps leave is observed in a first pass ([`Observer`], one frame kept)
    /// before the stream writes its header.
    pub(super) fn portable(
        &self,
        steps: &Steps,
        n_in: usize,
        skel: &Skeleton,
        mode: PositionChannels,
    ) -> Result<Result<(PortableMap, PortableReport)>> {
        let mut obs = Observer::new(skel, mode);
        let w = skel.n_channels();
        self.batches(steps, n_in, |count, values| {
            for k in 0..count {
                obs.observe(&values[k * w..(k + 1) * w]);
            }
            false
        })?;
        Ok(obs.plan(Scope::Full))
    }

    /// Reads the frames again from the start through `steps` (a copy: the
    /// stream's own steps are not moved on), handing each frame they leave
    /// (of `width` values) to `each` until it says it has seen enough, the
    /// steps keep no later frame, or the frames end. Reading stops there:
    /// most clips decide in their first batch. The next batch is parsed
    /// while the steps and `each` run on the one before ([`read_batches`]).
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
        let mut rdr = self.opts.frame_reader_slice(self.bytes)?;
        let mut steps = steps.clone();
        let mut a = Vec::new();
        let read = read_batches(&mut rdr, |n, batch| -> std::result::Result<bool, ()> {
            let left = steps.run(n, batch, n_in, &mut a);
            let values = if left.in_batch { batch } else { &a[..] };
            if each(left.count, values) {
                return Ok(false);
            }
            Ok(left.more)
        });
        match read {
            Ok(r) => r,
            Err(()) => unreachable!("the closure never fails"),
        }
    }
}

/// [`crate::edit::axes::detect_up`] of a clip of `skeleton` read once from
/// start to end by `pass`, which hands each frame to the closure it is
/// given (a `true` from that closure would stop it; this one never says
/// so): only the frames [`sampled_frames`] names for the `expected` count
/// are kept, and the answer is `detect_up`'s on the whole clip. `None` when
/// the pass met another number of frames (the caller then loads the whole
/// clip).
pub fn detect_up_in_one_pass<E>(
    skeleton: &Skeleton,
    expected: usize,
    pass: impl FnOnce(&mut (dyn FnMut(&[f64]) -> bool + Send)) -> std::result::Result<(), E>,
) -> std::result::Result<Option<UpAxis>, E> {
    let wanted = sampled_frames(expected);
    let mut kept: Vec<Vec<f64>> = Vec::with_capacity(wanted.len());
    let mut k = 0usize;
    pass(&mut |f: &[f64]| {
        if wanted.get(kept.len()) == Some(&k) {
            kept.push(f.to_vec());
        }
        k += 1;
        false
    })?;
    if k != expected || kept.len() != wanted.len() {
        return Ok(None);
    }
    let frames: Vec<&[f64]> = kept.iter().map(Vec::as_slice).collect();
    Ok(Some(detect_up_sampled(skeleton, &frames)))
}

/// Reads `rdr`'s frames a batch at a time, handing each batch (its frame
/// count and values) to `each` while the next one is parsed (on rayon's
/// pool with the `parallel` feature, `rayon::join`), until `each` says it
/// wants no more (`Ok(false)`) or fails. The outer result is `each`'s
/// error; the inner one the reader's, after the frames before it were
/// handed on (frames past where `each` stopped, and their errors, are not
/// its business).
pub fn read_batches<R: FrameSource + Send, E: Send>(
    rdr: &mut FrameReader<R>,
    mut each: impl FnMut(usize, &[f64]) -> std::result::Result<bool, E> + Send,
) -> std::result::Result<Result<()>, E> {
    read_batches_consumed(rdr, |n, batch, _| each(n, batch))
}

/// [`read_batches`], also handing `each` the input bytes the reader had
/// consumed when it finished parsing that batch
/// ([`FrameReader::bytes_consumed`]): the reading of the next batch, going
/// on meanwhile, never looks before that offset (a caller reading a mapped
/// file may drop the pages before it).
pub fn read_batches_consumed<R: FrameSource + Send, E: Send>(
    rdr: &mut FrameReader<R>,
    mut each: impl FnMut(usize, &[f64], usize) -> std::result::Result<bool, E> + Send,
) -> std::result::Result<Result<()>, E> {
    let width = rdr.skeleton().n_channels();
    // Frames without channels still count: batches carry their number.
    let per_batch = (BATCH_VALUES / width.max(1)).max(2);
    // One batch into `batch`: its frame count, whether the frames ended,
    // and the reader's error (after the frames before it).
    let read = |rdr: &mut FrameReader<R>, batch: &mut Vec<f64>| {
        batch.clear();
        let mut n = 0;
        // A batch is the frames of one window of input (`read_window`: the
        // buffer they were parsed into, not a copy) when they make half a
        // batch or more, else of as many windows as that takes; at most
        // two batches' worth.
        while n < per_batch / 2 {
            match rdr.read_window(batch, 2 * per_batch - n) {
                Ok(0) => return (n, true, None, rdr.bytes_consumed()),
                Ok(k) => n += k,
                Err(e) => return (n, true, Some(e), rdr.bytes_consumed()),
            }
        }
        (n, false, None, rdr.bytes_consumed())
    };
    let mut run = || {
        let (mut cur, mut next) = (Vec::new(), Vec::new());
        let (mut n, mut end, mut failed, mut consumed) = read(rdr, &mut cur);
        while n > 0 {
            let (after, wants) = if end {
                ((0, true, None, consumed), each(n, &cur, consumed))
            } else {
                join(|| read(rdr, &mut next), || each(n, &cur, consumed))
            };
            match wants {
                Ok(true) => {}
                // Frames past where the consumer stopped are not its
                // business, nor their errors (the reading may have run
                // ahead into one).
                Ok(false) => return Ok(Ok(())),
                Err(e) => return Err(e),
            }
            if failed.is_some() {
                break;
            }
            std::mem::swap(&mut cur, &mut next);
            (n, end, failed, consumed) = after;
        }
        Ok(failed.map_or(Ok(()), Err))
    };
    #[cfg(feature = "parallel")]
    {
        rayon::scope(|_| run())
    }
    #[cfg(not(feature = "parallel"))]
    {
        run()
    }
}

/// Both closures, on rayon's pool when there is one.
pub(super) fn join<A: Send, B: Send>(
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    #[cfg(feature = "parallel")]
    {
        rayon::join(a, b)
    }
    #[cfg(not(feature = "parallel"))]
    {
        (a(), b())
    }
}

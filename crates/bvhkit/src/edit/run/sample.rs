//! Frames sampled from their own lines before a stream reads the input,
//! and the check that the stream's own frames were those.
//!
//! A mapped file's up axis (and an edit's unit guess) is decided on the
//! frames [`sampled_frames`] names, read from their lines alone
//! ([`ReadOptions::sample_frames`]: no other frame is parsed) instead of in
//! a first pass over every frame. That trusts the lines it does not read,
//! so the real pass, which reads every frame anyway, checks the answer
//! ([`SampleCheck`]): the sampled frames bit for bit and the count of
//! frames, through the frame steps before them ([`FrameSteps`]), against
//! the count the sample was chosen on. The streamed edit
//! ([`super::Edit`]: `--up`, root motion, `--units`) and `bvh
//! positions`/`bvh rotations --up auto` share it; where the check fails
//! they do not commit their output and take their exact path.

use crate::edit::axes::{UpAxis, detect_up_sampled, sampled_frames};
use crate::error::Result;
use crate::parse::ReadOptions;
use crate::skeleton::Skeleton;

/// Input frames read from their lines alone ([`Sample::read`]).
#[derive(Clone, Debug)]
pub struct Sample {
    /// Input frame numbers, ascending.
    frames: Vec<usize>,
    /// Their values, one frame after the other, `width` each.
    values: Vec<f64>,
    width: usize,
    /// The frames expected (of the input, or out of the frame steps
    /// before the transform), on which the sample was chosen.
    expected: usize,
}

impl Sample {
    /// Input frames `frames` (ascending) of the BVH text `bytes` of
    /// `width` channels, read from their own lines alone
    /// ([`ReadOptions::sample_frames`]), chosen for `expected` frames;
    /// `None` when the frames have no values or the motion's lines are
    /// visibly not its frames.
    pub fn read(
        opts: &ReadOptions,
        bytes: &[u8],
        frames: Vec<usize>,
        width: usize,
        expected: usize,
    ) -> Result<Option<Sample>> {
        Self::read_releasing(opts, bytes, frames, width, expected, None)
    }

    /// [`Sample::read`], calling `release` as the search for the lines
    /// goes when it is given ([`ReadOptions::sample_frames_releasing`]).
    pub fn read_releasing(
        opts: &ReadOptions,
        bytes: &[u8],
        frames: Vec<usize>,
        width: usize,
        expected: usize,
        release: Option<&(dyn Fn(usize) + Sync)>,
    ) -> Result<Option<Sample>> {
        if width == 0 {
            return Ok(None);
        }
        let values = match release {
            Some(release) => opts.sample_frames_releasing(bytes, &frames, release)?,
            None => opts.sample_frames(bytes, &frames)?,
        };
        let Some(values) = values else {
            return Ok(None);
        };
        Ok(Some(Sample { frames, values, width, expected }))
    }

    /// A sample of input frames `frames` whose values are `values` (`width`
    /// each), chosen for `expected` frames.
    pub fn new(frames: Vec<usize>, values: Vec<f64>, width: usize, expected: usize) -> Sample {
        Sample { frames, values, width, expected }
    }

    /// [`Sample::read`] of the frames [`sampled_frames`] names among the
    /// `declared` frames of the whole file (`Frames:`).
    pub fn of_clip(
        opts: &ReadOptions,
        bytes: &[u8],
        width: usize,
        declared: Option<u64>,
    ) -> Result<Option<Sample>> {
        let expected = frame_count(declared);
        Self::read(opts, bytes, sampled_frames(expected), width, expected)
    }

    /// The sampled frames' values, a frame at a time.
    pub fn values(&self) -> std::slice::ChunksExact<'_, f64> {
        self.values.chunks_exact(self.width)
    }

    /// [`detect_up_sampled`] of the sampled frames on `skel` (the skeleton
    /// they are frames of): the whole clip's answer when they are
    /// [`sampled_frames`] of it, which the [`SampleCheck`] confirms.
    pub fn up(&self, skel: &Skeleton) -> UpAxis {
        let frames: Vec<&[f64]> = self.values().collect();
        detect_up_sampled(skel, &frames)
    }

    /// What the real pass must confirm of the sample: its frames met with
    /// the same bits, and `steps` (the frame steps between the input and
    /// the frames the sample was chosen among; `()` for none) leaving the
    /// expected count of the frames read.
    pub fn check<S: FrameSteps>(self, steps: S) -> SampleCheck<S> {
        let Sample { frames, values, width, expected } = self;
        SampleCheck { frames, values, width, steps, expected, read: 0, met: 0, same: true }
    }
}

/// The frame count `Frames:` declares (`None`: 0; a count past `usize`:
/// `usize::MAX`, which no pass meets).
pub fn frame_count(declared: Option<u64>) -> usize {
    declared.map_or(0, |d| usize::try_from(d).unwrap_or(usize::MAX))
}

/// Frame steps (an edit's frame ranges and every Nth frame) between the
/// input frames and the frames a sample was chosen among.
pub trait FrameSteps {
    /// The frames the steps leave of `n` input frames, and whether a frame
    /// range among them is past once they have met those frames (so that
    /// no later input frame can leave them).
    fn through(&self, n: usize) -> (usize, bool);
}

/// No steps: the sample was chosen among the input frames themselves.
impl FrameSteps for () {
    fn through(&self, n: usize) -> (usize, bool) {
        (n, false)
    }
}

/// An edit's frame steps before a transform that sampled frames.
impl FrameSteps for crate::edit::plan::Steps {
    fn through(&self, n: usize) -> (usize, bool) {
        crate::edit::plan::Steps::through(self, n)
    }
}

/// The input frames a first pass read from their lines alone
/// ([`Sample`]), to be compared with the frames the real pass reads: the
/// answer they gave is the whole clip's only when they are the very frames
/// the reader hands out, and the frame steps before them left the number of
/// frames the sample was chosen on.
#[derive(Clone, Debug)]
pub struct SampleCheck<S> {
    /// Input frame numbers, ascending.
    frames: Vec<usize>,
    /// Their values as the first pass read them, `width` each.
    values: Vec<f64>,
    width: usize,
    /// The frame steps before the sampled frames (not yet moved on).
    steps: S,
    /// The frames `steps` were expected to leave.
    expected: usize,
    /// Input frames the real pass has read.
    read: usize,
    /// Sampled frames met so far.
    met: usize,
    /// Whether every frame met had the first pass's bits.
    same: bool,
}

impl<S: FrameSteps> SampleCheck<S> {
    /// Compares the sampled frames among the next batch of `frames` input
    /// frames (`batch`, `width` values each).
    pub fn batch(&mut self, frames: usize, batch: &[f64]) {
        let end = self.read + frames;
        while let Some(&f) = self.frames.get(self.met).filter(|&&f| f < end) {
            let w = self.width;
            let got = &batch[(f - self.read) * w..][..w];
            let first = &self.values[self.met * w..][..w];
            self.same &= got.iter().zip(first).all(|(a, b)| a.to_bits() == b.to_bits());
            self.met += 1;
        }
        self.read = end;
    }

    /// Whether the first pass's answer is the whole clip's, once the real
    /// pass is over (`ended`: it read to the end of the input, rather than
    /// stopping where a frame range was past): every sampled frame was met
    /// with the same bits, and the frame steps left the expected number of
    /// frames (counted on the frames read, which is all of them when the
    /// reading ended, or when a frame range of the steps themselves was
    /// past).
    pub fn holds(&self, ended: bool) -> bool {
        let (left, past) = self.steps.through(self.read);
        self.same && self.met == self.frames.len() && (ended || past) && left == self.expected
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Frames `0..n` kept, as a frame range `..n` does.
    struct Until(usize);

    impl FrameSteps for Until {
        fn through(&self, n: usize) -> (usize, bool) {
            (n.min(self.0), n > self.0)
        }
    }

    /// A sample of input frames `frames` (one value each, the frame's
    /// number) chosen for `expected` frames.
    fn sample(frames: &[usize], expected: usize) -> Sample {
        let values = frames.iter().map(|&f| f as f64).collect();
        Sample::new(frames.to_vec(), values, 1, expected)
    }

    /// `check` after a pass over input frames `0..n` (frame `f` holding
    /// `f`, but `bad`'s bits changed) in batches of `batch` frames.
    fn passed<S: FrameSteps>(
        mut check: SampleCheck<S>,
        n: usize,
        batch: usize,
        bad: Option<usize>,
    ) -> SampleCheck<S> {
        let values: Vec<f64> =
            (0..n).map(|f| if Some(f) == bad { -(f as f64) - 0.5 } else { f as f64 }).collect();
        for b in values.chunks(batch) {
            check.batch(b.len(), b);
        }
        check
    }

    #[test]
    fn sampled_frames_are_confirmed_by_the_pass_or_refused() {
        let wanted = sampled_frames(100);
        let fresh = || sample(&wanted, 100).check(());
        for batch in [1, 7, 100] {
            assert!(passed(fresh(), 100, batch, None).holds(true));
            // One sampled frame's bits differ: refused; another frame's: fine.
            assert!(!passed(fresh(), 100, batch, Some(wanted[4])).holds(true));
            assert!(passed(fresh(), 100, batch, Some(wanted[4] + 1)).holds(true));
        }
        // -0.0 is not 0.0: bits, not values.
        let mut zero = sample(&[0], 1).check(());
        zero.batch(1, &[-0.0]);
        assert!(!zero.holds(true));
        // Another count of frames, or a sampled frame never met.
        assert!(!passed(fresh(), 101, 10, None).holds(true));
        assert!(!passed(fresh(), 99, 10, None).holds(true));
        // A reading that stopped early: its count is not the input's.
        assert!(!passed(fresh(), 100, 100, None).holds(false));
        // Unless a frame range of the steps was past: nothing later can
        // leave them.
        let wanted = sampled_frames(40);
        assert!(passed(sample(&wanted, 40).check(Until(40)), 41, 41, None).holds(false));
        assert!(!passed(sample(&wanted, 40).check(Until(40)), 40, 40, None).holds(false));
        assert!(passed(sample(&wanted, 40).check(Until(40)), 40, 40, None).holds(true));
    }

    #[test]
    fn sampled_lines_give_the_whole_clips_up_axis() {
        let mut text = String::from(
            "HIERARCHY\nROOT Hips\n{\n\tOFFSET 0 0 0\n\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n\
             \tJOINT Head\n\t{\n\t\tOFFSET 0 0 60\n\t\tCHANNELS 3 Zrotation Xrotation Yrotation\n\
             \t\tEnd Site\n\t\t{\n\t\t\tOFFSET 0 0 10\n\t\t}\n\t}\n\
             \tJOINT LeftFoot\n\t{\n\t\tOFFSET 10 0 -85\n\t\tCHANNELS 3 Zrotation Xrotation Yrotation\n\
             \t\tEnd Site\n\t\t{\n\t\t\tOFFSET 0 10 0\n\t\t}\n\t}\n}\n\
             MOTION\nFrames: 40\nFrame Time: 0.04\n",
        );
        for f in 0..40 {
            text.push_str(&format!("0 0 90 {f} 0 0 0 0 0 0 0 0\n"));
        }
        let opts = ReadOptions::new();
        let sample = Sample::of_clip(&opts, text.as_bytes(), 12, Some(40)).unwrap();
        let sample = sample.expect("one frame a line");
        let bvh = opts.parse(text.as_bytes()).unwrap().0;
        let whole = crate::edit::axes::detect_up(&bvh);
        assert_eq!(whole.axis, Some(crate::edit::axes::SignedAxis::PosZ));
        assert_eq!(sample.up(bvh.skeleton()).to_string(), whole.to_string());
        let firsts: Vec<f64> = sample.values().map(|f| f[3]).collect();
        let wanted: Vec<f64> = sampled_frames(40).into_iter().map(|f| f as f64).collect();
        assert_eq!(firsts, wanted);
        // Frames: says 41: the lines are not the frames.
        let more = text.replace("Frames: 40", "Frames: 41");
        assert!(Sample::of_clip(&opts, more.as_bytes(), 12, Some(41)).unwrap().is_none());
        // No channels: nothing to sample.
        assert!(Sample::of_clip(&opts, text.as_bytes(), 0, Some(40)).unwrap().is_none());
    }
}

//! Frame selection: keep a range, keep every Nth frame, reverse.
//!
//! Kept frames are copied bit for bit and the frame time is kept (keeping
//! every Nth frame multiplies it by N, exactly when N is a power of two,
//! else correctly rounded). Range and step decide per frame index, so a
//! stream can apply them frame by frame ([`Selection`]); reversing needs
//! the whole clip.

use std::ops::Range;

use crate::bvh::Bvh;
use crate::error::{Error, Result};
use crate::motion::Motion;

/// Which input frames to keep, decided per frame index: the frames of
/// `range` (clamped to the clip) whose offset from the range's start is a
/// multiple of `step`. Streams use it frame by frame.
///
/// # Example
/// ```
/// use bvhkit::edit::frames::Selection;
/// let s = Selection::new(2..9, 3)?;
/// let kept: Vec<usize> = (0..20).filter(|&i| s.keeps(i)).collect();
/// assert_eq!(kept, [2, 5, 8]);
/// assert!(s.done(9));
/// # Ok::<(), bvhkit::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection {
    range: Range<usize>,
    step: usize,
}

impl Selection {
    /// Frames `range`, every `step`th.
    ///
    /// # Errors
    /// When `step` is 0.
    pub fn new(range: Range<usize>, step: usize) -> Result<Selection> {
        if step == 0 {
            return Err(Error::invalid("keeping every 0th frame: the step must be at least 1"));
        }
        Ok(Selection { range, step })
    }

    /// Every frame.
    pub fn all() -> Selection {
        Selection { range: 0..usize::MAX, step: 1 }
    }

    /// Keeps the frames of `range` out of the frames this selection keeps
    /// (indices of `range` count kept frames).
    pub fn then_range(&self, range: Range<usize>) -> Selection {
        let start = self.range.start.saturating_add(range.start.saturating_mul(self.step));
        let end = self
            .range
            .start
            .saturating_add(range.end.saturating_mul(self.step))
            .min(self.range.end)
            .max(start);
        Selection { range: start..end, step: self.step }
    }

    /// Keeps every `n`th of the frames this selection keeps.
    ///
    /// # Errors
    /// When `n` is 0.
    pub fn then_every(&self, n: usize) -> Result<Selection> {
        if n == 0 {
            return Err(Error::invalid("keeping every 0th frame: the step must be at least 1"));
        }
        Ok(Selection { range: self.range.clone(), step: self.step.saturating_mul(n) })
    }

    /// The input range this selection looks at.
    pub fn range(&self) -> Range<usize> {
        self.range.clone()
    }

    /// Keep every `step`th frame of the range.
    pub fn step(&self) -> usize {
        self.step
    }

    /// Whether input frame `i` is kept.
    #[inline]
    pub fn keeps(&self, i: usize) -> bool {
        self.range.contains(&i) && (i - self.range.start).is_multiple_of(self.step)
    }

    /// Whether no frame at index `i` or later is kept (a stream can stop).
    #[inline]
    pub fn done(&self, i: usize) -> bool {
        i >= self.range.end
    }

    /// The frame time of the selected frames: `frame_time * step`.
    pub fn frame_time(&self, frame_time: f64) -> f64 {
        frame_time * self.step as f64
    }

    /// The selected frames of `bvh`, copied bit for bit.
    ///
    /// # Errors
    /// Never for a valid `bvh` (the frame time stays finite and positive
    /// unless the step overflows it).
    pub fn apply(&self, bvh: &Bvh) -> Result<Bvh> {
        let m = bvh.motion();
        let n = m.n_channels();
        let ft = self.frame_time(m.frame_time());
        if !ft.is_finite() {
            return Err(Error::invalid(format!(
                "every {} frames of a Frame Time of {} s is more seconds per frame than a \
                 number holds",
                self.step,
                crate::error::num(m.frame_time())
            )));
        }
        let kept: Vec<usize> = (self.range.start.min(m.n_frames())
            ..self.range.end.min(m.n_frames()))
            .step_by(self.step)
            .collect();
        let mut values = Vec::with_capacity(kept.len() * n);
        for &i in &kept {
            values.extend_from_slice(m.frame(i));
        }
        let motion = Motion::with_frames(ft, kept.len(), n, values)?;
        Bvh::new(bvh.skeleton().clone(), motion)
    }
}

/// Frames `range` of `bvh` (clamped to the clip; an empty or reversed range
/// gives no frames), copied bit for bit; the frame time is kept.
///
/// # Errors
/// Never for a valid `bvh`.
///
/// # Example
/// ```
/// let bvh = bvhkit::Bvh::parse("HIERARCHY ROOT A { OFFSET 0 0 0 CHANNELS 1 Xrotation }
///     MOTION Frames: 4 Frame Time: 0.1\n0\n1\n2\n3")?;
/// let clip = bvhkit::edit::frames::range(&bvh, 1..3)?;
/// assert_eq!(clip.motion().values(), [1.0, 2.0]);
/// # Ok::<(), bvhkit::Error>(())
/// ```
pub fn range(bvh: &Bvh, range: Range<usize>) -> Result<Bvh> {
    Selection::new(range, 1)?.apply(bvh)
}

/// Every `n`th frame of `bvh`, starting with the first, bit for bit; the
/// frame time is multiplied by `n`, so the clip plays at the same speed.
///
/// # Errors
/// When `n` is 0.
///
/// # Example
/// ```
/// let bvh = bvhkit::Bvh::parse("HIERARCHY ROOT A { OFFSET 0 0 0 CHANNELS 1 Xrotation }
///     MOTION Frames: 5 Frame Time: 0.1\n0\n1\n2\n3\n4")?;
/// let clip = bvhkit::edit::frames::every(&bvh, 2)?;
/// assert_eq!(clip.motion().values(), [0.0, 2.0, 4.0]);
/// assert_eq!(clip.motion().frame_time(), 0.2);
/// # Ok::<(), bvhkit::Error>(())
/// ```
pub fn every(bvh: &Bvh, n: usize) -> Result<Bvh> {
    Selection::new(0..usize::MAX, n)?.apply(bvh)
}

/// The frames of `bvh` in reverse order, bit for bit; the frame time is
/// kept.
///
/// # Errors
/// Never for a valid `bvh`.
///
/// # Example
/// ```
/// let bvh = bvhkit::Bvh::parse("HIERARCHY ROOT A { OFFSET 0 0 0 CHANNELS 1 Xrotation }
///     MOTION Frames: 3 Frame Time: 0.1\n0\n1\n2")?;
/// assert_eq!(bvhkit::edit::frames::reverse(&bvh)?.motion().values(), [2.0, 1.0, 0.0]);
/// # Ok::<(), bvhkit::Error>(())
/// ```
pub fn reverse(bvh: &Bvh) -> Result<Bvh> {
    let m = bvh.motion();
    let mut values = Vec::with_capacity(m.values().len());
    for i in (0..m.n_frames()).rev() {
        values.extend_from_slice(m.frame(i));
    }
    let motion = Motion::with_frames(m.frame_time(), m.n_frames(), m.n_channels(), values)?;
    Bvh::new(bvh.skeleton().clone(), motion)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selections_compose() {
        let s = Selection::all().then_range(10..100).then_every(3).unwrap().then_range(2..5);
        let kept: Vec<usize> = (0..200).filter(|&i| s.keeps(i)).collect();
        // Kept frames of 10..100 every 3rd: 10, 13, 16, 19, 22, ...; then the 2nd to 4th of those.
        assert_eq!(kept, [16, 19, 22]);
        assert!(Selection::all().then_every(0).is_err());
    }

    #[test]
    fn zero_channel_clips_and_out_of_range_ranges() {
        let b = Bvh::parse(
            "HIERARCHY ROOT A { OFFSET 0 0 0 CHANNELS 0 } MOTION Frames: 3 Frame Time: 0.1\n\n\n\n",
        )
        .unwrap();
        assert_eq!(range(&b, 1..10).unwrap().motion().n_frames(), 2);
        assert_eq!(range(&b, 5..10).unwrap().motion().n_frames(), 0);
        #[allow(clippy::reversed_empty_ranges)]
        let r = range(&b, 2..1).unwrap();
        assert_eq!(r.motion().n_frames(), 0);
        assert_eq!(reverse(&b).unwrap().motion().n_frames(), 3);
    }
}

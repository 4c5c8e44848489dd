//! The timeline shared by every open clip, and its loop range.
//!
//! Clips may have different frame rates and lengths. The timeline counts
//! frames at the first clip's frame time and is as long as the longest
//! clip; [`Timeline::clip_frame`] maps a timeline frame to each clip's own
//! frame (holding its last frame once it has ended).

/// An inclusive range of timeline frames `start..=end` that playback loops
/// over. Always `start <= end`; on an empty timeline both are 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoopRange {
    start: usize,
    end: usize,
}

impl LoopRange {
    /// The whole timeline of `n_frames` frames.
    #[must_use]
    pub fn full(n_frames: usize) -> LoopRange {
        LoopRange { start: 0, end: n_frames.saturating_sub(1) }
    }

    /// `start..=end` on a timeline of `n_frames` frames, clamped to it and
    /// swapped if given backwards.
    #[must_use]
    pub fn new(start: usize, end: usize, n_frames: usize) -> LoopRange {
        let last = n_frames.saturating_sub(1);
        let (a, b) = (start.min(last), end.min(last));
        LoopRange { start: a.min(b), end: a.max(b) }
    }

    /// First frame of the range.
    #[must_use]
    pub fn start(&self) -> usize {
        self.start
    }

    /// Last frame of the range (inclusive).
    #[must_use]
    pub fn end(&self) -> usize {
        self.end
    }

    /// Number of frames in the range (at least 1).
    #[must_use]
    pub fn len(&self) -> usize {
        self.end - self.start + 1
    }

    /// Always `false`: a range holds at least one frame. (For clippy's
    /// `len_without_is_empty`.)
    #[must_use]
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Whether `frame` lies in the range.
    #[must_use]
    pub fn contains(&self, frame: usize) -> bool {
        (self.start..=self.end).contains(&frame)
    }

    /// Moves the start to `frame`; the end moves along if it would fall
    /// before the start. Clamped to a timeline of `n_frames` frames.
    pub fn set_start(&mut self, frame: usize, n_frames: usize) {
        let last = n_frames.saturating_sub(1);
        self.start = frame.min(last);
        self.end = self.end.clamp(self.start, last.max(self.start));
    }

    /// Moves the end to `frame`; the start moves along if it would fall
    /// after the end. Clamped to a timeline of `n_frames` frames.
    pub fn set_end(&mut self, frame: usize, n_frames: usize) {
        let last = n_frames.saturating_sub(1);
        self.end = frame.min(last);
        self.start = self.start.min(self.end);
    }

    /// The range clamped to a timeline of `n_frames` frames (after clips
    /// were added or removed).
    #[must_use]
    pub fn clamped(self, n_frames: usize) -> LoopRange {
        LoopRange::new(self.start, self.end, n_frames)
    }
}

/// The frame grid that all open clips are played on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timeline {
    /// Seconds per timeline frame: the first clip's frame time.
    pub frame_time: f64,
    /// Number of timeline frames: enough for the longest clip.
    pub n_frames: usize,
}

/// Frame time used when no clip gives a usable one (30 fps).
pub const FALLBACK_FRAME_TIME: f64 = 1.0 / 30.0;

fn usable(frame_time: f64) -> f64 {
    if frame_time.is_finite() && frame_time > 0.0 { frame_time } else { FALLBACK_FRAME_TIME }
}

impl Timeline {
    /// The timeline for clips given as `(n_frames, frame_time)`.
    #[must_use]
    pub fn new(clips: &[(usize, f64)]) -> Timeline {
        let Some(&(_, ft0)) = clips.first() else {
            return Timeline { frame_time: FALLBACK_FRAME_TIME, n_frames: 0 };
        };
        let frame_time = usable(ft0);
        let n_frames = clips
            .iter()
            .map(|&(n, ft)| {
                if n == 0 {
                    return 0;
                }
                // Timeline frames needed so that the clip's last frame is shown.
                let last = (n - 1) as f64 * usable(ft) / frame_time;
                (last - 1e-6).ceil().max(0.0) as usize + 1
            })
            .max()
            .unwrap_or(0);
        Timeline { frame_time, n_frames }
    }

    /// The frame of a clip with `n_frames` frames of `frame_time` seconds
    /// shown at timeline frame `frame`: the latest clip frame not after
    /// that instant, held at the clip's last frame. 0 for an empty clip.
    #[must_use]
    pub fn clip_frame(&self, frame: usize, n_frames: usize, frame_time: f64) -> usize {
        let t = frame as f64 * self.frame_time;
        let f = (t / usable(frame_time) + 1e-6).floor();
        (f.max(0.0) as usize).min(n_frames.saturating_sub(1))
    }

    /// Seconds from the start at timeline frame `frame`.
    #[must_use]
    pub fn seconds(&self, frame: usize) -> f64 {
        frame as f64 * self.frame_time
    }

    /// Frames per second of the timeline.
    #[must_use]
    pub fn fps(&self) -> f64 {
        1.0 / self.frame_time
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_is_clamped_and_ordered() {
        let r = LoopRange::new(50, 10, 30);
        assert_eq!((r.start(), r.end()), (10, 29));
        assert_eq!(r.len(), 20);
        assert!(r.contains(10) && r.contains(29) && !r.contains(9));
        assert_eq!(LoopRange::full(0), LoopRange { start: 0, end: 0 });
        assert_eq!(LoopRange::full(0).len(), 1);
        assert_eq!(LoopRange::full(5).clamped(3), LoopRange::new(0, 2, 3));
    }

    #[test]
    fn setting_one_end_pushes_the_other() {
        let mut r = LoopRange::new(10, 20, 100);
        r.set_start(30, 100);
        assert_eq!((r.start(), r.end()), (30, 30));
        r.set_end(5, 100);
        assert_eq!((r.start(), r.end()), (5, 5));
        r.set_end(500, 100);
        assert_eq!((r.start(), r.end()), (5, 99));
        r.set_start(500, 100);
        assert_eq!((r.start(), r.end()), (99, 99));
    }

    #[test]
    fn timeline_spans_the_longest_clip() {
        // 120 fps clip of 1 s (last frame at 119/120 s) beside a 30 fps one of 2 s.
        let t = Timeline::new(&[(120, 1.0 / 120.0), (60, 1.0 / 30.0)]);
        assert_eq!(t.frame_time, 1.0 / 120.0);
        // The 30 fps clip's last frame is at 59/30 s = 236 timeline frames.
        assert_eq!(t.n_frames, 237);
        assert_eq!(t.clip_frame(236, 60, 1.0 / 30.0), 59);
        assert_eq!(t.clip_frame(4, 60, 1.0 / 30.0), 1);
        assert_eq!(t.clip_frame(3, 60, 1.0 / 30.0), 0);
        // The shorter clip holds its last frame.
        assert_eq!(t.clip_frame(200, 120, 1.0 / 120.0), 119);
        assert!((t.seconds(120) - 1.0).abs() < 1e-12);
        assert!((t.fps() - 120.0).abs() < 1e-9);
    }

    #[test]
    fn same_rate_is_identity_and_bad_input_is_safe() {
        let t = Timeline::new(&[(10, 0.01), (4, 0.01)]);
        assert_eq!(t.n_frames, 10);
        for f in 0..10 {
            assert_eq!(t.clip_frame(f, 10, 0.01), f);
        }
        let e = Timeline::new(&[]);
        assert_eq!(e.n_frames, 0);
        assert_eq!(e.clip_frame(3, 0, 0.0), 0);
        let bad = Timeline::new(&[(3, f64::NAN), (0, 1.0)]);
        assert_eq!(bad.frame_time, FALLBACK_FRAME_TIME);
        assert_eq!(bad.n_frames, 3);
    }
}

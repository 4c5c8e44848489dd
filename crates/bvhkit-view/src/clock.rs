//! The playback clock: real time in, timeline frames out.
//!
//! The player feeds [`Clock::advance`] the real seconds elapsed since the
//! last repaint; the clock scales them by the playback speed, accumulates
//! them and moves on by whole frames, so playback runs at the file's frame
//! rate however fast or slow the window repaints.

use crate::timeline::LoopRange;

/// Slowest playback speed.
pub const MIN_SPEED: f64 = 0.1;
/// Fastest playback speed.
pub const MAX_SPEED: f64 = 4.0;

/// Play/pause state, speed, loop range and current frame of a timeline.
#[derive(Clone, Debug, PartialEq)]
pub struct Clock {
    n_frames: usize,
    frame_time: f64,
    frame: usize,
    /// Clip seconds elapsed since `frame` started, always `< frame_time`.
    accum: f64,
    playing: bool,
    looping: bool,
    speed: f64,
    range: LoopRange,
}

impl Clock {
    /// A paused clock at frame 0 of a timeline of `n_frames` frames of
    /// `frame_time` seconds, looping over the whole timeline at speed 1.
    #[must_use]
    pub fn new(n_frames: usize, frame_time: f64) -> Clock {
        Clock {
            n_frames,
            frame_time: if frame_time.is_finite() && frame_time > 0.0 {
                frame_time
            } else {
                crate::timeline::FALLBACK_FRAME_TIME
            },
            frame: 0,
            accum: 0.0,
            playing: false,
            looping: true,
            speed: 1.0,
            range: LoopRange::full(n_frames),
        }
    }

    /// Changes the timeline (clips were added), keeping the current frame,
    /// state and speed; the loop range is reset to the whole timeline when
    /// it covered the whole old one, and clamped otherwise.
    pub fn set_timeline(&mut self, n_frames: usize, frame_time: f64) {
        let was_full = self.range == LoopRange::full(self.n_frames);
        let next = Clock::new(n_frames, frame_time);
        self.n_frames = next.n_frames;
        self.frame_time = next.frame_time;
        self.range = if was_full { next.range } else { self.range.clamped(n_frames) };
        self.frame = self.frame.min(n_frames.saturating_sub(1));
        self.accum = 0.0;
    }

    /// The current timeline frame.
    #[must_use]
    pub fn frame(&self) -> usize {
        self.frame
    }

    /// Number of timeline frames.
    #[must_use]
    pub fn n_frames(&self) -> usize {
        self.n_frames
    }

    /// Seconds per frame.
    #[must_use]
    pub fn frame_time(&self) -> f64 {
        self.frame_time
    }

    /// Clip time in seconds, including the part of the current frame
    /// already played.
    #[must_use]
    pub fn seconds(&self) -> f64 {
        self.frame as f64 * self.frame_time + self.accum
    }

    /// Whether the clock is playing.
    #[must_use]
    pub fn is_playing(&self) -> bool {
        self.playing
    }

    /// Starts playing. At the end of a non-looping timeline, restarts from
    /// the loop range's start.
    pub fn play(&mut self) {
        if self.n_frames <= 1 {
            return;
        }
        if !self.looping && self.frame + 1 >= self.n_frames {
            self.seek(self.range.start());
        }
        self.playing = true;
    }

    /// Stops playing, staying on the current frame.
    pub fn pause(&mut self) {
        self.playing = false;
        self.accum = 0.0;
    }

    /// Play if paused, pause if playing.
    pub fn toggle(&mut self) {
        if self.playing { self.pause() } else { self.play() }
    }

    /// Whether playback wraps from the loop range's end to its start.
    #[must_use]
    pub fn is_looping(&self) -> bool {
        self.looping
    }

    /// Turns looping on or off. Without it playback runs to the last
    /// frame of the timeline and pauses.
    pub fn set_looping(&mut self, yes: bool) {
        self.looping = yes;
    }

    /// The playback speed factor.
    #[must_use]
    pub fn speed(&self) -> f64 {
        self.speed
    }

    /// Sets the playback speed, clamped to [`MIN_SPEED`]`..=`[`MAX_SPEED`];
    /// non-finite values are ignored.
    pub fn set_speed(&mut self, speed: f64) {
        if speed.is_finite() {
            self.speed = speed.clamp(MIN_SPEED, MAX_SPEED);
        }
    }

    /// The loop range.
    #[must_use]
    pub fn range(&self) -> LoopRange {
        self.range
    }

    /// Sets the loop range (clamped to the timeline).
    pub fn set_range(&mut self, range: LoopRange) {
        self.range = range.clamped(self.n_frames);
    }

    /// Jumps to `frame` (clamped), keeping play/pause.
    pub fn seek(&mut self, frame: usize) {
        self.frame = frame.min(self.n_frames.saturating_sub(1));
        self.accum = 0.0;
    }

    /// Goes to the start of the loop range.
    pub fn home(&mut self) {
        self.seek(self.range.start());
    }

    /// Goes to the end of the loop range.
    pub fn end(&mut self) {
        self.seek(self.range.end());
    }

    /// Pauses and moves by `delta` frames. While looping and inside the
    /// loop range, stepping wraps around the range; otherwise it stops at
    /// the first and last frames of the timeline.
    pub fn step(&mut self, delta: i64) {
        self.pause();
        if self.n_frames == 0 {
            return;
        }
        let r = self.range;
        if self.looping && r.contains(self.frame) {
            let len = r.len() as i64;
            let pos = (self.frame - r.start()) as i64;
            self.frame = r.start() + (pos + delta).rem_euclid(len) as usize;
        } else {
            let last = self.n_frames as i64 - 1;
            self.frame = (self.frame as i64).saturating_add(delta).clamp(0, last) as usize;
        }
    }

    /// Moves playback on by `real_dt` seconds of real time (scaled by the
    /// speed). Returns whether the frame changed. Does nothing while
    /// paused; negative or non-finite `real_dt` counts as 0.
    pub fn advance(&mut self, real_dt: f64) -> bool {
        if !self.playing || self.n_frames <= 1 {
            return false;
        }
        let dt = if real_dt.is_finite() { real_dt.max(0.0) } else { 0.0 };
        self.accum += dt * self.speed;
        let steps = (self.accum / self.frame_time).floor();
        if steps < 1.0 {
            return false;
        }
        self.accum -= steps * self.frame_time;
        let before = self.frame;
        self.forward(steps.min(u64::MAX as f64) as u64);
        self.frame != before
    }

    fn forward(&mut self, mut steps: u64) {
        let (s, e) = (self.range.start(), self.range.end());
        if self.looping {
            if self.frame > e {
                self.frame = s;
                steps -= 1;
            }
            if self.frame < s {
                let to_start = (s - self.frame) as u64;
                if steps < to_start {
                    self.frame += steps as usize;
                    return;
                }
                self.frame = s;
                steps -= to_start;
            }
            let len = (e - s + 1) as u64;
            self.frame = s + (((self.frame - s) as u64 + steps % len) % len) as usize;
        } else {
            let last = self.n_frames - 1;
            let left = (last - self.frame.min(last)) as u64;
            self.frame = if steps >= left { last } else { self.frame + steps as usize };
            if self.frame == last {
                self.pause();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FT: f64 = 0.01;

    fn playing(n: usize) -> Clock {
        let mut c = Clock::new(n, FT);
        c.play();
        c
    }

    #[test]
    fn paused_clock_does_not_move() {
        let mut c = Clock::new(10, FT);
        assert!(!c.advance(1.0));
        assert_eq!(c.frame(), 0);
    }

    #[test]
    fn real_time_accumulates_into_frames() {
        let mut c = playing(100);
        // 60 Hz repaints on a 100 fps clip: 1 s of real time is 100 frames
        // (wrapping once to 0 on a 100-frame loop).
        for _ in 0..30 {
            c.advance(1.0 / 60.0);
        }
        assert!(c.frame().abs_diff(50) <= 1, "{}", c.frame());
        assert!((c.seconds() - 0.5).abs() < 1e-9);
        // Small steps never lose time.
        let mut c = playing(1000);
        for _ in 0..1000 {
            c.advance(0.001);
        }
        assert!(c.frame().abs_diff(100) <= 1, "{}", c.frame());
    }

    #[test]
    fn speed_scales_and_is_clamped() {
        let mut c = playing(1000);
        c.set_speed(2.0);
        c.advance(0.1 + 1e-9);
        assert_eq!(c.frame(), 20);
        c.set_speed(0.5);
        c.advance(0.1 + 1e-9);
        assert_eq!(c.frame(), 25);
        c.set_speed(100.0);
        assert_eq!(c.speed(), MAX_SPEED);
        c.set_speed(0.0);
        assert_eq!(c.speed(), MIN_SPEED);
        c.set_speed(f64::NAN);
        assert_eq!(c.speed(), MIN_SPEED);
        c.advance(f64::NAN);
        c.advance(-5.0);
        assert_eq!(c.frame(), 25);
    }

    #[test]
    fn loop_wraps_within_the_range() {
        let mut c = playing(100);
        c.set_range(LoopRange::new(10, 19, 100));
        c.seek(18);
        c.advance(3.0 * FT + 1e-9);
        assert_eq!(c.frame(), 11);
        // A huge jump (window was hidden) stays in the range.
        c.advance(12345.0 * FT + 1e-9);
        assert!(c.range().contains(c.frame()));
        assert_eq!(c.frame(), 10 + (1 + 12345) % 10);
        // Before the range, play runs into it; after it, wraps to its start.
        c.seek(5);
        c.advance(4.0 * FT + 1e-9);
        assert_eq!(c.frame(), 9);
        c.advance(2.0 * FT + 1e-9);
        assert_eq!(c.frame(), 11);
        c.seek(50);
        c.advance(FT + 1e-9);
        assert_eq!(c.frame(), 10);
    }

    #[test]
    fn without_loop_playback_stops_at_the_end() {
        let mut c = playing(10);
        c.set_looping(false);
        c.advance(100.0);
        assert_eq!(c.frame(), 9);
        assert!(!c.is_playing());
        // Play again restarts from the range start.
        c.play();
        assert_eq!(c.frame(), 0);
        assert!(c.is_playing());
    }

    #[test]
    fn stepping_pauses_and_wraps_in_the_loop() {
        let mut c = playing(10);
        c.step(1);
        assert!(!c.is_playing());
        assert_eq!(c.frame(), 1);
        c.step(-2);
        assert_eq!(c.frame(), 9);
        c.set_looping(false);
        c.step(1);
        assert_eq!(c.frame(), 9);
        c.step(-100);
        assert_eq!(c.frame(), 0);
        c.set_looping(true);
        c.set_range(LoopRange::new(3, 5, 10));
        c.seek(5);
        c.step(1);
        assert_eq!(c.frame(), 3);
        // Outside the range stepping is plain.
        c.seek(8);
        c.step(1);
        assert_eq!(c.frame(), 9);
    }

    #[test]
    fn home_end_and_seek() {
        let mut c = Clock::new(50, FT);
        c.set_range(LoopRange::new(5, 40, 50));
        c.end();
        assert_eq!(c.frame(), 40);
        c.home();
        assert_eq!(c.frame(), 5);
        c.seek(1000);
        assert_eq!(c.frame(), 49);
        c.toggle();
        assert!(c.is_playing());
        c.toggle();
        assert!(!c.is_playing());
    }

    #[test]
    fn degenerate_timelines() {
        for n in [0, 1] {
            let mut c = Clock::new(n, 0.0);
            c.play();
            assert!(!c.is_playing());
            c.step(3);
            c.advance(1.0);
            assert_eq!(c.frame(), 0);
        }
        let c = Clock::new(5, f64::NAN);
        assert!(c.frame_time() > 0.0);
    }

    #[test]
    fn timeline_change_keeps_a_full_range_full() {
        let mut c = Clock::new(10, FT);
        c.seek(7);
        c.set_timeline(20, FT);
        assert_eq!(c.range(), LoopRange::full(20));
        assert_eq!(c.frame(), 7);
        c.set_range(LoopRange::new(2, 4, 20));
        c.set_timeline(3, FT);
        assert_eq!(c.range(), LoopRange::new(2, 2, 3));
        assert_eq!(c.frame(), 2);
    }
}

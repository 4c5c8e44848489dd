//! Numbers from the command line, checked when they are parsed: frame
//! ranges (`A..B` with B excluded, `A..=B`, `A..`, `..B`, `N`), frame rates
//! and camera angles. A bad value is refused by clap with the valid range
//! in the message, before any file is read.

use std::ops::Range;

use anyhow::{Result, bail};
use bvhkit::edit::plan::FrameSpan;

/// A frame range as written on the command line, resolved against a clip length later.
/// When both ends are given, `start < end` (parsing refuses empty ranges).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FrameRange {
    start: Option<usize>,
    end: Option<usize>,
}

/// The largest frame number accepted: far beyond any real clip (a day at
/// 1,000 fps is 86.4 million frames), and small enough that `N + 1` and
/// `A..=B` never overflow.
const MAX_FRAME: usize = u32::MAX as usize;

/// One frame number; `None` for an empty side of `..`.
fn frame_number(t: &str) -> Result<Option<usize>> {
    let t = t.trim();
    if t.is_empty() {
        return Ok(None);
    }
    let shown = crate::text::escape(t);
    if !t.bytes().all(|b| b.is_ascii_digit()) {
        bail!("'{shown}' is not a frame number (frames are counted from 0)");
    }
    match t.parse::<usize>() {
        Ok(n) if n <= MAX_FRAME => Ok(Some(n)),
        _ => bail!("frame number {shown} is too large (at most {MAX_FRAME})"),
    }
}

/// One frame number of an option (`--reference`, `--frame`): what a frame
/// range takes, with its messages (a negative number, `1e300`, an empty
/// string named, not Rust's "invalid digit found in string").
pub(crate) fn parse_frame(s: &str) -> Result<usize, String> {
    match frame_number(s) {
        Ok(Some(n)) => Ok(n),
        Ok(None) => Err("'' is not a frame number (frames are counted from 0)".into()),
        Err(e) => Err(e.to_string()),
    }
}

impl std::str::FromStr for FrameRange {
    type Err = anyhow::Error;

    fn from_str(s: &str) -> Result<FrameRange> {
        let (start, end, spelled) = if let Some((a, b)) = s.split_once("..=") {
            let Some(last) = frame_number(b)? else { bail!("A..=B needs B") };
            (frame_number(a)?, Some(last + 1), "..=")
        } else if let Some((a, b)) = s.split_once("..") {
            (frame_number(a)?, frame_number(b)?, "..")
        } else {
            let Some(n) = frame_number(s)? else { bail!("empty frame range") };
            (Some(n), Some(n + 1), "")
        };
        if let (Some(a), Some(b)) = (start, end)
            && a >= b
        {
            let shown = crate::text::escape(s.trim());
            bail!(
                "frame range {shown} is empty: {} (A..B ends before B, A..=B at B)",
                if spelled == ".." { "B must be greater than A" } else { "B must be at least A" }
            );
        }
        Ok(FrameRange { start, end })
    }
}

impl FrameRange {
    /// The frames of a clip of `n` frames this range selects.
    pub(crate) fn resolve(self, n: usize) -> Result<Range<usize>> {
        let start = self.start.unwrap_or(0);
        let end = self.end.unwrap_or(n).min(n);
        if start >= end && n > 0 {
            bail!(
                "frame range {} selects no frame: the clip has {n} frame{} (0..{n})",
                self,
                if n == 1 { "" } else { "s" }
            );
        }
        Ok(start..end.max(start))
    }

    /// The range as the core's [`FrameSpan`] (a step of an edit's plan).
    pub(crate) fn span(self) -> FrameSpan {
        FrameSpan::new(self.start, self.end)
    }

    /// The first frame of the range.
    pub(crate) fn first(self) -> usize {
        self.span().first()
    }

    /// Whether frame `f` is in the range (for streams of unknown length).
    #[cfg(test)]
    pub(crate) fn contains(self, f: usize) -> bool {
        self.span().contains(f)
    }

    /// Whether no frame at or after `f` can be in the range.
    pub(crate) fn past(self, f: usize) -> bool {
        self.span().past(f)
    }
}

impl std::fmt::Display for FrameRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(s) = self.start {
            write!(f, "{s}")?;
        }
        f.write_str("..")?;
        if let Some(e) = self.end {
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

/// A finite number within `lo..=hi` (or above `lo` when `lo_open`), or a
/// message naming the range.
fn number_in(
    s: &str,
    what: &str,
    lo: f64,
    lo_open: bool,
    hi: f64,
    unit: &str,
) -> Result<f64, String> {
    let range = if lo_open {
        format!("above {lo} and at most {hi}{unit}")
    } else {
        format!("from {lo} to {hi}{unit}")
    };
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && (if lo_open { v > lo } else { v >= lo }) && v <= hi => Ok(v),
        _ => Err(format!(
            "'{}' is not a valid {what}: expected a number {range}",
            crate::text::escape(s)
        )),
    }
}

/// `--fps`: a frame rate above 0 and at most 1000 frames per second.
pub(crate) fn parse_fps(s: &str) -> Result<f64, String> {
    number_in(s, "frame rate", 0.0, true, 1000.0, " frames per second")
}

/// The frame rates `bvh edit --fps` resamples to: a Frame Time from 10 µs
/// to 1000 s.
pub(crate) const RESAMPLE_FPS: (f64, f64) = (0.001, 100_000.0);

/// `bvh edit --fps`: a frame rate within [`RESAMPLE_FPS`].
pub(crate) fn parse_resample_fps(s: &str) -> Result<f64, String> {
    number_in(s, "frame rate", RESAMPLE_FPS.0, false, RESAMPLE_FPS.1, " frames per second")
}

/// The longest `--every N`: one frame kept in a million.
pub(crate) const EVERY_MAX: u64 = 1_000_000;

/// The factors of `bvh edit --scale` and `bvh export --scale`, and the
/// heights of `--height`: the core's `edit::scale::FACTORS`, a millionth to
/// a million (1e300 wrote 300-digit `OFFSET`s).
pub(crate) const SCALE_RANGE: (f64, f64) =
    (*bvhkit::edit::scale::FACTORS.start(), *bvhkit::edit::scale::FACTORS.end());

/// `bvh edit --scale`: a factor within [`SCALE_RANGE`].
pub(crate) fn parse_scale(s: &str) -> Result<f64, String> {
    number_in(s, "scale factor", SCALE_RANGE.0, false, SCALE_RANGE.1, "")
}

/// `bvh edit --height`: a height within [`SCALE_RANGE`], in the file's
/// length unit.
pub(crate) fn parse_height(s: &str) -> Result<f64, String> {
    number_in(s, "height", SCALE_RANGE.0, false, SCALE_RANGE.1, " length units")
}

/// `--azimuth`: degrees about the vertical axis, -360 to 360.
pub(crate) fn parse_azimuth(s: &str) -> Result<f64, String> {
    number_in(s, "azimuth", -360.0, false, 360.0, " degrees")
}

/// `--elevation`: degrees above the ground, -89 to 89 (the camera cannot look
/// straight down or up; the renderer's camera keeps the same bound).
pub(crate) fn parse_elevation(s: &str) -> Result<f64, String> {
    number_in(s, "elevation", -89.0, false, 89.0, " degrees")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings() {
        let r = |s: &str| s.parse::<FrameRange>().unwrap().resolve(100).unwrap();
        assert_eq!(r("2..10"), 2..10);
        assert_eq!(r("2..=10"), 2..11);
        assert_eq!(r("90.."), 90..100);
        assert_eq!(r("..5"), 0..5);
        assert_eq!(r(".."), 0..100);
        assert_eq!(r("7"), 7..8);
        assert_eq!(r(" 3 .. 4 "), 3..4);
        assert_eq!(r("50..500"), 50..100);
        assert_eq!(r("5..=5"), 5..6);
        let fr = "3..5".parse::<FrameRange>().unwrap();
        assert!(fr.contains(3) && fr.contains(4) && !fr.contains(5) && fr.past(5));
        assert_eq!(fr.first(), 3);
        assert_eq!(fr.to_string(), "3..5");
    }

    fn err(s: &str) -> String {
        format!("{:#}", s.parse::<FrameRange>().unwrap_err())
    }

    #[test]
    fn empty_ranges_are_refused_when_parsed() {
        assert_eq!(
            err("10..5"),
            "frame range 10..5 is empty: B must be greater than A (A..B ends before B, A..=B at B)"
        );
        assert!(err("5..5").starts_with("frame range 5..5 is empty"));
        assert!(err("6..=5").starts_with("frame range 6..=5 is empty: B must be at least A"));
        assert_eq!(err(""), "empty frame range");
        assert_eq!(err("3..="), "A..=B needs B");
        // A range past the end of a clip selects nothing, and says so with the clip's length.
        let e = "200..300".parse::<FrameRange>().unwrap().resolve(100).unwrap_err();
        assert_eq!(
            format!("{e}"),
            "frame range 200..300 selects no frame: the clip has 100 frames (0..100)"
        );
    }

    #[test]
    fn one_frame_number_has_the_messages_of_a_range() {
        assert_eq!(parse_frame("12"), Ok(12));
        assert_eq!(
            parse_frame("-1"),
            Err("'-1' is not a frame number (frames are counted from 0)".into())
        );
        assert_eq!(
            parse_frame(""),
            Err("'' is not a frame number (frames are counted from 0)".into())
        );
        assert!(parse_frame("1e300").unwrap_err().contains("'1e300' is not a frame number"));
        assert!(
            parse_frame("99999999999").unwrap_err().contains("is too large (at most 4294967295)")
        );
    }

    #[test]
    fn huge_and_malformed_numbers_are_errors_not_overflows() {
        let max = usize::MAX.to_string();
        assert_eq!(err(&max), format!("frame number {max} is too large (at most 4294967295)"));
        assert!(err(&format!("0..={max}")).contains("is too large"));
        assert!(err("99999999999999999999999999..").contains("is too large"));
        assert_eq!(
            "4294967295".parse::<FrameRange>().unwrap().resolve(usize::MAX).unwrap(),
            4294967295..4294967296
        );
        assert_eq!(err("-5..3"), "'-5' is not a frame number (frames are counted from 0)");
        assert!(err("x..3").contains("'x' is not a frame number"));
        assert!(err("1.5").contains("'1.5' is not a frame number"));
        assert!(err("+3").contains("not a frame number"));
        assert!(err("\u{1b}[2J").contains("'\\x1b[2J'"), "escaped");
    }

    #[test]
    fn rates_and_angles_are_checked() {
        assert_eq!(parse_fps("30"), Ok(30.0));
        assert_eq!(parse_fps("0.5"), Ok(0.5));
        assert_eq!(parse_fps("1000"), Ok(1000.0));
        for bad in ["0", "-1", "nan", "NaN", "inf", "-inf", "1e400", "1000.5", "", "fast"] {
            assert_eq!(
                parse_fps(bad),
                Err(format!(
                    "'{bad}' is not a valid frame rate: expected a number above 0 and at most 1000 frames per second"
                )),
                "{bad}"
            );
        }
        assert_eq!(parse_azimuth("-40"), Ok(-40.0));
        assert_eq!(parse_azimuth("360"), Ok(360.0));
        for bad in ["nan", "inf", "361", "-360.5", "1e9"] {
            assert_eq!(
                parse_azimuth(bad),
                Err(format!(
                    "'{bad}' is not a valid azimuth: expected a number from -360 to 360 degrees"
                ))
            );
        }
        assert_eq!(parse_elevation("-89"), Ok(-89.0));
        assert_eq!(parse_elevation("0"), Ok(0.0));
        for bad in ["90", "-90", "nan", "-inf"] {
            assert_eq!(
                parse_elevation(bad),
                Err(format!(
                    "'{bad}' is not a valid elevation: expected a number from -89 to 89 degrees"
                ))
            );
        }
    }
}

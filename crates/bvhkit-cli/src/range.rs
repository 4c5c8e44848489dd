//! Frame ranges: `A..B` (B excluded), `A..=B`, `A..`, `..B`, `N`.

use std::ops::Range;

use anyhow::{Context, Result, bail};

/// A frame range as written on the command line, resolved against a clip length later.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FrameRange {
    start: Option<usize>,
    end: Option<usize>,
}

impl std::str::FromStr for FrameRange {
    type Err = anyhow::Error;

    fn from_str(s: &str) -> Result<FrameRange> {
        let num = |t: &str| -> Result<Option<usize>> {
            if t.is_empty() {
                Ok(None)
            } else {
                t.trim().parse().map(Some).with_context(|| format!("'{t}' is not a frame number"))
            }
        };
        if let Some((a, b)) = s.split_once("..=") {
            let end = num(b)?.context("A..=B needs B")?;
            return Ok(FrameRange { start: num(a)?, end: Some(end + 1) });
        }
        if let Some((a, b)) = s.split_once("..") {
            return Ok(FrameRange { start: num(a)?, end: num(b)? });
        }
        let n = num(s)?.context("empty frame range")?;
        Ok(FrameRange { start: Some(n), end: Some(n + 1) })
    }
}

impl FrameRange {
    /// The frames of a clip of `n` frames this range selects.
    pub(crate) fn resolve(self, n: usize) -> Result<Range<usize>> {
        let start = self.start.unwrap_or(0);
        let end = self.end.unwrap_or(n).min(n);
        if start >= end && n > 0 {
            bail!("frame range {start}..{end} selects no frame of {n}");
        }
        Ok(start..end.max(start))
    }

    /// Whether frame `f` is in the range (for streams of unknown length).
    pub(crate) fn contains(self, f: usize) -> bool {
        f >= self.start.unwrap_or(0) && self.end.is_none_or(|e| f < e)
    }

    /// Whether no frame at or after `f` can be in the range.
    pub(crate) fn past(self, f: usize) -> bool {
        self.end.is_some_and(|e| f >= e)
    }
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
        assert_eq!(r("7"), 7..8);
        assert_eq!(r("50..500"), 50..100);
        assert!("x..3".parse::<FrameRange>().is_err());
        assert!("5..2".parse::<FrameRange>().unwrap().resolve(100).is_err());
        let fr = "3..5".parse::<FrameRange>().unwrap();
        assert!(fr.contains(3) && fr.contains(4) && !fr.contains(5) && fr.past(5));
    }
}

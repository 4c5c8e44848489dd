//! Weight curves: how much of the second clip a mix takes at each frame.
//!
//! A [`Weight`] is a function of the clip's normalised time `u` in `[0, 1]`
//! (`u = k / (n - 1)` for frame `k` of `n`; a one-frame clip is at `u = 0`):
//! a constant, a ramp from one value to another (linear or smoothstep), or
//! keys `(u, w)` joined by straight lines and held flat before the first
//! and after the last. Weights lie in `[0, 1]`: 0 is all of the first clip
//! (or no layer), 1 all of the second (or the whole layer).
//!
//! Crossfades ([`fade`]) use their own weights over the window: frame `k`
//! of a window of `n` frames gets `curve((k + 1) / (n + 1))`, strictly
//! between 0 and 1 and symmetric, so the frames before and after the window
//! (weights 0 and 1) are the two clips themselves.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result, num};

/// The shape of a ramp or crossfade.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Curve {
    /// `x`.
    Linear,
    /// `x² (3 - 2x)`: zero slope at both ends, so a fade starts and ends
    /// without a kink (the default).
    #[default]
    Smoothstep,
}

impl Curve {
    /// The curve at `x`, clamped to `[0, 1]` first.
    ///
    /// # Example
    /// ```
    /// use bvhkit::mix::weights::Curve;
    /// assert_eq!(Curve::Smoothstep.at(0.25), 0.15625);
    /// assert_eq!(Curve::Linear.at(1.5), 1.0);
    /// ```
    #[inline]
    pub fn at(self, x: f64) -> f64 {
        let x = x.clamp(0.0, 1.0);
        match self {
            Curve::Linear => x,
            Curve::Smoothstep => x * x * (3.0 - 2.0 * x),
        }
    }
}

/// The weight of frame `k` of a crossfade window of `n` frames:
/// `curve((k + 1) / (n + 1))`.
///
/// # Example
/// ```
/// use bvhkit::mix::weights::{fade, Curve};
/// assert_eq!(fade(0, 1, Curve::Smoothstep), 0.5);
/// assert_eq!(fade(0, 3, Curve::Linear), 0.25);
/// assert_eq!(fade(2, 3, Curve::Linear), 0.75);
/// ```
#[inline]
pub fn fade(k: usize, n: usize, curve: Curve) -> f64 {
    curve.at((k + 1) as f64 / (n + 1) as f64)
}

/// A weight over a clip's normalised time (see the module docs).
///
/// Its text form ([`FromStr`], [`fmt::Display`]), as `bvh blend --weight`
/// and `bvh layer --weight` take it:
/// - `0.3`: constant;
/// - `0..1`: a linear ramp from the first value (at the clip's first frame)
///   to the second (at its last); `0..1:smooth` the same with smoothstep;
/// - `0:0,0.5:1,1:0`: keys `time:weight`, times in `[0, 1]` (fractions of
///   the clip) increasing, joined linearly.
///
/// # Example
/// ```
/// use bvhkit::mix::weights::Weight;
/// let w: Weight = "0:0,0.5:1,1:0".parse()?;
/// assert_eq!(w.at(0.25), 0.5);
/// assert_eq!(w.at(0.75), 0.5);
/// let ramp: Weight = "1..0".parse()?;
/// assert_eq!(ramp.at(0.25), 0.75);
/// assert_eq!(ramp.frame(3, 5), 0.25);
/// # Ok::<(), bvhkit::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Weight {
    /// The same weight at every frame.
    Constant(f64),
    /// From `from` at the first frame to `to` at the last, along `curve`.
    Ramp {
        /// The weight at the first frame.
        from: f64,
        /// The weight at the last frame.
        to: f64,
        /// The shape of the ramp.
        curve: Curve,
    },
    /// Keys `(time, weight)`, times increasing in `[0, 1]`, joined
    /// linearly, held flat outside.
    Keys(Vec<(f64, f64)>),
}

impl Weight {
    /// The weight at normalised time `u` (clamped to `[0, 1]`).
    pub fn at(&self, u: f64) -> f64 {
        let u = if u.is_nan() { 0.0 } else { u.clamp(0.0, 1.0) };
        match self {
            Weight::Constant(w) => *w,
            Weight::Ramp { from, to, curve } => {
                let s = curve.at(u);
                if s == 0.0 {
                    *from
                } else if s == 1.0 {
                    *to
                } else {
                    from + s * (to - from)
                }
            }
            Weight::Keys(keys) => {
                let Some(&(t0, w0)) = keys.first() else { return 0.0 };
                if u <= t0 {
                    return w0;
                }
                // The first key at or after `u` (times increase: a binary
                // search, so a key per frame stays cheap on long clips).
                let i = keys.partition_point(|&(t, _)| t < u);
                if i == keys.len() {
                    return keys[i - 1].1;
                }
                let ((ta, wa), (tb, wb)) = (keys[i - 1], keys[i]);
                if u == tb || tb == ta {
                    return wb;
                }
                wa + (u - ta) / (tb - ta) * (wb - wa)
            }
        }
    }

    /// One weight per frame of a clip of `weights.len()` frames: keys at
    /// the frames' normalised times `k / (n - 1)`, so that
    /// [`frame(k, n)`](Weight::frame) is exactly `weights[k]` (a clip of
    /// another length gets them joined linearly). Not validated here
    /// ([`Weight::validate`] is, by the operations that take a weight).
    ///
    /// # Example
    /// ```
    /// use bvhkit::mix::weights::Weight;
    /// let w = Weight::per_frame(&[0.0, 0.1, 0.7, 1.0]);
    /// assert_eq!(w.frame(2, 4), 0.7);
    /// assert_eq!(w.frame(3, 4), 1.0);
    /// assert_eq!(Weight::per_frame(&[0.4]).frame(0, 1), 0.4);
    /// ```
    pub fn per_frame(weights: &[f64]) -> Weight {
        let n = weights.len();
        let time = |k: usize| if n <= 1 { 0.0 } else { k as f64 / (n - 1) as f64 };
        Weight::Keys(weights.iter().enumerate().map(|(k, &w)| (time(k), w)).collect())
    }

    /// The weight at frame `k` of a clip of `n` frames: `at(k / (n - 1))`.
    pub fn frame(&self, k: usize, n: usize) -> f64 {
        if n <= 1 { self.at(0.0) } else { self.at(k as f64 / (n - 1) as f64) }
    }

    /// Checks that every weight is in `[0, 1]` and key times increase in
    /// `[0, 1]`.
    ///
    /// # Errors
    /// When one is not, naming it.
    pub fn validate(&self) -> Result<()> {
        let w_ok = |w: f64| (0.0..=1.0).contains(&w);
        let bad = |w: f64| Error::invalid(format!("a weight must be in [0, 1], found {}", num(w)));
        match self {
            Weight::Constant(w) => w_ok(*w).then_some(()).ok_or_else(|| bad(*w)),
            Weight::Ramp { from, to, .. } => {
                for w in [*from, *to] {
                    if !w_ok(w) {
                        return Err(bad(w));
                    }
                }
                Ok(())
            }
            Weight::Keys(keys) => {
                if keys.is_empty() {
                    return Err(Error::invalid("a keyed weight needs at least one key"));
                }
                let mut last = f64::NEG_INFINITY;
                for &(t, w) in keys {
                    if !(0.0..=1.0).contains(&t) || t <= last {
                        let after =
                            if last.is_finite() { format!(" after {last}") } else { String::new() };
                        return Err(Error::invalid(format!(
                            "key times must increase within [0, 1] (fractions of the clip), found {}{after}",
                            num(t)
                        )));
                    }
                    if !w_ok(w) {
                        return Err(bad(w));
                    }
                    last = t;
                }
                Ok(())
            }
        }
    }

    /// Whether the weight is 0 everywhere.
    pub fn is_zero(&self) -> bool {
        match self {
            Weight::Constant(w) => *w == 0.0,
            Weight::Ramp { from, to, .. } => *from == 0.0 && *to == 0.0,
            Weight::Keys(k) => k.iter().all(|&(_, w)| w == 0.0),
        }
    }
}

impl Default for Weight {
    fn default() -> Weight {
        Weight::Constant(1.0)
    }
}

fn number(s: &str, what: &str) -> Result<f64> {
    let v: f64 = s.trim().parse().map_err(|_| {
        Error::invalid(format!(
            "expected a number for {what}, found {s:?} (weights: 0.5, 0..1, 0..1:smooth, or keys 0:0,0.5:1,1:0)"
        ))
    })?;
    if v.is_finite() {
        Ok(v)
    } else {
        Err(Error::invalid(format!("expected a finite number for {what}, found {s:?}")))
    }
}

impl FromStr for Weight {
    type Err = Error;

    /// Parses the text form (see [`Weight`]) and validates it.
    fn from_str(s: &str) -> Result<Weight> {
        let s = s.trim();
        let w = if let Some((a, b)) = s.split_once("..") {
            let (b, curve) = match b.rsplit_once(':') {
                Some((b, "smooth" | "smoothstep")) => (b, Curve::Smoothstep),
                Some((b, "linear")) => (b, Curve::Linear),
                Some((_, other)) => {
                    return Err(Error::invalid(format!(
                        "unknown ramp shape {other:?}: expected smooth or linear"
                    )));
                }
                None => (b, Curve::Linear),
            };
            Weight::Ramp {
                from: number(a, "the ramp start")?,
                to: number(b, "the ramp end")?,
                curve,
            }
        } else if s.contains(':') {
            let mut keys = Vec::new();
            for key in s.split(',') {
                let (t, w) = key.split_once(':').ok_or_else(|| {
                    Error::invalid(format!("expected a key time:weight, found {key:?}"))
                })?;
                keys.push((number(t, "a key time")?, number(w, "a key weight")?));
            }
            Weight::Keys(keys)
        } else {
            Weight::Constant(number(s, "the weight")?)
        };
        w.validate()?;
        Ok(w)
    }
}

impl fmt::Display for Weight {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Weight::Constant(w) => write!(f, "{w}"),
            Weight::Ramp { from, to, curve: Curve::Linear } => write!(f, "{from}..{to}"),
            Weight::Ramp { from, to, curve: Curve::Smoothstep } => write!(f, "{from}..{to}:smooth"),
            Weight::Keys(keys) => {
                for (i, (t, w)) in keys.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{t}:{w}")?;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_forms_parse_and_print_back() {
        for s in ["0.5", "0..1", "0.2..0.8:smooth", "0:0,0.5:1,1:0"] {
            let w: Weight = s.parse().unwrap();
            assert_eq!(w.to_string(), s);
        }
        assert_eq!("1..0:linear".parse::<Weight>().unwrap().at(0.5), 0.5);
        for bad in ["", "x", "2", "-0.1", "0..1:cubic", "0.5:0,0.2:1", "0:0,1:1.5", "nan", "0..inf"]
        {
            assert!(bad.parse::<Weight>().is_err(), "{bad}");
        }
    }

    #[test]
    fn keys_are_joined_linearly_and_held_flat() {
        let w = Weight::Keys(vec![(0.2, 0.0), (0.6, 1.0)]);
        assert_eq!(w.at(0.0), 0.0);
        assert!((w.at(0.4) - 0.5).abs() < 1e-15);
        assert_eq!(w.at(0.6), 1.0);
        assert_eq!(w.at(1.0), 1.0);
        let ramp = Weight::Ramp { from: 0.0, to: 1.0, curve: Curve::Smoothstep };
        assert_eq!(ramp.frame(0, 5), 0.0);
        assert_eq!(ramp.frame(2, 5), 0.5);
        assert_eq!(ramp.frame(4, 5), 1.0);
        assert_eq!(ramp.frame(0, 1), 0.0);
    }

    #[test]
    fn per_frame_weights_are_exact_at_every_frame() {
        for n in [1, 2, 3, 7, 100, 1001] {
            let values: Vec<f64> = (0..n).map(|k| ((k * 37) % 11) as f64 / 10.0).collect();
            let w = Weight::per_frame(&values);
            w.validate().unwrap();
            for (k, &v) in values.iter().enumerate() {
                assert_eq!(w.frame(k, n), v, "frame {k} of {n}");
            }
        }
        // Between keys: joined linearly, as keys written by hand.
        let w = Weight::per_frame(&[0.0, 1.0, 0.0]);
        assert_eq!(w.at(0.25), 0.5);
        assert_eq!(w.at(0.75), 0.5);
        assert!(Weight::per_frame(&[]).validate().is_err());
        assert!(Weight::per_frame(&[0.5, f64::NAN]).validate().is_err());
    }

    #[test]
    fn fades_are_symmetric_and_strictly_inside() {
        for n in 1..20 {
            for k in 0..n {
                let w = fade(k, n, Curve::Smoothstep);
                assert!(w > 0.0 && w < 1.0);
                assert!((w + fade(n - 1 - k, n, Curve::Smoothstep) - 1.0).abs() < 1e-15);
            }
        }
    }
}

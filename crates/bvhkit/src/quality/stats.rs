//! Robust statistics of the quality metrics: quantiles, medians and the
//! median absolute deviation over the finite values of a slice.

/// The `q` quantile (0 to 1) of the finite values of `v`, by linear
/// interpolation between the two nearest ranks (NumPy's default
/// `np.quantile(v, q)`); `None` when no value is finite.
pub(crate) fn quantile(v: &[f64], q: f64) -> Option<f64> {
    let mut s = Vec::with_capacity(v.len());
    finite_into(v, &mut s);
    quantile_in_place(&mut s, q)
}

/// [`quantile`] with the finite values copied into `buf` (a buffer the
/// caller reuses) instead of a new vector.
pub(crate) fn quantile_with(v: &[f64], q: f64, buf: &mut Vec<f64>) -> Option<f64> {
    finite_into(v, buf);
    quantile_in_place(buf, q)
}

/// The finite values of `v`, in order, into `buf` (cleared first). Most
/// curves are finite throughout: they are copied at once, after a check
/// that runs on SIMD lanes (no early exit, no branch per value); the
/// others value by value.
fn finite_into(v: &[f64], buf: &mut Vec<f64>) {
    buf.clear();
    if v.iter().fold(true, |all, x| all & x.is_finite()) {
        buf.extend_from_slice(v);
    } else {
        buf.extend(v.iter().copied().filter(|x| x.is_finite()));
    }
}

/// Whether no value of `s` has its sign bit set: one pass of ORs on SIMD
/// lanes, without the early exit that keeps `all` from them.
fn unsigned(s: &[f64]) -> bool {
    s.iter().fold(0u64, |bits, x| bits | x.to_bits()) >> 63 == 0
}

/// [`quantile`] of `s`, which holds finite values only and is reordered.
///
/// Not advised: a selection by a histogram of the keys' high bits (1024
/// buckets between the smallest positive key and the largest, four
/// tables; then only the rank's bucket copied out and selected in),
/// reading a long curve without copying or reordering it. Tried on lint's
/// steps and accelerations (57 k values a joint on the synthetic file):
/// the same bits, but its passes (about 2.5 cycles a value to count, 2 to
/// copy the bucket out without a branch) cost more than the copy and
/// `select_nth_unstable` (about 1.4 ns a value) they replace: the
/// selections' share of lint's samples went from 7.1% to 8.6%.
pub(crate) fn quantile_in_place(s: &mut [f64], q: f64) -> Option<f64> {
    if s.is_empty() {
        return None;
    }
    let pos = q.clamp(0.0, 1.0) * (s.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let frac = pos - lo as f64;
    // Values without a sign bit (lengths, speeds, deviations: most of
    // what the metrics select in) are ordered by their bits as integers,
    // which is `total_cmp`'s order there: the same value at each rank,
    // fewer instructions per comparison.
    let (_, &mut a, rest) = if unsigned(s) {
        s.select_nth_unstable_by_key(lo, |x| x.to_bits())
    } else {
        s.select_nth_unstable_by(lo, f64::total_cmp)
    };
    if frac == 0.0 || rest.is_empty() {
        return Some(a);
    }
    let b = rest.iter().copied().fold(f64::INFINITY, f64::min);
    Some(a + (b - a) * frac)
}

/// The median and the median absolute deviation (unscaled) of the finite
/// values of `v`; `None` when no value is finite.
pub(crate) fn median_mad(v: &[f64]) -> Option<(f64, f64)> {
    median_mad_with(v, &mut Vec::new())
}

/// [`median_mad`] with the finite values copied into `buf` (a buffer the
/// caller reuses) instead of a new vector.
pub(crate) fn median_mad_with(v: &[f64], buf: &mut Vec<f64>) -> Option<(f64, f64)> {
    finite_into(v, buf);
    let med = quantile_in_place(buf, 0.5)?;
    for x in buf.iter_mut() {
        *x = (*x - med).abs();
    }
    let mad = quantile_in_place(buf, 0.5)?;
    Some((med, mad))
}

/// Runs of consecutive `true` values as `(first, last)` inclusive indices
/// (the spans of the findings, the contacts of the HTML report).
///
/// ```
/// assert_eq!(bvhkit::quality::runs([false, true, true, false, true]), [(1, 2), (4, 4)]);
/// ```
pub fn runs(flags: impl IntoIterator<Item = bool>) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    let mut i = 0;
    for flag in flags {
        match (flag, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push((s, i - 1));
                start = None;
            }
            _ => {}
        }
        i += 1;
    }
    if let Some(s) = start {
        out.push((s, i - 1));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate_as_numpy_does() {
        // np.quantile([4, 1, 3, 2], [0, 0.1, 0.5, 1]) = [1, 1.3, 2.5, 4]
        let v = [4.0, 1.0, 3.0, 2.0, f64::NAN];
        assert_eq!(quantile(&v, 0.0), Some(1.0));
        assert!((quantile(&v, 0.1).unwrap() - 1.3).abs() < 1e-12);
        assert_eq!(quantile(&v, 0.5), Some(2.5));
        assert_eq!(quantile(&v, 1.0), Some(4.0));
        assert_eq!(quantile(&[f64::NAN], 0.5), None);
        assert_eq!(median_mad(&[1.0, 2.0, 3.0, 4.0, 100.0]), Some((3.0, 1.0)));
    }

    /// The integer order of non-negative values and `total_cmp` give the
    /// same value at every rank: each quantile of a set without a sign bit
    /// is the one of a full sort, and with one negative value (the
    /// `total_cmp` path) as well.
    #[test]
    fn quantiles_of_non_negative_values_are_the_sorted_ones() {
        let mut next = crate::xorshift(0x2545_f491_4f6c_dd1du64);
        let mut v: Vec<f64> = (0..1001)
            .map(|i| {
                let x = next();
                match i % 7 {
                    0 => 0.0,
                    1 => f64::MIN_POSITIVE / 4.0,
                    2 => 1e300,
                    _ => (x >> 11) as f64 / (1u64 << 40) as f64,
                }
            })
            .collect();
        for neg in [false, true] {
            if neg {
                v[500] = -3.5;
            }
            let mut sorted = v.clone();
            sorted.sort_by(f64::total_cmp);
            for q in [0.0, 0.05, 0.1, 0.5, 0.95, 1.0, 0.333] {
                let pos = q * (sorted.len() - 1) as f64;
                let (lo, frac) = (pos.floor() as usize, pos - pos.floor());
                let want = if frac == 0.0 {
                    sorted[lo]
                } else {
                    sorted[lo] + (sorted[lo + 1] - sorted[lo]) * frac
                };
                let got = quantile(&v, q).unwrap();
                assert_eq!(got.to_bits(), want.to_bits(), "q {q} negative {neg}");
            }
        }
    }

    /// The finite values kept in their order, with and without values to
    /// drop, and the sign test of every kind of value.
    #[test]
    fn finite_values_are_copied_in_order() {
        let mut buf = vec![9.0];
        finite_into(&[1.0, -0.0, 3.0], &mut buf);
        assert_eq!(buf, [1.0, -0.0, 3.0]);
        finite_into(&[f64::NAN, 1.0, f64::INFINITY, -2.0, f64::NEG_INFINITY, 5.0], &mut buf);
        assert_eq!(buf, [1.0, -2.0, 5.0]);
        finite_into(&[], &mut buf);
        assert!(buf.is_empty());
        assert!(unsigned(&[0.0, 1.0, f64::MIN_POSITIVE, f64::MAX]));
        assert!(unsigned(&[]));
        for neg in [-0.0, -1.0, -f64::MIN_POSITIVE / 2.0] {
            assert!(!unsigned(&[1.0, neg, 2.0]), "{neg}");
        }
        // The median and MAD of a curve with a NaN are those of its
        // finite values.
        let v = [1.0, 2.0, f64::NAN, 3.0, 4.0, 100.0];
        assert_eq!(median_mad(&v), Some((3.0, 1.0)));
        assert_eq!(median_mad(&[1.0, 2.0, 3.0, 4.0, 100.0]), Some((3.0, 1.0)));
    }

    #[test]
    fn runs_are_inclusive_spans() {
        let f = [false, true, true, false, true];
        assert_eq!(runs(f), vec![(1, 2), (4, 4)]);
        assert_eq!(runs([true; 3]), vec![(0, 2)]);
        assert!(runs([false; 3]).is_empty());
    }
}

//! Robust statistics of the quality metrics: quantiles, medians and the
//! median absolute deviation over the finite values of a slice.

/// The `q` quantile (0 to 1) of the finite values of `v`, by linear
/// interpolation between the two nearest ranks (NumPy's default
/// `np.quantile(v, q)`); `None` when no value is finite.
pub(crate) fn quantile(v: &[f64], q: f64) -> Option<f64> {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    quantile_in_place(&mut s, q)
}

/// [`quantile`] with the finite values copied into `buf` (a buffer the
/// caller reuses) instead of a new vector.
pub(crate) fn quantile_with(v: &[f64], q: f64, buf: &mut Vec<f64>) -> Option<f64> {
    buf.clear();
    buf.extend(v.iter().copied().filter(|x| x.is_finite()));
    quantile_in_place(buf, q)
}

/// [`quantile`] of `s`, which holds finite values only and is reordered.
///
/// The value at each rank is found by [`nth`] (a radix selection in the
/// total order of the values' bits: `total_cmp`'s, which is the numeric
/// order but for -0 before +0) and, when the quantile falls between two
/// ranks, the next rank's value by one more pass ([`next_rank`]); the
/// same values at each rank as a selection by comparisons, the same bits
/// (`quantiles_are_the_comparison_selections`).
pub(crate) fn quantile_in_place(s: &mut [f64], q: f64) -> Option<f64> {
    if s.is_empty() {
        return None;
    }
    let pos = q.clamp(0.0, 1.0) * (s.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let frac = pos - lo as f64;
    let a = nth(s, lo);
    if frac == 0.0 || lo + 1 >= s.len() {
        return Some(a);
    }
    // The value at the next rank. (Where that is a zero, -0 and +0 give
    // the same `b - a`, so the same interpolation, as any minimum of the
    // values above rank `lo` would.)
    let b = next_rank(s, a, lo);
    Some(a + (b - a) * frac)
}

/// The key of `x` in the total order of `f64` (`f64::total_cmp`) as an
/// unsigned integer: negative values' bits inverted, the sign bit set on
/// the others. A bijection, monotone in that order.
#[inline(always)]
fn key(x: f64) -> u64 {
    let b = x.to_bits();
    b ^ ((((b as i64) >> 63) as u64) | (1 << 63))
}

/// The value whose [`key`] is `k`.
#[inline(always)]
fn unkey(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
}

/// Bits of the key per level of [`nth`]'s radix selection.
const RADIX_BITS: u32 = 11;

/// Slices this short are selected by comparisons.
const SMALL: usize = 512;

/// The value at rank `k` (from 0) of `s` in the [`key`] order (`s` is
/// reordered; `k < s.len()`).
///
/// A radix selection: the keys' range (least to greatest) cut into
/// 2^[`RADIX_BITS`] equal buckets, counted, and the values of the bucket
/// holding rank `k` moved to the front, which is then selected in the
/// same way (each level leaves a range 2^11 times narrower) until a few
/// hundred values are left (`select_nth_unstable`) or all have one key.
/// Each level is three plain passes (range, counts, move) where a
/// selection by comparisons partitions the values several times: the
/// spike thresholds' medians and MADs of long clips are found about
/// twice as fast.
pub(crate) fn nth(s: &mut [f64], k: usize) -> f64 {
    debug_assert!(k < s.len());
    let mut part = s;
    let mut k = k;
    loop {
        if part.len() <= SMALL || part.len() > u32::MAX as usize {
            let (_, &mut a, _) = part.select_nth_unstable_by_key(k, |x| key(*x));
            return a;
        }
        let (lo, hi) = part
            .iter()
            .fold((u64::MAX, 0u64), |(lo, hi), &x| (lo.min(key(x)), hi.max(key(x))));
        if lo == hi {
            return part[0];
        }
        let shift = (64 - (hi - lo).leading_zeros()).saturating_sub(RADIX_BITS);
        let bucket = |x: f64| ((key(x) - lo) >> shift) as usize;
        // Two tables, alternate values, so that runs of one bucket do
        // not wait on one counter.
        let mut counts = [[0u32; 2]; 1 << RADIX_BITS];
        let mut pairs = part.chunks_exact(2);
        for pair in &mut pairs {
            counts[bucket(pair[0])][0] += 1;
            counts[bucket(pair[1])][1] += 1;
        }
        for &x in pairs.remainder() {
            counts[bucket(x)][0] += 1;
        }
        let (mut before, mut b) = (0usize, 0usize);
        loop {
            let c = (counts[b][0] + counts[b][1]) as usize;
            if before + c > k {
                break;
            }
            before += c;
            b += 1;
        }
        let mut m = 0;
        for i in 0..part.len() {
            if bucket(part[i]) == b {
                part.swap(m, i);
                m += 1;
            }
        }
        part = &mut part[..m];
        k -= before;
    }
}

/// The value at rank `k + 1` of `s` (in the [`key`] order) when `a` is
/// the value at rank `k` (`k + 1 < s.len()`): `a` again when more than
/// `k + 1` values are not above it, else the least value above it.
fn next_rank(s: &[f64], a: f64, k: usize) -> f64 {
    let ka = key(a);
    let (mut not_above, mut least) = (0usize, u64::MAX);
    for &x in s {
        let kx = key(x);
        not_above += usize::from(kx <= ka);
        if kx > ka {
            least = least.min(kx);
        }
    }
    if not_above > k + 1 { a } else { unkey(least) }
}

/// The median and the median absolute deviation (unscaled) of the finite
/// values of `v`; `None` when no value is finite.
pub(crate) fn median_mad(v: &[f64]) -> Option<(f64, f64)> {
    median_mad_with(v, &mut Vec::new())
}

/// [`median_mad`] with the finite values copied into `buf` (a buffer the
/// caller reuses) instead of a new vector.
pub(crate) fn median_mad_with(v: &[f64], buf: &mut Vec<f64>) -> Option<(f64, f64)> {
    buf.clear();
    buf.extend(v.iter().copied().filter(|x| x.is_finite()));
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
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut v: Vec<f64> = (0..1001)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
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

    /// The selection by comparisons that [`quantile_in_place`] made before
    /// its radix selection, verbatim: the reference it must match bit for
    /// bit.
    fn quantile_by_comparisons(s: &mut [f64], q: f64) -> Option<f64> {
        if s.is_empty() {
            return None;
        }
        let pos = q.clamp(0.0, 1.0) * (s.len() - 1) as f64;
        let lo = pos.floor() as usize;
        let frac = pos - lo as f64;
        let (_, &mut a, rest) = if s.iter().all(|x| x.is_sign_positive()) {
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

    /// The radix selection gives the comparisons' value at every rank and
    /// quantile, bit for bit, on sets shaped as the metrics' are and as
    /// they are not: accelerations spread over binades, steps with runs of
    /// zeros (held joints), one value repeated, two values, ±0 together,
    /// negatives (heights), subnormals beside 1e300, sizes around the
    /// selection's own cut-offs; and leaves the set's values in place.
    #[test]
    fn quantiles_are_the_comparison_selections() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let unit = |r: u64| (r >> 11) as f64 / (1u64 << 53) as f64;
        let shapes: [&dyn Fn(u64, usize) -> f64; 9] = [
            &|r, _| unit(r) * 10.0,
            &|r, _| 10f64.powf(unit(r) * 12.0 - 6.0),
            &|r, i| if i % 3 == 0 { 0.0 } else { 10f64.powf(unit(r) * 4.0) },
            &|_, _| 2.5,
            &|r, _| if r & 1 == 0 { 1.0 } else { 1.0 + f64::EPSILON },
            &|r, _| [0.0, -0.0, 1e-300, -1e-300][(r & 3) as usize],
            &|r, _| unit(r) * 4.0 - 2.0,
            &|r, _| [f64::MIN_POSITIVE / 8.0, 1e300, 3.0, -1e300, 0.0][(r % 5) as usize],
            &|r, _| 1e3 + ((r >> 40) % 64) as f64 * 1e-9,
        ];
        let qs = [0.0, 0.05, 0.1, 0.25, 0.5, 0.95, 0.999, 1.0, 1.0 / 3.0];
        for n in [1, 2, 3, 7, 511, 512, 513, 1000, 4097, 60_001] {
            for (k, shape) in shapes.iter().enumerate() {
                let v: Vec<f64> = (0..n).map(|i| shape(rnd(), i)).collect();
                for q in qs {
                    let (mut a, mut b) = (v.clone(), v.clone());
                    let got = quantile_in_place(&mut a, q).map(f64::to_bits);
                    let want = quantile_by_comparisons(&mut b, q).map(f64::to_bits);
                    assert_eq!(got, want, "n {n} shape {k} q {q}");
                    let sort = |mut s: Vec<f64>| {
                        s.sort_by(f64::total_cmp);
                        s.into_iter().map(f64::to_bits).collect::<Vec<_>>()
                    };
                    assert_eq!(sort(a), sort(v.clone()), "the same values, reordered");
                }
            }
        }
        // Every rank of a set with duplicates, against a full sort.
        let v: Vec<f64> = (0..3000).map(|_| ((rnd() >> 50) as f64).sqrt()).collect();
        let mut sorted = v.clone();
        sorted.sort_by(f64::total_cmp);
        for (k, want) in sorted.iter().enumerate() {
            assert_eq!(nth(&mut v.clone(), k).to_bits(), want.to_bits(), "rank {k}");
        }
    }

    #[test]
    fn runs_are_inclusive_spans() {
        let f = [false, true, true, false, true];
        assert_eq!(runs(f), vec![(1, 2), (4, 4)]);
        assert_eq!(runs([true; 3]), vec![(0, 2)]);
        assert!(runs([false; 3]).is_empty());
    }
}

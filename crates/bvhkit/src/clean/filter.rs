//! Smoothing filters on one track of numbers: Butterworth run forward and
//! backward (scipy's `butter` + `filtfilt`), Savitzky-Golay (scipy's
//! `savgol_filter`, mode `interp`) and the one-euro filter (the PyPI
//! `OneEuroFilter` package), and the rotation tracks they run on.
//!
//! A joint's rotation is smoothed as a continuous quaternion track, never as
//! its raw Euler channels: each frame's step from the frame before (the
//! running reference) is taken through the log map, `ω_f =
//! log(q_{f-1}⁻¹ q_f)` (a rotation vector, radians, in the joint's frame),
//! and the steps are summed into a track `v_f = Σ ω` that never jumps at
//! ±180°. Each of its three components is filtered as a signal, and the
//! rotation is moved by what the filter changed: `q'_f = q_f ·
//! exp(v'_f - v_f)`. For a rotation about one fixed axis, `v` is the
//! unwrapped angle itself, so the filter is exactly scipy's on the angle
//! (the Python tests check it to 1e-9 degrees); for a general rotation the
//! correction `v' - v` is the filter's high-frequency part, small and local,
//! applied as a first-order perturbation.

use crate::error::num;
use crate::{Error, Result};

/// A zero-phase Butterworth low-pass filter: scipy's `butter(order,
/// cutoff_hz, fs=fps)` run by `filtfilt` with its default padding.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Butterworth {
    /// Cut-off frequency (Hz), below the Nyquist frequency `fps / 2`.
    pub cutoff_hz: f64,
    /// Filter order (1 to 12; 4 by default).
    pub order: usize,
}

/// A Savitzky-Golay filter: a least-squares polynomial of degree `poly`
/// over `window` frames, scipy's `savgol_filter(x, window, poly)` (mode
/// `interp`: the first and last `window / 2` frames from the polynomial
/// fitted to the first and last window).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SavGol {
    /// Window length in frames (odd, more than `poly`).
    pub window: usize,
    /// Polynomial order.
    pub poly: usize,
}

/// The one-euro filter (Casiez et al. 2012) as the PyPI `OneEuroFilter`
/// package computes it: causal, for live data.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OneEuro {
    /// Minimum cut-off frequency (Hz).
    pub min_cutoff: f64,
    /// Speed coefficient: the cut-off grows by `beta` times the speed.
    pub beta: f64,
    /// Cut-off of the speed's own low-pass (Hz; 1 by default).
    pub d_cutoff: f64,
}

/// Butterworth low-pass coefficients `(b, a)` of `order` at `wn` (the
/// cut-off over the Nyquist frequency, in `(0, 1)`), as scipy's
/// `butter(order, wn)`: the analog prototype's poles, pre-warped, through
/// the bilinear transform.
pub fn butter(order: usize, wn: f64) -> Result<(Vec<f64>, Vec<f64>)> {
    if !(1..=12).contains(&order) {
        return Err(Error::invalid(format!("Butterworth order {order} is not between 1 and 12")));
    }
    if !(wn > 0.0 && wn < 1.0) {
        return Err(Error::invalid(format!(
            "Butterworth cut-off must be between 0 and the Nyquist frequency (fraction {wn})"
        )));
    }
    let n = order as f64;
    let fs = 2.0;
    let warped = 2.0 * fs * (std::f64::consts::PI * wn / fs).tan();
    let fs2 = 2.0 * fs;
    // Prototype poles -exp(iπm/2N), m = -N+1, -N+3, ..., N-1; scaled by
    // the warped frequency; mapped by the bilinear transform.
    let mut poles = Vec::with_capacity(order);
    let mut k = warped.powi(order as i32);
    let mut den = C::new(1.0, 0.0);
    for i in 0..order {
        let m = -(n - 1.0) + 2.0 * i as f64;
        let t = std::f64::consts::PI * m / (2.0 * n);
        let p = C::new(-t.cos(), -t.sin()).scale(warped);
        let d = C::new(fs2, 0.0).sub(p);
        den = den.mul(d);
        poles.push(C::new(fs2, 0.0).add(p).div(d));
    }
    k *= C::new(1.0, 0.0).div(den).re;
    let b: Vec<f64> = poly(&vec![C::new(-1.0, 0.0); order]).iter().map(|c| c.re * k).collect();
    let a: Vec<f64> = poly(&poles).iter().map(|c| c.re).collect();
    Ok((b, a))
}

/// The polynomial with `roots`, highest power first (NumPy's `poly`).
fn poly(roots: &[C]) -> Vec<C> {
    let mut c = vec![C::new(1.0, 0.0)];
    for &r in roots {
        let mut next = vec![C::new(0.0, 0.0); c.len() + 1];
        for (i, &x) in c.iter().enumerate() {
            next[i] = next[i].add(x);
            next[i + 1] = next[i + 1].sub(x.mul(r));
        }
        c = next;
    }
    c
}

/// The padding `filtfilt` adds at each end by default: three times the
/// number of coefficients.
pub fn filtfilt_padlen(b: &[f64], a: &[f64]) -> usize {
    3 * b.len().max(a.len())
}

/// `x` filtered forward then backward by `(b, a)`, as scipy's
/// `filtfilt(b, a, x)`: odd extension of [`filtfilt_padlen`] samples at
/// each end, initial states from `lfilter_zi` scaled by the first sample.
/// `x` must be longer than the padding.
pub fn filtfilt(b: &[f64], a: &[f64], x: &[f64]) -> Result<Vec<f64>> {
    let edge = filtfilt_padlen(b, a);
    if x.len() <= edge {
        return Err(Error::invalid(format!(
            "a Butterworth filter of order {} needs more than {edge} frames (the clip has {})",
            a.len().max(b.len()) - 1,
            x.len()
        )));
    }
    let n = x.len();
    let mut ext = Vec::with_capacity(n + 2 * edge);
    ext.extend((1..=edge).rev().map(|i| 2.0 * x[0] - x[i]));
    ext.extend_from_slice(x);
    ext.extend((1..=edge).map(|i| 2.0 * x[n - 1] - x[n - 1 - i]));
    let (b, a) = normalise(b, a);
    let zi = lfilter_zi(&b, &a)?;
    // Forward, then backward over the same buffer in place: the operations
    // of scipy's reversed copies, in the same order, without the copies.
    let x0 = ext[0];
    lfilter_in_place(&b, &a, ext.iter_mut(), &zi, x0);
    let last = ext[ext.len() - 1];
    lfilter_in_place(&b, &a, ext.iter_mut().rev(), &zi, last);
    Ok(ext[edge..edge + n].to_vec())
}

/// `lfilter` over `x` in place, in the order the iterator gives (the
/// same operations, the same bits).
fn lfilter_in_place<'a>(
    b: &[f64],
    a: &[f64],
    x: impl Iterator<Item = &'a mut f64>,
    zi: &[f64],
    x0: f64,
) {
    let m = zi.len();
    // The state on the stack up to order 16 (`butter` makes 12 at most).
    let (mut small, mut large) = ([0.0f64; 16], Vec::new());
    let z: &mut [f64] = if m <= small.len() {
        &mut small[..m]
    } else {
        large.resize(m, 0.0);
        &mut large
    };
    for (zk, v) in z.iter_mut().zip(zi) {
        *zk = v * x0;
    }
    for xp in x {
        let xn = *xp;
        let yn = if m == 0 { b[0] * xn } else { z[0] + b[0] * xn };
        for i in 0..m.saturating_sub(1) {
            z[i] = z[i + 1] + xn * b[i + 1] - yn * a[i + 1];
        }
        if m > 0 {
            z[m - 1] = xn * b[m] - yn * a[m];
        }
        *xp = yn;
    }
}

/// `(b, a)` divided by `a[0]` and padded with zeros to one length.
fn normalise(b: &[f64], a: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let n = b.len().max(a.len());
    let a0 = a[0];
    let mut bb: Vec<f64> = b.iter().map(|v| v / a0).collect();
    let mut aa: Vec<f64> = a.iter().map(|v| v / a0).collect();
    bb.resize(n, 0.0);
    aa.resize(n, 0.0);
    (bb, aa)
}

/// The steady-state initial conditions of `lfilter` for a step input,
/// as scipy's `lfilter_zi`: the solution of `(I - Aᵀ) zi = b[1:] - a[1:]
/// b[0]`, `A` the companion matrix of `a`.
fn lfilter_zi(b: &[f64], a: &[f64]) -> Result<Vec<f64>> {
    let m = a.len() - 1;
    let mut mat = vec![vec![0.0; m]; m];
    for (i, row) in mat.iter_mut().enumerate() {
        row[i] = 1.0;
        row[0] += a[i + 1];
        if i + 1 < m {
            row[i + 1] -= 1.0;
        }
    }
    let rhs: Vec<f64> = (0..m).map(|i| b[i + 1] - a[i + 1] * b[0]).collect();
    solve(mat, rhs).ok_or_else(|| Error::invalid("the filter has no steady state"))
}

/// `x` through the direct form II transposed filter `(b, a)` (normalised,
/// one length) from the state `zi · x0`: the reference of
/// [`lfilter_in_place`] (scipy's `filtfilt` with its reversed copies).
#[cfg(test)]
fn lfilter(b: &[f64], a: &[f64], x: &[f64], zi: &[f64], x0: f64) -> Vec<f64> {
    let m = zi.len();
    let mut z: Vec<f64> = zi.iter().map(|v| v * x0).collect();
    let mut y = Vec::with_capacity(x.len());
    for &xn in x {
        let yn = if m == 0 { b[0] * xn } else { z[0] + b[0] * xn };
        for i in 0..m.saturating_sub(1) {
            z[i] = z[i + 1] + xn * b[i + 1] - yn * a[i + 1];
        }
        if m > 0 {
            z[m - 1] = xn * b[m] - yn * a[m];
        }
        y.push(yn);
    }
    y
}

/// The solution of the square system `mat · x = rhs` by Gaussian
/// elimination with partial pivoting; `None` when singular.
fn solve(mut mat: Vec<Vec<f64>>, mut rhs: Vec<f64>) -> Option<Vec<f64>> {
    let n = rhs.len();
    for col in 0..n {
        let piv = (col..n).max_by(|&i, &j| mat[i][col].abs().total_cmp(&mat[j][col].abs()))?;
        if mat[piv][col] == 0.0 || !mat[piv][col].is_finite() {
            return None;
        }
        mat.swap(col, piv);
        rhs.swap(col, piv);
        for r in col + 1..n {
            let f = mat[r][col] / mat[col][col];
            if f != 0.0 {
                let pivot_row = mat[col].clone();
                for (x, p) in mat[r][col..].iter_mut().zip(&pivot_row[col..]) {
                    *x -= f * p;
                }
                rhs[r] -= f * rhs[col];
            }
        }
    }
    let mut x = vec![0.0; n];
    for r in (0..n).rev() {
        let s: f64 = (r + 1..n).map(|c| mat[r][c] * x[c]).sum();
        x[r] = (rhs[r] - s) / mat[r][r];
    }
    Some(x)
}

/// Checks a Savitzky-Golay window against a track of `n` samples.
pub(crate) fn check_savgol(s: SavGol, n: usize) -> Result<()> {
    if s.window.is_multiple_of(2) || s.window < 3 {
        return Err(Error::invalid(format!(
            "Savitzky-Golay window {} must be odd and at least 3",
            s.window
        )));
    }
    if s.poly >= s.window {
        return Err(Error::invalid(format!(
            "Savitzky-Golay polynomial order {} must be less than the window {}",
            s.poly, s.window
        )));
    }
    if s.window > n {
        return Err(Error::invalid(format!(
            "Savitzky-Golay window {} is longer than the clip ({n} frames)",
            s.window
        )));
    }
    Ok(())
}

/// The weights that give the least-squares polynomial of degree `poly`
/// through `window` samples, evaluated at each of the window's positions:
/// `w[t][k]` multiplies sample `k` for the value at position `t` (the rows
/// of the hat matrix `A (AᵀA)⁻¹ Aᵀ`, positions scaled to `[-1, 1]` for a
/// well-conditioned `AᵀA`).
fn savgol_weights(window: usize, poly: usize) -> Vec<Vec<f64>> {
    let half = (window / 2) as f64;
    let xs: Vec<f64> = (0..window).map(|k| (k as f64 - half) / half.max(1.0)).collect();
    let p = poly + 1;
    let pw = |x: f64, e: usize| x.powi(e as i32);
    let ata: Vec<Vec<f64>> =
        (0..p).map(|i| (0..p).map(|j| xs.iter().map(|&x| pw(x, i + j)).sum()).collect()).collect();
    // Columns of (AᵀA)⁻¹, one solve per unit vector.
    let inv: Vec<Vec<f64>> = (0..p)
        .map(|i| {
            let mut e = vec![0.0; p];
            e[i] = 1.0;
            solve(ata.clone(), e).unwrap_or_else(|| vec![0.0; p])
        })
        .collect();
    xs.iter()
        .map(|&t| {
            // a(t)ᵀ (AᵀA)⁻¹, then times Aᵀ.
            let row: Vec<f64> =
                (0..p).map(|j| (0..p).map(|i| pw(t, i) * inv[j][i]).sum()).collect();
            xs.iter().map(|&x| (0..p).map(|j| row[j] * pw(x, j)).sum()).collect()
        })
        .collect()
}

/// `x` smoothed by Savitzky-Golay (see [`SavGol`]); checked by
/// the rules of [`SavGol`] first (an error otherwise).
pub fn savgol(x: &[f64], s: SavGol) -> Result<Vec<f64>> {
    check_savgol(s, x.len())?;
    let w = savgol_weights(s.window, s.poly);
    let n = x.len();
    let half = s.window / 2;
    let dot = |t: usize, start: usize| -> f64 {
        w[t].iter().zip(&x[start..start + s.window]).map(|(a, b)| a * b).sum()
    };
    let mut y = vec![0.0; n];
    for (f, out) in y.iter_mut().enumerate() {
        *out = if f < half {
            dot(f, 0)
        } else if f + half >= n {
            dot(f + s.window - n, n - s.window)
        } else {
            dot(half, f - half)
        };
    }
    Ok(y)
}

/// The one-euro filter's state on one signal, as the PyPI `OneEuroFilter`
/// package's `OneEuroFilter(freq, mincutoff, beta, dcutoff)` called without
/// timestamps: `α(c) = 1 / (1 + τ/Tₑ)`, `τ = 1/(2πc)`, `Tₑ = 1/freq`; the
/// speed `(x - x̂_prev) · freq` (from the last *filtered* value, 0 at the
/// first sample) low-passed at `d_cutoff`, then `x̂ = α(min_cutoff + beta ·
/// |speed|) · x + (1 - α) · x̂_prev`, the first sample passed through.
#[derive(Clone, Debug)]
pub struct OneEuroState {
    p: OneEuro,
    freq: f64,
    x_prev: Option<f64>,
    dx_prev: f64,
}

impl OneEuroState {
    /// A filter that has seen nothing yet, for samples `freq` per second.
    pub fn new(p: OneEuro, freq: f64) -> OneEuroState {
        OneEuroState { p, freq, x_prev: None, dx_prev: 0.0 }
    }

    /// Forgets every sample seen: the next one passes through.
    pub fn reset(&mut self) {
        self.x_prev = None;
        self.dx_prev = 0.0;
    }

    fn alpha(&self, cutoff: f64) -> f64 {
        let te = 1.0 / self.freq;
        let tau = 1.0 / (2.0 * std::f64::consts::PI * cutoff);
        1.0 / (1.0 + tau / te)
    }

    /// The filtered value of the next sample `x`.
    pub fn filter(&mut self, x: f64) -> f64 {
        let Some(x_prev) = self.x_prev else {
            self.x_prev = Some(x);
            self.dx_prev = 0.0;
            return x;
        };
        let dx = (x - x_prev) * self.freq;
        let a_d = self.alpha(self.p.d_cutoff);
        let edx = a_d * dx + (1.0 - a_d) * self.dx_prev;
        let a = self.alpha(self.p.min_cutoff + self.p.beta * edx.abs());
        let x_hat = a * x + (1.0 - a) * x_prev;
        self.x_prev = Some(x_hat);
        self.dx_prev = edx;
        x_hat
    }
}

/// Checks one-euro parameters as the package does (all cut-offs above 0).
pub(crate) fn check_one_euro(p: OneEuro) -> Result<()> {
    if !(p.min_cutoff > 0.0 && p.d_cutoff > 0.0 && p.beta >= 0.0 && p.beta.is_finite()) {
        return Err(Error::invalid(format!(
            "one-euro needs MIN_CUTOFF > 0, BETA >= 0 and D_CUTOFF > 0 (got {}, {}, {})",
            num(p.min_cutoff),
            num(p.beta),
            num(p.d_cutoff)
        )));
    }
    Ok(())
}

/// `x` through a fresh one-euro filter at `freq` samples per second.
pub fn one_euro(x: &[f64], p: OneEuro, freq: f64) -> Vec<f64> {
    let mut s = OneEuroState::new(p, freq);
    x.iter().map(|&v| s.filter(v)).collect()
}

/// A complex number, enough for the Butterworth design.
#[derive(Clone, Copy, Debug)]
struct C {
    re: f64,
    im: f64,
}

impl C {
    fn new(re: f64, im: f64) -> C {
        C { re, im }
    }
    fn add(self, o: C) -> C {
        C::new(self.re + o.re, self.im + o.im)
    }
    fn sub(self, o: C) -> C {
        C::new(self.re - o.re, self.im - o.im)
    }
    fn mul(self, o: C) -> C {
        C::new(self.re * o.re - self.im * o.im, self.re * o.im + self.im * o.re)
    }
    fn scale(self, k: f64) -> C {
        C::new(self.re * k, self.im * k)
    }
    fn div(self, o: C) -> C {
        let d = o.re * o.re + o.im * o.im;
        C::new((self.re * o.re + self.im * o.im) / d, (self.im * o.re - self.re * o.im) / d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `filtfilt` filtering in place gives the bits of scipy's route
    /// (forward `lfilter`, reversed copy, `lfilter`, reversed copy), for
    /// every order `butter` makes and for coefficients longer than the
    /// stack state (a caller's own filter).
    #[test]
    fn filtfilt_in_place_equals_the_reversed_copies_bit_for_bit() {
        let reference = |b: &[f64], a: &[f64], x: &[f64]| -> Vec<f64> {
            let edge = filtfilt_padlen(b, a);
            let n = x.len();
            let mut ext = Vec::new();
            ext.extend((1..=edge).rev().map(|i| 2.0 * x[0] - x[i]));
            ext.extend_from_slice(x);
            ext.extend((1..=edge).map(|i| 2.0 * x[n - 1] - x[n - 1 - i]));
            let (b, a) = normalise(b, a);
            let zi = lfilter_zi(&b, &a).unwrap();
            let mut y = lfilter(&b, &a, &ext, &zi, ext[0]);
            y.reverse();
            let first = y[0];
            let mut y = lfilter(&b, &a, &y, &zi, first);
            y.reverse();
            y[edge..edge + n].to_vec()
        };
        let x: Vec<f64> =
            (0..400).map(|i| (i as f64 * 0.37).sin() * 30.0 + (i % 7) as f64 - 3.0).collect();
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for order in 1..=12 {
            let (b, a) = butter(order, 0.1).unwrap();
            assert_eq!(bits(&filtfilt(&b, &a, &x).unwrap()), bits(&reference(&b, &a, &x)));
        }
        // 20 coefficients: a moving average, its state on the heap.
        let (b, a) = (vec![0.05; 20], vec![1.0]);
        assert_eq!(bits(&filtfilt(&b, &a, &x).unwrap()), bits(&reference(&b, &a, &x)));
    }

    #[test]
    fn butter_matches_scipy_coefficients() {
        // scipy.signal.butter(4, 0.1): printed with repr().
        let (b, a) = butter(4, 0.1).unwrap();
        let sb = [
            0.00041659920440659937,
            0.0016663968176263975,
            0.002499595226439596,
            0.0016663968176263975,
            0.00041659920440659937,
        ];
        let sa =
            [1.0, -3.180638548874719, 3.8611943489942133, -2.112155355110969, 0.43826514226197977];
        for (x, y) in b.iter().zip(sb).chain(a.iter().zip(sa)) {
            assert!((x - y).abs() < 1e-13, "{x} vs {y}");
        }
    }

    #[test]
    fn filters_keep_constants_and_lines() {
        let x: Vec<f64> = (0..100).map(|f| 3.0 + 0.5 * f as f64).collect();
        let y = savgol(&x, SavGol { window: 7, poly: 2 }).unwrap();
        for (a, b) in x.iter().zip(&y) {
            assert!((a - b).abs() < 1e-10);
        }
        let (b, a) = butter(4, 0.2).unwrap();
        let c = vec![7.0; 50];
        for v in filtfilt(&b, &a, &c).unwrap() {
            assert!((v - 7.0).abs() < 1e-9);
        }
        assert!(filtfilt(&b, &a, &c[..15]).is_err());
        assert!(savgol(&c, SavGol { window: 6, poly: 2 }).is_err());
        assert!(savgol(&c, SavGol { window: 5, poly: 5 }).is_err());
    }
}

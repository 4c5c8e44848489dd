//! The largest eigenvalue of Horn's symmetric 4×4 key matrix `N` and its
//! eigenvector (the quaternion of the best rotation), without a full
//! eigendecomposition: the path [`super::FitInput::similarity_fast`] takes
//! for nearly every frame, [`super::jacobi4`] the others.
//!
//! 1. The eigenvalue by Newton's method on the characteristic polynomial
//!    `det(N − λI) = λ⁴ + c₂λ² + c₁λ + c₀` (`N` is traceless: `c₂ = −½ Σ
//!    N²ᵢⱼ`, `c₁ = −8 det S` of the cross-covariance `S`, `c₀ = det N`),
//!    from the bound `R`, the smaller of `√(Gx·Gy)` (Cauchy-Schwarz) and
//!    `√3 ‖S‖` (no eigenvalue exceeds either in magnitude), above the
//!    largest root, where the quartic is increasing
//!    and convex, so the steps fall onto the largest root from above (the
//!    QCP method, Theobald 2005, Liu et al. 2010).
//! 2. The eigenvector by two steps of inverse iteration with the shift
//!    found (an LU factorisation of `N − λI` with partial pivoting, solved
//!    twice), from the unit vector of the largest principal 3×3 minor of
//!    `N − λI` (the adjugate's largest diagonal entry: that coordinate of
//!    the eigenvector is at least ½). A backward-stable solve makes the
//!    vector accurate to about `ε·R/gap`, as Jacobi's.
//! 3. The eigenvalue again as the Rayleigh quotient `vᵀNv`.
//!
//! It vouches for its answer only where that accuracy is assured, and
//! gives `None` otherwise (the caller then runs Jacobi, today's answer
//! bit for bit): a bound that is not a positive finite number (a point
//! NaN or infinite, every point in one place), a gap to the next
//! eigenvalue that may be below [`GAP`]·`R` (`P'(λ) = Π (λ − λⱼ) ≤
//! gap·(2R)²`: points on a line, a plane's mirror image with equal
//! spreads), or a residual `‖Nv − λv‖` above [`RESIDUAL`]·`R`.

/// The smallest gap to the second eigenvalue, relative to the bound `R`,
/// that the fast path answers for: its eigenvector is then within about
/// `ε / GAP` (2e-13) of the exact one.
const GAP: f64 = 1e-3;

/// The largest residual `‖Nv − λv‖`, relative to `R`, of an answer.
const RESIDUAL: f64 = 1e-13;

/// The determinant of a 3×3 matrix given by its rows.
#[inline(always)]
fn det3(m: [[f64; 3]; 3]) -> f64 {
    m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
        - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
        + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
}

/// The determinant of a 4×4 matrix, by the 2×2 minors of its first two
/// rows and of its last two (Laplace).
#[inline(always)]
fn det4(m: &[[f64; 4]; 4]) -> f64 {
    let minor = |r: usize, i: usize, j: usize| m[r][i] * m[r + 1][j] - m[r][j] * m[r + 1][i];
    minor(0, 0, 1) * minor(2, 2, 3) - minor(0, 0, 2) * minor(2, 1, 3)
        + minor(0, 0, 3) * minor(2, 1, 2)
        + minor(0, 1, 2) * minor(2, 0, 3)
        - minor(0, 1, 3) * minor(2, 0, 2)
        + minor(0, 2, 3) * minor(2, 0, 1)
}

/// The principal 3×3 minor of `a` without row and column `c`.
#[inline(always)]
fn principal_minor(a: &[[f64; 4]; 4], c: usize) -> f64 {
    let idx = match c {
        0 => [1, 2, 3],
        1 => [0, 2, 3],
        2 => [0, 1, 3],
        _ => [0, 1, 2],
    };
    det3(idx.map(|i| idx.map(|j| a[i][j])))
}

/// An LU factorisation with partial pivoting of a 4×4 matrix: `lu` holds
/// `L` (below the diagonal, unit diagonal implied) and `U`, `perm` the
/// rows' order. A zero pivot is replaced by `tiny` (the matrix is singular
/// on purpose: inverse iteration solves with it).
struct Lu {
    lu: [[f64; 4]; 4],
    perm: [usize; 4],
}

impl Lu {
    fn new(mut a: [[f64; 4]; 4], tiny: f64) -> Lu {
        let mut perm = [0, 1, 2, 3];
        for k in 0..4 {
            let p = (k + 1..4).fold(k, |p, i| if a[i][k].abs() > a[p][k].abs() { i } else { p });
            a.swap(k, p);
            perm.swap(k, p);
            if a[k][k] == 0.0 {
                a[k][k] = tiny;
            }
            let inv = 1.0 / a[k][k];
            for i in k + 1..4 {
                let f = a[i][k] * inv;
                a[i][k] = f;
                let pivot_row = a[k];
                for (x, y) in a[i][k + 1..].iter_mut().zip(&pivot_row[k + 1..]) {
                    *x -= f * y;
                }
            }
        }
        Lu { lu: a, perm }
    }

    /// The solution `x` of `A x = b`.
    fn solve(&self, b: [f64; 4]) -> [f64; 4] {
        let a = &self.lu;
        let mut y = self.perm.map(|i| b[i]);
        for i in 1..4 {
            for j in 0..i {
                y[i] -= a[i][j] * y[j];
            }
        }
        for i in (0..4).rev() {
            for j in i + 1..4 {
                y[i] -= a[i][j] * y[j];
            }
            y[i] /= a[i][i];
        }
        y
    }
}

/// `v` over its length.
#[inline(always)]
fn unit(v: [f64; 4]) -> [f64; 4] {
    let n = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3]).sqrt();
    v.map(|x| x / n)
}

/// The largest eigenvalue of Horn's matrix `n` (of the cross-covariance
/// `s`, the points' spreads `gx` and `gy` about their centroids) and its
/// unit eigenvector; `None` where the answer is not assured (see the
/// module's documentation).
pub(super) fn largest(
    n: &[[f64; 4]; 4],
    s: &[[f64; 3]; 3],
    gx: f64,
    gy: f64,
) -> Option<(f64, [f64; 4])> {
    let c2 = -0.5 * n.iter().flatten().map(|x| x * x).sum::<f64>();
    // The bound R: also |λ| ≤ σ₁ + σ₂ + σ₃ ≤ √3 ‖S‖ of the singular
    // values σ of S (‖N‖² = 4 ‖S‖² = −2c₂), nearer the root where the fit
    // is poor.
    let r = (gx * gy).sqrt().min((-1.5 * c2).sqrt());
    if !(r > 0.0 && r < f64::INFINITY) {
        return None;
    }
    let c1 = -8.0 * det3(*s);
    let c0 = det4(n);
    if !(c1.is_finite() && c0.is_finite()) {
        return None;
    }
    let poly = |l: f64| {
        let l2 = l * l;
        ((l2 + c2) * l2 + c1 * l + c0, (4.0 * l2 + 2.0 * c2) * l + c1)
    };
    let mut l = r;
    for _ in 0..60 {
        let (p, dp) = poly(l);
        if !(p > 0.0 && dp > 0.0) {
            break;
        }
        let step = p / dp;
        l -= step;
        if step <= 1e-15 * r {
            break;
        }
    }
    // P'(λ) = Π (λ - λⱼ) ≤ gap·(2R)²: a large enough P' assures the gap.
    let (_, dp) = poly(l);
    if dp.is_nan() || dp < 4.0 * GAP * r * r * r {
        return None;
    }
    let mut a = *n;
    for (i, row) in a.iter_mut().enumerate() {
        row[i] -= l;
    }
    let minors = [0, 1, 2, 3].map(|i| principal_minor(&a, i).abs());
    let c = (1..4).fold(0, |c, i| if minors[i] > minors[c] { i } else { c });
    let lu = Lu::new(a, f64::EPSILON * r);
    let mut e = [0.0; 4];
    e[c] = 1.0;
    let v = unit(lu.solve(unit(lu.solve(e))));
    let nv = n.map(|row| row[0] * v[0] + row[1] * v[1] + row[2] * v[2] + row[3] * v[3]);
    let lambda = v[0] * nv[0] + v[1] * nv[1] + v[2] * nv[2] + v[3] * nv[3];
    let res: f64 = (0..4).map(|i| (nv[i] - lambda * v[i]).powi(2)).sum();
    (res.sqrt() <= RESIDUAL * r).then_some((lambda, v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_polynomial_is_the_determinant() {
        // Horn's matrix of a cross-covariance, its characteristic
        // polynomial's coefficients against det(N - λI) by `det4`.
        let s = [[0.7, -1.3, 0.2], [2.1, 0.4, -0.9], [0.3, 1.7, -0.6]];
        let [[sxx, sxy, sxz], [syx, syy, syz], [szx, szy, szz]] = s;
        let n = [
            [sxx + syy + szz, syz - szy, szx - sxz, sxy - syx],
            [syz - szy, sxx - syy - szz, sxy + syx, szx + sxz],
            [szx - sxz, sxy + syx, -sxx + syy - szz, syz + szy],
            [sxy - syx, szx + sxz, syz + szy, -sxx - syy + szz],
        ];
        let c2 = -0.5 * n.iter().flatten().map(|x| x * x).sum::<f64>();
        let (c1, c0) = (-8.0 * det3(s), det4(&n));
        for l in [-3.0, -0.5, 0.0, 0.25, 1.0, 4.5] {
            let mut a = n;
            for (i, row) in a.iter_mut().enumerate() {
                row[i] -= l;
            }
            let want = det4(&a);
            let got = l * l * l * l + c2 * l * l + c1 * l + c0;
            assert!((got - want).abs() <= 1e-12 * want.abs().max(1.0), "{l}: {got} {want}");
        }
        // det4 against a cofactor expansion along the first row.
        let cof = (0..4)
            .map(|j| {
                let cols: Vec<usize> = (0..4).filter(|&c| c != j).collect();
                let m = [1, 2, 3].map(|i| [cols[0], cols[1], cols[2]].map(|c| n[i][c]));
                let sign = if j % 2 == 0 { 1.0 } else { -1.0 };
                sign * n[0][j] * det3(m)
            })
            .sum::<f64>();
        assert!((cof - det4(&n)).abs() <= 1e-12 * cof.abs());
    }
}

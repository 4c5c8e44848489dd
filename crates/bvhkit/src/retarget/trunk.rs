//! The last step of the upper body's correction ([`super::upright`]): a
//! least-squares solve over the whole trunk, where the analytic turn and
//! bends leave the head off the source's hips-to-head line, or the shoulder
//! line off the source's, by more than [`TRIGGER`].
//!
//! The analytic step bends at most two joints (the spine below the joint
//! carrying the arms as one piece, the neck above it), each held to the
//! bend limit, and turns the rest with the head first: on a contorted
//! source pose (Kinect v1's take, its neck 76° off its trunk) that leaves
//! the head 9-12° off its line, or the shoulder line 20-51° off, where a
//! pose of the target's joints meets both. Here every joint of the trunk
//! and neck (the path from the hips to the head) turns on its own, and so
//! does every clavicle without a source (PyMO's, whose spine joint carries
//! both the head and the arms: turned, they lay the shoulder line while
//! the spine holds the head): Levenberg-Marquardt on finite differences
//! over their world rotations (as rotation vectors, from where the
//! analytic step left them), the residuals
//! - the difference of the target's hips-to-head direction and the
//!   source's, and of the shoulder lines' (unit vectors: its length is
//!   `2·sin(angle/2)`, smooth where the angle is not), in units of
//!   [`TOLERANCE`] (the squares balance the two where both cannot be met),
//! - every bend of the trunk and neck beyond its limit (the source's
//!   largest trunk bend, or the target clip's own bend of the joint, plus
//!   [`super::BEND_MARGIN`]), in half degrees (a wall),
//! - each rotation itself, small ([`REGULARISE`]): the smallest change
//!   that meets them.
//!
//! Arms, head and mapped clavicles keep their world rotations (their local
//! rotations are rewritten, as after the turn); joints that follow a
//! turned joint (kept, or without rotation channels) follow it. The result
//! is taken only where it is better than the analytic step's. Only frames
//! that miss run the solve: a frame that meets both lines costs one pass
//! of forward kinematics over the chain.
//!
//! Known limit: the solve stops where Levenberg-Marquardt on
//! finite differences stops, which moves with the last bits of its input:
//! in solved frames the fast path and the plain reference of the tests
//! (`tests::fast_path_agrees_with_the_plain_reference_on_corpus_pairs`)
//! agree to about 1e-6 of a channel, not 1e-9 (from the Kinect v1 take
//! onto MediaPipe, whose two passes trade one line for the other, up to
//! 0.65); one path is deterministic, so the command, the library and
//! Python give the same bytes. That is why the solve runs only under the
//! T-pose reference and only where a line fails its bound, which no pair
//! of that test reaches.
use glam::{DMat3, DQuat, DVec3};

use super::bend_at;

/// The most joints of the chains from the hips to the head and the upper
/// arms, and the most of them that turn freely (a larger rig is left to
/// the analytic step).
pub(super) const MAX_NODES: usize = 24;
const MAX_FREE: usize = 8;
const MAX_VARS: usize = 3 * MAX_FREE;
/// Residuals: two lines (three each), at most 16 bends, one per variable.
const MAX_RES: usize = 6 + 16 + MAX_VARS;

/// The solve runs where a line is off by more than this (radians: 5°, the
/// bound: a frame that meets both lines keeps the analytic step's pose).
const TRIGGER: f64 = 5.0 * std::f64::consts::PI / 180.0;
/// The unit of a line's residual (radians: 5°, the bound of
/// `tests/retarget_pairs.rs`).
const TOLERANCE: f64 = 5.0 * std::f64::consts::PI / 180.0;
/// The unit of a bend's excess (radians: half a degree).
const WALL: f64 = 0.5 * std::f64::consts::PI / 180.0;

/// A wall's residual of the excess `e` (radians): `e` beyond 0 in units
/// of [`WALL`].
fn wall(e: f64) -> f64 {
    e.max(0.0) / WALL
}

/// The weight of a rotation (per radian) against the lines.
const REGULARISE: f64 = 0.05;
/// Levenberg-Marquardt iterations and the finite difference (radians).
const ITERATIONS: usize = 60;
const STEP: f64 = 1e-6;
/// Where both lines cannot be met, the head is held within this of its
/// line (radians: 4.5°, inside [`TOLERANCE`]) and the shoulder line is
/// made as near as that allows.
const HEAD_FIRST: f64 = 4.5 * std::f64::consts::PI / 180.0;

/// How a node of the chain turns in the solve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Kind {
    /// By its own rotation (the `k`th of the variables).
    Free(usize),
    /// With its parent node.
    Follows,
    /// Not at all: it keeps its world rotation (the hips, arms, head,
    /// mapped clavicles).
    Keeps,
}

/// The plan of the solve for one target skeleton.
#[derive(Clone, Debug)]
pub(super) struct Solve {
    /// The target's joints from the hips (first) to the head and to the
    /// upper arms, in file order (parents first).
    pub(super) nodes: Vec<usize>,
    /// Per node: its parent's node (the hips' own: 0).
    pub(super) parent: Vec<usize>,
    pub(super) kind: Vec<Kind>,
    pub(super) n_free: usize,
    /// The nodes of the head and of the upper arms (left, right).
    pub(super) head: usize,
    pub(super) arms: Option<(usize, usize)>,
    /// The nodes of `Torso::path` (the hips to the head), at most 16.
    pub(super) path: Vec<usize>,
    /// Joints outside the chain whose world rotation follows a node's
    /// turn (kept joints, joints without rotation channels): (joint, node).
    pub(super) follow: Vec<(usize, usize)>,
}

/// What the solve aims at in one frame.
pub(super) struct Goal {
    /// The target's hips, and the source's hips-to-head and shoulder lines
    /// in the target's axes (unit).
    pub(super) hips: DVec3,
    pub(super) d: DVec3,
    pub(super) s: Option<DVec3>,
}

impl Solve {
    /// The plan, or `None` where the chains are larger than the solve
    /// takes or a joint of them has one or two rotation channels.
    /// `free(j)`: whether joint `j` turns on its own; `follows(j)`:
    /// whether it turns with its parent.
    pub(super) fn new(
        parents: &[Option<usize>],
        (hips, head, arms): (usize, usize, Option<(usize, usize)>),
        path: &[usize],
        free: impl Fn(usize) -> bool,
        follows: impl Fn(usize) -> bool,
    ) -> Option<Solve> {
        let mut member = vec![false; parents.len()];
        let ends = std::iter::once(head).chain(arms.into_iter().flat_map(|(l, r)| [l, r]));
        for end in ends {
            let mut x = Some(end);
            while let Some(j) = x {
                member[j] = true;
                if j == hips {
                    break;
                }
                x = parents[j];
            }
            if x != Some(hips) {
                return None;
            }
        }
        let nodes: Vec<usize> = (0..parents.len()).filter(|&j| member[j]).collect();
        if nodes.len() > MAX_NODES || nodes.first() != Some(&hips) || path.len() > 16 {
            return None;
        }
        let at = |j: usize| nodes.iter().position(|&x| x == j);
        let mut kind = Vec::with_capacity(nodes.len());
        let mut n_free = 0;
        for (i, &j) in nodes.iter().enumerate() {
            let leaf = j == head || arms.is_some_and(|(l, r)| j == l || j == r);
            kind.push(if i > 0 && !leaf && free(j) {
                n_free += 1;
                Kind::Free(n_free - 1)
            } else if i > 0 && !leaf && follows(j) {
                Kind::Follows
            } else {
                Kind::Keeps
            });
        }
        if n_free == 0 || n_free > MAX_FREE {
            return None;
        }
        let parent = nodes.iter().map(|&j| parents[j].and_then(at).unwrap_or(0)).collect();
        let mut follow = Vec::new();
        for j in 0..parents.len() {
            if member[j] || !follows(j) {
                continue;
            }
            let mut x = parents[j];
            while let Some(p) = x.filter(|&p| !member[p] && follows(p)) {
                x = parents[p];
            }
            if let Some(n) = x.filter(|&p| member[p]).and_then(at) {
                follow.push((j, n));
            }
        }
        Some(Solve {
            head: at(head)?,
            arms: arms.and_then(|(l, r)| at(l).zip(at(r))),
            path: path.iter().map(|&j| at(j)).collect::<Option<Vec<_>>>()?,
            nodes,
            parent,
            kind,
            n_free,
            follow,
        })
    }

    /// Each node's translation from its parent node in the parent's frame,
    /// from the frame's world rotations and positions before the upper
    /// body's correction.
    pub(super) fn capture(
        &self,
        world: &[DMat3],
        positions: &[DVec3],
        locals: &mut [DVec3; MAX_NODES],
    ) {
        for (i, &j) in self.nodes.iter().enumerate().skip(1) {
            let p = self.nodes[self.parent[i]];
            locals[i] = world[p].transpose() * (positions[j] - positions[p]);
        }
    }

    /// Each node's turn for the variables `x`.
    fn turns(&self, x: &[f64; MAX_VARS], turns: &mut [DMat3; MAX_NODES]) {
        for (i, k) in self.kind.iter().enumerate() {
            turns[i] = match *k {
                Kind::Free(v) => {
                    let w = DVec3::new(x[3 * v], x[3 * v + 1], x[3 * v + 2]);
                    DMat3::from_quat(DQuat::from_scaled_axis(w))
                }
                Kind::Follows if i > 0 => turns[self.parent[i]],
                _ => DMat3::IDENTITY,
            };
        }
    }

    /// The residuals of the variables `x` (see the module documentation):
    /// their count, the cost of the lines and bends alone, and the angles
    /// (radians) of the hips-to-head line and of the shoulder line (0
    /// without one) to the source's.
    fn residuals(
        &self,
        x: &[f64; MAX_VARS],
        world: &[DMat3],
        locals: &[DVec3; MAX_NODES],
        (goal, limit, head_first): (&Goal, &[f64; 16], bool),
        r: &mut [f64; MAX_RES],
    ) -> (usize, f64, [f64; 2]) {
        let mut turns = [DMat3::IDENTITY; MAX_NODES];
        self.turns(x, &mut turns);
        let mut p = [DVec3::ZERO; MAX_NODES];
        p[0] = goal.hips;
        for i in 1..self.nodes.len() {
            let q = self.parent[i];
            p[i] = p[q] + turns[q] * world[self.nodes[q]] * locals[i];
        }
        let mut n = 0;
        let mut angles = [0.0; 2];
        let lines = [
            Some((p[self.head] - p[0], goal.d)),
            self.arms.zip(goal.s).map(|((l, rr), s)| (p[l] - p[rr], s)),
        ];
        for (k, (v, want)) in lines.into_iter().enumerate().filter_map(|(k, x)| x.map(|x| (k, x))) {
            angles[k] = v.angle_between(want);
            if k == 0 && head_first {
                r[n..n + 3].copy_from_slice(&[wall(angles[k] - HEAD_FIRST), 0.0, 0.0]);
            } else {
                let e = (v.normalize() - want) / TOLERANCE;
                r[n..n + 3].copy_from_slice(&e.to_array());
            }
            n += 3;
        }
        let m = self.path.len();
        let mut pts = [DVec3::ZERO; 16];
        for (k, &i) in self.path.iter().enumerate() {
            pts[k] = p[i];
        }
        for (i, l) in limit.iter().enumerate().take(m.saturating_sub(1)).skip(1) {
            r[n] = wall(bend_at(&pts[..m], i) - l);
            n += 1;
        }
        let cost = r[..n].iter().map(|v| v * v).sum();
        for v in &x[..3 * self.n_free] {
            r[n] = REGULARISE * v;
            n += 1;
        }
        (n, cost, angles)
    }

    /// The cost of the lines and bends alone at `x` (the head's weight
    /// one), and the lines' angles.
    fn cost(
        &self,
        x: &[f64; MAX_VARS],
        world: &[DMat3],
        locals: &[DVec3; MAX_NODES],
        goal: (&Goal, &[f64; 16]),
    ) -> (f64, [f64; 2]) {
        let mut r = [0.0; MAX_RES];
        let (_, c, a) = self.residuals(x, world, locals, (goal.0, goal.1, false), &mut r);
        (c, a)
    }

    /// Levenberg-Marquardt from `x`: the variables where the residuals'
    /// squares are least (with `head_first`, the head's residual is its
    /// angle beyond [`HEAD_FIRST`], a wall).
    fn minimise(
        &self,
        mut x: [f64; MAX_VARS],
        world: &[DMat3],
        locals: &[DVec3; MAX_NODES],
        goal: (&Goal, &[f64; 16], bool),
    ) -> [f64; MAX_VARS] {
        let nv = 3 * self.n_free;
        let mut r = [0.0; MAX_RES];
        let (nr, ..) = self.residuals(&x, world, locals, goal, &mut r);
        let mut cost: f64 = r[..nr].iter().map(|v| v * v).sum();
        let mut mu = 1e-3;
        let mut jac = [[0.0; MAX_VARS]; MAX_RES];
        let mut rr = [0.0; MAX_RES];
        for _ in 0..ITERATIONS {
            // The Jacobian by forward differences.
            for v in 0..nv {
                let mut xv = x;
                xv[v] += STEP;
                self.residuals(&xv, world, locals, goal, &mut rr);
                for k in 0..nr {
                    jac[k][v] = (rr[k] - r[k]) / STEP;
                }
            }
            let mut g = [0.0; MAX_VARS];
            let mut a = [[0.0; MAX_VARS]; MAX_VARS];
            for k in 0..nr {
                for u in 0..nv {
                    g[u] += jac[k][u] * r[k];
                    for v in 0..nv {
                        a[u][v] += jac[k][u] * jac[k][v];
                    }
                }
            }
            let mut improved = false;
            for _ in 0..8 {
                let mut m = a;
                for (u, row) in m.iter_mut().enumerate().take(nv) {
                    row[u] += mu * (1.0 + a[u][u]);
                }
                let mut step = g.map(|v| -v);
                if !solve_in_place(&mut m, &mut step, nv) {
                    mu *= 10.0;
                    continue;
                }
                let mut xn = x;
                for v in 0..nv {
                    xn[v] += step[v];
                }
                self.residuals(&xn, world, locals, goal, &mut rr);
                let c: f64 = rr[..nr].iter().map(|v| v * v).sum();
                if c.is_finite() && c < cost {
                    (x, r, cost) = (xn, rr, c);
                    mu = (mu / 3.0).max(1e-9);
                    improved = true;
                    break;
                }
                mu *= 4.0;
            }
            if !improved || cost < 1e-12 {
                break;
            }
        }
        x
    }

    /// Turns the chain (`world`, the frame's world rotations after the
    /// analytic step; `locals` from [`Solve::capture`]) where a line is off
    /// by more than [`TRIGGER`] and the solve does better. `limit` gives
    /// the largest bend allowed per point of `Solve::path` (radians), read
    /// only when the solve runs. Returns whether it turned.
    pub(super) fn refine(
        &self,
        world: &mut [DMat3],
        locals: &[DVec3; MAX_NODES],
        goal: &Goal,
        limit: impl FnOnce() -> [f64; 16],
    ) -> bool {
        let zero = [0.0; MAX_VARS];
        let (_, angles) = self.cost(&zero, world, locals, (goal, &[f64::INFINITY; 16]));
        if !angles.iter().all(|a| a.is_finite()) || angles.iter().all(|&a| a <= TRIGGER) {
            return false;
        }
        let limit = limit();
        let (before, _) = self.cost(&zero, world, locals, (goal, &limit));
        if !before.is_finite() {
            return false;
        }
        let mut x = self.minimise(zero, world, locals, (goal, &limit, false));
        let (mut after, angles) = self.cost(&x, world, locals, (goal, &limit));
        if angles.iter().all(|&a| a > TOLERANCE) {
            // Both lines off: no pose of the free joints meets both (the
            // minimum is computed in `tests/retarget_pairs.rs`), so the
            // head comes first (within `HEAD_FIRST` of its line), the
            // shoulder line as near as that allows.
            let y = self.minimise(x, world, locals, (goal, &limit, true));
            let (c, a) = self.cost(&y, world, locals, (goal, &limit));
            if a[0] <= TOLERANCE && c.is_finite() {
                (x, after) = (y, c);
            }
        }
        if after.is_nan() || after >= before {
            return false;
        }
        let mut turns = [DMat3::IDENTITY; MAX_NODES];
        self.turns(&x, &mut turns);
        for &(j, n) in &self.follow {
            world[j] = turns[n] * world[j];
        }
        for (i, &j) in self.nodes.iter().enumerate() {
            if self.kind[i] != Kind::Keeps {
                world[j] = turns[i] * world[j];
            }
        }
        true
    }
}

/// Solves `m·x = b` (the first `n` rows and columns) by Gaussian
/// elimination with partial pivoting, `x` into `b`; false when singular.
fn solve_in_place(m: &mut [[f64; MAX_VARS]; MAX_VARS], b: &mut [f64; MAX_VARS], n: usize) -> bool {
    for c in 0..n {
        let p = (c..n).max_by(|&i, &k| m[i][c].abs().total_cmp(&m[k][c].abs())).unwrap_or(c);
        if m[p][c].abs() < 1e-300 || !m[p][c].is_finite() {
            return false;
        }
        m.swap(c, p);
        b.swap(c, p);
        let pivot = m[c];
        for i in c + 1..n {
            let f = m[i][c] / pivot[c];
            for (x, y) in m[i][c..n].iter_mut().zip(&pivot[c..n]) {
                *x -= f * y;
            }
            b[i] -= f * b[c];
        }
    }
    for c in (0..n).rev() {
        let mut s = b[c];
        for k in c + 1..n {
            s -= m[c][k] * b[k];
        }
        b[c] = s / m[c][c];
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaussian_elimination_solves_a_pivoting_system() {
        let mut m = [[0.0; MAX_VARS]; MAX_VARS];
        m[0][..3].copy_from_slice(&[0.0, 2.0, 1.0]);
        m[1][..3].copy_from_slice(&[1.0, 1.0, 0.0]);
        m[2][..3].copy_from_slice(&[3.0, 0.0, 1.0]);
        let want = [1.0, -2.0, 4.0];
        let mut b = [0.0; MAX_VARS];
        for i in 0..3 {
            b[i] = (0..3).map(|k| m[i][k] * want[k]).sum();
        }
        assert!(solve_in_place(&mut m, &mut b, 3));
        for i in 0..3 {
            assert!((b[i] - want[i]).abs() < 1e-12, "{b:?}");
        }
    }
}

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
//! the spine holds the head): Levenberg-Marquardt over their world
//! rotations (as rotation vectors, from where the
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
//! of forward kinematics over the chain and the two lines' angles
//! (`Solve::angles_at_rest`: the bits of the cost's angles at zero,
//! without its bends, regulariser and turns; in captured walks the solve
//! never runs, and the whole cost there was 7-8% of `map_frame`).
//!
//! The Jacobian is analytic: a turn `exp(x)` of a joint moves every
//! point above it (through the joints that follow it) by
//! `(J_l(x)·dx) × u`, `u` the bone from the turned joint, and each
//! residual is a smooth function of the points; a wall within [`TOUCH`]
//! of its edge counts as touching (the analytic step leaves bends exactly
//! at their limit). Levenberg-Marquardt's model of the cost is `JᵀJ` or
//! `JᵀJ + S`, `S` a secant estimate of the residuals' own curvature
//! `Σ rᵢ∇²rᵢ` (the update of Dennis, Gay and Welsch, sized as in NL2SOL),
//! chosen after each step as NL2SOL does: the model whose predicted fall
//! of the cost was nearer the actual one; the damped system is solved by
//! Cholesky's factors, and more damping is added where it is not positive
//! definite. After Levenberg-Marquardt (while the cost falls by more
//! than 1e-12 of itself a step and by more than [`CRAWL`] of itself over
//! the last [`CRAWL_SPAN`] steps), Gauss-Newton steps go to the stationary point
//! while they shrink, until one is below [`CONVERGED`]: there the cost no
//! longer tells, and a result that stopped on the cost would move with
//! the inputs' last bits.
//!
//! The solve's buffers ([`Work`]) are made once per retarget: an
//! evaluation writes only the derivatives and rows it reads, and a step
//! taken swaps the trial point's residuals and Jacobian in rather than
//! copying them.
//! The normal equations skip the Jacobian's zeros (most of it: walls away
//! from their edge, joints above the turned one, the regulariser's rows of
//! one entry, added onto the diagonal after the others as in the whole
//! sum), so they give the same bits as the whole products.
//!
//! Where the time goes on random poses: the iterations. Before the secant
//! term (session 27), onto Second Life,
//! MediaPipe and MakeHuman most minimisations crawled to the cap of
//! [`ITERATIONS`] (78%, 91% and 58% of them on the synthetic file's first
//! 2,000 frames), the cost falling by 1e-6 to 1e-4 of itself a step (its
//! median 1e-5 at the 59th): the Gauss-Newton model `JᵀJ` lacks the
//! residuals' own curvature (the lines far from met, the walls steep),
//! which the directions only the regulariser holds make decisive. Stepping
//! on the walls' piecewise model (a wall in the step's model where the step
//! presses it) does not change that (tried: as many iterations;
//! `docs/performance.md`). The crawl rule ends such a crawl where it gains
//! less than 1e-5 of the cost a step over ten steps: the cost it leaves is
//! within 1.6e-4 of itself of the cap's in nine minimisations in ten (at
//! most 2e-2 above it), and it cuts the iterations by 1.2x (Second Life)
//! to 1.9x (MakeHuman). Where the solve converges the rule stops near
//! the same place, and the Gauss-Newton polish (which runs wherever its
//! steps shrink) goes on to the stationary point: onto Rokoko and Xsens
//! the results are the same to rounding, onto Bandai Namco within 0.02°
//! of a joint (0.8 mm at most) on random poses, and the Kinect v1 take
//! onto it the same bytes.
//!
//! The secant term (counted on the synthetic file's first 3,000 frames,
//! per minimisation): MediaPipe 40 → 23 iterations (minimisations at the
//! cap 1,097 → 126 of 2,900), the cost where they end 8% lower in sum;
//! MakeHuman 28 → 24; Second Life 40 → 39 and Bandai Namco 17 → 16 (their
//! crawl is along a wall: a step's model does not hold a wall it is about
//! to press, and holding it, the wall's signed excess in the model where
//! a rejected trial pressed it, ended the crawls early at costs up to
//! twice as high: not kept); the sum of the end costs is lower or equal
//! onto each of these five rigs. Captured walks (CMU 01_01, 12_01, PyMO
//! onto the eleven rigs) keep their bytes; the Kinect v1 take onto Bandai
//! Namco, PyMO and the Daz-named CMU moves below the printed digits.
//!
//! Known limit: where the two lines cannot both be met (the Kinect v1 take
//! onto MediaPipe, whose two passes trade one line for the other) the
//! solve still stops short of its minimum (the Gauss-Newton steps grow)
//! and the fast path and the plain reference of the tests
//! (`tests::fast_path_agrees_with_the_plain_reference_on_corpus_pairs`)
//! differ by up to 3.2e-4 of a channel (0.25 before the secant model,
//! 0.17 before the crawl rule, whose stop moves with the last bits
//! there too); onto Bandai Namco and PyMO, where
//! it runs in every frame of that take, they agree to about 1e-11. One
//! path is deterministic, so the command, the library and Python give the
//! same bytes.
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

/// A wall within this of its edge (radians) touches: its slope enters the
/// Jacobian (the analytic step leaves bends exactly at their limit, where a
/// wall's residual is zero but a turn into it costs).
const TOUCH: f64 = 1e-7;

/// A wall's residual of the excess `e` (radians): `e` beyond 0 in units
/// of [`WALL`].
fn wall(e: f64) -> f64 {
    e.max(0.0) / WALL
}

/// The weight of a rotation (per radian) against the lines.
const REGULARISE: f64 = 0.05;
/// Levenberg-Marquardt iterations.
const ITERATIONS: usize = 60;
/// Levenberg-Marquardt stops where the cost fell by less than this of
/// itself over the last [`CRAWL_SPAN`] iterations (a crawl along a wall or
/// a valley the regulariser alone holds). Chosen from the costs of every
/// iteration on random poses (`docs/performance.md`, "The trunk's solve
/// stops when it crawls"): crawls at the cap fall by a median 1e-5 a step,
/// so 1e-6 would stop almost none; five steps instead of ten, or 1e-5,
/// moved the fast path and the plain reference of the tests apart by
/// 0.48-0.54 of a channel onto MediaPipe (the stop moves with the last
/// bits where both lines cannot be met).
const CRAWL: f64 = 1e-4;
const CRAWL_SPAN: usize = 10;
/// The most Gauss-Newton steps after Levenberg-Marquardt, and the step
/// (radians) below which the solve has converged.
const POLISH: usize = 40;
const CONVERGED: f64 = 1e-13;
/// Where both lines cannot be met, the head is held within this of its
/// line (radians: 4.5°, inside [`TOLERANCE`]) and the shoulder line is
/// made as near as that allows.
const HEAD_FIRST: f64 = 4.5 * std::f64::consts::PI / 180.0;

#[cfg(test)]
thread_local! {
    /// This thread's minimisations, and the frames its solves turned (for
    /// the tests that must reach the solve).
    pub(super) static CALLS_N: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    pub(super) static SOLVED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

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

    /// Per node, the variable whose turn turns it (a free node's own, a
    /// following node's parent's).
    fn var_of(&self, var: &mut [Option<usize>; MAX_NODES]) {
        for (i, k) in self.kind.iter().enumerate() {
            var[i] = match *k {
                Kind::Free(v) => Some(v),
                Kind::Follows if i > 0 => var[self.parent[i]],
                _ => None,
            };
        }
    }

    /// The residuals of the variables `x` (see the module documentation):
    /// their count, the cost of the lines and bends alone, and the angles
    /// (radians) of the hips-to-head line and of the shoulder line (0
    /// without one) to the source's. With `jac`, also their derivatives
    /// (row per residual, column per variable), analytic: a turn
    /// `exp(x_v)` moves a point `p` of a bone `u` it turns by
    /// `(J_l(x_v)·dx_v) × u` (`J_l`, the left Jacobian of the rotation
    /// vector), and each residual is a smooth function of the points.
    fn residuals(
        &self,
        x: &[f64; MAX_VARS],
        world: &[DMat3],
        locals: &[DVec3; MAX_NODES],
        (goal, limit, head_first): (&Goal, &[f64; 16], bool),
        r: &mut [f64; MAX_RES],
        jac: Option<(&mut [[f64; MAX_VARS]; MAX_RES], &mut Dp)>,
    ) -> (usize, f64, [f64; 2]) {
        let (mut jac, mut dp) = jac.unzip();
        let nn = self.nodes.len();
        let nf = self.n_free;
        let mut turns = [DMat3::IDENTITY; MAX_NODES];
        self.turns(x, &mut turns);
        let mut p = [DVec3::ZERO; MAX_NODES];
        p[0] = goal.hips;
        // d p[i] / d x_v (3×3 per node and free joint), where `jac` is
        // asked: `dp` (its first `nf` columns written before they are read).
        let mut var = [None; MAX_NODES];
        // Per node, the free joints below it (bits): its `dp` is zero for
        // every other one.
        let mut below = [0u32; MAX_NODES];
        let mut jl = [DMat3::ZERO; MAX_FREE];
        if let Some(dp) = dp.as_deref_mut() {
            dp[0][..nf].fill(DMat3::ZERO);
            self.var_of(&mut var);
            for (v, m) in jl.iter_mut().enumerate().take(nf) {
                *m = left_jacobian(DVec3::new(x[3 * v], x[3 * v + 1], x[3 * v + 2]));
            }
        }
        for i in 1..nn {
            let q = self.parent[i];
            let u = turns[q] * world[self.nodes[q]] * locals[i];
            p[i] = p[q] + u;
            if let Some(dp) = dp.as_deref_mut() {
                // The parent's derivatives (parents come first), copied
                // without a copy of its whole row.
                let (done, rest) = dp.split_at_mut(i);
                rest[0][..nf].copy_from_slice(&done[q][..nf]);
                below[i] = below[q];
                if let Some(v) = var[q] {
                    rest[0][v] -= skew(u) * jl[v];
                    below[i] |= 1 << v;
                }
            }
        }
        // One residual's row from its gradients by points (node, d/dp).
        let dp = dp.as_deref();
        let row = |jac: &mut Option<&mut [[f64; MAX_VARS]; MAX_RES]>,
                   n: usize,
                   grads: &[(usize, DVec3)]| {
            if let (Some(jac), Some(dp)) = (jac.as_deref_mut(), dp) {
                jac[n] = [0.0; MAX_VARS];
                for &(i, g) in grads {
                    // The free joints below the point only: the others'
                    // derivatives are zero and add nothing.
                    for v in (0..nf).filter(|&v| below[i] & (1 << v) != 0) {
                        let d = dp[i][v].transpose() * g;
                        jac[n][3 * v] += d.x;
                        jac[n][3 * v + 1] += d.y;
                        jac[n][3 * v + 2] += d.z;
                    }
                }
            }
        };
        let mut n = 0;
        let mut angles = [0.0; 2];
        let lines = [Some(((self.head, 0), goal.d)), self.arms.zip(goal.s)];
        for (k, ((a, b), want)) in
            lines.into_iter().enumerate().filter_map(|(k, x)| x.map(|x| (k, x)))
        {
            let v = p[a] - p[b];
            let len = v.length();
            let u = v / len;
            angles[k] = v.angle_between(want);
            if k == 0 && head_first {
                let e = angles[k] - HEAD_FIRST;
                r[n..n + 3].copy_from_slice(&[wall(e), 0.0, 0.0]);
                let sin = angles[k].sin();
                let g = if e > -TOUCH && sin > 0.0 {
                    -(want - want.dot(u) * u) / (len * sin * WALL)
                } else {
                    DVec3::ZERO
                };
                row(&mut jac, n, &[(a, g), (b, -g)]);
                row(&mut jac, n + 1, &[]);
                row(&mut jac, n + 2, &[]);
            } else {
                let e = (u - want) / TOLERANCE;
                r[n..n + 3].copy_from_slice(&e.to_array());
                // d u / d v = (I - u uᵀ) / |v|, symmetric: its rows.
                for c in 0..3 {
                    let g = (DVec3::AXES[c] - u[c] * u) / (len * TOLERANCE);
                    row(&mut jac, n + c, &[(a, g), (b, -g)]);
                }
            }
            n += 3;
        }
        let m = self.path.len();
        let mut pts = [DVec3::ZERO; 16];
        for (k, &i) in self.path.iter().enumerate() {
            pts[k] = p[i];
        }
        for (i, l) in limit.iter().enumerate().take(m.saturating_sub(1)).skip(1) {
            let (bend, grads) = bend_grad(&pts[..m], i);
            let e = bend - l;
            r[n] = wall(e);
            if e > -TOUCH {
                let g = grads.map(|(k, g)| (self.path[k], g / WALL));
                row(&mut jac, n, &g);
            } else {
                row(&mut jac, n, &[]);
            }
            n += 1;
        }
        let cost = r[..n].iter().map(|v| v * v).sum();
        for (k, v) in x[..3 * nf].iter().enumerate() {
            r[n] = REGULARISE * v;
            if let Some(jac) = jac.as_deref_mut() {
                jac[n] = [0.0; MAX_VARS];
                jac[n][k] = REGULARISE;
            }
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
        let (_, c, a) = self.residuals(x, world, locals, (goal.0, goal.1, false), &mut r, None);
        (c, a)
    }

    /// The lines' angles (radians) where no joint turns (`x = 0`), as
    /// [`Solve::cost`] gives them there: the check of every frame, without
    /// the bends, the regulariser or the turns' matrices (every turn is the
    /// identity at zero, and each point is made with the same products as
    /// in [`Solve::residuals`], so the angles have the same bits).
    fn angles_at_rest(
        &self,
        world: &[DMat3],
        locals: &[DVec3; MAX_NODES],
        goal: &Goal,
    ) -> [f64; 2] {
        let mut p = [DVec3::ZERO; MAX_NODES];
        p[0] = goal.hips;
        for i in 1..self.nodes.len() {
            let q = self.parent[i];
            // `residuals`' `turns[q] * world * local`, the turn the identity.
            p[i] = p[q] + DMat3::IDENTITY * world[self.nodes[q]] * locals[i];
        }
        let mut angles = [0.0; 2];
        let lines = [Some(((self.head, 0), goal.d)), self.arms.zip(goal.s)];
        for (k, line) in lines.into_iter().enumerate() {
            if let Some(((a, b), want)) = line {
                angles[k] = (p[a] - p[b]).angle_between(want);
            }
        }
        angles
    }

    /// Levenberg-Marquardt from `x` on the analytic Jacobian, then
    /// Gauss-Newton steps taken without comparing costs until the step is
    /// below [`CONVERGED`]: the variables where the residuals' squares are
    /// least (with `head_first`, the head's residual is its angle beyond
    /// [`HEAD_FIRST`], a wall), to the last bits, so that inputs that
    /// differ in their last bits give results that differ as little.
    #[allow(clippy::needless_range_loop)] // the normal equations' triangle
    fn minimise(
        &self,
        mut x: [f64; MAX_VARS],
        world: &[DMat3],
        locals: &[DVec3; MAX_NODES],
        goal: (&Goal, &[f64; 16], bool),
        work: &mut Work,
    ) -> [f64; MAX_VARS] {
        let nv = 3 * self.n_free;
        // The residuals and Jacobian at `x` and at a trial point: buffers
        // swapped, not copied, when the trial is taken.
        let Work { dp, r: [r, rr], jac: [jac, jj] } = work;
        let (mut r, mut rr, mut jac, mut jj) = (r, rr, jac, jj);
        let (nr, ..) = self.residuals(&x, world, locals, goal, r, Some((jac, dp)));
        let mut cost: f64 = r[..nr].iter().map(|v| v * v).sum();
        let mut mu = 1e-3;
        // The normal equations into `a` (its first `nv` rows and columns:
        // the matrices are not made or copied whole in the loops below).
        // A row's zeros add nothing (a wall away from its edge, a joint
        // below the turned one), so they are skipped; the regulariser's
        // rows, last, hold one entry each: their products go onto the
        // diagonal directly, after the other rows as in the sum over all
        // (the same bits as the whole products).
        let smooth = nr - nv;
        let normal = |jac: &[[f64; MAX_VARS]; MAX_RES],
                      r: &[f64; MAX_RES],
                      a: &mut [[f64; MAX_VARS]; MAX_VARS]| {
            let mut g = [0.0; MAX_VARS];
            for row in a.iter_mut().take(nv) {
                row[..nv].fill(0.0);
            }
            for (j, &rk) in jac[..smooth].iter().zip(&r[..smooth]) {
                for u in 0..nv {
                    let ju = j[u];
                    if ju == 0.0 {
                        continue;
                    }
                    g[u] += ju * rk;
                    for (x, &jv) in a[u][u..nv].iter_mut().zip(&j[u..nv]) {
                        *x += ju * jv;
                    }
                }
            }
            for u in 0..nv {
                g[u] += jac[smooth + u][u] * r[smooth + u];
                a[u][u] += jac[smooth + u][u] * jac[smooth + u][u];
            }
            for u in 1..nv {
                for v in 0..u {
                    a[u][v] = a[v][u];
                }
            }
            g
        };
        let (mut a, mut m) = ([[0.0; MAX_VARS]; MAX_VARS], [[0.0; MAX_VARS]; MAX_VARS]);
        // The secant estimate of the residuals' own curvature `Σ rᵢ∇²rᵢ`
        // (Dennis, Gay and Welsch; `S`), and whether the step's model
        // holds it (`JᵀJ + S`) or not (`JᵀJ`): after each step taken, the
        // model whose predicted fall of the cost was nearer the actual one
        // (as NL2SOL chooses).
        let mut sm = [[0.0; MAX_VARS]; MAX_VARS];
        let mut aug = false;
        let norm = |s: &[f64; MAX_VARS]| s[..nv].iter().map(|v| v * v).sum::<f64>().sqrt();
        let dot =
            |a: &[f64; MAX_VARS], b: &[f64; MAX_VARS]| (0..nv).map(|v| a[v] * b[v]).sum::<f64>();
        // The cost after each Levenberg-Marquardt iteration (the start
        // first), for the crawl rule.
        let mut costs = [0.0; ITERATIONS + 1];
        costs[0] = cost;
        let mut g = normal(jac, r, &mut a);
        // Levenberg-Marquardt while the cost falls measurably, and by more
        // than `CRAWL` of itself over the last `CRAWL_SPAN` iterations.
        for it in 1..=ITERATIONS {
            let mut improved = false;
            // The step taken and `(J_new - J_old)ᵀ r_new`, for the secant.
            let mut secant = None;
            for _ in 0..8 {
                for u in 0..nv {
                    for v in 0..nv {
                        m[u][v] = a[u][v] + if aug { sm[u][v] } else { 0.0 };
                    }
                    m[u][u] += mu * (1.0 + a[u][u]);
                }
                let mut step = g.map(|v| -v);
                // `JᵀJ + S` need not be positive definite: more damping
                // where it is not.
                if !cholesky_in_place(&mut m, &mut step, nv) {
                    mu *= 4.0;
                    continue;
                }
                let mut xn = x;
                for v in 0..nv {
                    xn[v] += step[v];
                }
                self.residuals(&xn, world, locals, goal, rr, Some((jj, dp)));
                let c: f64 = rr[..nr].iter().map(|v| v * v).sum();
                if c.is_finite() && c < cost {
                    improved = cost - c > 1e-12 * cost;
                    // The fall of the cost each model predicted.
                    let (mut sas, mut sss, gs) = (0.0, 0.0, dot(&g, &step));
                    for u in 0..nv {
                        for v in 0..nv {
                            sas += step[u] * a[u][v] * step[v];
                            sss += step[u] * sm[u][v] * step[v];
                        }
                    }
                    let (gn, full) = (-(2.0 * gs + sas), -(2.0 * gs + sas + sss));
                    let rho = (cost - c) / if aug { full } else { gn };
                    aug = (cost - c - full).abs() < (cost - c - gn).abs();
                    let mut ys = [0.0; MAX_VARS];
                    for (k, (jn, jo)) in jj[..smooth].iter().zip(&jac[..smooth]).enumerate() {
                        for v in 0..nv {
                            ys[v] += (jn[v] - jo[v]) * rr[k];
                        }
                    }
                    secant = Some((step, ys));
                    std::mem::swap(&mut r, &mut rr);
                    std::mem::swap(&mut jac, &mut jj);
                    (x, cost) = (xn, c);
                    mu = if rho > 0.75 {
                        mu / 3.0
                    } else if rho < 0.25 {
                        mu * 2.0
                    } else {
                        mu
                    }
                    .max(1e-9);
                    break;
                }
                mu *= 4.0;
            }
            costs[it] = cost;
            if !improved || (it >= CRAWL_SPAN && costs[it - CRAWL_SPAN] - cost < CRAWL * cost) {
                break;
            }
            let g_old = g;
            g = normal(jac, r, &mut a);
            let Some((s, ys)) = secant else { continue };
            // The secant update of `S`, sized first (NL2SOL) so that a
            // stale estimate shrinks: `S s` should be `ys`.
            let mut ss = [0.0; MAX_VARS];
            for u in 0..nv {
                ss[u] = dot(&sm[u], &s);
            }
            let s_ss = dot(&s, &ss);
            let tau = if s_ss != 0.0 { (dot(&s, &ys).abs() / s_ss.abs()).min(1.0) } else { 1.0 };
            let y: [f64; MAX_VARS] = std::array::from_fn(|v| g[v] - g_old[v]);
            let ysd = dot(&y, &s);
            let w: [f64; MAX_VARS] = std::array::from_fn(|v| ys[v] - tau * ss[v]);
            let ws = dot(&w, &s);
            let curved = ysd > 1e-12 * norm(&y) * norm(&s);
            for u in 0..nv {
                for v in 0..nv {
                    sm[u][v] *= tau;
                    if curved {
                        sm[u][v] +=
                            (w[u] * y[v] + y[u] * w[v]) / ysd - ws * y[u] * y[v] / (ysd * ysd);
                    }
                }
            }
        }
        // Gauss-Newton to the stationary point, each step taken while the
        // steps shrink (near the minimum the cost no longer tells).
        let mut last = f64::INFINITY;
        for _ in 0..POLISH {
            let g = normal(jac, r, &mut a);
            let mut step = g.map(|v| -v);
            if !solve_in_place(&mut a, &mut step, nv) {
                break;
            }
            let size = norm(&step);
            if !size.is_finite() || size >= last.min(1e-4) {
                break;
            }
            for v in 0..nv {
                x[v] += step[v];
            }
            if size <= CONVERGED {
                break;
            }
            last = size;
            self.residuals(&x, world, locals, goal, r, Some((jac, dp)));
        }
        #[cfg(test)]
        CALLS_N.with(|n| n.set(n.get() + 1));
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
        work: &mut Work,
    ) -> bool {
        let zero = [0.0; MAX_VARS];
        let angles = self.angles_at_rest(world, locals, goal);
        if !angles.iter().all(|a| a.is_finite()) || angles.iter().all(|&a| a <= TRIGGER) {
            return false;
        }
        let limit = limit();
        let (before, _) = self.cost(&zero, world, locals, (goal, &limit));
        if !before.is_finite() {
            return false;
        }
        let mut x = self.minimise(zero, world, locals, (goal, &limit, false), work);
        let (mut after, angles) = self.cost(&x, world, locals, (goal, &limit));
        if angles.iter().all(|&a| a > TOLERANCE) {
            // Both lines off: no pose of the free joints meets both (the
            // minimum is computed in `tests/retarget_pairs.rs`), so the
            // head comes first (within `HEAD_FIRST` of its line), the
            // shoulder line as near as that allows.
            let y = self.minimise(x, world, locals, (goal, &limit, true), work);
            let (c, a) = self.cost(&y, world, locals, (goal, &limit));
            if a[0] <= TOLERANCE && c.is_finite() {
                (x, after) = (y, c);
            }
        }
        if after.is_nan() || after >= before {
            return false;
        }
        #[cfg(test)]
        SOLVED.with(|n| n.set(n.get() + 1));
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

/// Per node and free joint, the derivative of the node's point by the
/// joint's rotation vector.
type Dp = [[DMat3; MAX_FREE]; MAX_NODES];

/// The buffers of the solve (made once per retarget, not per frame or
/// evaluation: the points' derivatives are 14 KiB, each Jacobian 9 KiB):
/// the points' derivatives, and the residuals and Jacobians at the
/// current and at a trial point.
#[derive(Clone)]
pub(super) struct Work {
    dp: Dp,
    r: [[f64; MAX_RES]; 2],
    jac: [[[f64; MAX_VARS]; MAX_RES]; 2],
}

/// [`Work`] on the heap (32 KiB), in the retarget's state.
#[derive(Clone)]
pub(super) struct Scratch(pub(super) Box<Work>);

impl Default for Scratch {
    fn default() -> Scratch {
        Scratch(Box::new(Work {
            dp: [[DMat3::ZERO; MAX_FREE]; MAX_NODES],
            r: [[0.0; MAX_RES]; 2],
            jac: [[[0.0; MAX_VARS]; MAX_RES]; 2],
        }))
    }
}

impl std::fmt::Debug for Scratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Scratch")
    }
}

/// The cross-product matrix of `u`: `skew(u)·w = u × w`.
fn skew(u: DVec3) -> DMat3 {
    DMat3::from_cols(
        DVec3::new(0.0, u.z, -u.y),
        DVec3::new(-u.z, 0.0, u.x),
        DVec3::new(u.y, -u.x, 0.0),
    )
}

/// The left Jacobian of the rotation vector `w`:
/// `exp(w + dw) = exp(J_l(w)·dw)·exp(w)` to first order.
fn left_jacobian(w: DVec3) -> DMat3 {
    let t2 = w.length_squared();
    let k = skew(w);
    let (a, b) = if t2 < 1e-8 {
        (0.5 - t2 / 24.0, 1.0 / 6.0 - t2 / 120.0)
    } else {
        let t = t2.sqrt();
        ((1.0 - t.cos()) / t2, (t - t.sin()) / (t2 * t))
    };
    DMat3::IDENTITY + k * a + (k * k) * b
}

/// [`bend_at`] at `i` and its gradients by the points it reads (their
/// indices in `pts`; zero where the bend is straight or folded back).
fn bend_grad(pts: &[DVec3], i: usize) -> (f64, [(usize, DVec3); 3]) {
    let bend = bend_at(pts, i);
    let none = [(i, DVec3::ZERO); 3];
    let tiny = |v: DVec3| v.length() <= 1e-9 * (1.0 + pts[i].length());
    let before = (0..i).rev().find(|&k| !tiny(pts[i] - pts[k]));
    let after = (i + 1..pts.len()).find(|&k| !tiny(pts[k] - pts[i]));
    let (Some(kb), Some(ka)) = (before, after) else { return (bend, none) };
    let (a, b) = (pts[i] - pts[kb], pts[ka] - pts[i]);
    let (la, lb) = (a.length(), b.length());
    let (na, nb) = (a / la, b / lb);
    let (cos, sin) = (na.dot(nb), bend.sin());
    if sin <= 1e-12 {
        return (bend, none);
    }
    // d bend / d a and d bend / d b.
    let ga = -(nb - cos * na) / (la * sin);
    let gb = -(na - cos * nb) / (lb * sin);
    (bend, [(kb, -ga), (i, ga - gb), (ka, gb)])
}

/// Solves `m·x = b` (the first `n` rows and columns) by Gaussian
/// elimination with partial pivoting, `x` into `b`; false when singular.
fn solve_in_place(m: &mut [[f64; MAX_VARS]; MAX_VARS], b: &mut [f64; MAX_VARS], n: usize) -> bool {
    for c in 0..n {
        let p = (c..n).max_by(|&i, &k| m[i][c].abs().total_cmp(&m[k][c].abs())).unwrap_or(c);
        if m[p][c].abs() < 1e-300 || !m[p][c].is_finite() {
            return false;
        }
        if p != c {
            m.swap(c, p);
            b.swap(c, p);
        }
        // The rows below the pivot's, without a copy of the pivot's.
        let (top, below) = m.split_at_mut(c + 1);
        let pivot = &top[c];
        for (i, row) in (c + 1..n).zip(below.iter_mut()) {
            let f = row[c] / pivot[c];
            for (x, y) in row[c..n].iter_mut().zip(&pivot[c..n]) {
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

/// Solves `m·x = b` (the first `n` rows and columns, `m` symmetric) by
/// Cholesky's factors, `x` into `b`; false where `m` is not positive
/// definite.
#[allow(clippy::needless_range_loop)]
fn cholesky_in_place(
    m: &mut [[f64; MAX_VARS]; MAX_VARS],
    b: &mut [f64; MAX_VARS],
    n: usize,
) -> bool {
    for j in 0..n {
        let mut d = m[j][j];
        for k in 0..j {
            d -= m[j][k] * m[j][k];
        }
        if !(d.is_finite() && d > 0.0) {
            return false;
        }
        let d = d.sqrt();
        m[j][j] = d;
        for i in j + 1..n {
            let mut s = m[i][j];
            for k in 0..j {
                s -= m[i][k] * m[j][k];
            }
            m[i][j] = s / d;
        }
    }
    for i in 0..n {
        let mut s = b[i];
        for k in 0..i {
            s -= m[i][k] * b[k];
        }
        b[i] = s / m[i][i];
    }
    for i in (0..n).rev() {
        let mut s = b[i];
        for k in i + 1..n {
            s -= m[k][i] * b[k];
        }
        b[i] = s / m[i][i];
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

    #[test]
    fn cholesky_solves_a_positive_definite_system_and_refuses_an_indefinite_one() {
        let mut m = [[0.0; MAX_VARS]; MAX_VARS];
        m[0][..3].copy_from_slice(&[4.0, 1.0, 0.5]);
        m[1][..3].copy_from_slice(&[1.0, 3.0, -0.2]);
        m[2][..3].copy_from_slice(&[0.5, -0.2, 2.0]);
        let want = [1.0, -2.0, 4.0];
        let mut b = [0.0; MAX_VARS];
        for i in 0..3 {
            b[i] = (0..3).map(|k| m[i][k] * want[k]).sum();
        }
        let mut f = m;
        assert!(cholesky_in_place(&mut f, &mut b, 3));
        for i in 0..3 {
            assert!((b[i] - want[i]).abs() < 1e-12, "{b:?}");
        }
        // `JᵀJ + S` with `S` indefinite enough: refused (the solve damps it).
        m[2][2] = -2.0;
        let mut b = [1.0; MAX_VARS];
        assert!(!cholesky_in_place(&mut m, &mut b, 3));
    }

    /// A small trunk: hips, spine, chest, neck, head; a clavicle and an
    /// upper arm each side of the chest (joint 5 free, joint 7 following).
    fn small() -> (Solve, Vec<DMat3>, [DVec3; MAX_NODES], Goal) {
        let parents =
            [None, Some(0), Some(1), Some(2), Some(3), Some(2), Some(5), Some(2), Some(7)];
        let offsets = [
            DVec3::ZERO,
            DVec3::new(0.0, 0.1, 0.01),
            DVec3::new(0.0, 0.15, -0.02),
            DVec3::new(0.0, 0.2, 0.0),
            DVec3::new(0.0, 0.1, 0.03),
            DVec3::new(0.05, 0.15, 0.0),
            DVec3::new(0.12, 0.0, 0.0),
            DVec3::new(-0.05, 0.15, 0.0),
            DVec3::new(-0.12, 0.0, 0.0),
        ];
        let solve = Solve::new(
            &parents,
            (0, 4, Some((6, 8))),
            &[0, 1, 2, 3, 4],
            |j| matches!(j, 1..=3 | 5),
            |_| true,
        )
        .unwrap();
        let world: Vec<DMat3> = (0..9)
            .map(|j| {
                let a = DVec3::new(
                    0.3 * (j as f64).sin(),
                    0.2 * j as f64 - 0.5,
                    0.1 * (j as f64).cos(),
                );
                DMat3::from_quat(DQuat::from_scaled_axis(a))
            })
            .collect();
        let mut positions = vec![DVec3::ZERO; 9];
        for j in 1..9 {
            let p = parents[j].unwrap();
            positions[j] = positions[p] + world[p] * offsets[j];
        }
        let mut locals = [DVec3::ZERO; MAX_NODES];
        solve.capture(&world, &positions, &mut locals);
        let goal = Goal {
            hips: DVec3::ZERO,
            d: DVec3::new(0.4, 1.0, 0.3).normalize(),
            s: Some(DVec3::new(1.0, 0.2, -0.5).normalize()),
        };
        (solve, world, locals, goal)
    }

    #[test]
    fn the_analytic_jacobian_matches_central_differences() {
        let (solve, world, locals, goal) = small();
        assert_eq!(solve.n_free, 4);
        let nv = 3 * solve.n_free;
        let mut x = [0.0; MAX_VARS];
        for (v, x) in x.iter_mut().enumerate().take(nv) {
            *x = 0.2 * ((v as f64) * 1.7).sin();
        }
        // Limits low enough that bend walls are active; the head's wall
        // (head first) and the unit-vector residuals both.
        for limit in [[0.05; 16], [f64::INFINITY; 16]] {
            for head_first in [false, true] {
                let g = (&goal, &limit, head_first);
                let mut work = Scratch::default().0;
                let (mut r, mut jac) = ([0.0; MAX_RES], [[0.0; MAX_VARS]; MAX_RES]);
                let (nr, ..) =
                    solve.residuals(&x, &world, &locals, g, &mut r, Some((&mut jac, &mut work.dp)));
                let mut active = 0;
                for v in 0..nv {
                    let h = 1e-6;
                    let (mut xp, mut xm) = (x, x);
                    xp[v] += h;
                    xm[v] -= h;
                    let (mut rp, mut rm) = ([0.0; MAX_RES], [0.0; MAX_RES]);
                    solve.residuals(&xp, &world, &locals, g, &mut rp, None);
                    solve.residuals(&xm, &world, &locals, g, &mut rm, None);
                    for k in 0..nr {
                        let fd = (rp[k] - rm[k]) / (2.0 * h);
                        let err = (fd - jac[k][v]).abs();
                        assert!(
                            err <= 1e-5 * (1.0 + fd.abs()),
                            "row {k} var {v}: {fd} against {}",
                            jac[k][v]
                        );
                        if jac[k][v] != 0.0 && k >= 6 && k < nr - nv {
                            active += 1;
                        }
                    }
                }
                if limit[0] < 1.0 {
                    assert!(active > 0, "no bend wall active");
                }
            }
        }
    }

    #[test]
    fn the_check_gives_the_bits_of_the_cost_at_zero() {
        // `refine`'s check of every frame (`angles_at_rest`) against the
        // angles of the whole `cost` at `x = 0`, bit for bit: on the small
        // trunk turned many ways, with and without a shoulder line.
        let (solve, world, locals, goal) = small();
        let zero = [0.0; MAX_VARS];
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        let mut off = 0;
        for _ in 0..200 {
            let world: Vec<DMat3> = world
                .iter()
                .map(|w| {
                    DMat3::from_quat(DQuat::from_scaled_axis(
                        3.0 * DVec3::new(next(), next(), next()),
                    )) * *w
                })
                .collect();
            let hips = DVec3::new(next(), next(), next());
            for s in [goal.s, None] {
                let goal = Goal { hips, d: goal.d, s };
                let (_, want) = solve.cost(&zero, &world, &locals, (&goal, &[f64::INFINITY; 16]));
                let got = solve.angles_at_rest(&world, &locals, &goal);
                assert_eq!(got.map(f64::to_bits), want.map(f64::to_bits));
                off += usize::from(got.iter().any(|&a| a > TRIGGER));
            }
        }
        assert!(off > 100, "the turns should put the lines off: {off}");
    }

    #[test]
    fn the_solve_reads_no_stale_buffer() {
        // The buffers are made once and reused: filled with NaN (what a
        // read of anything not written this time would spread), they give
        // the same bits as fresh ones, with the walls active and not, head
        // first and not.
        let (solve, world, locals, goal) = small();
        for limit in [[0.05; 16], [f64::INFINITY; 16]] {
            for head_first in [false, true] {
                let g = (&goal, &limit, head_first);
                let mut fresh = Scratch::default().0;
                let x = solve.minimise([0.0; MAX_VARS], &world, &locals, g, &mut fresh);
                let mut stale = Scratch::default().0;
                stale.dp = [[DMat3::from_cols_array(&[f64::NAN; 9]); MAX_FREE]; MAX_NODES];
                stale.r = [[f64::NAN; MAX_RES]; 2];
                stale.jac = [[[f64::NAN; MAX_VARS]; MAX_RES]; 2];
                let y = solve.minimise([0.0; MAX_VARS], &world, &locals, g, &mut stale);
                assert!(x.iter().all(|v| v.is_finite()), "{x:?}");
                assert_eq!(x.map(f64::to_bits), y.map(f64::to_bits));
                // And again with the buffers the first solve left.
                let z = solve.minimise([0.0; MAX_VARS], &world, &locals, g, &mut fresh);
                assert_eq!(x.map(f64::to_bits), z.map(f64::to_bits));
            }
        }
    }

    #[test]
    #[allow(clippy::needless_range_loop)]
    fn the_solve_converges_to_a_stationary_point() {
        // At the result the gradient of the whole cost vanishes to rounding,
        // and a start a few ulps away ends at the same variables.
        let (solve, world, locals, goal) = small();
        let nv = 3 * solve.n_free;
        let limit = [f64::INFINITY; 16];
        let g = (&goal, &limit, false);
        let mut work = Scratch::default().0;
        let x = solve.minimise([0.0; MAX_VARS], &world, &locals, g, &mut work);
        let (mut r, mut jac) = ([0.0; MAX_RES], [[0.0; MAX_VARS]; MAX_RES]);
        let (nr, ..) =
            solve.residuals(&x, &world, &locals, g, &mut r, Some((&mut jac, &mut work.dp)));
        let scale: f64 = r[..nr].iter().map(|v| v * v).sum::<f64>();
        assert!(scale > 1e-3, "the lines should conflict with the regulariser");
        for v in 0..nv {
            let grad: f64 = (0..nr).map(|k| jac[k][v] * r[k]).sum();
            assert!(grad.abs() < 1e-10, "gradient {v}: {grad:e}");
        }
        let mut start = [0.0; MAX_VARS];
        start[0] = 1e-12;
        let y = solve.minimise(start, &world, &locals, g, &mut work);
        for v in 0..nv {
            assert!((x[v] - y[v]).abs() < 1e-12, "{v}: {:e}", x[v] - y[v]);
        }
        assert!(x[..nv].iter().any(|v| v.abs() > 1e-3), "the solve moved nothing");
    }
}

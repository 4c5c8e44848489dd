//! The stance of a retarget's feet ([`super::Options::lock_feet`]): where
//! the target's feet stand while the source's are in contact, the guide
//! [`crate::clean::footlock`] pins them by.
//!
//! **On the ground.** Inside each of the source's contact spans the
//! target's sole (the lowest of its foot's points, each less its planted
//! height: [`crate::quality`]'s foot height) stands on the target's
//! ground, the source's ground scaled (`Grounding::floor`), for the whole
//! span: a source foot still landing or already lifting at a span's edges
//! (contact is by height below 5 cm, so such a foot counts) does not hold
//! the target's up; the lock's ramps lie outside the span's frames.
//!
//! **Still, where the leg reaches.** A demanding animator does not copy a
//! source's foot slide: the source's contact is by height and a speed
//! below 0.5 m/s, so a contact of a sliding foot (PyMO's walk, 0.99 m/s at
//! its toe in its contacts; CMU 12_01's) carries it 20 cm or more, and the
//! target's pins used to follow that slide, scaled (GMD's skating ratio
//! then counted it on the target, its thresholds absolute against a scaled
//! figure). Now the target's contact point stands still over each span
//! (`stand`), where the leg reaches it: per frame the disc across the up
//! axis that keeps the ankle (the foot as the transfer turns it, its sole
//! on the floor) within the leg's reach from the hip (the lock's reach:
//! its longest hip-to-ankle distance in the clip, with at least
//! `STRAIGHT_DEGREES` of knee bend, times [`REACH_USED`]), widened to hold
//! the transfer's own position of the point (the leg's own pose is in
//! reach). The path is the least sum of squared steps through the discs
//! (`still_where_reached`): one still point where a point lies in every
//! disc, near the centre of the point's own slide (the least correction at
//! the span's edges); where none does (the hips travel on past the leg's
//! reach), the slide the leg asks, spread over the span, never a jump. The
//! hips' travel is never changed. At the span's edges the path's steps
//! blend into the point's own over [`EASE_SECONDS`] (`eased`): a pin still
//! up to its edge started the toe at its full speed in one frame (`bvh
//! lint`'s acceleration spikes at every span's end).
//!
//! **Where a pin slides.** Spread evenly, a slide the leg asks moved the
//! pin at one speed through the span, also where the point itself stood
//! still: the whole PyMO walk onto MediaPipe slid its ankle at 0.63 m/s
//! through frames 263-282, where the unlocked ankle moves at 0.05-0.19,
//! and GMD's rule counted 83 steps inside spans that the unlocked result
//! does not (`skate_ratio` 0.135 against 0.105 unlocked). Each span's path
//! is now also solved with each step weighted by the inverse of the
//! point's own step (plus a tenth of its mean, `still_weighted`): the
//! slide goes where the point moves, as the source's foot slides; of the
//! two, the one with fewer steps faster than GMD's 0.5 m/s is kept (the
//! even one on a tie). That walk onto MediaPipe now reads 0.059, onto
//! Kinect v1 0.170 (0.222); no pair of `tests/retarget_pairs.rs` changes.
//! The second solve runs only where the even path slides (a step of it
//! above a thousandth of the skating speed) and still has a step above
//! it once eased: a still pin has no slide to place, and both solves
//! converge slowly (the weighted one more), so running it everywhere
//! took the lock step on the CMU 01_01 walk x20 onto Bandai Namco to 1.5x
//! session 25's CPU (2.8 against 1.85 CPU s); then 2.1, the same bytes.
//! The weighted solve now starts from the even one's path (`Job::from`),
//! which already carries the slide the leg asks, only spread otherwise:
//! on that walk its 98 spans take 4.2 times fewer sweeps (213,753 to
//! 51,030; from the anchor they took 8-16 len sweeps each, the even ones
//! 4-8). Its paths move by at most 2.3e-3 of the span's largest disc
//! (0.94 mm there), and end nearer a solve 200 len sweeps long at a
//! thousandth of the tolerance than they did (2.2e-3 of the disc at most
//! against 4.4e-3): the stopping rule stops a slowly converging sweep
//! early, so where it starts matters. The even solve is unchanged. The
//! lock step on that walk: 0.86x the CPU (median of 5 pairs under load,
//! 2.34 against 2.71 CPU s; about 1.8 against 2.1 on a quiet machine).
//!
//! **Work.** The legs' tracks and the output's contacts are the lock's own
//! (`footlock::Capture`), measured once. The spans are independent, so
//! their solves sweep up to `LANES` (4) side by side (each sweep is a chain
//! of dependent steps; interleaved, the chains overlap), each with the
//! operations and the order it has alone.
//!
//! **Not across the source's jumps.** The caller (`super::lock_feet`)
//! cuts the clip where the source's hips or legs jump in one of its first
//! or last three steps (`super::source_jumps`: `bvh lint`'s pop rule,
//! judged by the side the step has) and locks each piece alone, so no span, ramp or easing
//! here or in the lock reaches across such a frame (CMU 12_01's T-pose in
//! frame 0 was bent towards the walk's first pin at frame 1).
//!
//! Measured over the 110 pairs of `tests/retarget_pairs.rs`: the PyMO walk
//! onto Perception Neuron, Second Life, Xsens and MediaPipe and the
//! Daz-named CMU take onto Second Life, which skated 0.025-0.092 more than
//! their sources with the pins following the source's slide (GMD's rule on
//! the soles), now skate less than their sources (0.731-0.773 against
//! 0.790; 0.076 against 0.084); no other bound of any pair fails anew.

use glam::DVec3;

use crate::clean::footlock;

/// Over how long (seconds) at a span's edges the still pin blends into
/// the point's own motion (`eased`).
pub(crate) const EASE_SECONDS: f64 = 0.04;

/// How much of the leg's reach a still pin may use (the rest is the
/// lock's margin: its knee speed limit and toe-off turn).
pub(crate) const REACH_USED: f64 = 0.98;

/// Per target foot joint of `feet` that the lock solves (each leg of
/// `capture` whose foot is one of them, with the spans it is pinned over,
/// the source's contacts), per frame: where its contact point stands
/// across the up axis (file units; the target's own position outside the
/// spans). Inside a span the point stands still wherever the leg reaches
/// it, and slides where it does not by the least the leg asks (see the
/// module). `capture` is the lock's ([`footlock::Capture::guided`] of the
/// output before the lock), so the contacts and the legs' FK are measured
/// once for both. `skate_speed`: GMD's skating speed (m/s), which picks
/// where a slide goes (see the module, **Where a pin slides**).
pub(crate) fn stand(
    capture: &footlock::Capture,
    feet: &[usize],
    floor: f64,
    fps: f64,
    skate_speed: f64,
) -> Vec<(usize, Vec<DVec3>)> {
    let u = capture.report.up.vector();
    let skate = skate_speed / capture.report.metres_per_unit / fps;
    let horiz = |v: DVec3| v - u * v.dot(u);
    let ramp0 = ((footlock::RAMP_SECONDS * fps).round() as usize).max(2);
    let ease = ((EASE_SECONDS * fps).round() as usize).max(2);
    // Every span of every leg first (their solves are independent: the
    // spans of a leg are disjoint, each reads its own frames alone), then
    // solved side by side (`still_where_reached_many`).
    let mut result: Vec<(usize, Vec<DVec3>)> = Vec::new();
    let mut jobs: Vec<Job> = Vec::new();
    let mut places: Vec<(usize, usize)> = Vec::new();
    for leg in capture.legs().filter(|leg| feet.contains(&leg.foot)) {
        let footlock::CapturedLeg { foot: joint, spans, hip: h, knee: k, ankle: a, point: p, sole } =
            leg;
        let n = p.len();
        // The leg's reach as the lock takes it: its longest hip-to-ankle
        // distance in the clip, with at least the lock's least knee bend.
        let (l1, l2) = ((k[0] - h[0]).length(), (a[0] - k[0]).length());
        let most = (0..n).map(|f| (a[f] - h[f]).length()).fold(0.0, f64::max);
        let c = footlock::STRAIGHT_DEGREES.to_radians().cos();
        let reach =
            most.min((l1 * l1 + l2 * l2 + 2.0 * l1 * l2 * c).sqrt()).min(l1 + l2) * REACH_USED;
        let path: Vec<DVec3> = p.iter().map(|&v| horiz(v)).collect();
        // The spans merged as the lock merges them.
        let merged = footlock::merge_spans(spans, ramp0);
        for (s, e) in merged {
            let e = e.min(n.saturating_sub(1));
            if e <= s {
                continue;
            }
            // Per frame the disc the pin must stay in: the foot as captured
            // (its world orientation kept), its sole on the floor, within
            // reach of the hip.
            let disc: Vec<(DVec3, f64)> = (s..=e)
                .map(|f| {
                    let r = a[f] - p[f];
                    let dz = (h[f] - a[f]).dot(u) - (floor - sole[f]);
                    let rho = (reach * reach - dz * dz).max(0.0).sqrt();
                    // Where the transfer puts the point, the leg's own
                    // pose, is in reach however the floor moves the foot.
                    let centre = horiz(h[f] - r);
                    (centre, rho.max((path[f] - centre).length()))
                })
                .collect();
            let own: Vec<DVec3> = path[s..=e].to_vec();
            jobs.push(Job { c: weights(&own, false), own, disc, from: None });
            places.push((result.len(), s));
        }
        result.push((joint, path));
    }
    // The slide spread evenly first. Where it leaves a step faster than
    // GMD's skating speed, the slide where the point moves too (`weights`),
    // and of the two the one with fewer such steps (the even one on a tie).
    // An even path with none is kept without the second solve, which
    // could not have fewer: the same paths as solving both everywhere,
    // for about half the work on a captured walk.
    let fast = |x: &[DVec3]| x.windows(2).filter(|w| (w[1] - w[0]).length() > skate).count();
    let (solved, _) = still_where_reached_many(&jobs);
    // A pin that stands still (no step of the solve a thousandth of the
    // skating speed) has no slide to put anywhere.
    let slides: Vec<bool> = solved
        .iter()
        .map(|d| d.windows(2).any(|w| (w[1] - w[0]).length() > skate * 1e-3))
        .collect();
    let mut pins: Vec<Vec<DVec3>> =
        jobs.iter().zip(&solved).map(|(job, d)| eased(d, &job.own, ease)).collect();
    let again: Vec<usize> = (0..jobs.len()).filter(|&i| slides[i] && fast(&pins[i]) > 0).collect();
    // The weighted solve starts from the even one's path (see `Job::from`).
    let follow: Vec<Job> = again
        .iter()
        .map(|&i| Job {
            c: weights(&jobs[i].own, true),
            own: jobs[i].own.clone(),
            disc: jobs[i].disc.clone(),
            from: Some(solved[i].clone()),
        })
        .collect();
    let (followed, _) = still_where_reached_many(&follow);
    for ((&i, job), d) in again.iter().zip(&follow).zip(followed) {
        let d = eased(&d, &job.own, ease);
        if fast(&d) < fast(&pins[i]) {
            pins[i] = d;
        }
    }
    for (p, &(leg, s)) in pins.iter().zip(&places) {
        result[leg].1[s..s + p.len()].copy_from_slice(p);
    }
    result
}

/// One span's solve: the point's own path and the discs (see
/// `still_where_reached`).
#[derive(Clone)]
struct Job {
    own: Vec<DVec3>,
    disc: Vec<(DVec3, f64)>,
    /// Per step, the weight of its squared length ([`weights`]).
    c: Vec<f64>,
    /// Where the sweeps start: every point at the anchor (clamped into its
    /// disc), or a given path inside the discs. The weighted solve starts
    /// from the even one's path, which already carries the slide the leg
    /// asks (only its spread differs): on the CMU 01_01 walk x20 onto
    /// Bandai Namco its 98 spans took 4.2 times fewer sweeps (213,753 to
    /// 51,030), and ended nearer a solve 200 len sweeps long at a
    /// thousandth of the tolerance (2.2e-3 of the largest disc at most,
    /// against 4.4e-3 from the anchor): the stopping rule (no point moved
    /// by more than the tolerance in a sweep) stops a slowly converging
    /// sweep early, so where it starts matters.
    from: Option<Vec<DVec3>>,
}

/// Per step of `own`, the weight of the pin's squared step: 1 (the slide
/// spread evenly), or with `follow` the inverse of the point's own step
/// plus a tenth of its mean step, normalised to a mean of 1 (a slide the
/// leg asks goes where the point itself moves). Weights of 1 give the
/// bits of the unweighted solve.
fn weights(own: &[DVec3], follow: bool) -> Vec<f64> {
    let steps: Vec<f64> = own.windows(2).map(|w| (w[1] - w[0]).length()).collect();
    let mean = steps.iter().sum::<f64>() / steps.len() as f64;
    let mut c: Vec<f64> = steps.iter().map(|&x| 1.0 / (x + 0.1 * mean)).collect();
    let cm = c.iter().sum::<f64>() / c.len() as f64;
    if follow && mean > 0.0 && cm.is_finite() {
        c.iter_mut().for_each(|x| *x /= cm);
    } else {
        c.fill(1.0);
    }
    c
}

/// A pin's path over one span: `own` the target's contact point as the
/// transfer places it (across up), `disc` per frame the centre and radius
/// the point must stay within (the leg's reach). The least squared steps
/// (a still point where one point lies in every disc; otherwise the slide
/// spread over the span, never a jump), near the centre of the point's own
/// slide (the frame whose position is nearest the farthest of the span's).
#[cfg(test)]
fn still_where_reached(own: &[DVec3], disc: &[(DVec3, f64)]) -> Vec<DVec3> {
    still_weighted(own, disc, false)
}

/// [`still_where_reached`], and with `follow` each step's squared length
/// weighted as [`weights`] says: a slide the leg asks goes where the point
/// itself moves.
#[cfg(test)]
fn still_weighted(own: &[DVec3], disc: &[(DVec3, f64)], follow: bool) -> Vec<DVec3> {
    let job = Job { own: own.to_vec(), disc: disc.to_vec(), c: weights(own, follow), from: None };
    still_where_reached_many(std::slice::from_ref(&job)).0.remove(0)
}

/// `d.length() <= r`, without the square root where the point is this far
/// inside (the root's rounding cannot reach `r` from there): the same
/// answer, the root taken only near the rim.
#[inline(always)]
fn clamp(v: DVec3, (c, r): (DVec3, f64)) -> DVec3 {
    let d = v - c;
    if d.length_squared() <= r * r * (1.0 - 1e-9) || d.length() <= r {
        v
    } else {
        c + d.normalize_or_zero() * r
    }
}

/// One span's solve under way.
struct Sweep {
    job: usize,
    anchor: DVec3,
    d: Vec<DVec3>,
    omega: f64,
    tol: f64,
    sweeps: usize,
    moved: f64,
}

/// How many spans sweep side by side.
const LANES: usize = 4;

/// `still_where_reached` of every job, each with the same bits as alone,
/// and the sweeps each took.
/// A sweep is one chain of dependent steps (each point reads the one just
/// moved), so a span alone waits on each step's latency; up to [`LANES`]
/// spans sweep side by side (a span that converges gives its place to the
/// next), the same operations in the same order for each.
fn still_where_reached_many(jobs: &[Job]) -> (Vec<Vec<DVec3>>, Vec<usize>) {
    let mut out: Vec<Vec<DVec3>> = vec![Vec::new(); jobs.len()];
    let mut swept = vec![0; jobs.len()];
    // Projected successive over-relaxation on Σ|D[f+1] − D[f]|² +
    // ε Σ|D[f] − anchor|² (the relaxation factor that is best for the
    // chain's Laplacian: about len sweeps instead of Gauss-Seidel's len²,
    // which took 0.65 CPU s on the whole CMU 01_01 walk onto Bandai Namco,
    // now 0.08), until no point moves by more than 1e-6 of the largest disc
    // or 20 len sweeps (within 3 mm of a solve 100 times as long on the
    // corpus walks). Every point is in its disc after every sweep. The
    // sweeps start from the anchor clamped into each disc, or from the
    // job's own start (`Job::from`).
    let eps = 1e-6;
    let start = |i: usize| -> Option<Sweep> {
        let Job { own, disc, from, .. } = &jobs[i];
        let len = own.len();
        // The frame whose position is nearest the farthest of the span's;
        // the farthest distance as the root of the largest square (the
        // same bits: the root is monotonic and correctly rounded).
        let anchor = (0..len)
            .map(|f| {
                let far = own.iter().map(|&g| (g - own[f]).length_squared()).fold(0.0, f64::max);
                (far.sqrt(), f)
            })
            .min_by(|x, y| x.0.total_cmp(&y.0))
            .map_or(DVec3::ZERO, |x| own[x.1]);
        let d: Vec<DVec3> = match from {
            Some(d) if d.len() == len => d.clone(),
            _ => (0..len).map(|f| clamp(anchor, disc[f])).collect(),
        };
        let omega = 2.0 / (1.0 + (std::f64::consts::PI / len as f64).sin());
        let tol = 1e-6 * disc.iter().map(|x| x.1).fold(0.0, f64::max);
        Some(Sweep { job: i, anchor, d, omega, tol, sweeps: 0, moved: 0.0 })
    };
    let mut next = 0;
    let mut lanes: Vec<Sweep> = Vec::with_capacity(LANES);
    loop {
        // Fill the free places; a span of under two frames is its clamped
        // anchor, and one of 0 sweeps (never) is done at once.
        while lanes.len() < LANES && next < jobs.len() {
            let Some(sw) = start(next) else { break };
            next += 1;
            if sw.d.len() < 2 {
                out[sw.job] = sw.d;
            } else {
                lanes.push(sw);
            }
        }
        if lanes.is_empty() {
            break;
        }
        // One sweep of every span in a place, their steps interleaved.
        let most = lanes.iter().map(|l| l.d.len()).max().unwrap_or(0);
        for l in &mut lanes {
            l.moved = 0.0;
        }
        for f in 0..most {
            for l in lanes.iter_mut() {
                let len = l.d.len();
                if f >= len {
                    continue;
                }
                let disc = &jobs[l.job].disc;
                let c = &jobs[l.job].c;
                let d = &mut l.d;
                let (sum, w) = match f {
                    0 => (d[1] * c[0], c[0]),
                    f if f == len - 1 => (d[f - 1] * c[f - 1], c[f - 1]),
                    f => (d[f - 1] * c[f - 1] + d[f + 1] * c[f], c[f - 1] + c[f]),
                };
                let gs = (sum + l.anchor * eps) / (w + eps);
                let v = clamp(d[f] + (gs - d[f]) * l.omega, disc[f]);
                // The largest squared step: its root is the largest
                // step's (the root is monotonic and correctly rounded).
                l.moved = l.moved.max((v - d[f]).length_squared());
                d[f] = v;
            }
        }
        // A span is done when no point moved by more than its tolerance,
        // or after 20 len sweeps.
        let mut i = 0;
        while i < lanes.len() {
            let l = &mut lanes[i];
            l.sweeps += 1;
            if l.moved.sqrt() <= l.tol || l.sweeps >= 20 * l.d.len() {
                let l = lanes.swap_remove(i);
                swept[l.job] = l.sweeps;
                out[l.job] = l.d;
            } else {
                i += 1;
            }
        }
    }
    (out, swept)
}

/// A span's path `d` whose steps near its edges blend into the steps of the
/// point's own motion `own`, with a smoothstep weight from none `w` steps
/// inside the span to all of them at its edges: the point leaves and lands
/// at its own speed (a pin still up to its edge started the toe at its
/// full speed in one frame: `bvh lint`'s acceleration spikes at every
/// span's end). Laid from the span's middle, where `d` is kept.
fn eased(d: &[DVec3], own: &[DVec3], w: usize) -> Vec<DVec3> {
    let len = d.len();
    if len < 2 || w == 0 {
        return d.to_vec();
    }
    // Per step (f to f + 1) the blended step.
    let step: Vec<DVec3> = (0..len - 1)
        .map(|f| {
            let edge = f.min(len - 2 - f) as f64;
            let b = footlock::smoothstep(1.0 - edge / w as f64);
            (d[f + 1] - d[f]) * (1.0 - b) + (own[f + 1] - own[f]) * b
        })
        .collect();
    let mid = len / 2;
    let mut out = d.to_vec();
    for f in mid..len - 1 {
        out[f + 1] = out[f] + step[f];
    }
    for f in (0..mid).rev() {
        out[f] = out[f + 1] - step[f];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pin_stands_still_where_every_disc_reaches_it() {
        // The point's own path slides 1 per frame along X; every disc
        // (moving 0.1 per frame) holds the point 3 along X: the pin stands
        // there in every frame, where its own slide is centred (the frame
        // nearest the farthest).
        let own: Vec<DVec3> = (0..7).map(|f| DVec3::new(f as f64, 0.0, 0.0)).collect();
        let disc: Vec<(DVec3, f64)> =
            (0..7).map(|f| (DVec3::new(3.0 + f as f64 * 0.1, 0.0, 1.0), 2.0)).collect();
        let d = still_where_reached(&own, &disc);
        for (f, p) in d.iter().enumerate() {
            assert!((*p - DVec3::new(3.0, 0.0, 0.0)).length() < 1e-6, "{f}: {p}");
        }
    }

    #[test]
    fn out_of_reach_a_pin_slides_the_least_spread_over_the_span() {
        // The discs (radius 1) move 0.5 per frame along X over 21 frames:
        // no point lies in all of them (the first and last centres are 10
        // apart), so the pin must slide at least 8; it stays in every disc,
        // slides no more than that plus a hundredth, and its largest step
        // is the even share (8 / 20), not the discs' 0.5: a ramp, never a
        // jump.
        let n = 21;
        let own: Vec<DVec3> = (0..n).map(|f| DVec3::new(f as f64, 0.0, 0.0)).collect();
        let disc: Vec<(DVec3, f64)> =
            (0..n).map(|f| (DVec3::new(f as f64 * 0.5, 0.0, 0.0), 1.0)).collect();
        let d = still_where_reached(&own, &disc);
        for (p, (c, r)) in d.iter().zip(&disc) {
            assert!((*p - *c).length() <= r + 1e-9, "{p} outside {c} {r}");
        }
        let steps: Vec<f64> = d.windows(2).map(|w| (w[1] - w[0]).length()).collect();
        let travel: f64 = steps.iter().sum();
        assert!((8.0..8.08).contains(&travel), "{travel}");
        let most = steps.iter().copied().fold(0.0, f64::max);
        assert!(most < 0.4 * 1.01, "{steps:?}");
    }

    #[test]
    fn a_slide_the_leg_asks_goes_where_the_point_moves() {
        // The discs (radius 1) move 8 along X over 20 steps, evenly; the
        // point's own path makes 8 of its 10 steps of 0.1 and two of 4.6.
        // Evenly, every step of the pin is 0.3; following the point, 1.4
        // in its two long steps and under 0.2 in the others (the discs ask
        // 0.18 of each).
        let n = 21;
        let mut x = 0.0;
        let own: Vec<DVec3> = (0..n)
            .map(|f| {
                if f > 0 {
                    x += if f == 10 || f == 11 { 4.6 } else { 0.1 / 1.8 };
                }
                DVec3::new(x, 0.0, 0.0)
            })
            .collect();
        let disc: Vec<(DVec3, f64)> =
            (0..n).map(|f| (DVec3::new(f as f64 * 0.4, 0.0, 0.0), 1.0)).collect();
        let even = still_where_reached(&own, &disc);
        let follow = still_weighted(&own, &disc, true);
        let steps =
            |d: &[DVec3]| -> Vec<f64> { d.windows(2).map(|w| (w[1] - w[0]).length()).collect() };
        for (p, (c, r)) in follow.iter().zip(&disc) {
            assert!((*p - *c).length() <= r + 1e-9, "{p} outside {c} {r}");
        }
        let (e, f) = (steps(&even), steps(&follow));
        assert!(e.iter().all(|&s| (0.29..0.31).contains(&s)), "{e:?}");
        assert!(f[9] > 1.2 && f[10] > 1.2, "{f:?}");
        let rest = f.iter().enumerate().filter(|(k, _)| *k != 9 && *k != 10);
        assert!(rest.map(|(_, &s)| s).fold(0.0, f64::max) < 0.2, "{f:?}");
    }

    #[test]
    fn spans_solved_side_by_side_have_the_bits_they_have_alone() {
        // Eleven spans of 2 to 60 frames (more than `LANES`, of unequal
        // lengths, so places are refilled mid-way), some in reach, some
        // not, every other one weighted to follow its point and started
        // from its discs' centres: each path solved among the others is
        // bit for bit the path solved alone, with the same sweeps.
        let jobs: Vec<Job> = (0..11)
            .map(|k| {
                let len = 2 + (k * 37) % 59;
                let own: Vec<DVec3> = (0..len)
                    .map(|f| DVec3::new(f as f64 * 0.3 + k as f64, (f as f64 * 0.7).sin(), 0.0))
                    .collect();
                let disc: Vec<(DVec3, f64)> = (0..len)
                    .map(|f| {
                        (
                            DVec3::new(f as f64 * (0.05 + 0.1 * k as f64), 0.2, 0.0),
                            1.0 + 0.3 * (k % 3) as f64,
                        )
                    })
                    .collect();
                let from = (k % 2 == 1).then(|| disc.iter().map(|x| x.0).collect());
                Job { c: weights(&own, k % 2 == 1), own, disc, from }
            })
            .collect();
        let (together, sweeps) = still_where_reached_many(&jobs);
        for ((job, t), s) in jobs.iter().zip(&together).zip(&sweeps) {
            let (alone, n) = still_where_reached_many(std::slice::from_ref(job));
            assert_eq!(alone[0].len(), t.len());
            assert_eq!(n[0], *s);
            for (a, b) in alone[0].iter().zip(t) {
                assert_eq!(a.to_array().map(f64::to_bits), b.to_array().map(f64::to_bits));
            }
        }
    }

    #[test]
    fn the_weighted_solve_started_from_the_even_path_takes_fewer_sweeps() {
        // A point that creeps 0.01 a frame, slides 0.3 a frame over frames
        // 20-40, then creeps again; its discs (radius 0.5) move 3 evenly
        // over the 61 frames, so the pin must slide about 2. Weighted, the
        // slide goes where the point slides. Started from the even path
        // (as `stand` does) the weighted solve takes at most half the
        // sweeps it takes from the anchor (182 against 700 when written),
        // to a path within a thousandth of the disc of that one.
        let n = 61;
        let mut x = 0.0;
        let own: Vec<DVec3> = (0..n)
            .map(|f| {
                if f > 0 {
                    x += if (20..40).contains(&f) { 0.3 } else { 0.01 };
                }
                DVec3::new(x, 0.0, 0.0)
            })
            .collect();
        let disc: Vec<(DVec3, f64)> =
            (0..n).map(|f| (DVec3::new(f as f64 * 0.05, 0.2, 0.0), 0.5)).collect();
        let even =
            Job { c: weights(&own, false), own: own.clone(), disc: disc.clone(), from: None };
        let (e, _) = still_where_reached_many(std::slice::from_ref(&even));
        let cold = Job { c: weights(&own, true), own, disc, from: None };
        let warm = Job { from: Some(e[0].clone()), ..cold.clone() };
        let (c, cs) = still_where_reached_many(std::slice::from_ref(&cold));
        let (w, ws) = still_where_reached_many(std::slice::from_ref(&warm));
        assert!(ws[0] * 2 <= cs[0], "warm {} cold {}", ws[0], cs[0]);
        let off = w[0].iter().zip(&c[0]).map(|(x, y)| (*x - *y).length()).fold(0.0, f64::max);
        assert!(off < 5e-4, "{off}");
        // The slide went where the point slides, either way.
        let step = |d: &[DVec3], f: usize| (d[f] - d[f - 1]).length();
        for d in [&w[0], &c[0]] {
            assert!(step(d, 30) > 3.0 * step(d, 5).max(step(d, 55)), "{d:?}");
        }
    }

    #[test]
    fn a_pin_leaves_and_lands_at_the_point_s_own_speed() {
        // A still path eased over 2 steps into a point moving 1 per frame:
        // the first and last steps are the point's, the middle ones still,
        // the middle frame where it was.
        let n = 11;
        let d = vec![DVec3::new(5.0, 0.0, 0.0); n];
        let own: Vec<DVec3> = (0..n).map(|f| DVec3::new(f as f64, 0.0, 0.0)).collect();
        let e = eased(&d, &own, 2);
        let step = |f: usize| e[f + 1].x - e[f].x;
        assert!((step(0) - 1.0).abs() < 1e-12 && (step(n - 2) - 1.0).abs() < 1e-12, "{e:?}");
        assert!((step(1) - 0.5).abs() < 1e-12 && (step(n - 3) - 0.5).abs() < 1e-12, "{e:?}");
        for f in 2..n - 3 {
            assert_eq!(step(f), 0.0, "{f}: {e:?}");
        }
        assert_eq!(e[n / 2], d[n / 2]);
    }
}

//! The feet: which joints they are, where the ground is, when they are in
//! contact, and how much they slide (the skating metrics).

use glam::DVec3;

use super::{Finding, Ground, Kind, Options, stats};
use crate::JointId;
use crate::retarget::names::{Bone, Limb, Side};
use crate::skeleton::Skeleton;

/// One foot as the metrics measure it.
#[derive(Clone, Debug, PartialEq)]
pub struct Foot {
    /// `left`, `right`, or the joint's name when the feet were given.
    pub name: String,
    /// The joints measured: the foot (ankle) joint and everything under it
    /// (toes, End Sites). The foot's height is the lowest of them, each
    /// measured from its own planted height (its 5th-percentile height over
    /// the clip less the foot's lowest point's); its speed the slowest (the
    /// point it rolls over).
    pub points: Vec<usize>,
    /// The point of `skate_ratio` (GMD measures SMPL's foot joint, the
    /// ball of the foot): the toe joint, else the foot joint.
    pub skate_point: usize,
    /// The point of `skate_ratio_kimodo`: the toe joint, else the last End
    /// Site under the foot, else the foot joint.
    pub toe_point: usize,
}

/// The feet of `skel`: given by name, or by the name families.
pub(crate) fn find(
    skel: &Skeleton,
    bones: &[Option<Bone>],
    names: &[String],
    given: Option<&[String]>,
    notes: &mut Vec<String>,
) -> Vec<Foot> {
    let subtree = |j: usize| -> Vec<usize> { (j..skel.subtree_end(JointId::new(j))).collect() };
    let last_end = |j: usize| -> Option<usize> {
        subtree(j).into_iter().rev().find(|&k| skel.joints()[k].is_end_site())
    };
    if let Some(given) = given {
        let mut feet = Vec::new();
        for name in given {
            match skel.find(name) {
                Some(id) => {
                    let j = id.index();
                    feet.push(Foot {
                        name: names[j].clone(),
                        points: subtree(j),
                        skate_point: j,
                        toe_point: j,
                    });
                }
                None => notes.push(format!("no joint named {name:?} (--feet)")),
            }
        }
        return feet;
    }
    let mut feet = Vec::new();
    for (side, label) in [(Side::Left, "left"), (Side::Right, "right")] {
        let find = |limb| bones.iter().position(|b| *b == Some(Bone::Limb(side, limb)));
        let (foot, toe) = (find(Limb::Foot), find(Limb::Toe));
        let Some(top) = foot.or(toe) else { continue };
        feet.push(Foot {
            name: label.into(),
            points: subtree(top),
            skate_point: toe.unwrap_or(top),
            toe_point: toe.or_else(|| last_end(top)).unwrap_or(top),
        });
    }
    if feet.is_empty() {
        notes.push("no feet found (no ankle, foot or toe joint by name; --feet names them)".into());
    }
    feet
}

/// What [`measure`] found.
pub(crate) struct FeetData {
    pub(crate) ground: f64,
    pub(crate) skate_ratio: Option<f64>,
    pub(crate) skate_ratio_kimodo: Option<f64>,
    pub(crate) foot_slide: Option<f64>,
    pub(crate) penetration_depth: Option<f64>,
    pub(crate) floating: Option<f64>,
    pub(crate) findings: Vec<Finding>,
    pub(crate) height: Vec<Vec<f64>>,
    pub(crate) speed: Vec<Vec<f64>>,
    pub(crate) contact: Vec<Vec<bool>>,
}

/// The feet's metrics over `n` frames of positions in metres (`row(j)`:
/// joint `j`'s `n` positions, needed for the feet's points only), `u` the
/// up axis, `lowest` the lowest height of any joint ([`Ground::Lowest`],
/// asked for with that option only); `None` without feet or with fewer
/// than two frames.
pub(crate) fn measure<'a>(
    feet: &[Foot],
    row: impl Fn(usize) -> &'a [DVec3],
    lowest: impl FnOnce() -> f64,
    n: usize,
    fps: f64,
    u: DVec3,
    o: &Options,
) -> Option<FeetData> {
    if feet.is_empty() || n < 2 {
        return None;
    }
    let p = |f: usize, j: usize| row(j)[f];
    let h = |f: usize, j: usize| p(f, j).dot(u);
    let horiz = |v: DVec3| v - u * v.dot(u);
    let hspeed = |f: usize, j: usize| horiz(p(f + 1, j) - p(f, j)).length() * fps;
    // Each point measured from its own planted height: its clearance is
    // its 5th-percentile height minus the foot's lowest such height (an
    // ankle stands about 8 cm above the floor when the heel is down, the
    // toe tip about 0). A foot's height is the lowest of its points so
    // measured: the heel at heel strike, the toe at toe-off.
    let clearance: Vec<Vec<f64>> = feet
        .iter()
        .map(|foot| {
            let q: Vec<f64> = foot
                .points
                .iter()
                .map(|&j| {
                    let hs: Vec<f64> = (0..n).map(|f| h(f, j)).collect();
                    stats::quantile(&hs, 0.05).unwrap_or(f64::NAN)
                })
                .collect();
            let base = q.iter().copied().filter(|x| x.is_finite()).fold(f64::INFINITY, f64::min);
            q.iter()
                .map(|x| if x.is_finite() && base.is_finite() { x - base } else { 0.0 })
                .collect()
        })
        .collect();
    let low: Vec<Vec<f64>> = feet
        .iter()
        .zip(&clearance)
        .map(|(foot, c)| {
            (0..n).map(|f| min_nan(foot.points.iter().zip(c).map(|(&j, &c)| h(f, j) - c))).collect()
        })
        .collect();
    let speed: Vec<Vec<f64>> = feet
        .iter()
        .map(|foot| {
            (0..n - 1).map(|f| min_nan(foot.points.iter().map(|&j| hspeed(f, j)))).collect()
        })
        .collect();

    let ground = match o.ground {
        Ground::Height(g) => g,
        Ground::Lowest => lowest(),
        Ground::Contacts | Ground::Pooled => {
            let sole: Vec<f64> = (0..n).map(|f| min_nan(low.iter().map(|l| l[f]))).collect();
            let g0 = stats::quantile(&sole, 0.10)?;
            if o.ground == Ground::Pooled {
                pooled_ground(&low, &speed, g0, o.contact_height, o.contact_speed)
            } else {
                contact_ground(&low, &speed, g0, o.contact_height, o.contact_speed)
            }
        }
    };
    if !ground.is_finite() {
        return None;
    }

    let height: Vec<Vec<f64>> =
        low.iter().map(|l| l.iter().map(|x| x - ground).collect()).collect();
    let on = |hh: &[f64], f: usize, limit: f64| hh[f] < limit && hh[f + 1] < limit;
    let contact: Vec<Vec<bool>> = height
        .iter()
        .zip(&speed)
        .map(|(hh, s)| {
            let step: Vec<bool> =
                (0..n - 1).map(|f| on(hh, f, o.contact_height) && s[f] < o.contact_speed).collect();
            (0..n).map(|f| (f < n - 1 && step[f]) || (f > 0 && step[f - 1])).collect()
        })
        .collect();

    // foot_slide: mean speed of the feet over their steps in contact by height.
    let (mut sum, mut count) = (0.0, 0usize);
    for (hh, s) in height.iter().zip(&speed) {
        for (f, &v) in s.iter().enumerate() {
            if on(hh, f, o.contact_height) && v.is_finite() {
                sum += v;
                count += 1;
            }
        }
    }
    let foot_slide = (count > 0).then(|| sum / count as f64);

    // skate_ratio, GMD's calculate_skating_ratio with the file's rate.
    let steps = n - 1;
    let mut skating = vec![false; steps];
    let mut skate_joints: Vec<Vec<usize>> = vec![Vec::new(); steps];
    let mut skate_value = vec![0.0f64; steps];
    for foot in feet {
        let j = foot.skate_point;
        let vel: Vec<f64> = (0..steps).map(|f| hspeed(f, j)).collect();
        let avg = uniform_filter1d(&vel, o.skate_window.max(1));
        for f in 0..steps {
            let contact =
                h(f, j) - ground < o.skate_height && h(f + 1, j) - ground < o.skate_height;
            if contact && vel[f] > o.skate_speed && avg[f] > o.skate_speed {
                skating[f] = true;
                skate_joints[f].push(j);
                skate_value[f] = skate_value[f].max(vel[f]);
            }
        }
    }
    let skate_ratio = Some(skating.iter().filter(|&&s| s).count() as f64 / steps as f64);
    let mut findings = Vec::new();
    let min_skate = ((o.skate_seconds * fps).ceil() as usize).max(1);
    for (a, b) in stats::runs(skating.iter().copied()) {
        if b - a + 1 < min_skate {
            continue;
        }
        let mut joints: Vec<usize> = skate_joints[a..=b].iter().flatten().copied().collect();
        joints.sort_unstable();
        joints.dedup();
        let v = skate_value[a..=b].iter().copied().fold(0.0, f64::max);
        findings.push(Finding {
            kind: Kind::Skate,
            frames: (a, b + 1),
            joints,
            value: v,
            message: format!(
                "a foot in contact slides at up to {v:.2} m/s for {} step(s) (skate_ratio's skating)",
                b - a + 1
            ),
        });
    }

    // skate_ratio_kimodo: the toes over their contact steps only.
    let (mut contacts, mut skates) = (0usize, 0usize);
    for foot in feet {
        let j = foot.toe_point;
        for f in 0..steps {
            if h(f, j) - ground < o.skate_height && h(f + 1, j) - ground < o.skate_height {
                contacts += 1;
                skates += usize::from(hspeed(f, j) > o.kimodo_speed);
            }
        }
    }
    let skate_ratio_kimodo = (contacts > 0).then(|| skates as f64 / contacts as f64);

    // Ground penetration and floating, on the lowest foot point.
    let sole: Vec<f64> = (0..n).map(|f| min_nan(height.iter().map(|hh| hh[f]))).collect();
    let deepest = sole.iter().copied().filter(|x| x.is_finite()).fold(f64::INFINITY, f64::min);
    let penetration_depth = deepest.is_finite().then(|| (-deepest).max(0.0));
    let all_points: Vec<usize> = feet.iter().flat_map(|f| f.points.iter().copied()).collect();
    for (a, b) in stats::runs(sole.iter().map(|&s| s < -o.penetration)) {
        let d = -sole[a..=b].iter().copied().fold(f64::INFINITY, f64::min);
        findings.push(Finding {
            kind: Kind::GroundPenetration,
            frames: (a, b),
            joints: all_points.clone(),
            value: d,
            message: format!(
                "the feet go {d:.3} m below the ground ({:.3} m) for {} frame(s)",
                ground,
                b - a + 1
            ),
        });
    }
    let min_float = ((o.float_seconds * fps).ceil() as usize).max(1);
    let mut floating_frames = 0;
    for (a, b) in stats::runs(sole.iter().map(|&s| s > o.float_height)) {
        if b - a + 1 < min_float {
            continue;
        }
        floating_frames += b - a + 1;
        let lowest = sole[a..=b].iter().copied().fold(f64::INFINITY, f64::min);
        findings.push(Finding {
            kind: Kind::Floating,
            frames: (a, b),
            joints: all_points.clone(),
            value: lowest,
            message: format!(
                "no foot within {} m of the ground for {:.2} s (the lowest is {lowest:.3} m above it)",
                o.float_height,
                (b - a + 1) as f64 / fps
            ),
        });
    }
    let floating = Some(floating_frames as f64 / n as f64);

    Some(FeetData {
        ground,
        skate_ratio,
        skate_ratio_kimodo,
        foot_slide,
        penetration_depth,
        floating,
        findings,
        height,
        speed,
        contact,
    })
}

/// How far above the first guess `g0` a slow step may be and still count
/// as a candidate contact, in multiples of the contact height: far enough
/// for a floor that drifts a few centimetres over a take (Rokoko's dance
/// stands 9 cm higher in its middle than at its ends), not so far that a
/// foot held still in the air counts.
const REACH: f64 = 3.0;

/// The default ground ([`Ground::Contacts`]) from each foot's height `low`
/// and speed `speed` per step, `g0` the first guess (the 10th percentile of
/// the lowest foot point), `ch` and `cs` the contact height and speed.
///
/// The candidate contacts are the steps in which a foot is slower than
/// `cs` and below `g0 + REACH·ch` in both frames. The floor is the band of
/// height `ch` that holds the most of them (their heights sorted, the
/// widest run within `ch`; the lowest such band on a tie), a foot's
/// planted steps are its candidates in that band in both frames, and the
/// ground is the lowest of the feet's medians over their planted steps
/// (rigs often have one foot's End Site a little higher than the other's);
/// `g0` when no step qualifies.
///
/// Not the pooled median of the contacts within `ch` of `g0` (until
/// 2026-11-30): with two levels in the data (two feet's End Sites at
/// different heights, or a floor that drifts) it sat on whichever had more
/// steps and jumped between them when a few frames changed. The densest
/// band depends on where most of the contacts are, not on a tenth of the
/// frames, so a clip, the clip joined to itself and its halves agree
/// (where the halves stand on one floor).
fn contact_ground(low: &[Vec<f64>], speed: &[Vec<f64>], g0: f64, ch: f64, cs: f64) -> f64 {
    let top = g0 + REACH * ch;
    let slow = |l: &[f64], s: &[f64], f: usize| s[f] < cs && l[f] < top && l[f + 1] < top;
    let mut heights: Vec<f64> = Vec::new();
    for (l, s) in low.iter().zip(speed) {
        heights.extend((0..s.len()).filter(|&f| slow(l, s, f)).map(|f| l[f]));
    }
    if heights.is_empty() {
        return g0;
    }
    heights.sort_unstable_by(f64::total_cmp);
    let (mut most, mut floor, mut j) = (0, heights[0], 0);
    for (i, &x) in heights.iter().enumerate() {
        while x - heights[j] > ch {
            j += 1;
        }
        if i - j + 1 > most {
            (most, floor) = (i - j + 1, heights[j]);
        }
    }
    let within = |x: f64| x >= floor && x - floor <= ch;
    let mut ground = f64::INFINITY;
    for (l, s) in low.iter().zip(speed) {
        heights.clear();
        heights.extend(
            (0..s.len())
                .filter(|&f| slow(l, s, f) && within(l[f]) && within(l[f + 1]))
                .map(|f| l[f]),
        );
        if let Some(m) = stats::quantile_in_place(&mut heights, 0.5) {
            ground = ground.min(m);
        }
    }
    if ground.is_finite() { ground } else { g0 }
}

/// [`Ground::Pooled`] from the same arguments as [`contact_ground`]: the
/// median of both feet's heights pooled over the steps in which a foot is
/// slower than `cs` and within `ch` of `g0` in both frames; `g0` when no
/// step qualifies.
fn pooled_ground(low: &[Vec<f64>], speed: &[Vec<f64>], g0: f64, ch: f64, cs: f64) -> f64 {
    let mut planted = Vec::new();
    for (l, s) in low.iter().zip(speed) {
        for f in 0..s.len() {
            if l[f] - g0 < ch && l[f + 1] - g0 < ch && s[f] < cs {
                planted.push(l[f]);
            }
        }
    }
    stats::quantile_in_place(&mut planted, 0.5).unwrap_or(g0)
}

/// The smallest value, NaN when any is NaN.
fn min_nan(v: impl Iterator<Item = f64>) -> f64 {
    let mut m = f64::INFINITY;
    for x in v {
        if x.is_nan() {
            return f64::NAN;
        }
        m = m.min(x);
    }
    m
}

/// SciPy's `uniform_filter1d(v, size, mode='constant', origin=0)`: the
/// mean of `size` values from `i - size/2`, zeros outside.
pub(crate) fn uniform_filter1d(v: &[f64], size: usize) -> Vec<f64> {
    let half = size / 2;
    (0..v.len())
        .map(|i| {
            let start = i as isize - half as isize;
            let sum: f64 = (start..start + size as isize)
                .filter(|&k| k >= 0 && (k as usize) < v.len())
                .map(|k| v[k as usize])
                .sum();
            sum / size as f64
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::uniform_filter1d;

    #[test]
    fn uniform_filter_matches_scipy() {
        // scipy.ndimage.uniform_filter1d([1, 2, 3, 4, 5, 6], 5, mode='constant')
        // = [1.2, 2.0, 3.0, 4.0, 3.6, 3.0]; size 4: [0.75, 1.5, 2.5, 3.5, 4.5, 3.75]
        let v = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let got = uniform_filter1d(&v, 5);
        for (g, e) in got.iter().zip([1.2, 2.0, 3.0, 4.0, 3.6, 3.0]) {
            assert!((g - e).abs() < 1e-12, "{got:?}");
        }
        let got = uniform_filter1d(&v, 4);
        for (g, e) in got.iter().zip([0.75, 1.5, 2.5, 3.5, 4.5, 3.75]) {
            assert!((g - e).abs() < 1e-12, "{got:?}");
        }
    }
}

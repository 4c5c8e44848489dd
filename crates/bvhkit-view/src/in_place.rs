//! "In place": a clip with its roots' horizontal travel removed.

use bvhkit_render::Clip;
use bvhkit_render::glam::DVec3;

/// The root (joint without a parent) above each joint; a joint whose
/// parent index is out of range counts as a root itself.
#[must_use]
pub fn roots_of(parents: &[Option<usize>]) -> Vec<usize> {
    let mut roots: Vec<usize> = Vec::with_capacity(parents.len());
    for (j, p) in parents.iter().enumerate() {
        let r = match p {
            Some(p) if *p < j => roots[*p],
            _ => j,
        };
        roots.push(r);
    }
    roots
}

/// A copy of `clip` in which every root keeps the horizontal (X and Z)
/// position it has in the first frame: each frame, the whole subtree of a
/// root is shifted by the root's horizontal travel since frame 0. Heights
/// (Y) and the pose relative to the root are unchanged. Non-finite root
/// positions leave their frame unshifted.
#[must_use]
pub fn in_place(clip: &Clip) -> Clip {
    let n = clip.n_joints();
    let mut out = clip.clone();
    if n == 0 || clip.n_frames == 0 || clip.positions.len() < n {
        return out;
    }
    let roots = roots_of(&clip.parents);
    let first: Vec<DVec3> = clip.positions[..n].to_vec();
    for frame in out.positions.chunks_exact_mut(n) {
        let shift: Vec<DVec3> = roots
            .iter()
            .map(|&r| {
                let d = frame[r] - first[r];
                if d.is_finite() { DVec3::new(d.x, 0.0, d.z) } else { DVec3::ZERO }
            })
            .collect();
        for (j, p) in frame.iter_mut().enumerate() {
            *p -= shift[roots[j]];
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walker() -> Clip {
        // Two roots: a 2-joint figure walking along +X and a still point.
        let mut positions = Vec::new();
        for f in 0..5 {
            let x = f as f64 * 10.0;
            positions.extend([
                DVec3::new(x, 90.0 + f as f64, 3.0 * f as f64),
                DVec3::new(x + 1.0, 150.0, 3.0 * f as f64 + 2.0),
                DVec3::new(-50.0 + f as f64, 0.0, 0.0),
            ]);
        }
        Clip {
            name: "w".into(),
            joint_names: vec!["Hips".into(), "Head".into(), "Prop".into()],
            parents: vec![None, Some(0), None],
            is_end_site: vec![false, false, false],
            frame_time: 0.1,
            n_frames: 5,
            positions,
        }
    }

    #[test]
    fn roots_are_found() {
        assert_eq!(roots_of(&[None, Some(0), Some(1), None, Some(3), Some(0)]), [0, 0, 0, 3, 3, 0]);
        assert_eq!(roots_of(&[Some(5)]), [0]);
    }

    #[test]
    fn root_travel_is_removed_but_not_height_or_pose() {
        let c = walker();
        let p = in_place(&c);
        for f in 0..5 {
            let (a, b) = (c.frame(f), p.frame(f));
            // Root stays at its first-frame X/Z, keeps its height.
            assert_eq!((b[0].x, b[0].z), (0.0, 0.0));
            assert_eq!(b[0].y, a[0].y);
            // The pose relative to the root is the same.
            assert_eq!(b[1] - b[0], a[1] - a[0]);
            // The second root is held independently.
            assert_eq!(b[2], DVec3::new(-50.0, 0.0, 0.0));
        }
        assert_eq!(p.n_frames, c.n_frames);
        assert_eq!(p.joint_names, c.joint_names);
    }

    #[test]
    fn degenerate_clips() {
        let mut c = walker();
        c.positions[3] = DVec3::NAN;
        let p = in_place(&c);
        assert!(p.frame(1)[1].is_finite());
        c.positions.clear();
        c.n_frames = 0;
        assert_eq!(in_place(&c), c);
    }
}

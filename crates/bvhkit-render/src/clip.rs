//! `Clip::from_bvh` is the one place a parsed `Bvh` becomes a `Clip` (a file
//! without motion becomes one frame, its rest pose); the optional `bvh` feature
//! runs its forward kinematics on all cores (the CLI and the player enable it).
//! `scene` itself still needs only glam; the crate depends on the core, without
//! its features, for `units` and `from_bvh`.

use glam::DVec3;

/// World positions of every joint of one or more skeletons over a whole clip.
///
/// This is the renderer's and the players' input: the output of forward
/// kinematics, in file units, Y up, right-handed (as the BVH format says).
/// End Sites are included as joints of their own.
#[derive(Clone, Debug, PartialEq)]
pub struct Clip {
    /// Display label, usually the file stem.
    pub name: String,
    /// One name per joint, End Sites included (named `<Parent>_End`).
    pub joint_names: Vec<String>,
    /// Parent of each joint; always a smaller index (joints are in file pre-order).
    pub parents: Vec<Option<usize>>,
    /// Whether each joint is an End Site.
    pub is_end_site: Vec<bool>,
    /// Seconds per frame.
    pub frame_time: f64,
    /// Number of frames.
    pub n_frames: usize,
    /// `n_frames * n_joints` positions, frame-major.
    pub positions: Vec<DVec3>,
}

impl Clip {
    /// World positions, display names and hierarchy of `bvh`, through
    /// forward kinematics over every frame (on all cores with the `bvh`
    /// feature).
    ///
    /// A file without motion frames gives a clip of one frame, its rest
    /// pose ([`bvhkit::units::rest_pose`]: every channel 0), so that it can
    /// still be drawn; check `bvh.motion().n_frames()` to say so.
    #[must_use]
    pub fn from_bvh(bvh: &bvhkit::Bvh, name: &str, mode: bvhkit::PositionChannels) -> Clip {
        let s = bvh.skeleton();
        let (n_frames, positions) = if bvh.motion().n_frames() == 0 {
            (1, bvhkit::units::rest_pose(s, mode))
        } else {
            let fk = bvhkit::Kinematics::new(s, mode);
            (bvh.motion().n_frames(), fk.positions_all(bvh.motion()))
        };
        Clip {
            name: name.to_string(),
            joint_names: s.display_names(),
            parents: s.joints().iter().map(|j| j.parent().map(bvhkit::JointId::index)).collect(),
            is_end_site: s.joints().iter().map(|j| j.is_end_site()).collect(),
            frame_time: bvh.motion().frame_time(),
            n_frames,
            positions,
        }
    }

    /// This clip with every position multiplied by `factor` (a change of
    /// unit), in place.
    #[must_use]
    pub fn scaled(mut self, factor: f64) -> Clip {
        self.positions.iter_mut().for_each(|p| *p *= factor);
        self
    }

    /// Number of joints (End Sites included).
    pub fn n_joints(&self) -> usize {
        self.parents.len()
    }

    /// Positions of all joints at frame `i`.
    ///
    /// # Panics
    /// When `i >= n_frames`.
    pub fn frame(&self, i: usize) -> &[DVec3] {
        let n = self.n_joints();
        &self.positions[i * n..(i + 1) * n]
    }

    /// Axis-aligned bounding box `(min, max)` over all joints of all frames,
    /// or `None` for a clip with no positions.
    pub fn bounds(&self) -> Option<(DVec3, DVec3)> {
        bounds_of(&self.positions)
    }

    /// Frames `range` of the clip as a clip of their own, clamped to it:
    /// at least one frame (the last) when the range starts past the end.
    #[must_use]
    pub fn frames(&self, range: std::ops::Range<usize>) -> Clip {
        let n = self.n_joints();
        let start = range.start.min(self.n_frames.saturating_sub(1));
        let end = range.end.min(self.n_frames).max(start + 1).min(self.n_frames);
        Clip {
            name: self.name.clone(),
            joint_names: self.joint_names.clone(),
            parents: self.parents.clone(),
            is_end_site: self.is_end_site.clone(),
            frame_time: self.frame_time,
            n_frames: end.saturating_sub(start),
            positions: self.positions[start * n..end * n].to_vec(),
        }
    }

    /// The box a camera should frame: [`Clip::bounds`] over every frame
    /// except the [`Clip::glitch_frames`]. Without glitches this is
    /// [`Clip::bounds`].
    #[must_use]
    pub fn framing_bounds(&self) -> Option<(DVec3, DVec3)> {
        let n = self.n_joints();
        if n == 0 {
            return None;
        }
        let glitches = self.glitch_frames();
        self.positions
            .chunks_exact(n)
            .enumerate()
            .filter(|(f, _)| glitches.binary_search(f).is_err())
            .filter_map(|(_, frame)| bounds_of(frame))
            .reduce(|(l, h), (lo, hi)| (l.min(lo), h.max(hi)))
    }

    /// Glitch frames, in increasing order: frames whose figure is much
    /// farther from where it spends its time than the motion ever travels,
    /// more than 20 times the larger of the figure's size and the spread of
    /// its positions (5th to 95th percentile) from its median position.
    /// Real recordings contain such frames (a ShaderMotion capture puts the
    /// whole figure 2.5 km away for five frames); framing them would shrink
    /// the figure to a dot on every other frame.
    #[must_use]
    pub fn glitch_frames(&self) -> Vec<usize> {
        let n = self.n_joints();
        if n == 0 {
            return Vec::new();
        }
        let boxes: Vec<(usize, (DVec3, DVec3))> = self
            .positions
            .chunks_exact(n)
            .enumerate()
            .filter_map(|(f, frame)| Some((f, bounds_of(frame)?)))
            .collect();
        if boxes.is_empty() {
            return Vec::new();
        }
        let centres: Vec<DVec3> = boxes.iter().map(|(_, (lo, hi))| (*lo + *hi) * 0.5).collect();
        let quantile = |mut v: Vec<f64>, q: f64| {
            v.sort_by(f64::total_cmp);
            v[((v.len() - 1) as f64 * q).round() as usize]
        };
        let axis = |k: usize| centres.iter().map(|c| c[k]).collect::<Vec<f64>>();
        let median =
            DVec3::new(quantile(axis(0), 0.5), quantile(axis(1), 0.5), quantile(axis(2), 0.5));
        let spread =
            (0..3).map(|k| quantile(axis(k), 0.95) - quantile(axis(k), 0.05)).fold(0.0, f64::max);
        let size = quantile(boxes.iter().map(|(_, (lo, hi))| (*hi - *lo).length()).collect(), 0.5);
        let reach = 20.0 * spread.max(size);
        boxes
            .iter()
            .zip(&centres)
            .filter(|(_, c)| (**c - median).length() > reach)
            .map(|((f, _), _)| *f)
            .collect()
    }
}

/// Axis-aligned bounding box `(min, max)` of the finite points of `points`,
/// or `None` when there are none.
pub(crate) fn bounds_of(points: &[DVec3]) -> Option<(DVec3, DVec3)> {
    let mut it = points.iter().filter(|p| p.is_finite());
    let first = *it.next()?;
    Some(it.fold((first, first), |(lo, hi), p| (lo.min(*p), hi.max(*p))))
}

/// A clip of a root and an End Site, at 10 frames per second, with the
/// given positions per frame (for the tests of this crate).
#[cfg(test)]
pub(crate) fn two_joints(frames: impl IntoIterator<Item = [DVec3; 2]>) -> Clip {
    let positions: Vec<DVec3> = frames.into_iter().flatten().collect();
    Clip {
        name: "f".into(),
        joint_names: vec!["Hips".into(), "Head".into()],
        parents: vec![None, Some(0)],
        is_end_site: vec![false, true],
        frame_time: 0.1,
        n_frames: positions.len() / 2,
        positions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A two-joint figure (1.7 tall) whose root is at `root(f)` in frame f.
    fn figure(n_frames: usize, root: impl Fn(usize) -> DVec3) -> Clip {
        two_joints((0..n_frames).map(|f| [root(f), root(f) + DVec3::Y * 1.7]))
    }

    #[test]
    fn glitch_frames_are_left_out_of_the_framing() {
        // Standing near the origin, but five frames 2.5 km away.
        let glitch = DVec3::new(1460.0, -1460.0, -1460.0);
        let clip =
            figure(400, |f| if (2..7).contains(&f) { glitch } else { DVec3::X * 0.001 * f as f64 });
        assert_eq!(clip.glitch_frames(), vec![2, 3, 4, 5, 6]);
        let (lo, hi) = clip.framing_bounds().unwrap();
        assert!((hi - lo).length() < 2.0, "{lo} {hi}");
        assert!(clip.bounds().unwrap().1.x >= 1460.0, "bounds() still sees every frame");
    }

    #[test]
    fn real_travel_is_framed_whole() {
        // A 40 m walk, and a figure that stands still then walks off 30 m.
        for clip in [
            figure(200, |f| DVec3::X * 0.2 * f as f64),
            figure(200, |f| DVec3::Z * if f < 190 { 0.0 } else { 3.0 * (f - 189) as f64 }),
        ] {
            assert!(clip.glitch_frames().is_empty());
            assert_eq!(clip.framing_bounds(), clip.bounds());
        }
        let empty = Clip { n_frames: 0, positions: Vec::new(), ..figure(0, |_| DVec3::ZERO) };
        assert_eq!(empty.framing_bounds(), None);
    }
}

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
    /// forward kinematics over every frame (in parallel).
    #[cfg(feature = "bvh")]
    #[must_use]
    pub fn from_bvh(bvh: &bvhkit::Bvh, name: &str, mode: bvhkit::PositionChannels) -> Clip {
        let s = bvh.skeleton();
        let fk = bvhkit::Kinematics::new(s, mode);
        Clip {
            name: name.to_string(),
            joint_names: s.display_names(),
            parents: s.joints().iter().map(|j| j.parent().map(bvhkit::JointId::index)).collect(),
            is_end_site: s.joints().iter().map(|j| j.is_end_site()).collect(),
            frame_time: bvh.motion().frame_time(),
            n_frames: bvh.motion().n_frames(),
            positions: fk.positions_all(bvh.motion()),
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
}

/// Axis-aligned bounding box `(min, max)` of the finite points of `points`,
/// or `None` when there are none.
pub(crate) fn bounds_of(points: &[DVec3]) -> Option<(DVec3, DVec3)> {
    let mut it = points.iter().filter(|p| p.is_finite());
    let first = *it.next()?;
    Some(it.fold((first, first), |(lo, hi), p| (lo.min(*p), hi.max(*p))))
}

use std::collections::HashMap;
use std::fmt;
use std::ops::Range;

use glam::DVec3;

use crate::channel::Channel;
use crate::error::{Error, Result};
use crate::rotation::{Axis, RotationOrder};

/// The index of a joint in its [`Skeleton`], in file order.
///
/// Joints are stored in file pre-order, so a parent's id is always smaller
/// than its children's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JointId(pub(crate) u32);

impl JointId {
    /// The id of the joint at position `index` in file order.
    pub fn new(index: usize) -> JointId {
        JointId(u32::try_from(index).expect("joint index fits in u32"))
    }

    /// The position of the joint in file order.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for JointId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// What a joint was declared as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JointKind {
    /// Declared with `ROOT`: the top of one skeleton.
    Root,
    /// Declared with `JOINT`.
    Joint,
    /// An `End Site`: a leaf with an offset, no name and no channels.
    EndSite,
}

/// One `ROOT`, `JOINT` or `End Site` of a skeleton.
#[derive(Clone, Debug, PartialEq)]
pub struct Joint {
    name: String,
    kind: JointKind,
    parent: Option<JointId>,
    offset: DVec3,
    channels: Vec<Channel>,
    first_channel: usize,
    depth: u32,
}

impl Joint {
    /// The name exactly as written in the file (between the keyword and the
    /// line end or `{`, outer whitespace trimmed, inner whitespace kept).
    /// Empty for End Sites; see [`Skeleton::display_name`].
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the joint was declared as.
    pub fn kind(&self) -> JointKind {
        self.kind
    }

    /// Whether this is an End Site.
    pub fn is_end_site(&self) -> bool {
        self.kind == JointKind::EndSite
    }

    /// The parent joint, `None` for a root.
    pub fn parent(&self) -> Option<JointId> {
        self.parent
    }

    /// `OFFSET`: the joint's origin in its parent's frame, file units.
    pub fn offset(&self) -> DVec3 {
        self.offset
    }

    /// The channels in the order written.
    pub fn channels(&self) -> &[Channel] {
        &self.channels
    }

    /// Index of this joint's first channel in a motion frame.
    pub fn first_channel(&self) -> usize {
        self.first_channel
    }

    /// The range of this joint's channels in a motion frame.
    pub fn channel_range(&self) -> Range<usize> {
        self.first_channel..self.first_channel + self.channels.len()
    }

    /// Depth in the hierarchy: 0 for a root.
    pub fn depth(&self) -> usize {
        self.depth as usize
    }

    /// The axes of the rotation channels, in the order listed.
    pub fn rotation_axes(&self) -> impl Iterator<Item = Axis> + '_ {
        self.channels.iter().filter(|c| c.is_rotation()).map(|c| c.axis())
    }

    /// The rotation order when the joint has all three rotation channels.
    pub fn rotation_order(&self) -> Option<RotationOrder> {
        let axes: Vec<Axis> = self.rotation_axes().collect();
        RotationOrder::from_axes(&axes)
    }

    /// The joint's rotation channel values in `frame` (in listing order),
    /// when they are Euler angles in `order`: the joint has all three
    /// rotation channels, listed in that order. `None` otherwise.
    ///
    /// # Panics
    /// When `frame` is shorter than the joint's channel range.
    ///
    /// # Example
    /// ```
    /// use bvhkit::{Bvh, JointId, rotation::RotationOrder};
    /// let bvh = Bvh::parse("HIERARCHY ROOT A { OFFSET 0 0 0 CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation }
    /// MOTION Frames: 1 Frame Time: 0.1
    /// 1 2 3 10 20 30")?;
    /// let a = bvh.skeleton().joint(JointId::new(0));
    /// assert_eq!(a.euler_angles(bvh.motion().frame(0), RotationOrder::ZXY), Some([10.0, 20.0, 30.0]));
    /// assert_eq!(a.euler_angles(bvh.motion().frame(0), RotationOrder::XYZ), None);
    /// # Ok::<(), bvhkit::Error>(())
    /// ```
    pub fn euler_angles(&self, frame: &[f64], order: RotationOrder) -> Option<[f64; 3]> {
        if self.rotation_order() != Some(order) {
            return None;
        }
        let mut angles = [0.0; 3];
        let values = &frame[self.channel_range()];
        let rotations = self.channels.iter().zip(values).filter(|(c, _)| c.is_rotation());
        for (slot, (_, &v)) in angles.iter_mut().zip(rotations) {
            *slot = v;
        }
        Some(angles)
    }
}

/// One or more joint hierarchies (several `ROOT`s are legal), in file order.
///
/// Invariants: joints are in pre-order (a parent precedes its children and a
/// subtree is contiguous); End Sites have no channels and no children;
/// channels of joint `i` occupy `first_channel..first_channel+len` and the
/// ranges tile `0..n_channels` in file order.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Skeleton {
    joints: Vec<Joint>,
    n_channels: usize,
}

impl Skeleton {
    /// All joints (End Sites included) in file order.
    pub fn joints(&self) -> &[Joint] {
        &self.joints
    }

    /// The joint `id`.
    ///
    /// # Panics
    /// When `id` is not a joint of this skeleton; see [`Skeleton::get`].
    pub fn joint(&self, id: JointId) -> &Joint {
        &self.joints[id.index()]
    }

    /// The joint `id`, or `None`.
    pub fn get(&self, id: JointId) -> Option<&Joint> {
        self.joints.get(id.index())
    }

    /// Number of joints, End Sites included.
    pub fn len(&self) -> usize {
        self.joints.len()
    }

    /// Whether there are no joints.
    pub fn is_empty(&self) -> bool {
        self.joints.is_empty()
    }

    /// Ids of all joints in file order.
    pub fn ids(&self) -> impl ExactSizeIterator<Item = JointId> + '_ {
        (0..self.joints.len()).map(JointId::new)
    }

    /// Channels per motion frame (the sum over all joints).
    pub fn n_channels(&self) -> usize {
        self.n_channels
    }

    /// The roots, in file order.
    pub fn roots(&self) -> impl Iterator<Item = JointId> + '_ {
        self.ids().filter(|&id| self.joint(id).parent.is_none())
    }

    /// The parent of `id`.
    pub fn parent(&self, id: JointId) -> Option<JointId> {
        self.joint(id).parent
    }

    /// The direct children of `id`, in file order.
    pub fn children(&self, id: JointId) -> impl Iterator<Item = JointId> + '_ {
        let end = self.subtree_end(id);
        (id.index() + 1..end).map(JointId::new).filter(move |&c| self.joint(c).parent == Some(id))
    }

    /// One past the last joint of the subtree rooted at `id`.
    pub fn subtree_end(&self, id: JointId) -> usize {
        let depth = self.joint(id).depth;
        let mut i = id.index() + 1;
        while i < self.joints.len() && self.joints[i].depth > depth {
            i += 1;
        }
        i
    }

    /// The first joint (not End Site) named `name`, compared exactly.
    pub fn find(&self, name: &str) -> Option<JointId> {
        self.ids().find(|&id| !self.joint(id).is_end_site() && self.joint(id).name == name)
    }

    /// A unique, non-empty name for every joint, in file order: the name as
    /// written with inner whitespace runs folded to one space, and End Sites
    /// named `<Parent>_End` (`<Parent>_End2`, ... for further End Sites of
    /// the same parent; a further numeric suffix when a joint already has
    /// that name).
    ///
    /// # Example
    /// ```
    /// let bvh = bvhkit::Bvh::parse(
    ///     "HIERARCHY ROOT Hips { OFFSET 0 0 0 CHANNELS 0 End Site { OFFSET 0 1 0 } } MOTION Frames: 0 Frame Time: 0.1",
    /// )?;
    /// assert_eq!(bvh.skeleton().display_names(), ["Hips", "Hips_End"]);
    /// # Ok::<(), bvhkit::Error>(())
    /// ```
    pub fn display_names(&self) -> Vec<String> {
        let mut used: HashMap<String, ()> = HashMap::new();
        let mut names = Vec::with_capacity(self.joints.len());
        for j in &self.joints {
            if !j.is_end_site() {
                let n = fold_whitespace(&j.name);
                used.insert(n.clone(), ());
                names.push(n);
            } else {
                names.push(String::new());
            }
        }
        let mut ends_per_parent: HashMap<usize, usize> = HashMap::new();
        for (i, j) in self.joints.iter().enumerate() {
            if !j.is_end_site() {
                continue;
            }
            let parent_name =
                j.parent.map(|p| names[p.index()].clone()).unwrap_or_else(|| "Root".to_string());
            let k = ends_per_parent.entry(j.parent.map_or(usize::MAX, |p| p.index())).or_insert(0);
            *k += 1;
            let base = if *k == 1 {
                format!("{parent_name}_End")
            } else {
                format!("{parent_name}_End{k}")
            };
            let mut name = base.clone();
            let mut n = 2;
            while used.contains_key(&name) {
                name = format!("{base}_{n}");
                n += 1;
            }
            used.insert(name.clone(), ());
            names[i] = name;
        }
        names
    }

    /// The display name of one joint; see [`Skeleton::display_names`].
    pub fn display_name(&self, id: JointId) -> String {
        self.display_names().swap_remove(id.index())
    }

    /// Distinct rotation orders used, in order of first appearance, written
    /// as the axis letters of the rotation channels (`ZXY`; `ZX` for a joint
    /// with two rotation channels).
    pub fn rotation_orders(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for j in &self.joints {
            let s: String = j
                .rotation_axes()
                .map(|a| match a {
                    Axis::X => 'X',
                    Axis::Y => 'Y',
                    Axis::Z => 'Z',
                })
                .collect();
            if !s.is_empty() && !out.contains(&s) {
                out.push(s);
            }
        }
        out
    }
}

fn fold_whitespace(s: &str) -> String {
    s.split_ascii_whitespace().collect::<Vec<_>>().join(" ")
}

/// Builds a [`Skeleton`] joint by joint, in file pre-order.
///
/// # Example
/// ```
/// use bvhkit::{Channel::*, SkeletonBuilder};
/// use bvhkit::glam::DVec3;
///
/// let mut b = SkeletonBuilder::new();
/// let hips = b.root("Hips", DVec3::ZERO, &[Xposition, Yposition, Zposition, Zrotation, Xrotation, Yrotation])?;
/// let spine = b.joint(hips, "Spine", DVec3::new(0.0, 10.0, 0.0), &[Zrotation, Xrotation, Yrotation])?;
/// b.end_site(spine, DVec3::new(0.0, 10.0, 0.0))?;
/// let skeleton = b.build();
/// assert_eq!(skeleton.n_channels(), 9);
/// # Ok::<(), bvhkit::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct SkeletonBuilder {
    joints: Vec<Joint>,
    n_channels: usize,
    /// The path from the current root to the last joint added.
    open: Vec<JointId>,
}

impl SkeletonBuilder {
    /// An empty builder.
    pub fn new() -> SkeletonBuilder {
        SkeletonBuilder::default()
    }

    /// Adds a new root (a new skeleton) after everything added so far.
    ///
    /// # Errors
    /// When the channels are invalid (see [`SkeletonBuilder::joint`]).
    pub fn root(&mut self, name: &str, offset: DVec3, channels: &[Channel]) -> Result<JointId> {
        self.open.clear();
        self.push(name, JointKind::Root, None, offset, channels)
    }

    /// Adds a `JOINT` under `parent`.
    ///
    /// # Errors
    /// When `parent` is not the last joint added or one of its ancestors
    /// (joints must be added in pre-order), is an End Site, or when
    /// `channels` has more than six entries or a channel twice.
    pub fn joint(
        &mut self,
        parent: JointId,
        name: &str,
        offset: DVec3,
        channels: &[Channel],
    ) -> Result<JointId> {
        self.open_at(parent)?;
        self.push(name, JointKind::Joint, Some(parent), offset, channels)
    }

    /// Adds an `End Site` under `parent`.
    ///
    /// # Errors
    /// As for [`SkeletonBuilder::joint`].
    pub fn end_site(&mut self, parent: JointId, offset: DVec3) -> Result<JointId> {
        self.open_at(parent)?;
        self.push("", JointKind::EndSite, Some(parent), offset, &[])
    }

    /// Number of joints added so far.
    pub fn len(&self) -> usize {
        self.joints.len()
    }

    /// Whether no joint was added yet.
    pub fn is_empty(&self) -> bool {
        self.joints.is_empty()
    }

    /// The finished skeleton.
    pub fn build(self) -> Skeleton {
        Skeleton { joints: self.joints, n_channels: self.n_channels }
    }

    fn open_at(&mut self, parent: JointId) -> Result<()> {
        let Some(pos) = self.open.iter().rposition(|&p| p == parent) else {
            return Err(Error::invalid(format!(
                "joint {parent} is not the last joint added or one of its ancestors (joints are added in file order)"
            )));
        };
        if self.joints[parent.index()].is_end_site() {
            return Err(Error::invalid("an End Site cannot have children"));
        }
        self.open.truncate(pos + 1);
        Ok(())
    }

    fn push(
        &mut self,
        name: &str,
        kind: JointKind,
        parent: Option<JointId>,
        offset: DVec3,
        channels: &[Channel],
    ) -> Result<JointId> {
        check_channels(channels).map_err(Error::invalid)?;
        if self.joints.len() >= u32::MAX as usize {
            return Err(Error::invalid("too many joints"));
        }
        let id = JointId::new(self.joints.len());
        let depth = self.open.len() as u32;
        self.joints.push(Joint {
            name: name.to_string(),
            kind,
            parent,
            offset,
            channels: channels.to_vec(),
            first_channel: self.n_channels,
            depth,
        });
        self.n_channels += channels.len();
        self.open.push(id);
        Ok(id)
    }
}

/// Checks the "at most six channels, each at most once" rule.
pub(crate) fn check_channels(channels: &[Channel]) -> std::result::Result<(), String> {
    if channels.len() > 6 {
        return Err(format!("a joint has at most 6 channels, found {}", channels.len()));
    }
    for (i, c) in channels.iter().enumerate() {
        if channels[..i].contains(c) {
            return Err(format!("channel {c} is listed twice"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channel::Channel::*;

    fn sample() -> Skeleton {
        let mut b = SkeletonBuilder::new();
        let r = b
            .root(
                "Hips",
                DVec3::ZERO,
                &[Xposition, Yposition, Zposition, Zrotation, Xrotation, Yrotation],
            )
            .unwrap();
        let l = b.joint(r, "Left Leg", DVec3::X, &[Zrotation, Xrotation, Yrotation]).unwrap();
        b.end_site(l, DVec3::NEG_Y).unwrap();
        let rr = b.joint(r, "Right", DVec3::NEG_X, &[Xrotation]).unwrap();
        b.end_site(rr, DVec3::NEG_Y).unwrap();
        b.end_site(rr, DVec3::NEG_Z).unwrap();
        b.root("Prop", DVec3::ONE, &[]).unwrap();
        b.build()
    }

    #[test]
    fn navigation() {
        let s = sample();
        assert_eq!(s.len(), 7);
        assert_eq!(s.n_channels(), 10);
        assert_eq!(s.roots().collect::<Vec<_>>(), [JointId(0), JointId(6)]);
        assert_eq!(s.children(JointId(0)).collect::<Vec<_>>(), [JointId(1), JointId(3)]);
        assert_eq!(s.subtree_end(JointId(0)), 6);
        assert_eq!(s.joint(JointId(3)).channel_range(), 9..10);
        assert_eq!(s.find("Left Leg"), Some(JointId(1)));
        assert_eq!(s.joint(JointId(1)).rotation_order(), Some(RotationOrder::ZXY));
        assert_eq!(s.rotation_orders(), ["ZXY", "X"]);
    }

    #[test]
    fn display_names_are_unique() {
        let s = sample();
        assert_eq!(
            s.display_names(),
            ["Hips", "Left Leg", "Left Leg_End", "Right", "Right_End", "Right_End2", "Prop"]
        );
    }

    #[test]
    fn builder_enforces_file_order_and_channels() {
        let mut b = SkeletonBuilder::new();
        let r = b.root("A", DVec3::ZERO, &[]).unwrap();
        let c1 = b.joint(r, "B", DVec3::ZERO, &[]).unwrap();
        let _c2 = b.joint(r, "C", DVec3::ZERO, &[]).unwrap();
        assert!(b.joint(c1, "D", DVec3::ZERO, &[]).is_err(), "B's subtree is closed");
        assert!(b.joint(r, "E", DVec3::ZERO, &[Xrotation, Xrotation]).is_err());
        let e = b.end_site(r, DVec3::ZERO).unwrap();
        assert!(b.joint(e, "F", DVec3::ZERO, &[]).is_err());
    }
}

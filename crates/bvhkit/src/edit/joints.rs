//! Names and joints: rename, remove joints (folding their motion into their
//! children), remove or add End Sites.
//!
//! - Renaming changes names only; a new name must be a valid BVH name (not
//!   empty, no line end, brace or outer whitespace, at most 64 KiB) and may
//!   not make two joints share a name that did not before.
//! - Removing a joint attaches its children (End Sites included) to its
//!   parent. A child's new local transform is the removed joints' local
//!   transforms composed with its own (`L' = L_removed · L_child`), written
//!   into the child's own channels (Euler angles in its own order, closest
//!   to the previous frame; translations into its position channels); its
//!   `OFFSET` becomes the composed rest offset. When the removed joints
//!   have no rotation channels, the child's rotation channels are kept bit
//!   for bit. Every other joint's channels are kept bit for bit. World
//!   motion is kept exactly where the child's channels can hold the
//!   composed transform; otherwise (a removed joint that rotates above an
//!   End Site, or above a child without position channels) the largest
//!   world-position error is returned.
//!   A removed root is replaced by the one kept joint below it, which
//!   becomes the root with the root's motion folded in (the inverse of
//!   extracting root motion onto a new root); one whose removal would
//!   leave several roots, none carrying its motion, is refused.
//! - Removing End Sites changes no motion value. Added End Sites continue
//!   each childless joint's bone: their offset is the joint's own `OFFSET`.

use std::collections::{HashMap, HashSet};

use glam::{DAffine3, DQuat};

use super::local::{JointSpec, WorldError, build};
use super::pose::JointChannels;
use super::{FrameMap, SplitFrameMap};
use crate::bvh::Bvh;
use crate::error::{Error, Result};
use crate::kinematics::{Kinematics, PositionChannels};
use crate::skeleton::{JointId, JointKind, Skeleton};

pub(crate) fn check_name(name: &str) -> Result<()> {
    if name.is_empty()
        || name.trim() != name
        || name.len() > 64 * 1024
        || name.chars().any(|c| c == '{' || c == '}' || c == '\n' || c == '\r' || c.is_control())
    {
        return Err(Error::invalid(format!(
            "{name:?} is not a valid joint name (empty, outer whitespace, a brace, a control character or over 64 KiB)"
        )));
    }
    Ok(())
}

/// Renames joints: `f(name)` gives the new name of a joint, or `None` to
/// keep it. End Sites have no names and are never passed.
///
/// # Errors
/// When a new name is invalid or collides with another joint's.
pub fn rename_with(bvh: &Bvh, f: impl FnMut(&str) -> Option<String>) -> Result<Bvh> {
    Bvh::new(rename_skeleton_with(bvh.skeleton(), f)?, bvh.motion().clone())
}

/// [`rename_with`] on a skeleton alone: the channels and their order are
/// unchanged, so every frame of the clip is kept as it is (a stream copies
/// its frames).
///
/// # Errors
/// As [`rename_with`].
pub fn rename_skeleton_with(
    s: &Skeleton,
    mut f: impl FnMut(&str) -> Option<String>,
) -> Result<Skeleton> {
    let mut specs: Vec<JointSpec> = s.joints().iter().map(JointSpec::of).collect();
    let before: HashSet<&str> =
        s.joints().iter().filter(|j| !j.is_end_site()).map(|j| j.name()).collect();
    let had_duplicates = before.len() != s.joints().iter().filter(|j| !j.is_end_site()).count();
    for spec in specs.iter_mut() {
        if spec.kind == JointKind::EndSite {
            continue;
        }
        if let Some(new) = f(&spec.name) {
            check_name(&new)?;
            spec.name = new;
        }
    }
    let mut seen = HashSet::new();
    for spec in specs.iter().filter(|s| s.kind != JointKind::EndSite) {
        if !seen.insert(spec.name.as_str()) && !had_duplicates {
            return Err(Error::invalid(format!(
                "renaming gives two joints the name {:?}",
                spec.name
            )));
        }
    }
    build(&specs)
}

/// Renames joints by a map from old to new names.
///
/// # Errors
/// When a name of the map is not a joint's, or as [`rename_with`].
///
/// # Example
/// ```
/// use bvhkit::Bvh;
/// use bvhkit::edit::joints::rename_map;
/// let bvh = Bvh::parse("HIERARCHY ROOT Hips { OFFSET 0 0 0 CHANNELS 0 End Site { OFFSET 0 1 0 } }
///     MOTION Frames: 0 Frame Time: 0.1")?;
/// let out = rename_map(&bvh, &[("Hips".to_string(), "pelvis".to_string())].into_iter().collect())?;
/// assert_eq!(out.skeleton().joints()[0].name(), "pelvis");
/// # Ok::<(), bvhkit::Error>(())
/// ```
pub fn rename_map(bvh: &Bvh, map: &HashMap<String, String>) -> Result<Bvh> {
    Bvh::new(rename_map_skeleton(bvh.skeleton(), map)?, bvh.motion().clone())
}

/// [`rename_map`] on a skeleton alone (frames are unchanged).
///
/// # Errors
/// As [`rename_map`].
pub fn rename_map_skeleton(s: &Skeleton, map: &HashMap<String, String>) -> Result<Skeleton> {
    for old in map.keys() {
        if s.find(old).is_none() {
            return Err(Error::invalid(format!("rename: no joint named {old:?}")));
        }
    }
    rename_skeleton_with(s, |n| map.get(n).cloned())
}

/// Renames joints by replacing every occurrence of `from` in their names
/// with `to` (`mixamorig:` → ``).
///
/// # Errors
/// As [`rename_with`], and when `from` is empty.
pub fn rename_pattern(bvh: &Bvh, from: &str, to: &str) -> Result<Bvh> {
    Bvh::new(rename_pattern_skeleton(bvh.skeleton(), from, to)?, bvh.motion().clone())
}

/// [`rename_pattern`] on a skeleton alone (frames are unchanged).
///
/// # Errors
/// As [`rename_pattern`].
pub fn rename_pattern_skeleton(s: &Skeleton, from: &str, to: &str) -> Result<Skeleton> {
    if from.is_empty() {
        return Err(Error::invalid("rename: the pattern to replace is empty"));
    }
    rename_skeleton_with(s, |n| n.contains(from).then(|| n.replace(from, to)))
}

/// Reads a rename map: one `OLD<TAB>NEW` or `OLD = NEW` per line (split at
/// the first tab, else at the first `=`; both sides trimmed); empty lines
/// and lines starting with `#` are skipped.
///
/// # Errors
/// A line without a separator, with its line number.
pub fn parse_rename_map(text: &str) -> Result<HashMap<String, String>> {
    let mut map = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let (a, b) = line.split_once('\t').or_else(|| line.split_once('=')).ok_or_else(|| {
            Error::invalid(format!(
                "rename map line {}: expected OLD<TAB>NEW or OLD = NEW, found {line:?}",
                i + 1
            ))
        })?;
        map.insert(a.trim().to_string(), b.trim().to_string());
    }
    Ok(map)
}

/// Removes every End Site; motion values are unchanged.
pub fn strip_end_sites(bvh: &Bvh) -> Result<Bvh> {
    Bvh::new(strip_end_sites_skeleton(bvh.skeleton())?, bvh.motion().clone())
}

/// [`strip_end_sites`] on a skeleton alone: End Sites have no channels, so
/// every frame is kept as it is.
///
/// # Errors
/// None in practice (the skeleton is rebuilt from a valid one).
pub fn strip_end_sites_skeleton(s: &Skeleton) -> Result<Skeleton> {
    let keep: Vec<bool> = s.joints().iter().map(|j| !j.is_end_site()).collect();
    let (specs, _) = kept_specs(s, &keep);
    build(&specs)
}

/// Adds an End Site under every joint that has no children, continuing its
/// bone: its offset is the joint's own `OFFSET`. Motion values are
/// unchanged.
///
/// # Example
/// ```
/// use bvhkit::Bvh;
/// use bvhkit::edit::joints::{add_end_sites, strip_end_sites};
/// let bvh = Bvh::parse("HIERARCHY ROOT Hips { OFFSET 0 0 0 CHANNELS 0
///     JOINT Head { OFFSET 0 10 0 CHANNELS 0 End Site { OFFSET 0 3 0 } } }
///     MOTION Frames: 0 Frame Time: 0.1")?;
/// let bare = strip_end_sites(&bvh)?;
/// assert_eq!(bare.skeleton().len(), 2);
/// let ends = add_end_sites(&bare)?;
/// assert_eq!(ends.skeleton().joints()[2].offset().y, 10.0);
/// # Ok::<(), bvhkit::Error>(())
/// ```
pub fn add_end_sites(bvh: &Bvh) -> Result<Bvh> {
    Bvh::new(add_end_sites_skeleton(bvh.skeleton())?, bvh.motion().clone())
}

/// [`add_end_sites`] on a skeleton alone: End Sites have no channels, so
/// every frame is kept as it is.
///
/// # Errors
/// None in practice (the skeleton is rebuilt from a valid one).
pub fn add_end_sites_skeleton(s: &Skeleton) -> Result<Skeleton> {
    let mut specs = Vec::with_capacity(s.len() * 2);
    let mut index = vec![0; s.len()];
    for (i, j) in s.joints().iter().enumerate() {
        let mut spec = JointSpec::of(j);
        spec.parent = j.parent().map(|p| index[p.index()]);
        index[i] = specs.len();
        specs.push(spec);
        if !j.is_end_site() && s.children(JointId::new(i)).next().is_none() {
            specs.push(JointSpec {
                name: String::new(),
                kind: JointKind::EndSite,
                parent: Some(index[i]),
                offset: j.offset(),
                channels: Vec::new(),
            });
        }
    }
    build(&specs)
}

/// The index of the root above joint `i` (or `i` itself).
fn top_of(s: &Skeleton, mut i: usize) -> usize {
    while let Some(p) = s.joints()[i].parent() {
        i = p.index();
    }
    i
}

/// Specs of the kept joints, parents mapped to the nearest kept ancestor,
/// and for each kept joint its old index.
fn kept_specs(s: &Skeleton, keep: &[bool]) -> (Vec<JointSpec>, Vec<usize>) {
    let mut new_index = vec![usize::MAX; s.len()];
    let mut specs = Vec::new();
    let mut old = Vec::new();
    for (i, j) in s.joints().iter().enumerate() {
        if !keep[i] {
            continue;
        }
        let mut spec = JointSpec::of(j);
        let mut p = j.parent();
        let mut offset = j.offset();
        while let Some(q) = p {
            if keep[q.index()] {
                break;
            }
            offset += s.joint(q).offset();
            p = s.joint(q).parent();
        }
        spec.parent = p.map(|q| new_index[q.index()]);
        spec.offset = offset;
        if spec.parent.is_none() && spec.kind == JointKind::Joint {
            spec.kind = JointKind::Root;
        }
        new_index[i] = specs.len();
        specs.push(spec);
        old.push(i);
    }
    (specs, old)
}

/// Removes the joints named in `names`, folding their motion into their
/// children (see the module documentation). Returns the new clip and the
/// largest distance, over all frames and kept joints, between a kept
/// joint's world position before and after (0 when exact).
///
/// This is [`RemoveJoints`] mapped over every frame.
///
/// # Errors
/// When a name is not a joint's, a removed root leaves an End Site
/// without a parent, or a removed root would leave several roots in its
/// place (removing a root makes the one joint below it that is kept the
/// root, its motion folded in, as `--extract-root` undone).
///
/// # Example
/// ```
/// use bvhkit::{Bvh, PositionChannels};
/// use bvhkit::edit::joints::remove_joints;
/// let bvh = Bvh::parse("HIERARCHY ROOT Hips { OFFSET 0 0 0 CHANNELS 3 Zrotation Xrotation Yrotation
///     JOINT Spine { OFFSET 0 5 0 CHANNELS 3 Zrotation Xrotation Yrotation
///     JOINT Head { OFFSET 0 5 0 CHANNELS 3 Zrotation Xrotation Yrotation End Site { OFFSET 0 2 0 } } } }
///     MOTION Frames: 1 Frame Time: 0.1
///     0 0 0 0 0 0 0 0 0")?;
/// let (out, error) = remove_joints(&bvh, &["Spine"], PositionChannels::Replace)?;
/// assert_eq!(out.skeleton().len(), 3);
/// assert_eq!(out.skeleton().joints()[1].offset().y, 10.0);
/// assert_eq!(error, 0.0);
/// # Ok::<(), bvhkit::Error>(())
/// ```
pub fn remove_joints(bvh: &Bvh, names: &[&str], mode: PositionChannels) -> Result<(Bvh, f64)> {
    let map = RemoveJoints::new(bvh.skeleton(), names, mode)?;
    let (out, map) = super::map_frames_chunked(bvh, map)?;
    Ok((out, map.max_position_error()))
}

/// One kept joint directly under removed ones.
#[derive(Clone, Debug)]
struct Fold {
    /// Its index in the output skeleton.
    new: usize,
    /// Its index in the input skeleton.
    old: usize,
    /// The removed joints above it, top first.
    chain: Vec<usize>,
    /// Whether one of them has rotation channels.
    turns: bool,
    /// Its channels in the output skeleton.
    channels: JointChannels,
}

/// [`remove_joints`] one frame at a time: a [`FrameMap`] (and
/// [`SplitFrameMap`]) from the input skeleton to the skeleton without the
/// removed joints, so a stream removes joints in constant memory with the
/// same bits as the whole clip. The state carried from frame to frame is
/// the previous output frame's angles of the joints that take the folded
/// rotations (Euler continuity); the largest world-position error over the
/// frames mapped is kept as a statistic ([`RemoveJoints::max_position_error`]).
///
/// # Example
/// ```
/// use bvhkit::{Bvh, PositionChannels};
/// use bvhkit::edit::{FrameMap, joints::RemoveJoints};
/// let bvh = Bvh::parse("HIERARCHY ROOT Hips { OFFSET 0 0 0 CHANNELS 3 Zrotation Xrotation Yrotation
///     JOINT Spine { OFFSET 0 5 0 CHANNELS 3 Zrotation Xrotation Yrotation
///     JOINT Head { OFFSET 0 5 0 CHANNELS 3 Zrotation Xrotation Yrotation End Site { OFFSET 0 2 0 } } } }
///     MOTION Frames: 1 Frame Time: 0.1
///     0 0 0 0 0 30 0 0 0")?;
/// let mut map = RemoveJoints::new(bvh.skeleton(), &["Spine"], PositionChannels::Replace)?;
/// let mut out = [0.0; 6];
/// map.map(bvh.motion().frame(0), &mut out);
/// // Head takes Spine's 30 degrees about Y; it cannot follow the turned bone's
/// // offset (no position channels), but here the bone lies along Y.
/// assert!((out[5] - 30.0).abs() < 1e-9);
/// assert!(map.max_position_error() < 1e-9);
/// # Ok::<(), bvhkit::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct RemoveJoints {
    output: Skeleton,
    mode: PositionChannels,
    /// Channel ranges copied from input to output frames.
    copies: Vec<(std::ops::Range<usize>, std::ops::Range<usize>)>,
    folds: Vec<Fold>,
    fk: Kinematics,
    local: Vec<DAffine3>,
    /// World positions before and after, each output joint against the
    /// input joint it was.
    check: WorldError,
    /// The previous output frame's angles of each fold's joint (`None`
    /// before the first frame).
    near: Option<Vec<[f64; 3]>>,
}

impl RemoveJoints {
    /// The map that removes the joints named in `names` from `skeleton`.
    ///
    /// # Errors
    /// As [`remove_joints`].
    pub fn new(
        skeleton: &Skeleton,
        names: &[&str],
        mode: PositionChannels,
    ) -> Result<RemoveJoints> {
        let s = skeleton;
        let mut keep = vec![true; s.len()];
        for name in names {
            let id = s
                .find(name)
                .ok_or_else(|| Error::invalid(format!("remove: no joint named {name:?}")))?;
            keep[id.index()] = false;
        }
        let (specs, old) = kept_specs(s, &keep);
        if specs.iter().any(|sp| sp.parent.is_none() && sp.kind == JointKind::EndSite) {
            return Err(Error::invalid("remove: an End Site would be left without a parent"));
        }
        // A removed root: the one joint that takes its place becomes the
        // root, its motion folded in; several would each become a root.
        for root in s.ids().filter(|&id| s.joint(id).parent().is_none() && !keep[id.index()]) {
            let heirs: Vec<&str> = old
                .iter()
                .zip(&specs)
                .filter(|&(&o, sp)| sp.parent.is_none() && top_of(s, o) == root.index())
                .map(|(&o, _)| s.joints()[o].name())
                .collect();
            if heirs.len() > 1 {
                return Err(Error::invalid(format!(
                    "remove: {:?} is a root: removing it would leave {} roots in its place \
                     ({}) and no joint to carry its motion; a root can be removed only when \
                     one joint takes its place",
                    s.joint(root).name(),
                    heirs.len(),
                    heirs.join(", ")
                )));
            }
        }
        let output = build(&specs)?;
        let copies = old
            .iter()
            .enumerate()
            .map(|(k, &o)| (s.joints()[o].channel_range(), output.joints()[k].channel_range()))
            .filter(|(a, _)| !a.is_empty())
            .collect();
        let folds = old
            .iter()
            .enumerate()
            .filter_map(|(k, &o)| {
                let mut chain = Vec::new();
                let mut p = s.joints()[o].parent();
                while let Some(q) = p.filter(|q| !keep[q.index()]) {
                    chain.push(q.index());
                    p = s.joint(q).parent();
                }
                chain.reverse();
                let turns = chain.iter().any(|&c| s.joints()[c].rotation_axes().next().is_some());
                let j = &output.joints()[k];
                (!chain.is_empty() && !j.channels().is_empty()).then(|| Fold {
                    new: k,
                    old: o,
                    chain,
                    turns,
                    channels: JointChannels::of(j),
                })
            })
            .collect();
        Ok(RemoveJoints {
            mode,
            copies,
            folds,
            fk: Kinematics::new(s, mode),
            local: vec![DAffine3::IDENTITY; s.len()],
            check: WorldError::new(s, &output, mode, old),
            output,
            near: None,
        })
    }

    /// The largest distance, over the frames mapped so far and the kept
    /// joints, between a kept joint's world position before and after (0
    /// when exact).
    pub fn max_position_error(&self) -> f64 {
        self.check.max
    }
}

impl FrameMap for RemoveJoints {
    fn output_skeleton(&self) -> &Skeleton {
        &self.output
    }

    fn map(&mut self, src: &[f64], dst: &mut [f64]) {
        for (a, b) in &self.copies {
            dst[b.clone()].copy_from_slice(&src[a.clone()]);
        }
        if !self.folds.is_empty() {
            self.fk.local(src, &mut self.local);
            let first = self.near.is_none();
            let near = self.near.get_or_insert_with(|| vec![[0.0; 3]; self.folds.len()]);
            for (fold, near) in self.folds.iter().zip(near.iter_mut()) {
                let jc = &fold.channels;
                let mut l = DAffine3::IDENTITY;
                for &c in &fold.chain {
                    l *= self.local[c];
                }
                l *= self.local[fold.old];
                if fold.turns {
                    // The first frame's reference is its own (copied) angles.
                    let n = if first { jc.angles(dst) } else { *near };
                    jc.write_rotation(DQuat::from_mat3(&l.matrix3), Some(n), dst);
                }
                jc.write_translation(l.translation, self.mode, dst);
                *near = jc.angles(dst);
            }
            debug_assert!(self.folds.iter().all(|f| f.new < self.output.len()));
        }
        self.check.measure(src, dst);
    }
}

impl SplitFrameMap for RemoveJoints {
    fn absorb(&mut self, earlier: &Self) {
        self.check.max = self.check.max.max(earlier.check.max);
    }
}

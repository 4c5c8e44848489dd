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
//! - Removing End Sites changes no motion value. Added End Sites continue
//!   each childless joint's bone: their offset is the joint's own `OFFSET`.

use std::collections::{HashMap, HashSet};

use glam::{DAffine3, DQuat};

use super::local::{JointSpec, build, max_position_error};
use super::pose::JointChannels;
use crate::bvh::Bvh;
use crate::error::{Error, Result};
use crate::kinematics::{Kinematics, PositionChannels};
use crate::motion::Motion;
use crate::skeleton::{JointId, JointKind};

fn check_name(name: &str) -> Result<()> {
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
pub fn rename_with(bvh: &Bvh, mut f: impl FnMut(&str) -> Option<String>) -> Result<Bvh> {
    let s = bvh.skeleton();
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
    Bvh::new(build(&specs)?, bvh.motion().clone())
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
    for old in map.keys() {
        if bvh.skeleton().find(old).is_none() {
            return Err(Error::invalid(format!("rename: no joint named {old:?}")));
        }
    }
    rename_with(bvh, |n| map.get(n).cloned())
}

/// Renames joints by replacing every occurrence of `from` in their names
/// with `to` (`mixamorig:` → ``).
///
/// # Errors
/// As [`rename_with`], and when `from` is empty.
pub fn rename_pattern(bvh: &Bvh, from: &str, to: &str) -> Result<Bvh> {
    if from.is_empty() {
        return Err(Error::invalid("rename: the pattern to replace is empty"));
    }
    rename_with(bvh, |n| n.contains(from).then(|| n.replace(from, to)))
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
    let s = bvh.skeleton();
    let keep: Vec<bool> = s.joints().iter().map(|j| !j.is_end_site()).collect();
    let (specs, _) = kept_specs(bvh, &keep);
    Bvh::new(build(&specs)?, bvh.motion().clone())
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
    let s = bvh.skeleton();
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
    Bvh::new(build(&specs)?, bvh.motion().clone())
}

/// Specs of the kept joints, parents mapped to the nearest kept ancestor,
/// and for each kept joint its old index.
fn kept_specs(bvh: &Bvh, keep: &[bool]) -> (Vec<JointSpec>, Vec<usize>) {
    let s = bvh.skeleton();
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
/// # Errors
/// When a name is not a joint's, or a removed root leaves an End Site
/// without a parent.
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
    let s = bvh.skeleton();
    let mut keep = vec![true; s.len()];
    for name in names {
        let id = s
            .find(name)
            .ok_or_else(|| Error::invalid(format!("remove: no joint named {name:?}")))?;
        keep[id.index()] = false;
    }
    let (specs, old) = kept_specs(bvh, &keep);
    if specs.iter().any(|sp| sp.parent.is_none() && sp.kind == JointKind::EndSite) {
        return Err(Error::invalid("remove: an End Site would be left without a parent"));
    }
    let skeleton = build(&specs)?;
    let fk = Kinematics::new(s, mode);
    let nc = skeleton.n_channels();
    let n_frames = bvh.motion().n_frames();
    let mut values = vec![0.0; n_frames * nc];
    let mut local = vec![DAffine3::IDENTITY; s.len()];
    // For each kept joint directly under removed ones: the removed chain,
    // top first, and whether it turns.
    let chains: Vec<(usize, Vec<usize>, bool)> = old
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
            (!chain.is_empty()).then_some((k, chain, turns))
        })
        .collect();
    for f in 0..n_frames {
        let src = bvh.motion().frame(f);
        let (done, rest) = values.split_at_mut(f * nc);
        let dst = &mut rest[..nc];
        for (k, &o) in old.iter().enumerate() {
            let (a, b) = (s.joints()[o].channel_range(), skeleton.joints()[k].channel_range());
            dst[b].copy_from_slice(&src[a]);
        }
        if chains.is_empty() {
            continue;
        }
        fk.local(src, &mut local);
        for (k, chain, turns) in &chains {
            let j = &skeleton.joints()[*k];
            if j.channels().is_empty() {
                continue;
            }
            let jc = JointChannels::of(j);
            let mut l = DAffine3::IDENTITY;
            for &c in chain {
                l *= local[c];
            }
            l *= local[old[*k]];
            if *turns {
                let near = if f == 0 { jc.angles(dst) } else { jc.angles(&done[(f - 1) * nc..]) };
                jc.write_rotation(DQuat::from_mat3(&l.matrix3), Some(near), dst);
            }
            jc.write_translation(l.translation, mode, dst);
        }
    }
    let motion = Motion::with_frames(bvh.motion().frame_time(), n_frames, nc, values)?;
    let out = Bvh::new(skeleton, motion)?;
    let map: Vec<Option<usize>> = old.iter().map(|&o| Some(o)).collect();
    let error = max_position_error((s, bvh.motion()), (out.skeleton(), out.motion()), &map, mode);
    Ok((out, error))
}

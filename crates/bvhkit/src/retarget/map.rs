//! The joint map: which source joint drives which target joint.
//!
//! Built automatically ([`JointMap::auto`]): first every canonical bone
//! ([`Bone`]) found in both skeletons, then, among the joints left, those
//! with the same name in both (fingers of rigs that share a naming, or
//! every joint when a clip is retargeted onto its own skeleton). Or given
//! explicitly ([`JointMap::parse`]): a text file of `source = target`
//! lines, the complete map (or the same pairs as names,
//! [`JointMap::from_pairs`]).
//!
//! # The map file
//! ```text
//! # comments start with '#'; blank lines are ignored
//! Hips = pelvis
//! LeftUpLeg = thigh_l
//! mixamorig:LeftArm = upperarm_l   # names may contain ':' and spaces
//! ```
//! One pair per line: the source joint's name, `=`, the target joint's
//! name; spaces around names are trimmed, and a `#` starts a comment. A
//! name must be a joint (not an End Site) of its skeleton; a joint may be
//! named once on each side. Errors give the line number.

use std::collections::HashMap;

use super::names::{Bone, classify};
use crate::error::{Error, Result};
use crate::skeleton::Skeleton;

/// Why two joints were paired.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// Both play this canonical bone.
    Bone(Bone),
    /// Same name, no canonical bone on either side.
    SameName,
    /// Given explicitly: a map file ([`JointMap::parse`]) or name pairs
    /// ([`JointMap::from_pairs`]).
    MapFile,
}

/// One pair of the map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pair {
    /// Source joint index (file order).
    pub source: usize,
    /// Target joint index (file order).
    pub target: usize,
    /// Why.
    pub reason: Reason,
}

/// Source joint → target joint pairs, at most one pair per joint on each
/// side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JointMap {
    pairs: Vec<Pair>,
}

impl JointMap {
    /// The automatic map (see the module documentation).
    pub fn auto(source: &Skeleton, target: &Skeleton) -> JointMap {
        let (bs, bt) = (classify(source), classify(target));
        let mut pairs = Vec::new();
        let mut used_s = vec![false; source.len()];
        let mut used_t = vec![false; target.len()];
        for bone in Bone::all() {
            let s = bs.iter().position(|b| *b == Some(bone));
            let t = bt.iter().position(|b| *b == Some(bone));
            if let (Some(s), Some(t)) = (s, t) {
                pairs.push(Pair { source: s, target: t, reason: Reason::Bone(bone) });
                used_s[s] = true;
                used_t[t] = true;
            }
        }
        let index: HashMap<&str, usize> = target
            .joints()
            .iter()
            .enumerate()
            .filter(|(i, j)| !j.is_end_site() && !used_t[*i] && bt[*i].is_none())
            .map(|(i, j)| (j.name(), i))
            .collect();
        for (s, j) in source.joints().iter().enumerate() {
            if j.is_end_site() || used_s[s] || bs[s].is_some() {
                continue;
            }
            if let Some(&t) = index.get(j.name())
                && !used_t[t]
            {
                pairs.push(Pair { source: s, target: t, reason: Reason::SameName });
                used_t[t] = true;
            }
        }
        pairs.sort_by_key(|p| p.target);
        JointMap { pairs }
    }

    /// Reads a map file's text (see the module documentation).
    ///
    /// # Errors
    /// A line without `=`, an empty name, a name that is not a joint of its
    /// skeleton, or a joint named twice on one side; the message gives the
    /// line number.
    ///
    /// # Example
    /// ```
    /// use bvhkit::Bvh;
    /// use bvhkit::retarget::map::JointMap;
    /// let a = Bvh::parse("HIERARCHY ROOT Hips { OFFSET 0 0 0 CHANNELS 3 Zrotation Xrotation Yrotation End Site { OFFSET 0 1 0 } } MOTION Frames: 0 Frame Time: 0.1")?;
    /// let b = Bvh::parse("HIERARCHY ROOT pelvis { OFFSET 0 0 0 CHANNELS 3 Zrotation Xrotation Yrotation End Site { OFFSET 0 1 0 } } MOTION Frames: 0 Frame Time: 0.1")?;
    /// let map = JointMap::parse("# mine\nHips = pelvis\n", a.skeleton(), b.skeleton())?;
    /// assert_eq!(map.pairs().len(), 1);
    /// assert!(JointMap::parse("Hips = nope", a.skeleton(), b.skeleton()).is_err());
    /// # Ok::<(), bvhkit::Error>(())
    /// ```
    pub fn parse(text: &str, source: &Skeleton, target: &Skeleton) -> Result<JointMap> {
        let lines = text.lines().enumerate().filter_map(|(k, line)| {
            let n = k + 1;
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                return None;
            }
            let Some((a, b)) = line.split_once('=') else {
                return Some(Err(Error::invalid(format!(
                    "map line {n}: expected `source = target`, found {line:?}"
                ))));
            };
            Some(Ok((format!("map line {n}"), a.trim(), b.trim())))
        });
        JointMap::build(lines, source, target)
    }

    /// The complete map from `(source, target)` name pairs (such as a
    /// Python dict's items), checked as a map file's lines are: each name a
    /// joint of its skeleton (not an End Site), named at most once on each
    /// side. Names are taken as they are (not trimmed; `#` and `=` are
    /// plain characters).
    ///
    /// # Errors
    /// An empty name, a name that is not a joint of its skeleton, or a
    /// joint named twice on one side; the message names the pair.
    ///
    /// # Example
    /// ```
    /// use bvhkit::Bvh;
    /// use bvhkit::retarget::map::JointMap;
    /// let a = Bvh::parse("HIERARCHY ROOT Hips { OFFSET 0 0 0 CHANNELS 3 Zrotation Xrotation Yrotation End Site { OFFSET 0 1 0 } } MOTION Frames: 0 Frame Time: 0.1")?;
    /// let b = Bvh::parse("HIERARCHY ROOT pelvis { OFFSET 0 0 0 CHANNELS 3 Zrotation Xrotation Yrotation End Site { OFFSET 0 1 0 } } MOTION Frames: 0 Frame Time: 0.1")?;
    /// let map = JointMap::from_pairs([("Hips", "pelvis")], a.skeleton(), b.skeleton())?;
    /// assert_eq!(map, JointMap::parse("Hips = pelvis", a.skeleton(), b.skeleton())?);
    /// let e = JointMap::from_pairs([("Hips", "nope")], a.skeleton(), b.skeleton()).unwrap_err();
    /// assert_eq!(e.message(), "map pair \"Hips\" = \"nope\": the target skeleton has no joint \"nope\"");
    /// # Ok::<(), bvhkit::Error>(())
    /// ```
    pub fn from_pairs<'a>(
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
        source: &Skeleton,
        target: &Skeleton,
    ) -> Result<JointMap> {
        let pairs = pairs.into_iter().map(|(a, b)| Ok((format!("map pair {a:?} = {b:?}"), a, b)));
        JointMap::build(pairs, source, target)
    }

    /// The map from `(where, source, target)` items, `where` starting each
    /// error's message; the first error in order stops it.
    fn build<'a>(
        items: impl Iterator<Item = Result<(String, &'a str, &'a str)>>,
        source: &Skeleton,
        target: &Skeleton,
    ) -> Result<JointMap> {
        let find = |s: &Skeleton, name: &str| {
            s.joints().iter().position(|j| !j.is_end_site() && j.name() == name)
        };
        let mut pairs = Vec::new();
        let mut used_s = vec![false; source.len()];
        let mut used_t = vec![false; target.len()];
        for item in items {
            let (at, a, b) = item?;
            if a.is_empty() || b.is_empty() {
                return Err(Error::invalid(format!("{at}: a name is empty")));
            }
            let Some(s) = find(source, a) else {
                return Err(Error::invalid(format!(
                    "{at}: the source skeleton has no joint {a:?}"
                )));
            };
            let Some(t) = find(target, b) else {
                return Err(Error::invalid(format!(
                    "{at}: the target skeleton has no joint {b:?}"
                )));
            };
            if used_s[s] {
                return Err(Error::invalid(format!("{at}: source joint {a:?} mapped twice")));
            }
            if used_t[t] {
                return Err(Error::invalid(format!("{at}: target joint {b:?} mapped twice")));
            }
            used_s[s] = true;
            used_t[t] = true;
            pairs.push(Pair { source: s, target: t, reason: Reason::MapFile });
        }
        pairs.sort_by_key(|p| p.target);
        Ok(JointMap { pairs })
    }

    /// The pairs, in target file order.
    pub fn pairs(&self) -> &[Pair] {
        &self.pairs
    }

    /// For each target joint, its source joint.
    pub fn source_of(&self, n_target: usize) -> Vec<Option<usize>> {
        let mut v = vec![None; n_target];
        for p in &self.pairs {
            if p.target < n_target {
                v[p.target] = Some(p.source);
            }
        }
        v
    }
}

//! Shared pieces of the structural transforms: rebuilding a skeleton whose
//! joints come and go.

use glam::DVec3;

use crate::channel::Channel;
use crate::error::Result;
use crate::skeleton::{Joint, JointKind, Skeleton, SkeletonBuilder};

/// One joint of a skeleton being rebuilt.
#[derive(Clone, Debug)]
pub(crate) struct JointSpec {
    pub(crate) name: String,
    pub(crate) kind: JointKind,
    /// Index into the spec list; must precede this joint.
    pub(crate) parent: Option<usize>,
    pub(crate) offset: DVec3,
    pub(crate) channels: Vec<Channel>,
}

impl JointSpec {
    pub(crate) fn of(joint: &Joint) -> JointSpec {
        JointSpec {
            name: joint.name().to_string(),
            kind: joint.kind(),
            parent: joint.parent().map(|p| p.index()),
            offset: joint.offset(),
            channels: joint.channels().to_vec(),
        }
    }
}

/// Builds a skeleton from specs given in file pre-order.
pub(crate) fn build(specs: &[JointSpec]) -> Result<Skeleton> {
    let mut b = SkeletonBuilder::new();
    let mut ids = Vec::with_capacity(specs.len());
    for s in specs {
        let id = match (s.parent, s.kind) {
            (None, _) => b.root(&s.name, s.offset, &s.channels)?,
            (Some(p), JointKind::EndSite) => b.end_site(ids[p], s.offset)?,
            (Some(p), _) => b.joint(ids[p], &s.name, s.offset, &s.channels)?,
        };
        ids.push(id);
    }
    Ok(b.build())
}

/// The largest distance between a joint's world position before and after
/// a per-frame map, over the frames it was shown: forward kinematics of the
/// input and output skeletons with their own reused buffers. `old[j]` is the
/// input joint that output joint `j` was (the identity when they match).
#[derive(Clone, Debug)]
pub(crate) struct WorldError {
    fk: crate::Kinematics,
    fk_new: crate::Kinematics,
    scratch: crate::kinematics::FkScratch,
    scratch_new: crate::kinematics::FkScratch,
    positions: Vec<DVec3>,
    positions_new: Vec<DVec3>,
    old: Vec<usize>,
    /// The largest distance so far.
    pub(crate) max: f64,
}

impl WorldError {
    /// For frames of `input` mapped to frames of `output`.
    pub(crate) fn new(
        input: &Skeleton,
        output: &Skeleton,
        mode: crate::PositionChannels,
        old: Vec<usize>,
    ) -> WorldError {
        let fk = crate::Kinematics::new(input, mode);
        let fk_new = crate::Kinematics::new(output, mode);
        WorldError {
            scratch: fk.scratch(),
            scratch_new: fk_new.scratch(),
            positions: vec![DVec3::ZERO; input.len()],
            positions_new: vec![DVec3::ZERO; output.len()],
            old,
            fk,
            fk_new,
            max: 0.0,
        }
    }

    /// Measures one input frame `src` against its output frame `dst`.
    pub(crate) fn measure(&mut self, src: &[f64], dst: &[f64]) {
        self.fk.positions_with(src, &mut self.scratch, &mut self.positions);
        self.fk_new.positions_with(dst, &mut self.scratch_new, &mut self.positions_new);
        for (j, &o) in self.old.iter().enumerate() {
            self.max = self.max.max((self.positions_new[j] - self.positions[o]).length());
        }
    }
}

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

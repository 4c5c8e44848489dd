//! Shared pieces of the structural transforms: rebuilding a skeleton whose
//! joints come and go, and measuring how far world positions moved.

use glam::DVec3;

use crate::channel::Channel;
use crate::error::Result;
use crate::kinematics::{Kinematics, PositionChannels};
use crate::motion::Motion;
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

/// The largest distance, over all frames, between the world position of
/// every joint of `new` and the joint `map[j]` of `old` (`None`: not
/// compared). Both motions must have the same number of frames.
pub(crate) fn max_position_error(
    old: (&Skeleton, &Motion),
    new: (&Skeleton, &Motion),
    map: &[Option<usize>],
    mode: PositionChannels,
) -> f64 {
    let fk_old = Kinematics::new(old.0, mode);
    let fk_new = Kinematics::new(new.0, mode);
    let (mut so, mut sn) = (fk_old.scratch(), fk_new.scratch());
    let mut po = vec![DVec3::ZERO; old.0.len()];
    let mut pn = vec![DVec3::ZERO; new.0.len()];
    let mut worst: f64 = 0.0;
    for f in 0..new.1.n_frames() {
        fk_old.positions_with(old.1.frame(f), &mut so, &mut po);
        fk_new.positions_with(new.1.frame(f), &mut sn, &mut pn);
        for (j, m) in map.iter().enumerate() {
            if let Some(o) = m {
                worst = worst.max((pn[j] - po[*o]).length());
            }
        }
    }
    worst
}

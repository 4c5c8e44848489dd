//! `--portable`, shared by the commands that write BVH: the core's
//! [`bvhkit::edit::portable`] and the note saying what it changed; and the
//! skeleton of a take written as it is recorded ([`streamed`]).

use anyhow::{Result, anyhow};
use bvhkit::edit::FrameMap;
use bvhkit::edit::portable::{Observer, PortableReport, Scope};
use bvhkit::{Bvh, PositionChannels, Skeleton};

/// `bvh` rewritten so that every reader reads its position channels alike
/// (position channels read as `mode` says), with a note naming `what` (the
/// input or output) when anything changed.
pub(crate) fn apply(
    bvh: &Bvh,
    mode: PositionChannels,
    what: &str,
    notes: &mut Vec<String>,
) -> Result<Bvh> {
    let (out, report) =
        bvhkit::edit::portable::portable(bvh, mode, bvhkit::edit::portable::Scope::Full)
            .map_err(|e| anyhow!("{what}: --portable: {e}"))?;
    note(bvh.skeleton(), &report, what, notes);
    Ok(out)
}

/// The note of what `--portable` changed in a clip of `skeleton` (none when
/// nothing changed).
pub(crate) fn note(
    skeleton: &Skeleton,
    report: &PortableReport,
    what: &str,
    notes: &mut Vec<String>,
) {
    if let Some(said) = report.describe(skeleton) {
        notes.push(format!("{what}: {said}"));
    }
}

/// The skeleton `record --portable` writes its take with: which position
/// channels stay constant is known only at the end of a recording, and its
/// frames are written as they arrive, so every position channel is kept and
/// the `OFFSET` component it names set to 0. This is the core's rule for a
/// clip in which every channel varies (planned from two frames that differ
/// in every channel), with position channels read as replacing the
/// `OFFSET`, as a take's are: every frame's values are written unchanged.
/// A note naming `what` (the output) says what changed.
pub(crate) fn streamed(
    skeleton: &Skeleton,
    what: &str,
    notes: &mut Vec<String>,
) -> Result<Skeleton> {
    let n = skeleton.n_channels();
    let mut obs = Observer::new(skeleton, PositionChannels::Replace);
    obs.observe(&vec![0.0; n]);
    obs.observe(&vec![1.0; n]);
    let (map, report) = obs.plan(Scope::Full).map_err(|e| anyhow!("{what}: --portable: {e}"))?;
    let out = map.output_skeleton().clone();
    // Every channel kept, in its place: the frames need no map.
    let same_channels = out.n_channels() == n
        && out.joints().iter().zip(skeleton.joints()).all(|(a, b)| a.channels() == b.channels());
    if !same_channels {
        return Err(anyhow!("{what}: --portable: internal: a channel of the take was dropped"));
    }
    let zeroed = report.zeroed.iter().filter(|z| z.1 > 0).count();
    if zeroed > 0 {
        notes.push(format!(
            "{what}: --portable: OFFSET zeroed under the position channels of {zeroed} joint{} \
             (a take is written as it is recorded, so its position channels are all kept: \
             `bvh fmt --portable` of the take drops those that stayed constant)",
            if zeroed == 1 { "" } else { "s" }
        ));
    }
    Ok(out)
}

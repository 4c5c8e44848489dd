//! `--portable`, shared by the commands that write BVH: the core's
//! [`bvhkit::edit::portable`] and the note saying what it changed.

use anyhow::{Result, anyhow};
use bvhkit::edit::portable::PortableReport;
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

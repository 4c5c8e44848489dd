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
    if !report.is_empty() {
        let names = skeleton.display_names();
        let zeroed: Vec<&str> =
            report.zeroed.iter().filter(|z| z.1 > 0).map(|z| names[z.0.index()].as_str()).collect();
        let mut shown = zeroed.iter().take(8).copied().collect::<Vec<_>>().join(", ");
        if zeroed.len() > 8 {
            shown.push_str(&format!(" and {} more", zeroed.len() - 8));
        }
        notes.push(format!(
            "{what}: --portable: {} constant position channels that repeat the OFFSET dropped, {} \
             constant ones folded into the OFFSET, OFFSET zeroed under the varying position \
             channels of {} joints{}",
            report.dropped,
            report.folded,
            zeroed.len(),
            if zeroed.is_empty() { String::new() } else { format!(" ({shown})") }
        ));
    }
}

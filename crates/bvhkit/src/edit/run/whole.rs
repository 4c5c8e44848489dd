//! An edit on the whole clip: each step applied to the `Bvh` in turn (the
//! core's whole-clip functions, or its per-frame maps over every frame),
//! then `portable`. The path of the steps that need the whole clip
//! (reverse, resample, height), of inputs that cannot be read twice when a
//! step must look at frames first, and of every stream that gave up: its
//! errors name their frame.

use crate::bvh::Bvh;
use crate::edit::axes::{Axes, AxesMap, SignedAxis, detect_up};
use crate::edit::scale::{ScaleMap, factor_to_height};
use crate::edit::{frames, joints, map_frames, map_frames_chunked, resample, rest, root};
use crate::units::UnitGuess;

use super::{
    Edit, EditError, Note, RestSource, Step, detected_up, frame_map, layout_refusal, lossy_note,
    mirror_of, renamed, root_up, stage_note, units_factor,
};

/// `edit`'s steps (and `portable`) on the whole clip `bvh`.
pub(super) fn run<E>(
    edit: &Edit,
    mut bvh: Bvh,
    notes: &mut Vec<Note>,
) -> Result<Bvh, EditError<E>> {
    let settings = &edit.settings;
    let mode = settings.position_channels;
    let input = |m: String| EditError::Input(m);
    for step in &edit.steps {
        if let Some(edited) = root_and_joints(edit, step, &bvh, notes)? {
            bvh = edited;
            continue;
        }
        bvh = match *step {
            Step::Frames(r) => {
                let n = bvh.motion().n_frames();
                if let Some(note) = r.check(n).map_err(input)? {
                    notes.push(Note::Said(note));
                }
                let start = (0..n).find(|&i| r.contains(i)).unwrap_or(n);
                let end = (start..n).find(|&i| !r.contains(i)).unwrap_or(n);
                frames::range(&bvh, start..end)?
            }
            Step::Every(n) => frames::every(&bvh, n)?,
            Step::Reverse => frames::reverse(&bvh)?,
            Step::Fps(f) => resample::to_fps(&bvh, f)
                .map_err(|e| input(format!("--fps {}: {}", crate::error::num(f), e.message())))?,
            Step::Height(h) => {
                let f = factor_to_height(&bvh, h).map_err(|e| input(e.to_string()))?;
                map_frames(&bvh, &mut ScaleMap::new(bvh.skeleton(), f)?)?
            }
            Step::Units(u) => {
                let guess = || Ok(UnitGuess::of_bvh(&bvh, mode));
                let f = units_factor(settings, guess, u, notes)?;
                map_frames(&bvh, &mut ScaleMap::new(bvh.skeleton(), f)?)?
            }
            Step::Up(to) => {
                let from = source_up(edit, &bvh, notes)?;
                map_frames(
                    &bvh,
                    &mut AxesMap::new(bvh.skeleton(), Axes::with_up(from), Axes::with_up(to)),
                )?
            }
            _ => {
                let map = frame_map(settings, step, bvh.skeleton())?;
                let (edited, map) = map_frames_chunked(&bvh, map)?;
                layout_refusal(settings, &map)?;
                notes.extend(stage_note(&map).map(Note::Said));
                edited
            }
        };
    }
    if settings.portable {
        let (out, report) =
            crate::edit::portable::portable(&bvh, mode, crate::edit::portable::Scope::Full)
                .map_err(|e| input(format!("--portable: {e}")))?;
        notes.extend(report.describe(bvh.skeleton()).map(Note::Said));
        bvh = out;
    }
    Ok(bvh)
}

/// The up axis for root motion: the source up axis, else detected, else Y
/// (said).
fn up_for_root(edit: &Edit, bvh: &Bvh, notes: &mut Vec<Note>) -> SignedAxis {
    if let Some(a) = edit.settings.source_up {
        return a;
    }
    root_up(detect_up(bvh), notes)
}

/// The mirror, root motion, names, joints and rest pose; `None` for the
/// other steps.
fn root_and_joints<E>(
    edit: &Edit,
    step: &Step,
    bvh: &Bvh,
    notes: &mut Vec<Note>,
) -> Result<Option<Bvh>, EditError<E>> {
    let mode = edit.settings.position_channels;
    let at = |e: crate::Error| EditError::Input(e.to_string());
    Ok(Some(match step {
        Step::Mirror => mirror_of(bvh, notes)?.apply(bvh).map_err(at)?,
        Step::InPlaceRoot => {
            let up = up_for_root(edit, bvh, notes);
            root::in_place(bvh, up).map_err(at)?
        }
        Step::RootToOrigin => {
            let up = up_for_root(edit, bvh, notes);
            root::to_origin(bvh, up).map_err(at)?
        }
        Step::ExtractRoot(name) => {
            let up = up_for_root(edit, bvh, notes);
            root::extract(bvh, up, name).map_err(at)?
        }
        Step::Rename(how) => Bvh::new(renamed(how, bvh.skeleton())?, bvh.motion().clone())?,
        Step::RemoveJoints(list) => {
            let names: Vec<&str> = list.iter().map(String::as_str).collect();
            let (out, error) = joints::remove_joints(bvh, &names, mode).map_err(at)?;
            notes.extend(lossy_note("--remove-joints", error, bvh.skeleton()).map(Note::Said));
            out
        }
        Step::StripEndSites => joints::strip_end_sites(bvh).map_err(at)?,
        Step::AddEndSites => joints::add_end_sites(bvh).map_err(at)?,
        Step::RestPose(source) => {
            let (out, error) = match source {
                RestSource::Frame(frame) => rest::from_frame(bvh, *frame, mode).map_err(at)?,
                RestSource::Skeleton(other) => rest::from_skeleton(bvh, other, mode).map_err(at)?,
            };
            notes.extend(lossy_note("--rest-pose", error, bvh.skeleton()).map(Note::Said));
            out
        }
        _ => return Ok(None),
    }))
}

fn source_up<E>(edit: &Edit, bvh: &Bvh, notes: &mut Vec<Note>) -> Result<SignedAxis, EditError<E>> {
    if let Some(a) = edit.settings.source_up {
        return Ok(a);
    }
    detected_up(detect_up(bvh), notes)
}

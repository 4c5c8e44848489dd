//! From BVH files to the renderer's and players' [`Clip`]s.
//!
//! # Implementation notes
//!
//! `Bvh` → `Clip`, and the one `--up` rule of the drawing commands and exports
//! (`clip::Up`, `upright`, `source_up`, `to_y_up`: `edit::axes::detect_up`,
//! then the `AxesMap` of `bvh edit --up y`; drawings default to `auto`, exports
//! to `keep`); `bvh view` gets it through `ViewOptions::prepare`, applied by
//! the player to every file it opens.

use std::path::Path;

use std::process::ExitCode;

use anyhow::{Result, bail};
use bvhkit::edit::axes::{Axes, AxesMap, SignedAxis, UpAxis, detect_up};
use bvhkit::edit::map_frames;
use bvhkit::{Bvh, PositionChannels, Skeleton};
use bvhkit_render::Clip;
use bvhkit_render::units::{UnitGuess, of_clip};

use crate::io::{Input, load};

/// `--up`: how a file's up axis is taken before it is drawn or exported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Up {
    /// Detect it ([`detect_up`]); convert to Y up when it is found and not +Y.
    Auto,
    /// The file's own axes, untouched.
    Keep,
    /// The file's up axis, given: convert from it to Y up (none for `y`).
    From(SignedAxis),
}

/// Parses `--up`: `auto`, `keep` or an axis (`x`, `y`, `z`, `-x`, `-y`, `-z`).
pub(crate) fn parse_up(s: &str) -> Result<Up, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "auto" => Ok(Up::Auto),
        "keep" => Ok(Up::Keep),
        _ => SignedAxis::from_name(s)
            .map(Up::From)
            .ok_or_else(|| format!("'{s}' is not auto, keep or an axis (x, y, z, -x, -y, -z)")),
    }
}

/// The up axis to convert from under `up`: `None` when nothing is to be
/// converted (`keep`, Y up, or `auto` without a detected axis); with the
/// note to print when the axis was detected (`what` names the input).
pub(crate) fn source_up(bvh: &Bvh, up: Up, what: &str) -> (Option<SignedAxis>, Option<String>) {
    match up {
        Up::Auto => detected_source_up(detect_up(bvh), what),
        _ => (source_up_given(up), None),
    }
}

/// [`source_up`] under `auto` of an axis detected (the note says so).
pub(crate) fn detected_source_up(
    found: UpAxis,
    what: &str,
) -> (Option<SignedAxis>, Option<String>) {
    match found.axis {
        Some(a) if a != SignedAxis::PosY => {
            let note = format!(
                "bvh: note: {what}: detected up axis {found}; converted to Y up \
                 (--up keep keeps the file's axes, --up AXIS names its up axis)"
            );
            (Some(a), Some(note))
        }
        _ => (None, None),
    }
}

pub(crate) use bvhkit::edit::run::detect_up_in_one_pass;
pub(crate) use bvhkit::edit::run::sample::frame_count;

/// [`source_up`] without a file: the axis given (`None` for `keep`, `y`
/// and `auto`, which needs the file).
pub(crate) fn source_up_given(up: Up) -> Option<SignedAxis> {
    match up {
        Up::From(a) if a != SignedAxis::PosY => Some(a),
        _ => None,
    }
}

/// The conversion from up axis `from` to Y up: the one `bvh edit --up y
/// --source-up FROM` applies ([`AxesMap`]; a [`bvhkit::edit::FrameMap`],
/// so it streams).
pub(crate) fn to_y_up(skeleton: &Skeleton, from: SignedAxis) -> AxesMap {
    AxesMap::new(skeleton, Axes::with_up(from), Axes::with_up(SignedAxis::PosY))
}

/// `bvh` brought to Y up under `up` ([`source_up`], [`to_y_up`]), and the
/// note to print when its up axis was detected.
pub(crate) fn upright(bvh: Bvh, up: Up, what: &str) -> Result<(Bvh, Option<String>)> {
    let (from, note) = source_up(&bvh, up, what);
    match from {
        Some(a) => Ok((map_frames(&bvh, &mut to_y_up(bvh.skeleton(), a))?, note)),
        None => Ok((bvh, note)),
    }
}

/// The clips that could be loaded, and how many inputs were skipped.
#[derive(Debug)]
pub(crate) struct Loaded {
    /// One clip per input that could be read and parsed, in input order.
    pub(crate) clips: Vec<Clip>,
    /// Inputs that could not be read or parsed (each reported on stderr).
    pub(crate) skipped: usize,
}

impl Loaded {
    /// The exit code for a command that drew or served [`Loaded::clips`]:
    /// 0, or 2 when some input was skipped (an input that could not be read
    /// is 2 for every command; 1 means findings, of `check` and `lint`).
    pub(crate) fn exit_code(&self) -> ExitCode {
        if self.skipped > 0 { ExitCode::from(2) } else { ExitCode::SUCCESS }
    }
}

/// Loads inputs (leniently, printing warnings) as clips named by file stem.
///
/// An input that cannot be read or parsed is reported (`bvh: error: ...;
/// skipped`) and skipped, so one bad file in a directory does not stop the
/// others; it is an error only when nothing at all could be loaded. A file
/// without motion is drawn in its rest pose ([`Clip::from_bvh`]), with a
/// note.
///
/// Several files are brought to one scale (metres, from each file's
/// guessed unit: [`bvhkit_render::units::of_clip`]) so that they can stand
/// side by side; a note says so when their units differ. A single file
/// keeps its own units.
///
/// Each file is first brought to Y up under `up` ([`upright`]; `--up`,
/// [`Up::Auto`] by default), with a note when its up axis was detected.
pub(crate) fn load_clips(inputs: &[Input], mode: PositionChannels, up: Up) -> Result<Loaded> {
    let mut clips = Vec::new();
    let mut skipped = 0;
    for input in inputs {
        let (bvh, warnings) = match load(input, false) {
            Ok(loaded) => loaded,
            Err(e) => {
                eprintln!("bvh: error: {}; skipped", e.describe(input));
                skipped += 1;
                continue;
            }
        };
        crate::io::print_warnings(input, &warnings);
        let name = match input {
            Input::Stdin => "stdin".to_string(),
            Input::File(p) => Path::new(p)
                .file_stem()
                .map_or_else(|| p.display().to_string(), |s| s.to_string_lossy().into_owned()),
        };
        if bvh.motion().n_frames() == 0 {
            eprintln!("bvh: note: {}: no motion frames; drawing the rest pose", input.display());
        }
        let (bvh, note) = upright(bvh, up, &input.display().to_string())?;
        if let Some(note) = note {
            eprintln!("{}", crate::text::escape(&note));
        }
        clips.push(Clip::from_bvh(&bvh, &name, mode));
    }
    if clips.is_empty() && skipped > 0 {
        bail!("nothing to draw: {skipped} input(s) skipped, none could be loaded");
    }
    if clips.len() > 1 {
        let guesses: Vec<UnitGuess> = clips.iter().map(of_clip).collect();
        let factors: Vec<f64> = guesses.iter().map(UnitGuess::metres_per_unit).collect();
        if factors.iter().any(|f| *f != factors[0]) {
            let described: Vec<String> = clips
                .iter()
                .zip(&guesses)
                .map(|(c, g)| format!("{}: {}", c.name, g.label()))
                .collect();
            eprintln!(
                "bvh: note: drawn at one scale, in metres ({})",
                crate::text::escape(&described.join("; "))
            );
        }
        clips = clips.into_iter().zip(factors).map(|(c, f)| c.scaled(f)).collect();
    }
    Ok(Loaded { clips, skipped })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stick figure 1.85 m tall, with lengths multiplied by `unit`
    /// (100 for centimetres, 1 for metres).
    fn stick(unit: f64) -> String {
        let u = |v: f64| v * unit;
        format!(
            "HIERARCHY\nROOT Hips\n{{\n\tOFFSET 0 {} 0\n\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n\tJOINT Chest\n\t{{\n\t\tOFFSET 0 {} 0\n\t\tCHANNELS 3 Zrotation Xrotation Yrotation\n\t\tEnd Site\n\t\t{{\n\t\t\tOFFSET 0 {} 0\n\t\t}}\n\t}}\n\tJOINT Leg\n\t{{\n\t\tOFFSET {} 0 0\n\t\tCHANNELS 3 Zrotation Xrotation Yrotation\n\t\tEnd Site\n\t\t{{\n\t\t\tOFFSET 0 {} 0\n\t\t}}\n\t}}\n}}\nMOTION\nFrames: 2\nFrame Time: 0.04\n0 {} 0 0 0 0 0 0 0 0 0 0\n{} {} 0 0 0 0 10 0 0 20 0 0\n",
            u(0.9),
            u(0.8),
            u(0.15),
            u(0.1),
            u(-0.85),
            u(0.9),
            u(0.2),
            u(0.92),
        )
    }

    #[test]
    fn several_files_share_one_scale_and_one_file_keeps_its_units() {
        let dir = tempfile::tempdir().unwrap();
        let (cm, m) = (dir.path().join("cm.bvh"), dir.path().join("m.bvh"));
        std::fs::write(&cm, stick(100.0)).unwrap();
        std::fs::write(&m, stick(1.0)).unwrap();
        let inputs = [Input::File(cm.clone()), Input::File(m)];
        let clips = load_clips(&inputs, PositionChannels::Replace, Up::Auto).unwrap().clips;
        assert_eq!(clips[0].positions.len(), clips[1].positions.len());
        for (a, b) in clips[0].positions.iter().zip(&clips[1].positions) {
            assert!((*a - *b).length() < 1e-12, "{a} vs {b}");
        }
        // In metres: the hips of the second frame are 0.92 m up.
        assert!((clips[0].frame(1)[0].y - 0.92).abs() < 1e-12);
        let alone =
            load_clips(&[Input::File(cm)], PositionChannels::Replace, Up::Auto).unwrap().clips;
        assert!((alone[0].frame(1)[0].y - 92.0).abs() < 1e-12, "one file keeps centimetres");
    }
}

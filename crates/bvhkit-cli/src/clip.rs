//! From BVH files to the renderer's and players' [`Clip`]s.

use std::path::Path;

use anyhow::Result;
use bvhkit::PositionChannels;
use bvhkit_render::Clip;
use bvhkit_render::units::UnitGuess;

use crate::io::{Input, load};

/// Loads inputs (leniently, printing warnings) as clips named by file stem.
///
/// Several files are brought to one scale (metres, from each file's
/// guessed unit) so that they can stand side by side; a note says so when
/// their units differ. A single file keeps its own units.
pub(crate) fn load_clips(inputs: &[Input], mode: PositionChannels) -> Result<Vec<Clip>> {
    let mut clips = Vec::new();
    let mut guesses = Vec::new();
    for input in inputs {
        let (bvh, warnings) = load(input, false).map_err(|e| anyhow::anyhow!(e.describe(input)))?;
        for w in &warnings {
            eprintln!("{}", crate::text::escape(&crate::io::located_warning(input, w)));
        }
        let name = match input {
            Input::Stdin => "stdin".to_string(),
            Input::File(p) => Path::new(p)
                .file_stem()
                .map_or_else(|| p.display().to_string(), |s| s.to_string_lossy().into_owned()),
        };
        clips.push(Clip::from_bvh(&bvh, &name, mode));
        guesses.push(UnitGuess::of_bvh(&bvh, mode));
    }
    if clips.len() > 1 {
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
    Ok(clips)
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
        let clips = load_clips(&inputs, PositionChannels::Replace).unwrap();
        assert_eq!(clips[0].positions.len(), clips[1].positions.len());
        for (a, b) in clips[0].positions.iter().zip(&clips[1].positions) {
            assert!((*a - *b).length() < 1e-12, "{a} vs {b}");
        }
        // In metres: the hips of the second frame are 0.92 m up.
        assert!((clips[0].frame(1)[0].y - 0.92).abs() < 1e-12);
        let alone = load_clips(&[Input::File(cm)], PositionChannels::Replace).unwrap();
        assert!((alone[0].frame(1)[0].y - 92.0).abs() < 1e-12, "one file keeps centimetres");
    }
}

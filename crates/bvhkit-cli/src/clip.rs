//! From BVH files to the renderer's and players' [`Clip`]s.

use std::path::Path;

use anyhow::Result;
use bvhkit::{Bvh, Kinematics, PositionChannels};
use bvhkit_render::Clip;

use crate::io::{Input, load};

/// World positions of every joint over the whole motion, with names.
pub(crate) fn clip_of(bvh: &Bvh, name: &str, mode: PositionChannels) -> Clip {
    let s = bvh.skeleton();
    let fk = Kinematics::new(s, mode);
    Clip {
        name: name.to_string(),
        joint_names: s.display_names(),
        parents: s.joints().iter().map(|j| j.parent().map(|p| p.index())).collect(),
        is_end_site: s.joints().iter().map(|j| j.is_end_site()).collect(),
        frame_time: bvh.motion().frame_time(),
        n_frames: bvh.motion().n_frames(),
        positions: fk.positions_all(bvh.motion()),
    }
}

/// Loads inputs (leniently, printing warnings) as clips named by file stem.
pub(crate) fn load_clips(inputs: &[Input], mode: PositionChannels) -> Result<Vec<Clip>> {
    let mut clips = Vec::new();
    for input in inputs {
        let (bvh, warnings) = load(input, false).map_err(|e| anyhow::anyhow!(e.describe(input)))?;
        for w in &warnings {
            eprintln!("{}", crate::io::located_warning(input, w));
        }
        let name = match input {
            Input::Stdin => "stdin".to_string(),
            Input::File(p) => Path::new(p)
                .file_stem()
                .map_or_else(|| p.display().to_string(), |s| s.to_string_lossy().into_owned()),
        };
        clips.push(clip_of(&bvh, &name, mode));
    }
    Ok(clips)
}

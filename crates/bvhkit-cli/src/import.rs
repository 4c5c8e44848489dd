//! `bvh import`: an FBX file back to BVH (`bvhkit-fbx`, read by `ufbx`).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use bvhkit::{Precision, WriteOptions};
use bvhkit_fbx::{ImportOptions, import};

use crate::io::{Input, refuse_overwriting_input, write_atomic};

/// The long help of `bvh import` (`bvh import --help`).
pub(crate) const LONG_ABOUT: &str = "\
Read an FBX file (binary or ASCII, read by ufbx) and write its skeleton and animation as BVH.

The skeleton is the FBX file's LimbNodes (every node when it has none), from \
the topmost down; each joint's OFFSET is its Lcl Translation, its rotation \
channels follow its FBX rotation order, and a joint gets position channels \
when its translation is animated. Leaf bones marked by `bvh export` (or \
unanimated leaves named ...End) become End Sites. The frames are the \
animation's keys when they are evenly spaced (the frame time of a `bvh \
export` comes back as it was), else samples at the file's frame rate \
(--fps sets one). Curves are read as they are; a joint with pivots, pre- or \
post-rotations or scaling gets its rotation baked from its evaluated \
transform, and says so. The numbers are the file's own (its unit is \
printed, never applied): a value of a 32-bit curve is written as the \
shortest decimal that reads back to that float (a `bvh export` of a file \
with up to seven significant digits gives back its digits), other values \
as the shortest that reads back to the same 64-bit number. See docs/fbx.md.

Example: bvh import walk.fbx -o walk.bvh";

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The FBX file; `-` reads standard input.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// The BVH file to write (`-`: standard output).
    #[arg(short, long, value_name = "OUT", required = true)]
    output: PathBuf,
    /// Sample the animation at this many frames per second instead of at its keys (above 0, at
    /// most 1000).
    #[arg(long, value_name = "FPS", value_parser = crate::range::parse_fps)]
    fps: Option<f64>,
    /// The animation stack to read (default: the first).
    #[arg(long, value_name = "NAME")]
    stack: Option<String>,
    /// Write motion values with this many decimals (default: the shortest decimal of each 32-bit float).
    #[arg(long, value_name = "N")]
    precision: Option<u8>,
    /// Write position channels every reader reads the same way: constant ones below a root
    /// folded into the OFFSET, the OFFSET zeroed under varying ones (docs/format.md).
    #[arg(long)]
    portable: bool,
}

pub(crate) fn run(a: Args) -> Result<ExitCode> {
    let input = if a.file.as_os_str() == "-" { Input::Stdin } else { Input::File(a.file.clone()) };
    refuse_overwriting_input(&a.output, std::slice::from_ref(&input))?;
    crate::io::refuse_unplaceable_output(&a.output)?;
    let bytes = input.read_any()?;
    let options = ImportOptions { fps: a.fps, stack: a.stack.clone() };
    let mut got = import(&bytes, &options).with_context(|| input.display())?;
    if a.portable {
        let mode = bvhkit::PositionChannels::Replace;
        got.bvh = crate::portable::apply(&got.bvh, mode, &input.display(), &mut got.notes)?;
    }
    let mut opts = WriteOptions::new();
    opts.precision(a.precision.map_or(Precision::ShortestF32, Precision::Fixed));
    write_atomic(&a.output, |w| opts.write(&got.bvh, w).map_err(anyhow::Error::from))
        .with_context(|| format!("{}: writing {}", input.display(), a.output.display()))?;
    for note in &got.notes {
        eprintln!("{}: {}", input.display(), crate::text::escape(note));
    }
    eprintln!(
        "{} → {}: {} joints, {} frames at {} s; the file states {} m per unit",
        input.display(),
        a.output.display(),
        got.bvh.skeleton().len(),
        got.bvh.motion().n_frames(),
        got.bvh.motion().frame_time(),
        got.metres_per_unit
    );
    Ok(ExitCode::SUCCESS)
}

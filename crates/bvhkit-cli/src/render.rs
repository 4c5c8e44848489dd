//! `bvh render`: PNG, GIF, contact sheets and MP4 (through ffmpeg).
//!
//! A still (`--frame N`) is framed on the figures in that frame (a clip
//! shorter than that is drawn at its last frame, with a note); animations
//! and contact sheets frame the whole motion, a contact sheet over
//! `--frames` only those frames. Inputs that cannot be loaded
//! are reported and skipped (exit code 2, as for any input a command cannot read).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use bvhkit_render::Rgba;
use bvhkit_render::raster::{self, AnimationOptions, RenderOptions, SheetOptions};

use crate::PosMode;
use crate::clip::load_clips;
use crate::io::{expand, write_atomic};
use crate::range::FrameRange;

/// The long help of `bvh render` (`bvh render --help`).
pub(crate) const LONG_ABOUT: &str = "\
Draw files to PNG, GIF, a contact sheet or MP4.

The output's extension picks what is drawn: .png one frame (--frame) or, \
with --contact-sheet, a grid of evenly spaced frames (of the first file, or of its --frames, framed close; several files stand side by side in every cell); .gif an animation of \
--frames at --fps (default: the file's rate, at most 50); .mp4 the same \
through ffmpeg (at most 60 fps). Several files stand side by side at one \
scale. The camera orbits the figures: --azimuth -360 to 360 degrees about \
the vertical axis, --elevation -89 to 89 degrees above the ground; --fps \
is above 0 and at most 1000. A file whose detected up axis is not Y is \
drawn upright, with a note (--up keep draws its own axes, --up AXIS names \
them). Values out of range, and options the output does not use (--frame \
with an animation, --frames with a still, --fps with a .png, --cells or \
--columns without --contact-sheet), are refused before any file is read, \
and the output may not be one of the inputs.

Example: bvh render walk.bvh -o walk.gif --frames 0..120 --azimuth -40 --size 480x360";

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Files to draw, side by side in one picture; directories are walked for *.bvh.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Output: .png (one frame or a contact sheet), .gif (animation) or .mp4 (needs ffmpeg on PATH).
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,
    /// Frame to draw into a PNG (0-based; default: the first).
    #[arg(long, value_name = "N", conflicts_with = "contact_sheet", allow_hyphen_values = true,
          value_parser = crate::range::parse_frame)]
    frame: Option<usize>,
    /// Frames to animate into a GIF or MP4, or to space a contact sheet's
    /// cells over, framed close (`A..B`, `A..=B`, `A..`, `..B`; default: all).
    #[arg(long, value_name = "RANGE")]
    frames: Option<FrameRange>,
    /// Animation frame rate (default: the file's, capped at 50 for GIF and 60 for MP4).
    #[arg(long, value_name = "FPS", allow_hyphen_values = true, value_parser = crate::range::parse_fps)]
    fps: Option<f64>,
    /// A grid of evenly spaced frames in one PNG.
    #[arg(long)]
    contact_sheet: bool,
    /// Cells of the contact sheet (at least 1).
    #[arg(long, value_name = "N", default_value_t = 12, requires = "contact_sheet",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    cells: usize,
    /// Columns of the contact sheet (at least 1; default: about square).
    #[arg(long, value_name = "N", requires = "contact_sheet",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    columns: Option<usize>,
    /// Picture (or contact-sheet cell) size in pixels, WIDTHxHEIGHT.
    #[arg(long, value_name = "WxH", default_value = "640x480", value_parser = parse_size)]
    size: (u32, u32),
    /// Camera azimuth in degrees about the vertical axis (0 looks from +Z), -360 to 360.
    #[arg(long, default_value_t = 35.0, allow_hyphen_values = true, value_parser = crate::range::parse_azimuth)]
    azimuth: f64,
    /// Camera elevation in degrees above the ground, -89 to 89.
    #[arg(long, default_value_t = 20.0, allow_hyphen_values = true, value_parser = crate::range::parse_elevation)]
    elevation: f64,
    /// Background colour, #RRGGBB.
    #[arg(long, value_name = "#RRGGBB", value_parser = parse_color)]
    background: Option<Rgba>,
    /// Leave out the file names over the figures and a still's frame number.
    #[arg(long)]
    no_labels: bool,
    /// How position channels combine with OFFSET.
    #[arg(long, value_enum, default_value = "replace")]
    position_channels: PosMode,
    /// The files' up axis: auto (detected; a file not Y up is drawn upright, with a note), keep (the file's own axes), or x, y, z, -x, -y, -z (convert from it to Y up).
    #[arg(long, value_name = "AXIS", default_value = "auto", allow_hyphen_values = true, value_parser = crate::clip::parse_up)]
    up: crate::clip::Up,
}

fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = s.split_once(['x', 'X']).ok_or("expected WIDTHxHEIGHT, like 640x480")?;
    match (w.parse::<u32>(), h.parse::<u32>()) {
        (Ok(w), Ok(h)) if w > 0 && h > 0 && w <= 16384 && h <= 16384 => Ok((w, h)),
        _ => Err(format!("'{s}' is not a size from 1x1 to 16384x16384")),
    }
}

fn parse_color(s: &str) -> Result<Rgba, String> {
    let hex = s.trim_start_matches('#');
    if hex.len() != 6 {
        return Err(format!("'{s}' is not a #RRGGBB colour"));
    }
    let v = u32::from_str_radix(hex, 16).map_err(|_| format!("'{s}' is not a #RRGGBB colour"))?;
    Ok(Rgba::rgb((v >> 16) as u8, (v >> 8) as u8, v as u8))
}

pub(crate) fn run(args: Args) -> Result<ExitCode> {
    let ext = args
        .output
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if !matches!(ext.as_str(), "png" | "gif" | "mp4") {
        bail!("{}: the output must end in .png, .gif or .mp4", args.output.display());
    }
    if args.contact_sheet && ext != "png" {
        bail!("--contact-sheet writes a .png");
    }
    // An option the output does not use is refused, not ignored.
    let still = ext == "png" && !args.contact_sheet;
    if ext != "png" && args.frame.is_some() {
        bail!("--frame N draws one frame into a .png; a .{ext} animates --frames A..B");
    }
    if still && args.frames.is_some() {
        bail!(
            "--frames animates a .gif or .mp4 or spaces a --contact-sheet's cells; \
             a still .png draws one --frame N"
        );
    }
    if ext == "png" && args.fps.is_some() {
        bail!("--fps is the frame rate of a .gif or .mp4; a .png has none");
    }
    let inputs = expand(&args.files)?;
    crate::io::refuse_overwriting_input(&args.output, &inputs)?;
    crate::io::refuse_unplaceable_output(&args.output)?;
    let loaded = load_clips(&inputs, args.position_channels.into(), args.up)?;
    let clips = &loaded.clips;
    let refs: Vec<&bvhkit_render::Clip> = clips.iter().collect();
    let mut opts = RenderOptions {
        width: args.size.0,
        height: args.size.1,
        labels: !args.no_labels,
        ..RenderOptions::default()
    };
    opts.azimuth = args.azimuth;
    opts.elevation = args.elevation;
    if let Some(bg) = args.background {
        opts.background = bg;
    }
    let longest = clips.iter().map(|c| c.n_frames).max().unwrap_or(0);
    let frames = args.frames.map(|r| r.resolve(longest)).transpose()?;
    let anim = AnimationOptions { frames: frames.clone(), fps: args.fps };
    // The most a GIF's centisecond delays and the MP4 encoder take: a
    // higher --fps was lowered without a word.
    let most = if ext == "gif" { raster::GIF_MAX_FPS } else { raster::MP4_MAX_FPS };
    if let Some(fps) = args.fps.filter(|&f| f > most) {
        eprintln!("bvh: note: --fps {fps}: a .{ext} is drawn at {most} frames per second at most");
    }
    let out = &args.output;
    match ext.as_str() {
        "png" if args.contact_sheet => {
            let sheet = SheetOptions {
                cells: args.cells,
                columns: args.columns.unwrap_or(0),
                frames,
                ..SheetOptions::default()
            };
            let bytes = raster::render_contact_sheet_of(&refs, &opts, &sheet)?;
            write_atomic(out, |w| Ok(w.write_all(&bytes)?))?;
        }
        "png" => {
            let frame = args.frame.unwrap_or(0);
            if frame >= longest {
                bail!("frame {frame} is past the last frame ({})", longest - 1);
            }
            // A shorter clip holds its last frame: said, not left to be seen
            // (a file without motion, drawn in its rest pose, is one frame).
            for c in clips.iter().filter(|c| c.n_frames > 0 && frame >= c.n_frames) {
                eprintln!(
                    "bvh: note: {}: frame {frame} is past its end ({} frame{}): its last frame, {}, \
                     is drawn",
                    crate::text::escape(&c.name),
                    c.n_frames,
                    if c.n_frames == 1 { "" } else { "s" },
                    c.n_frames - 1
                );
            }
            let bytes = raster::render_png(&refs, frame, &opts)?;
            write_atomic(out, |w| Ok(w.write_all(&bytes)?))?;
        }
        "gif" => {
            let bytes = raster::render_gif(&refs, &opts, &anim)?;
            write_atomic(out, |w| Ok(w.write_all(&bytes)?))?;
        }
        _ => {
            // ffmpeg writes the output's anonymous temporary file, put in
            // place when complete; a FIFO or device gets a copy.
            crate::io::write_by_program(out, |path| {
                Ok(raster::render_mp4(&refs, &opts, &anim, path)?)
            })?;
        }
    }
    Ok(loaded.exit_code())
}

//! `bvh`: inspect, check, format and convert BVH motion-capture files.
//!
//! # Implementation notes
//!
//! Clap definitions, dispatch, exit codes (0 ok, 1 warnings found by `check`, 2
//! errors, including a file `check` cannot parse and a path skipped while
//! walking a folder), broken pipe exits 0. Long help texts are `LONG_ABOUT`
//! constants in each command's module.
#![allow(clippy::print_stdout, clippy::print_stderr)]
// One exception, for mapping input files: see `io::input::read_file` and ARCHITECTURE.md.
#![deny(unsafe_code)]

mod blend;
mod check;
mod clean;
mod clip;
mod concat;
mod diff;
mod edit;
mod export;
mod export_dataset;
mod export_gltf;
mod fmt;
mod import;
mod info;
mod io;
mod layer;
mod lint;
#[path = "loop.rs"]
mod loop_cmd;
mod portable;
mod range;
mod record;
mod render;
mod retarget;
mod sample;
mod serve;
mod text;
mod view;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

/// Inspect, check, format and convert BVH (Biovision Hierarchy) motion-capture files.
///
/// Exit status: 0 on success, 1 when `check` finds problems, 2 on usage,
/// I/O or parse errors, including a path skipped with a warning while
/// walking a folder (the other files are still processed).
#[derive(Debug, Parser)]
#[command(name = "bvh", version, about, long_about = None, propagate_version = true)]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Largest input read whole from standard input, a pipe or a device (regular files are bounded by their size): bytes, or with a K, M, G or T suffix (binary).
    #[arg(long, global = true, value_name = "SIZE", default_value = "4G", value_parser = io::parse_size)]
    max_size: u64,
    /// For commands that write files (not info, check, diff or serve, which write none): replace an output that has other hard links; this name gets the new contents, the other names keep the old ones (without it, such an output is refused).
    #[arg(long, global = true)]
    break_links: bool,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Summarise files: joints, channels, frames, frame rate, rotation orders, hierarchy.
    #[command(long_about = info::LONG_ABOUT)]
    Info(info::Args),
    /// Validate files; print every problem as FILE:LINE:COL: message.
    #[command(long_about = check::LONG_ABOUT)]
    Check(check::Args),
    /// Rewrite files in canonical form, repairing what lenient reading recovers.
    #[command(long_about = fmt::LONG_ABOUT)]
    Fmt(fmt::Args),
    /// Transform motion: frames, frame rate, rotation order, channel layout, units, axes, mirror, root motion, joints, rest pose.
    Edit(Box<edit::Args>),
    /// Concatenate clips of one skeleton, each continuing where the last ends, with optional crossfades.
    #[command(long_about = concat::LONG_ABOUT)]
    Concat(concat::Args),
    /// Blend two clips pose by pose (a weight or a curve), on every joint or a subtree.
    #[command(long_about = blend::LONG_ABOUT)]
    Blend(blend::Args),
    /// Add a clip's motion since its reference pose on top of another (an additive layer).
    #[command(long_about = layer::LONG_ABOUT)]
    Layer(layer::Args),
    /// Make a clip loop: its end crossfaded into its start, travel kept or removed.
    #[command(long_about = loop_cmd::LONG_ABOUT)]
    Loop(loop_cmd::Args),
    /// Clean motion: repair spikes, smooth rotations and positions (Butterworth, Savitzky-Golay, one-euro).
    #[command(long_about = clean::LONG_ABOUT)]
    Clean(Box<clean::Args>),
    /// Retarget motion onto another skeleton (other names, proportions and rest pose).
    #[command(long_about = retarget::LONG_ABOUT)]
    Retarget(Box<retarget::Args>),
    /// Measure motion quality: foot skating, jitter, spikes, pops, wraps, far joints, ground.
    #[command(long_about = lint::LONG_ABOUT, allow_negative_numbers = true)]
    Lint(Box<lint::Args>),
    /// Compare two clips: MPJPE, root-aligned and PA-MPJPE, rotation error, worst frames and joints.
    #[command(long_about = diff::LONG_ABOUT)]
    Diff(diff::Args),
    /// World positions of every joint (CSV, JSON or NPY), streamed frame by frame.
    #[command(long_about = export::POSITIONS_ABOUT)]
    Positions(export::PositionsArgs),
    /// Local or world rotations of every joint (CSV, JSON or NPY), streamed frame by frame.
    #[command(long_about = export::ROTATIONS_ABOUT)]
    Rotations(export::RotationsArgs),
    /// Convert whole files to glTF 2.0 (.glb or .gltf) or FBX (.fbx) for engines and web viewers.
    #[command(long_about = export_gltf::LONG_ABOUT)]
    Export(export_gltf::Args),
    /// Read an FBX file's skeleton and animation back into BVH.
    #[command(long_about = import::LONG_ABOUT)]
    Import(import::Args),
    /// Draw files to PNG, GIF, a contact sheet or MP4.
    #[command(long_about = render::LONG_ABOUT)]
    Render(render::Args),
    /// Play files in a web browser from a small local HTTP server.
    Serve(serve::Args),
    /// Play files in a desktop window (needs the `view` feature).
    View(view::Args),
    /// Record BVH from orientation sensors (CSV or JSON-lines samples), frame by frame.
    #[command(long_about = record::RECORD_ABOUT)]
    Record(record::RecordArgs),
    /// Turn a BVH clip into the sensor samples that would have recorded it.
    #[command(long_about = record::REPLAY_ABOUT)]
    Replay(record::ReplayArgs),
}

/// How position channels combine with OFFSET in forward kinematics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum PosMode {
    /// A position channel replaces the OFFSET component it names (Blender, bvhio; what real files mean).
    Replace,
    /// A position channel is added to the OFFSET (the format texts, three.js).
    Add,
}

impl From<PosMode> for bvhkit::PositionChannels {
    fn from(m: PosMode) -> Self {
        match m {
            PosMode::Replace => bvhkit::PositionChannels::Replace,
            PosMode::Add => bvhkit::PositionChannels::Add,
        }
    }
}

/// Inputs shared by the commands that take many files.
#[derive(Debug, clap::Args)]
pub(crate) struct Inputs {
    /// Files to read; directories are walked for *.bvh; `-` reads standard input.
    #[arg(required = true, value_name = "FILE")]
    pub(crate) files: Vec<PathBuf>,
    /// Number of files processed at once (default: all cores).
    #[arg(short = 'j', long, value_name = "N", value_parser = crate::io::parse_jobs)]
    pub(crate) threads: Option<usize>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    io::set_max_size(cli.max_size);
    io::set_break_links(cli.break_links);
    match run(cli) {
        // A path skipped while walking a folder is an error too.
        Ok(code) if io::skipped() > 0 && code != ExitCode::from(2) => ExitCode::from(2),
        Ok(code) => code,
        Err(err) => {
            if is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            eprintln!("bvh: error: {}", text::escape(&crate::text::error_chain(&err)));
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Info(a) => info::run(a),
        Command::Check(a) => check::run(a),
        Command::Fmt(a) => fmt::run(a),
        Command::Edit(a) => edit::run(*a),
        Command::Concat(a) => concat::run(a),
        Command::Blend(a) => blend::run(a),
        Command::Layer(a) => layer::run(a),
        Command::Loop(a) => loop_cmd::run(a),
        Command::Clean(a) => clean::run(*a),
        Command::Retarget(a) => retarget::run(*a),
        Command::Lint(a) => lint::run(*a),
        Command::Diff(a) => diff::run(a),
        Command::Positions(a) => export::run_positions(a),
        Command::Rotations(a) => export::run_rotations(a),
        Command::Export(a) => export_gltf::run(a),
        Command::Import(a) => import::run(a),
        Command::Render(a) => render::run(a),
        Command::Serve(a) => serve::run(a),
        Command::View(a) => view::run(a),
        Command::Record(a) => record::run_record(a),
        Command::Replay(a) => record::run_replay(a),
    }
}

/// Whether an error chain ends in a broken pipe (`bvh ... | head`).
pub(crate) fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            || e.downcast_ref::<bvhkit::Error>().is_some_and(|b| {
                matches!(b.kind(), bvhkit::ErrorKind::Io(io) if io.kind() == std::io::ErrorKind::BrokenPipe)
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("bvh").chain(args.iter().copied()))
    }

    #[test]
    fn every_flag_parses() {
        assert!(parse(&["info", "a.bvh", "--json"]).is_ok());
        assert!(parse(&["info"]).is_err(), "a file is required");
        assert!(
            parse(&["retarget", "a.bvh", "--to", "b.bvh", "-o", "c.bvh", "--map", "m.txt"]).is_ok()
        );
        assert!(
            parse(&["retarget", "a.bvh", "--to", "b.bvh", "-o", "c.bvh", "--reference", "12"])
                .is_ok()
        );
        assert!(
            parse(&[
                "retarget",
                "a.bvh",
                "--to",
                "b.bvh",
                "-o",
                "c.bvh",
                "--reference",
                "sideways"
            ])
            .is_err()
        );
        assert!(parse(&["retarget", "a.bvh", "-o", "c.bvh"]).is_err(), "--to is required");
        assert!(
            parse(&["export", "a.bvh", "-o", "a.gltf", "--scale", "1", "--no-mesh", "--bin-file"])
                .is_ok()
        );
        assert!(parse(&["export", "a.bvh"]).is_err(), "-o is required");
        assert!(parse(&["check", "a.bvh", "--strict", "-j", "2"]).is_ok());
        assert!(parse(&["fmt", "a.bvh", "-o", "out.bvh", "--precision", "6", "--crlf"]).is_ok());
        assert!(
            parse(&["fmt", "a.bvh", "-o", "x", "--in-place"]).is_err(),
            "-o and --in-place conflict"
        );
        assert!(
            parse(&[
                "positions",
                "a.bvh",
                "--format",
                "npy",
                "--frames",
                "2..10",
                "--joints",
                "Hips,Head"
            ])
            .is_ok()
        );
        assert!(parse(&["positions", "a.bvh", "--format", "xml"]).is_err());
        assert!(
            parse(&["concat", "a.bvh", "b.bvh", "-o", "c.bvh", "--crossfade", "0.4s", "--linear"])
                .is_ok()
        );
        assert!(
            parse(&["concat", "takes/", "-o", "c.bvh"]).is_ok(),
            "one folder can hold the clips (two at least are counted after walking)"
        );
        assert!(parse(&["concat", "-o", "c.bvh"]).is_err(), "a clip is required");
        assert!(parse(&["concat", "a.bvh", "b.bvh", "-o", "c.bvh", "--crossfade", "x"]).is_err());
        assert!(
            parse(&["blend", "a.bvh", "b.bvh", "-o", "c.bvh", "--weight", "0..1:smooth"]).is_ok()
        );
        assert!(
            parse(&["blend", "a.bvh", "b.bvh", "-o", "c.bvh"]).is_err(),
            "--weight is required"
        );
        assert!(parse(&["blend", "a.bvh", "b.bvh", "-o", "c.bvh", "--weight", "2"]).is_err());
        assert!(
            parse(&[
                "layer",
                "a.bvh",
                "b.bvh",
                "-o",
                "c.bvh",
                "--joints",
                "Neck",
                "--reference",
                "3"
            ])
            .is_ok()
        );
        assert!(
            parse(&["loop", "a.bvh", "-o", "c.bvh", "--crossfade", "12", "--in-place"]).is_ok()
        );
        assert!(
            parse(&["positions", "a.bvh", "--position-channels", "add", "--dtype", "f32"]).is_ok()
        );
        assert!(parse(&["rotations", "a.bvh", "--space", "world", "--repr", "6d"]).is_ok());
        assert!(
            parse(&["rotations", "a.bvh", "--repr", "euler", "--order", "zxy", "--continuous"])
                .is_ok()
        );
        assert!(parse(&["rotations", "a.bvh", "--repr", "axis-angle"]).is_ok());
        assert!(parse(&["serve", "a.bvh", "b.bvh", "--port", "0"]).is_ok());
        assert!(
            parse(&[
                "render",
                "a.bvh",
                "-o",
                "a.png",
                "--frame",
                "3",
                "--azimuth",
                "-40",
                "--size",
                "320x240"
            ])
            .is_ok()
        );
        assert!(parse(&["render", "a.bvh", "-o", "a.png", "--size", "320"]).is_err());
        assert!(
            parse(&[
                "render",
                "a.bvh",
                "-o",
                "a.png",
                "--contact-sheet",
                "--cells",
                "9",
                "--background",
                "#ffffff"
            ])
            .is_ok()
        );
        assert!(parse(&["render", "a.bvh", "-o", "a.png", "--background", "white"]).is_err());
        assert!(
            parse(&["render", "a.bvh", "-o", "a.gif", "--frames", "0..30", "--fps", "15"]).is_ok()
        );
        assert!(parse(&["serve", "a.bvh", "--port", "70000"]).is_err());
        assert!(parse(&["view"]).is_ok(), "the player opens with no file");
        assert!(
            parse(&["view", "a.bvh", "b.bvh", "--frame", "3", "--size", "800x600", "--play"])
                .is_ok()
        );
        assert!(parse(&["view", "a.bvh", "--follow"]).is_err(), "--follow needs --select");
        assert!(parse(&["view", "a.bvh", "--size", "20x10"]).is_err());
        assert!(
            parse(&["view", "a.bvh", "--screenshot", "s.png", "--keys", "Right,Space"]).is_ok()
        );
        assert!(parse(&["view", "a.bvh", "--keys", "Right"]).is_err(), "--keys needs --screenshot");
    }
}

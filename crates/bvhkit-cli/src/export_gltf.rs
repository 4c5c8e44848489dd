//! `bvh export`: whole files to other formats, chosen by the output's
//! extension. glTF 2.0 (`.glb`, `.gltf`) here (`bvhkit-gltf`), and binary
//! FBX (`.fbx`, `bvhkit-fbx`); Parquet and NPZ datasets in
//! `export_dataset.rs` (`bvhkit-dataset`).
//!
//! # Implementation notes
//!
//! `bvh export`, whole files to `.glb`/`.gltf` through `bvhkit-gltf` (`--up`
//! parsed by `clip::parse_up`, default `auto`; format from the extension), one
//! file per input under `-o OUTDIR/`, a `.gltf` with `--bin-file` and its
//! `.bin` through `io::write_atomic_all`.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use bvhkit::export::{Options, Scale, Up};
use bvhkit_gltf::{BufferUri, GlbError, export};

use crate::PosMode;
use crate::io::{
    Input, expand_rel, load, located_warning, open_output, par_map, refuse_overwriting_input,
    write_atomic, write_atomic_all,
};

/// The long help of `bvh export` (`bvh export --help`).
pub(crate) const LONG_ABOUT: &str = "\
Convert whole files to glTF 2.0 (.glb binary, or .gltf JSON) for engines and web viewers.

The format comes from the extension of -o: .glb (one binary file), .gltf \
(JSON with the buffer embedded as a data URI, or with --bin-file beside it \
as OUT.bin). One node per joint (End Sites are leaf nodes named as `bvh \
positions` names them), one animation with the file's frames at i * frame \
time, and by default a box per bone skinned to its joint so that any viewer \
shows the figure (--no-mesh leaves it out). Lengths are converted to metres \
from the unit guessed from the skeleton's size (printed, and stored in the \
file's extras); --scale 1 keeps the file's own numbers. glTF is Y up: the \
file's up axis is detected (head above hips above feet) and converted to Y \
up as `bvh edit --up y` converts it, with what was applied printed and \
stored in the extras; --up AXIS names the file's up axis instead, --up keep \
(or --up y) keeps its axes. Several inputs need -o \
OUTDIR/ and give one file per input (--format picks glb or gltf, glb by \
default). The output may not be an input. See docs/gltf.md.

-o OUT.fbx writes binary FBX 7.4 instead (docs/fbx.md): one LimbNode per joint, End Sites as leaf bones, each joint's channel order as its FBX rotation order and one curve per channel holding the file's own values at its frame times; the numbers are the file's, with the guessed unit (or --scale, metres per unit) and the detected up axis (or --up) stated in the file's settings, never applied. A box per bone skinned to its joint is added (--no-mesh leaves it out).

-o OUT.parquet or -o OUT.npz writes every input into one dataset for machine learning instead (docs/datasets.md): a Parquet table with one row per clip × frame × joint (clip, frame, joint, parent, px py pz world positions, qx qy qz qw local rotations; --layout wide for one row per frame), the skeletons beside it in OUT.skeleton.parquet, or an NPZ of per-clip arrays (CLIP/positions, CLIP/rotations, ...), in each file's own axes unless --up is given. Folders are walked; files are parsed on all cores and written in order; a file that cannot be read is reported and skipped (exit 2), and a summary ends the run.

Example: bvh export walk.bvh -o walk.glb
Example: bvh export mocap/ -o mocap.parquet --dtype f32 --velocities --contacts";

/// glTF flavours of a folder export.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    /// Binary glTF.
    Glb,
    /// JSON glTF with the buffer embedded (or beside it with --bin-file).
    Gltf,
    /// Binary FBX 7.4.
    Fbx,
}

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// BVH files; directories are walked for *.bvh; `-` reads standard input.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Output file (.glb or .gltf), or a folder (`OUTDIR/` or an existing folder; required for several inputs).
    #[arg(short, long, value_name = "OUT", required = true)]
    output: PathBuf,
    /// Output format for a folder (a file's comes from its extension).
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// Multiply lengths by this factor instead of converting the guessed unit to metres (1 keeps the file's numbers); from 0.000001 to 1000000.
    #[arg(long, value_name = "FACTOR", value_parser = crate::range::parse_scale, allow_hyphen_values = true)]
    scale: Option<f64>,
    /// The file's up axis (x, y, z, -x, -y, -z), converted to Y up; `auto` detects it; `keep` keeps the file's axes. Default: `auto` for glTF (which is Y up), `keep` for Parquet and NPZ (the numbers of `bvh positions`).
    #[arg(long, value_name = "AXIS", allow_hyphen_values = true, value_parser = crate::clip::parse_up)]
    up: Option<crate::clip::Up>,
    /// Leave out the skin and the boxes (skeleton and animation only).
    #[arg(long)]
    no_mesh: bool,
    /// For .gltf: write the buffer to OUT.bin beside it instead of embedding it.
    #[arg(long)]
    bin_file: bool,
    /// How position channels combine with OFFSET.
    #[arg(long, value_enum, default_value = "replace")]
    position_channels: PosMode,
    /// Refuse files with any problem instead of reading them leniently.
    #[arg(long)]
    strict: bool,
    /// Number of files converted at once (default: all cores).
    #[arg(short = 'j', long, value_name = "N", value_parser = crate::io::parse_jobs)]
    threads: Option<usize>,
    /// The flags of -o OUT.parquet and -o OUT.npz (export_dataset.rs).
    #[command(flatten)]
    dataset: crate::export_dataset::DatasetArgs,
}

/// The format an output file's extension asks for.
fn format_of(out: &Path) -> Result<Format> {
    let ext = out.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("glb") => Ok(Format::Glb),
        Some("gltf") => Ok(Format::Gltf),
        Some("fbx") => Ok(Format::Fbx),
        _ => bail!(
            "{}: unknown output extension (use .glb, .gltf, .fbx, .parquet or .npz)",
            out.display()
        ),
    }
}

pub(crate) fn run(a: Args) -> Result<ExitCode> {
    if crate::export_dataset::handles(&a.output) {
        // The flags of the other outputs are refused, not ignored: a table
        // keeps the file's lengths and has no mesh or buffer file.
        let scale_hint = " (a table keeps the file's lengths, as `bvh positions` gives them: \
                          scale first with `bvh edit --scale` or `--units`)";
        for (given, flag, hint) in [
            (a.scale.is_some(), "--scale", scale_hint),
            (a.no_mesh, "--no-mesh", ""),
            (a.bin_file, "--bin-file", ""),
        ] {
            if given {
                bail!(
                    "{flag} applies to .glb, .gltf and .fbx outputs, not to {}{hint}",
                    a.output.display()
                );
            }
        }
        let c = crate::export_dataset::Common {
            files: &a.files,
            output: &a.output,
            position_channels: a.position_channels,
            strict: a.strict,
            threads: a.threads,
            up: a.up.unwrap_or(crate::clip::Up::Keep),
        };
        return crate::export_dataset::run(&c, &a.dataset);
    }
    if let Some(flag) = a.dataset.given().first() {
        bail!(
            "{flag} applies to .parquet and .npz outputs, not to {} (see bvh export --help)",
            a.output.display()
        );
    }
    let inputs = expand_rel(&a.files)?;
    let all: Vec<Input> = inputs.iter().map(|(i, _)| i.clone()).collect();
    let mut jobs: Vec<(Input, PathBuf, Format)> = Vec::new();
    if inputs.len() == 1 && !crate::io::names_folder(&a.output) {
        let f = format_of(&a.output)?;
        if a.format.is_some_and(|g| g != f) {
            bail!("--format disagrees with the extension of {}", a.output.display());
        }
        jobs.push((inputs[0].0.clone(), a.output.clone(), f));
    } else {
        if !crate::io::names_folder(&a.output) {
            bail!(
                "{}: several inputs need -o OUTDIR/, a folder that gets one file per input",
                a.output.display()
            );
        }
        let f = a.format.unwrap_or(Format::Glb);
        let ext = match f {
            Format::Glb => "glb",
            Format::Gltf => "gltf",
            Format::Fbx => "fbx",
        };
        for (input, rel) in inputs {
            if input == Input::Stdin {
                bail!("standard input (-) cannot be one of several inputs to an output folder");
            }
            let t = a.output.join(rel).with_extension(ext);
            jobs.push((input, t, f));
        }
    }
    if a.output.as_os_str() == "-" {
        bail!("glTF and FBX export need an output file (-o OUT.glb), not standard output");
    }
    // No two inputs on one output, and no output that is an input.
    crate::io::check_targets(jobs.iter().map(|(i, t, _)| (i, t.as_path())))?;
    for (_, t, f) in &jobs {
        if *f == Format::Gltf && a.bin_file {
            refuse_overwriting_input(&t.with_extension("bin"), &all)?;
        }
    }
    let results =
        par_map(&jobs.iter().map(|j| j.0.clone()).collect::<Vec<_>>(), a.threads, |input| {
            let (_, t, f) = jobs.iter().find(|j| &j.0 == input).expect("every input has a job");
            one(&a, input, t, *f).with_context(|| format!("{} → {}", input.display(), t.display()))
        })?;
    let mut failed = false;
    for r in results {
        match r {
            Ok(lines) => lines.iter().for_each(|l| eprintln!("{}", crate::text::escape(l))),
            Err(e) => {
                failed = true;
                eprintln!("bvh: error: {}", crate::text::escape(&crate::text::error_chain(&e)));
            }
        }
    }
    Ok(if failed { ExitCode::from(2) } else { ExitCode::SUCCESS })
}

fn one(a: &Args, input: &Input, out: &Path, format: Format) -> Result<Vec<String>> {
    let (bvh, warnings) = load(input, a.strict).map_err(|e| anyhow::anyhow!(e.describe(input)))?;
    let mut lines: Vec<String> = warnings.iter().map(|w| located_warning(input, w)).collect();
    let name = match input {
        Input::Stdin => "motion".to_string(),
        Input::File(p) => {
            p.file_stem().map_or("motion".into(), |s| s.to_string_lossy().into_owned())
        }
    };
    // The options both formats share, from `--position-channels`,
    // `--scale`, `--up` and `--no-mesh`.
    let options = Options {
        position_channels: a.position_channels.into(),
        scale: a.scale.map_or(Scale::Guess, Scale::Factor),
        up: match a.up.unwrap_or(crate::clip::Up::Auto) {
            crate::clip::Up::Auto => Up::Detect,
            crate::clip::Up::Keep => Up::Keep,
            crate::clip::Up::From(axis) => Up::From(axis),
        },
        mesh: !a.no_mesh,
        name: Some(name),
    };
    if format == Format::Fbx {
        let options = bvhkit_fbx::ExportOptions { common: options, ..Default::default() };
        return fbx(input, out, &bvh, &options, lines);
    }
    let applied = match format {
        Format::Glb => glb(&bvh, &options, out)?,
        Format::Gltf if a.bin_file => {
            let bin = out.with_extension("bin");
            let uri = bin.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let x = export(&bvh, &options)?;
            let text = x.to_gltf(&BufferUri::File(uri))?;
            // The .bin first, then the .gltf that names it, both only once both are complete.
            write_atomic_all(&mut [
                (bin.as_path(), &mut |w: &mut dyn Write| Ok(w.write_all(&x.buffer)?)),
                (out, &mut |w: &mut dyn Write| Ok(w.write_all(text.as_bytes())?)),
            ])?;
            x.applied
        }
        Format::Gltf => {
            let x = export(&bvh, &options)?;
            let text = x.to_gltf(&BufferUri::Embedded)?;
            write_atomic(out, |w| Ok(w.write_all(text.as_bytes())?))?;
            x.applied
        }
        Format::Fbx => unreachable!("written above"),
    };
    lines.push(format!(
        "{} → {}: {} joints, {} frames; {}",
        input.display(),
        out.display(),
        bvh.skeleton().len(),
        bvh.motion().n_frames(),
        applied
    ));
    Ok(lines)
}

/// The `.glb` export of one file: into a regular file (replaced when
/// complete), the binary chunk written piece by piece as its frames are
/// computed ([`bvhkit_gltf::Plan::write_glb`]); into anything else (a
/// FIFO, a device), made in memory and written in order.
fn glb(bvh: &bvhkit::Bvh, options: &Options, out: &Path) -> Result<bvhkit_gltf::Applied> {
    let plan = bvhkit_gltf::plan(bvh, options)?;
    let applied = plan.applied().clone();
    let mut o = open_output(out)?;
    let written = match o.atomic_file() {
        Some(a) => plan.write_glb(a.file()),
        None => plan.into_export().map_err(GlbError::Export).and_then(|x| {
            let mut w = BufWriter::with_capacity(1 << 16, &mut o);
            x.write_glb(&mut w)?;
            Ok(w.flush()?)
        }),
    };
    // Dropped unfinished, the temporary file goes and the target stays.
    written.map_err(|e| match e {
        GlbError::Export(e) => anyhow::Error::new(e),
        GlbError::Io(e) => anyhow::Error::new(e).context(format!("writing {}", out.display())),
    })?;
    o.finish()?;
    Ok(applied)
}

/// The FBX export of one file (`bvhkit-fbx`).
fn fbx(
    input: &Input,
    out: &Path,
    bvh: &bvhkit::Bvh,
    options: &bvhkit_fbx::ExportOptions,
    mut lines: Vec<String>,
) -> Result<Vec<String>> {
    // Written as it is made, a few MiB at a time (so the file's writeback
    // starts early and the whole file is never held in memory).
    let mut done = None;
    write_atomic(out, |w| {
        done = Some(bvhkit_fbx::export_to(bvh, options, w)?);
        Ok(())
    })?;
    let x = done.expect("written");
    for (taken, written) in &x.renamed {
        lines.push(format!(
            "{}: joint name {taken} taken already, written as {written}",
            input.display()
        ));
    }
    lines.push(format!(
        "{} → {}: {} joints, {} frames; {}",
        input.display(),
        out.display(),
        bvh.skeleton().len(),
        bvh.motion().n_frames(),
        x.applied
    ));
    Ok(lines)
}

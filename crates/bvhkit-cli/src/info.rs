//! `bvh info`.

use std::fmt::Write as _;
use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use bvhkit::{Bvh, JointId, Warning};
use serde::Serialize;

use crate::Inputs;
use crate::io::{Input, expand, load, par_map};
use crate::text::escape;

/// The long help of `bvh info` (`bvh info --help`).
pub(crate) const LONG_ABOUT: &str = "\
Summarise files: joints, channels, frames, frame rate, rotation orders, hierarchy.

Each file is read leniently; its warnings are counted and listed with their \
line and column, and its hierarchy is drawn as a tree with each joint's \
channels (Xpos Ypos Zpos, Zrot Xrot Yrot in file order). Joints nested \
deeper than 64 levels are drawn with a `[depth N]` prefix instead of more \
indentation. Names are shown as `--joints` takes them (whitespace folded, \
End Sites as <Parent>_End), with control characters escaped. --json prints \
the same as one object per file (an array for several), with the hierarchy \
as a flat list of joints with parent indices. Exit status 2 when a file \
cannot be read or parsed.

Example: bvh info walk.bvh --no-tree";

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    inputs: Inputs,
    /// Print JSON: an object for one file, an array for several.
    #[arg(long)]
    json: bool,
    /// Leave out the hierarchy tree.
    #[arg(long)]
    no_tree: bool,
}

#[derive(Debug, Serialize)]
pub(crate) struct Info {
    path: String,
    roots: Vec<String>,
    /// Joints, End Sites excluded.
    joints: usize,
    end_sites: usize,
    /// Channels per frame.
    channels: usize,
    /// Frames actually read.
    frames: usize,
    frame_time: f64,
    fps: f64,
    duration: f64,
    rotation_orders: Vec<String>,
    /// The detected up axis (`"y"`, `"z"`, `"-y"`, ...), `null` when not found.
    up_axis: Option<&'static str>,
    /// What showed the up axis, or why none was found.
    up_axis_evidence: String,
    /// The guessed length unit (`"m"`, `"cm"`, `"mm"`, `"in"`, `"cmu"`), `null` when unknown.
    units: Option<&'static str>,
    /// The guess with the size it is based on.
    units_evidence: String,
    warnings: Vec<JsonWarning>,
    hierarchy: Vec<JsonJoint>,
}

#[derive(Debug, Serialize)]
struct JsonWarning {
    line: Option<u64>,
    column: Option<u64>,
    message: String,
}

#[derive(Debug, Serialize)]
struct JsonJoint {
    name: String,
    kind: &'static str,
    parent: Option<usize>,
    offset: [f64; 3],
    channels: Vec<&'static str>,
}

pub(crate) fn summarise(input: &Input, bvh: &Bvh, warnings: &[Warning]) -> Info {
    let s = bvh.skeleton();
    let m = bvh.motion();
    let names = s.display_names();
    let up = bvhkit::edit::axes::detect_up(bvh);
    let guess = bvhkit::units::UnitGuess::of_bvh(bvh, bvhkit::PositionChannels::Replace);
    Info {
        path: input.display(),
        roots: s.roots().map(|r| names[r.index()].clone()).collect(),
        joints: s.joints().iter().filter(|j| !j.is_end_site()).count(),
        end_sites: s.joints().iter().filter(|j| j.is_end_site()).count(),
        channels: s.n_channels(),
        frames: m.n_frames(),
        frame_time: m.frame_time(),
        fps: m.fps(),
        duration: m.duration(),
        rotation_orders: s.rotation_orders(),
        up_axis: up.axis.map(|a| a.name()),
        up_axis_evidence: up.to_string(),
        units: guess.units.metres_per_unit().map(|_| guess.units.symbol()),
        units_evidence: guess.label(),
        warnings: warnings
            .iter()
            .map(|w| JsonWarning {
                line: w.position.map(|p| p.line),
                column: w.position.map(|p| p.column),
                message: w.message.clone(),
            })
            .collect(),
        hierarchy: s
            .joints()
            .iter()
            .enumerate()
            .map(|(i, j)| JsonJoint {
                name: names[i].clone(),
                kind: match j.kind() {
                    bvhkit::JointKind::Root => "root",
                    bvhkit::JointKind::Joint => "joint",
                    bvhkit::JointKind::EndSite => "end_site",
                },
                parent: j.parent().map(JointId::index),
                offset: j.offset().to_array(),
                channels: j.channels().iter().map(|c| c.name()).collect(),
            })
            .collect(),
    }
}

/// Tree levels drawn with indentation; deeper joints get a `[depth N]`
/// prefix instead, so each line stays short and the tree's size grows
/// linearly with the number of joints (a chain 100,000 deep would otherwise
/// print 100,000 lines of up to 300,000 characters each).
const MAX_DRAWN_DEPTH: usize = 64;

fn text(info: &Info, bvh: &Bvh, tree: bool) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "{}", escape(&info.path));
    let roots: Vec<_> = info.roots.iter().map(|r| escape(r)).collect();
    let _ = writeln!(o, "  roots:           {}", roots.join(", "));
    let _ = writeln!(o, "  joints:          {} (+ {} End Sites)", info.joints, info.end_sites);
    let _ = writeln!(o, "  channels:        {} per frame", info.channels);
    let _ = writeln!(o, "  frames:          {}", info.frames);
    let _ = writeln!(o, "  frame time:      {} s ({:.3} fps)", info.frame_time, info.fps);
    let _ = writeln!(o, "  duration:        {:.3} s", info.duration);
    let _ = writeln!(
        o,
        "  rotation orders: {}",
        if info.rotation_orders.is_empty() {
            "none".to_string()
        } else {
            info.rotation_orders.join(", ")
        }
    );
    let _ = writeln!(o, "  up axis:         {}", escape(&info.up_axis_evidence));
    let _ = writeln!(o, "  units (guess):   {}", info.units_evidence);
    let _ = writeln!(o, "  warnings:        {}", info.warnings.len());
    for w in &info.warnings {
        match (w.line, w.column) {
            (Some(l), Some(c)) => {
                let _ = writeln!(o, "    {l}:{c}: {}", escape(&w.message));
            }
            _ => {
                let _ = writeln!(o, "    {}", escape(&w.message));
            }
        }
    }
    if tree {
        let _ = writeln!(o, "  hierarchy:");
        let s = bvh.skeleton();
        // Whether each joint has a sibling after it: its parent's last child
        // is the last joint naming that parent (one pass, file pre-order).
        let mut last_child = vec![usize::MAX; s.len()];
        for (i, j) in s.joints().iter().enumerate() {
            if let Some(p) = j.parent() {
                last_child[p.index()] = i;
            }
        }
        // Whether each drawn level still has siblings to come (for the tree lines).
        let mut more: Vec<bool> = Vec::new();
        for (i, j) in s.joints().iter().enumerate() {
            let d = j.depth();
            let has_next_sibling = j.parent().is_some_and(|p| last_child[p.index()] != i);
            more.truncate(d.min(MAX_DRAWN_DEPTH));
            let mut line = String::from("    ");
            for &m in more.iter().skip(1) {
                line.push_str(if m { "│  " } else { "   " });
            }
            if d > MAX_DRAWN_DEPTH {
                let _ = write!(line, "[depth {d}] ");
            }
            if d > 0 {
                line.push_str(if has_next_sibling { "├─ " } else { "└─ " });
            }
            line.push_str(&escape(&info.hierarchy[i].name));
            if !j.channels().is_empty() {
                let ch: Vec<&str> = j.channels().iter().map(|c| short(c.name())).collect();
                let _ = write!(line, "  [{}]", ch.join(" "));
            }
            let _ = writeln!(o, "{line}");
            if d < MAX_DRAWN_DEPTH {
                more.push(has_next_sibling);
            }
        }
    }
    o
}

fn short(name: &str) -> &str {
    match name {
        "Xposition" => "Xpos",
        "Yposition" => "Ypos",
        "Zposition" => "Zpos",
        "Xrotation" => "Xrot",
        "Yrotation" => "Yrot",
        _ => "Zrot",
    }
}

pub(crate) fn run(args: Args) -> Result<ExitCode> {
    let inputs = expand(&args.inputs.files)?;
    let results = par_map(&inputs, args.inputs.threads, |i| load(i, false))?;
    let mut failed = false;
    let mut infos = Vec::new();
    let mut texts = Vec::new();
    for (input, r) in inputs.iter().zip(results) {
        match r {
            Ok((bvh, w)) => {
                let info = summarise(input, &bvh, &w);
                if !args.json {
                    texts.push(text(&info, &bvh, !args.no_tree));
                }
                infos.push(info);
            }
            Err(e) => {
                failed = true;
                eprintln!("bvh: error: {}", escape(&e.describe(input)));
            }
        }
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if args.json {
        let json = if inputs.len() == 1 && infos.len() == 1 {
            serde_json::to_string_pretty(&infos[0])?
        } else {
            serde_json::to_string_pretty(&infos)?
        };
        writeln!(out, "{}", crate::text::escape_json(&json))?;
    } else {
        out.write_all(texts.join("\n").as_bytes())?;
    }
    out.flush()?;
    Ok(if failed { ExitCode::from(2) } else { ExitCode::SUCCESS })
}

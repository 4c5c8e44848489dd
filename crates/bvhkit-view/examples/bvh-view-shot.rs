//! Runs the player: `bvh-view-shot [--shot OUT.png] [--frame N]
//! [--size WxH] [--in-place] [--play] [--add] [--select JOINT [--follow]]
//! [--keys KEY,KEY,...]
//! FILE...`.
//!
//! With `--shot` it saves a screenshot (and `OUT.png.json`) and exits; the
//! window test runs it that way, in a process of its own because winit
//! wants the main thread.

use std::path::PathBuf;
use std::process::ExitCode;

use bvhkit_view::{PositionChannels, ViewOptions, run};

fn main() -> ExitCode {
    let mut opts = ViewOptions::new();
    let mut files = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--shot" => opts.screenshot = args.next().map(PathBuf::from),
            "--frame" => opts.frame = args.next().and_then(|f| f.parse().ok()),
            "--size" => {
                opts.window_size = args.next().and_then(|s| {
                    let (w, h) = s.split_once('x')?;
                    Some([w.parse().ok()?, h.parse().ok()?])
                });
            }
            "--in-place" => opts.in_place = true,
            "--play" => opts.play = true,
            "--select" => opts.select = args.next(),
            "--follow" => opts.follow = true,
            "--add" => opts.position_channels = PositionChannels::Add,
            "--keys" => {
                opts.keys = args
                    .next()
                    .map(|k| k.split(',').map(String::from).collect())
                    .unwrap_or_default();
            }
            _ => files.push(PathBuf::from(a)),
        }
    }
    match run(files, opts) {
        Ok(skipped) if skipped.is_empty() => ExitCode::SUCCESS,
        Ok(skipped) => {
            for e in skipped {
                eprintln!("bvh-view-shot: skipped {e}");
            }
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("bvh-view-shot: {e}");
            ExitCode::FAILURE
        }
    }
}

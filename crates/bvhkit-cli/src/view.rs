//! `bvh view`: the desktop player (feature `view`).
//!
//! Without the feature the subcommand still parses, and says how to get
//! the player, so `bvh view` never fails with a bare "unknown command".

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use crate::PosMode;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Files to play side by side; directories are walked for *.bvh. More
    /// can be dropped on the window or opened from it.
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Frame to show first.
    #[arg(long, value_name = "N")]
    frame: Option<usize>,
    /// Start playing.
    #[arg(long)]
    play: bool,
    /// Start with the roots' horizontal travel removed.
    #[arg(long)]
    in_place: bool,
    /// Select the first joint of this name.
    #[arg(long, value_name = "JOINT")]
    select: Option<String>,
    /// Follow the selected joint with the camera.
    #[arg(long, requires = "select")]
    follow: bool,
    /// Window size in points, WIDTHxHEIGHT.
    #[arg(long, value_name = "WxH", value_parser = parse_size)]
    size: Option<[f32; 2]>,
    /// Save the window to this PNG (plus PNG.json with every joint's pixel
    /// position) once drawn, then close: for tests and thumbnails.
    #[arg(long, value_name = "PNG")]
    screenshot: Option<PathBuf>,
    /// With --screenshot: key presses to send first, one per frame
    /// (e.g. `Right,Right,Space`); the PNG.json records the frame reached.
    #[arg(long, value_name = "KEY,...", value_delimiter = ',', requires = "screenshot")]
    keys: Vec<String>,
    /// How position channels combine with OFFSET.
    #[arg(long, value_enum, default_value = "replace")]
    position_channels: PosMode,
    /// The files' up axis: auto (detected; a file not Y up is drawn upright, with a note), keep (the file's own axes), or x, y, z, -x, -y, -z (convert from it to Y up).
    #[arg(long, value_name = "AXIS", default_value = "auto", allow_hyphen_values = true, value_parser = crate::clip::parse_up)]
    up: crate::clip::Up,
}

fn parse_size(s: &str) -> Result<[f32; 2], String> {
    let parsed = s.split_once(['x', 'X']).and_then(|(w, h)| {
        let (w, h) = (w.trim().parse::<u16>().ok()?, h.trim().parse::<u16>().ok()?);
        (w >= 200 && h >= 150).then_some([f32::from(w), f32::from(h)])
    });
    parsed.ok_or_else(|| format!("expected WIDTHxHEIGHT of at least 200x150, found '{s}'"))
}

#[cfg(feature = "view")]
pub(crate) fn run(args: Args) -> Result<ExitCode> {
    let files: Vec<PathBuf> = crate::io::expand(&args.files)?
        .into_iter()
        .map(|i| match i {
            // The player reads whole files itself, unbounded: only regular ones.
            crate::io::Input::File(p) => crate::io::require_regular(&p).map(|()| p),
            crate::io::Input::Stdin => {
                Err(anyhow::anyhow!("bvh view reads files, not standard input"))
            }
        })
        .collect::<Result<_>>()?;
    let mut opts = bvhkit_view::ViewOptions::new();
    opts.position_channels = args.position_channels.into();
    opts.screenshot = args.screenshot;
    opts.frame = args.frame;
    opts.window_size = args.size;
    opts.in_place = args.in_place;
    opts.play = args.play;
    opts.select = args.select;
    opts.follow = args.follow;
    opts.keys = args.keys;
    // The drawing commands' one up-axis rule (crate::clip::upright), notes on stderr.
    let up = args.up;
    opts.prepare = Some(bvhkit_view::load::Prepare(std::sync::Arc::new(move |bvh, what: &str| {
        let (bvh, note) =
            crate::clip::upright(bvh, up, what).map_err(|e| crate::text::error_chain(&e))?;
        if let Some(note) = note {
            eprintln!("{}", crate::text::escape(&note));
        }
        Ok(bvh)
    })));
    // Files that cannot be loaded are skipped (and listed in the window).
    let skipped = bvhkit_view::run(files, opts)?;
    for e in &skipped {
        eprintln!("bvh: error: {e}; skipped");
    }
    // An input that could not be read: 2, as for every command.
    Ok(if skipped.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(2) })
}

#[cfg(not(feature = "view"))]
pub(crate) fn run(args: Args) -> Result<ExitCode> {
    let _ = args;
    anyhow::bail!(
        "this bvh was built without the desktop player; install it with \
         `cargo install --path crates/bvhkit-cli --features view` \
         (or play in a browser with `bvh serve`)"
    )
}

//! `bvh serve`: play files in a browser from a local HTTP server.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::PosMode;
use crate::clip::load_clips;
use crate::io::expand;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Files to play; directories are walked for *.bvh.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Port to listen on (0 picks a free one).
    #[arg(short, long, default_value_t = bvhkit_serve::DEFAULT_PORT)]
    port: u16,
    /// Address to listen on; the default serves this machine only. Anything
    /// else exposes the files to the network.
    #[arg(long, default_value = "127.0.0.1")]
    bind: std::net::IpAddr,
    /// How position channels combine with OFFSET.
    #[arg(long, value_enum, default_value = "replace")]
    position_channels: PosMode,
}

pub(crate) fn run(args: Args) -> Result<ExitCode> {
    let inputs = expand(&args.files)?;
    // Files that cannot be loaded are reported and skipped; the others are served.
    let loaded = load_clips(&inputs, args.position_channels.into())?;
    let clips = &loaded.clips;
    let addr = std::net::SocketAddr::new(args.bind, args.port);
    let server =
        bvhkit_serve::Server::bind(addr, clips).with_context(|| format!("listening on {addr}"))?;
    eprintln!("bvh: serving {} clip(s) at {} (Ctrl-C to stop)", clips.len(), server.url()?);
    server.run()?;
    Ok(loaded.exit_code())
}

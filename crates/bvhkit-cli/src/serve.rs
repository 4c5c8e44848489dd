//! `bvh serve`: play files in a browser from a local HTTP server.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};

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
    /// The files' up axis: auto (detected; a file not Y up is drawn upright, with a note), keep (the file's own axes), or x, y, z, -x, -y, -z (convert from it to Y up).
    #[arg(long, value_name = "AXIS", default_value = "auto", allow_hyphen_values = true, value_parser = crate::clip::parse_up)]
    up: crate::clip::Up,
}

pub(crate) fn run(args: Args) -> Result<ExitCode> {
    let inputs = expand(&args.files)?;
    // Files that cannot be loaded are reported and skipped; the others are served.
    let loaded = load_clips(&inputs, args.position_channels.into(), args.up)?;
    let clips = &loaded.clips;
    let addr = std::net::SocketAddr::new(args.bind, args.port);
    let server = match bvhkit_serve::Server::bind(addr, clips) {
        Ok(server) => server,
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse && args.port != 0 => {
            let hint = match bvhkit_serve::free_port_near(args.bind, args.port) {
                Some(free) => format!("; port {free} is free: try --port {free} (or --port 0)"),
                None => "; try --port 0 for any free port".to_string(),
            };
            bail!("port {} on {} is in use by another program{hint}", args.port, args.bind);
        }
        Err(e) => return Err(e).with_context(|| format!("listening on {addr}")),
    };
    eprintln!("bvh: serving {} clip(s) at {} (Ctrl-C to stop)", clips.len(), server.url()?);
    server.run()?;
    Ok(loaded.exit_code())
}

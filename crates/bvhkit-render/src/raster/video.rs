//! MP4 output through an `ffmpeg` child process fed raw RGBA frames.

use std::io::{self, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use super::{AnimationOptions, Animator, Error, RenderOptions, Result, pixmap};
use crate::Clip;

/// Renders an animation to an MP4 file at `out` with the `ffmpeg` found on
/// `PATH`; see [`render_mp4_with`].
///
/// # Errors
/// As [`render_mp4_with`].
pub fn render_mp4(
    clips: &[&Clip],
    opts: &RenderOptions,
    anim: &AnimationOptions,
    out: &Path,
) -> Result<()> {
    render_mp4_with(Path::new("ffmpeg"), clips, opts, anim, out)
}

/// Renders an animation and pipes its raw RGBA frames into the `ffmpeg`
/// executable `ffmpeg`, which encodes H.264 (yuv420p, padded to an even
/// size) into `out`, overwriting it. No video encoder runs in-process.
///
/// # Errors
/// [`Error::FfmpegNotFound`] when the program cannot be started (its message
/// names the Debian package `ffmpeg`), [`Error::Ffmpeg`] when it fails, and
/// the errors of [`render_gif`](super::render_gif).
pub fn render_mp4_with(
    ffmpeg: &Path,
    clips: &[&Clip],
    opts: &RenderOptions,
    anim: &AnimationOptions,
    out: &Path,
) -> Result<()> {
    let animator = Animator::new(clips, opts, anim, super::MP4_MAX_FPS)?;
    let mut child = Command::new(ffmpeg)
        .args(["-hide_banner", "-loglevel", "error", "-nostdin", "-y"])
        .args(["-f", "rawvideo", "-pix_fmt", "rgba"])
        .arg("-s")
        .arg(format!("{}x{}", opts.width, opts.height))
        .arg("-r")
        .arg(format!("{:.6}", animator.fps))
        .args(["-i", "-", "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2"])
        .args(["-c:v", "libx264", "-pix_fmt", "yuv420p", "-movflags", "+faststart"])
        // MP4 whatever `out`'s name says (it may be a temporary file's).
        .args(["-f", "mp4"])
        .arg(out)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| match e.kind() {
            io::ErrorKind::NotFound | io::ErrorKind::PermissionDenied => {
                Error::FfmpegNotFound { program: ffmpeg.display().to_string() }
            }
            _ => Error::Io(e),
        })?;
    // Drain stderr on a thread so a chatty ffmpeg cannot block the pipe.
    let mut stderr = child.stderr.take();
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(s) = stderr.as_mut() {
            let _ = s.read_to_end(&mut buf);
        }
        buf
    });
    let mut frame = pixmap(opts.width, opts.height)?;
    let mut write_result = Ok(());
    if let Some(mut stdin) = child.stdin.take() {
        for k in 0..animator.schedule.len() {
            animator.render(k, &mut frame);
            // Opaque, so premultiplied equals straight alpha.
            if let Err(e) = stdin.write_all(frame.data()) {
                write_result = Err(e);
                break;
            }
        }
    }
    let status = child.wait()?;
    let stderr = reader.join().unwrap_or_default();
    if !status.success() || write_result.is_err() {
        let text = String::from_utf8_lossy(&stderr);
        let tail: String = text.trim().lines().rev().take(5).collect::<Vec<_>>().join(" | ");
        let tail = match (&write_result, tail.is_empty()) {
            (Err(e), true) => e.to_string(),
            _ => tail,
        };
        return Err(Error::Ffmpeg { status: status.to_string(), stderr: tail });
    }
    Ok(())
}

//! Screenshot mode output: the PNG and its sidecar JSON.
//!
//! The sidecar `<screenshot>.json` says where every joint of every clip
//! was drawn, in physical pixels of the screenshot, so a test (or a person)
//! can check the picture against the data:
//!
//! ```json
//! { "frame": 0, "width": 960, "height": 640,
//!   "view": { "x": 250, "y": 30, "width": 710, "height": 520 },
//!   "background": [236, 239, 243],
//!   "clips": [ { "name": "walk", "frame": 0, "color": [38, 110, 200],
//!                "joints": [ { "name": "Hips", "end_site": false,
//!                              "x": 612.5, "y": 301.0, "depth": 310.2 } ] } ] }
//! ```
//! `x`/`y`/`depth` are `null` for a joint behind the camera.

use std::io::Write;
use std::path::{Path, PathBuf};

use bvhkit_render::{Camera, Clip, Rgba, Stage, figure_color};
use serde_json::{Value, json};

/// The sidecar path for a screenshot: `<screenshot>.json` (the full file
/// name with `.json` appended, e.g. `shot.png.json`).
#[must_use]
pub fn sidecar_path(png: &Path) -> PathBuf {
    let mut s = png.as_os_str().to_owned();
    s.push(".json");
    PathBuf::from(s)
}

/// Where the 3D view is inside the window, in physical pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ViewRect {
    /// Left edge.
    pub x: f64,
    /// Top edge.
    pub y: f64,
    /// Width.
    pub width: f64,
    /// Height.
    pub height: f64,
}

/// The sidecar document for one picture: `clips[i]` is shown at its own
/// frame `clips[i].1`, drawn with `cam` inside `view` of a
/// `window` = `[width, height]` screenshot.
#[must_use]
pub fn sidecar(
    stage: &Stage,
    cam: &Camera,
    clips: &[(&Clip, usize)],
    timeline_frame: usize,
    view: ViewRect,
    window: [usize; 2],
    background: Rgba,
) -> Value {
    let clips: Vec<Value> = clips
        .iter()
        .enumerate()
        .map(|(i, (clip, frame))| {
            let offset = stage.offsets().get(i).copied().unwrap_or_default();
            let positions = if clip.n_frames == 0 { &[][..] } else { clip.frame(*frame) };
            let joints: Vec<Value> = positions
                .iter()
                .enumerate()
                .map(|(j, p)| {
                    let name = clip.joint_names.get(j).cloned().unwrap_or_default();
                    let end = clip.is_end_site.get(j).copied().unwrap_or(false);
                    match cam.project(*p + offset) {
                        Some((x, y, d)) => json!({
                            "name": name, "end_site": end,
                            "x": view.x + x, "y": view.y + y, "depth": d,
                        }),
                        None => json!({
                            "name": name, "end_site": end,
                            "x": null, "y": null, "depth": null,
                        }),
                    }
                })
                .collect();
            let c = figure_color(i);
            json!({
                "name": clip.name, "frame": frame, "color": [c.r, c.g, c.b], "joints": joints,
            })
        })
        .collect();
    json!({
        "frame": timeline_frame,
        "width": window[0],
        "height": window[1],
        "view": { "x": view.x, "y": view.y, "width": view.width, "height": view.height },
        "background": [background.r, background.g, background.b],
        "clips": clips,
    })
}

/// Writes 8-bit RGBA pixels (row by row, top to bottom) as a PNG, never
/// half a file (through `bvhkit-write`).
///
/// # Errors
/// When the file cannot be written or `rgba` is not `width * height * 4`
/// bytes long.
pub fn write_png(path: &Path, width: u32, height: u32, rgba: &[u8]) -> Result<(), String> {
    if rgba.len() != width as usize * height as usize * 4 {
        return Err(format!("{}: pixel buffer does not match the image size", path.display()));
    }
    write_file(path, |w| {
        let mut enc = png::Encoder::new(w, width, height);
        enc.set_color(png::ColorType::Rgba);
        enc.set_depth(png::BitDepth::Eight);
        let mut w = enc.write_header().map_err(std::io::Error::other)?;
        w.write_image_data(rgba).map_err(std::io::Error::other)?;
        w.finish().map_err(std::io::Error::other)
    })
}

/// Writes what `write` writes to `path` as every bvhkit output is written
/// (`bvhkit-write`): into a file with no name that is put in place whole,
/// so a crash leaves the old file or nothing, never half a file; a link is
/// followed, an old file keeps its mode.
///
/// # Errors
/// `write`'s, or when the file cannot be written; the message names `path`.
pub(crate) fn write_file(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), String> {
    // The crate's own errors name the path; `write`'s get it here.
    let named =
        |e: std::io::Error| std::io::Error::new(e.kind(), format!("{}: {e}", path.display()));
    bvhkit_write::Options::new()
        .write_atomic(path, |w| write(w).map_err(named))
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bvhkit_render::glam::DVec3;

    #[test]
    fn sidecar_lists_every_joint_in_window_pixels() {
        let clip = Clip {
            name: "a".into(),
            joint_names: vec!["Hips".into(), "Head".into()],
            parents: vec![None, Some(0)],
            is_end_site: vec![false, true],
            frame_time: 0.1,
            n_frames: 1,
            positions: vec![DVec3::ZERO, DVec3::Y],
        };
        let stage = Stage::new(&[&clip, &clip]);
        let cam = stage.camera(0.0, 0.0, 200, 100);
        let view = ViewRect { x: 10.0, y: 20.0, width: 200.0, height: 100.0 };
        let v = sidecar(
            &stage,
            &cam,
            &[(&clip, 0), (&clip, 0)],
            0,
            view,
            [300, 200],
            Rgba::rgb(1, 2, 3),
        );
        assert_eq!(v["clips"].as_array().unwrap().len(), 2);
        let j = &v["clips"][1]["joints"][1];
        assert_eq!(j["name"], "Head");
        assert_eq!(j["end_site"], true);
        let (x, y, _) = cam.project(DVec3::Y + stage.offsets()[1]).unwrap();
        assert!((j["x"].as_f64().unwrap() - (x + 10.0)).abs() < 1e-9);
        assert!((j["y"].as_f64().unwrap() - (y + 20.0)).abs() < 1e-9);
        assert_eq!(v["background"], json!([1, 2, 3]));
        assert_eq!(v["clips"][1]["color"], json!([226, 100, 30]));
    }

    #[test]
    fn png_round_trip_and_paths() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.png");
        assert_eq!(sidecar_path(&p), dir.path().join("s.png.json"));
        let px: Vec<u8> = (0..2 * 3 * 4).map(|i| i as u8).collect();
        write_png(&p, 2, 3, &px).unwrap();
        let dec = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&p).unwrap()));
        let mut r = dec.read_info().unwrap();
        let mut buf = vec![0; r.output_buffer_size().unwrap()];
        let info = r.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), (2, 3));
        assert_eq!(&buf[..info.buffer_size()], &px[..]);
        assert!(write_png(&p, 5, 5, &px).is_err());
        // Written again as every bvhkit output: the old file's mode stays, a
        // link is followed, and no temporary file is left beside it.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
            let link = dir.path().join("link.png");
            std::os::unix::fs::symlink("s.png", &link).unwrap();
            write_png(&link, 1, 1, &px[..4]).unwrap();
            let mode = std::fs::metadata(&p).unwrap().permissions().mode();
            assert_eq!(mode & 0o7777, 0o640);
            assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
            assert_eq!(bvhkit_testdata::file_names(dir.path()), ["link.png", "s.png"]);
            let missing = dir.path().join("no/such/s.png");
            let e = write_png(&missing, 1, 1, &px[..4]).unwrap_err();
            assert!(e.contains(&dir.path().join("no/such").display().to_string()), "{e}");
        }
    }
}

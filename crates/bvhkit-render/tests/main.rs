//! Integration tests: golden images, determinism, GIF, contact sheet, MP4
//! and degenerate input.

mod common;

use std::path::PathBuf;

use bvhkit_render::glam::DVec3;
use bvhkit_render::raster::{
    self, AnimationOptions, Error, Framing, RenderOptions, SheetOptions, render_gif, render_png,
};
use bvhkit_render::{Clip, Style};

use common::walker::walker;

fn small() -> RenderOptions {
    RenderOptions { width: 160, height: 120, ..RenderOptions::default() }
}

fn decode_png(bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    let dec = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = dec.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgba);
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

/// Compares `png` with `tests/golden/<name>.png`, or rewrites the golden
/// when `BVHKIT_BLESS=1`.
///
/// A pixel differs when a channel is more than 16 levels off; at most 0.2%
/// of the pixels may differ, so anti-aliasing changes across platforms or
/// tiny-skia versions pass while a moved bone does not.
#[track_caller]
fn check_golden(name: &str, png: &[u8]) {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(format!("{name}.png"));
    if std::env::var_os("BVHKIT_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, png).unwrap();
        return;
    }
    let expected = std::fs::read(&path).unwrap_or_else(|e| {
        panic!("{}: {e} (run with BVHKIT_BLESS=1 to create it)", path.display())
    });
    let (ew, eh, e) = decode_png(&expected);
    let (w, h, a) = decode_png(png);
    assert_eq!((w, h), (ew, eh), "{name}: size");
    let differing = e
        .chunks_exact(4)
        .zip(a.chunks_exact(4))
        .filter(|(p, q)| p.iter().zip(q.iter()).any(|(x, y)| x.abs_diff(*y) > 16))
        .count();
    let allowed = (w * h) as usize / 500;
    if differing > allowed {
        let actual = std::env::temp_dir().join(format!("bvhkit-render-{name}.actual.png"));
        std::fs::write(&actual, png).unwrap();
        panic!(
            "{name}: {differing} pixels differ (allowed {allowed}); got {}, expected {}; \
             rerun with BVHKIT_BLESS=1 if the change is intended",
            actual.display(),
            path.display()
        );
    }
}

#[test]
fn golden_walker_three_quarter() {
    let clip = walker("walk", 60, 0.0);
    check_golden("walker_3q", &render_png(&[&clip], 12, &small()).unwrap());
}

#[test]
fn golden_walker_side_highlight() {
    let clip = walker("walk", 60, 0.0);
    let opts = RenderOptions {
        azimuth: 90.0,
        elevation: 8.0,
        style: Style { highlight: Some((0, 9)), ..Style::default() },
        ..small()
    };
    check_golden("walker_side_highlight", &render_png(&[&clip], 20, &opts).unwrap());
}

#[test]
fn golden_two_walkers() {
    let a = walker("a", 45, 0.0);
    let b = walker("b", 30, 0.0);
    check_golden("two_walkers", &render_png(&[&a, &b], 40, &small()).unwrap());
}

#[test]
fn golden_contact_sheet() {
    let clip = walker("walk", 60, 0.0);
    let opts = RenderOptions { width: 80, height: 60, ..RenderOptions::default() };
    let sheet = SheetOptions { cells: 6, columns: 3, labels: true, frames: None };
    let png = raster::render_contact_sheet(&clip, &opts, &sheet).unwrap();
    let (w, h, _) = decode_png(&png);
    assert_eq!((w, h), (240, 120));
    check_golden("contact_sheet", &png);
}

#[test]
fn renders_are_byte_identical() {
    let a = walker("a", 40, 0.0);
    let b = walker("b", 40, 50.0);
    let opts = small();
    assert_eq!(render_png(&[&a, &b], 7, &opts).unwrap(), render_png(&[&a, &b], 7, &opts).unwrap());
    let anim = AnimationOptions { frames: Some(0..20), fps: None };
    assert_eq!(render_gif(&[&a], &opts, &anim).unwrap(), render_gif(&[&a], &opts, &anim).unwrap());
}

#[test]
fn gif_has_expected_frames_and_size() {
    let clip = walker("walk", 30, 0.0);
    // 10..30 at 30 fps: 20 frames; at 15 fps: every other one.
    for (fps, n_frames) in [(None, 20), (Some(15.0), 10)] {
        let anim = AnimationOptions { frames: Some(10..30), fps };
        let bytes = render_gif(&[&clip], &small(), &anim).unwrap();
        let mut opts = gif::DecodeOptions::new();
        opts.set_color_output(gif::ColorOutput::RGBA);
        let mut dec = opts.read_info(bytes.as_slice()).unwrap();
        assert_eq!((dec.width(), dec.height()), (160, 120));
        let mut count = 0;
        let mut total_delay = 0u32;
        while let Some(frame) = dec.read_next_frame().unwrap() {
            count += 1;
            total_delay += u32::from(frame.delay);
        }
        // Every frame of a walk changes something, so none is merged.
        assert_eq!(count, n_frames, "fps {fps:?}");
        // The clip's real duration in centiseconds.
        let expected = (n_frames as f64 * 100.0 / fps.unwrap_or(30.0)).round() as u32;
        assert_eq!(total_delay, expected);
    }
}

#[test]
fn gif_first_frame_matches_png() {
    let clip = walker("walk", 30, 0.0);
    // The same camera as the animation's and no labels (a still has the
    // frame number in its corner, an animation has not).
    let opts = RenderOptions { framing: Framing::Motion, labels: false, ..small() };
    let bytes =
        render_gif(&[&clip], &opts, &AnimationOptions { frames: Some(5..6), fps: None }).unwrap();
    let mut d = gif::DecodeOptions::new();
    d.set_color_output(gif::ColorOutput::RGBA);
    let mut dec = d.read_info(bytes.as_slice()).unwrap();
    let gif_px = dec.read_next_frame().unwrap().unwrap().buffer.to_vec();
    let (_, _, png_px) = decode_png(&render_png(&[&clip], 5, &opts).unwrap());
    // The palette and 5-bit lookup keep every pixel close to the original.
    let mean: f64 = gif_px.iter().zip(&png_px).map(|(a, b)| f64::from(a.abs_diff(*b))).sum::<f64>()
        / gif_px.len() as f64;
    let worst = gif_px.iter().zip(&png_px).map(|(a, b)| a.abs_diff(*b)).max().unwrap();
    assert!(mean < 1.5 && worst < 40, "mean {mean}, worst {worst}");
}

fn empty_clip() -> Clip {
    Clip {
        name: "empty".into(),
        joint_names: vec![],
        parents: vec![],
        is_end_site: vec![],
        frame_time: 1.0 / 30.0,
        n_frames: 0,
        positions: vec![],
    }
}

#[test]
fn degenerate_input_gives_errors_not_panics() {
    let opts = small();
    let anim = AnimationOptions::default();
    let empty = empty_clip();
    let e = render_png(&[&empty], 0, &opts).unwrap_err();
    assert_eq!(e.to_string(), "nothing to render: clip 'empty' has no frames");
    assert!(matches!(render_png(&[], 0, &opts), Err(Error::NoFrames { .. })));
    assert!(matches!(render_gif(&[&empty], &opts, &anim), Err(Error::NoFrames { .. })));
    assert!(raster::render_contact_sheet(&empty, &opts, &SheetOptions::default()).is_err());

    let clip = walker("walk", 10, 0.0);
    let bad_range = AnimationOptions { frames: Some(20..30), fps: None };
    assert!(matches!(render_gif(&[&clip], &opts, &bad_range), Err(Error::NoFrames { .. })));
    let zero = RenderOptions { width: 0, ..small() };
    assert_eq!(render_png(&[&clip], 0, &zero).unwrap_err().to_string(), "invalid image size 0x120");
    let huge = RenderOptions { width: 70_000, ..small() };
    assert!(matches!(render_gif(&[&clip], &huge, &anim), Err(Error::InvalidSize { .. })));

    // NaN joints, a zero-size skeleton, a frame past the end and a bad
    // frame time still render.
    let mut nan = walker("nan", 10, 0.0);
    nan.positions[3] = DVec3::NAN;
    nan.positions[40] = DVec3::new(f64::INFINITY, 0.0, 0.0);
    nan.frame_time = f64::NAN;
    let mut point = walker("point", 3, 0.0);
    point.positions.iter_mut().for_each(|p| *p = DVec3::ONE);
    let mut all_nan = walker("all_nan", 3, 0.0);
    all_nan.positions.iter_mut().for_each(|p| *p = DVec3::NAN);
    for clips in [vec![&nan], vec![&point], vec![&all_nan], vec![&nan, &point, &all_nan]] {
        render_png(&clips, 99, &opts).unwrap();
        render_gif(&clips, &opts, &anim).unwrap();
        raster::render_contact_sheet(clips[0], &opts, &SheetOptions::default()).unwrap();
    }
}

#[test]
fn contact_sheet_of_several_clips() {
    let opts = small();
    let sheet = SheetOptions { cells: 4, columns: 2, ..SheetOptions::default() };
    let (a, b) = (walker("a", 10, 0.0), walker("b", 6, 0.5));
    // One clip: the same bytes as the one-clip function.
    assert_eq!(
        raster::render_contact_sheet_of(&[&a], &opts, &sheet).unwrap(),
        raster::render_contact_sheet(&a, &opts, &sheet).unwrap()
    );
    // Two: another picture of the same size (the second figure drawn
    // beside the first in every cell), deterministic.
    let two = raster::render_contact_sheet_of(&[&a, &b], &opts, &sheet).unwrap();
    assert_ne!(two, raster::render_contact_sheet(&a, &opts, &sheet).unwrap());
    assert_eq!(two, raster::render_contact_sheet_of(&[&a, &b], &opts, &sheet).unwrap());
    assert_eq!(two[16..24], raster::render_contact_sheet(&a, &opts, &sheet).unwrap()[16..24]);
    let empty = empty_clip();
    assert!(raster::render_contact_sheet_of(&[&a, &empty], &opts, &sheet).is_err());
    assert!(raster::render_contact_sheet_of(&[], &opts, &sheet).is_err());
}

#[test]
fn mp4_without_ffmpeg_names_the_package() {
    let clip = walker("walk", 5, 0.0);
    let dir = tempfile::tempdir().unwrap();
    let err = raster::render_mp4_with(
        &dir.path().join("no-such-ffmpeg"),
        &[&clip],
        &small(),
        &AnimationOptions::default(),
        &dir.path().join("out.mp4"),
    )
    .unwrap_err();
    assert!(matches!(err, Error::FfmpegNotFound { .. }));
    assert!(err.to_string().contains("apt-get install ffmpeg"), "{err}");
}

#[cfg(unix)]
#[test]
fn mp4_pipes_raw_frames_to_ffmpeg() {
    use std::os::unix::fs::PermissionsExt;
    // A stand-in ffmpeg that stores its standard input in its last argument.
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("ffmpeg");
    std::fs::write(&fake, "#!/bin/sh\nfor a; do out=\"$a\"; done\ncat > \"$out\"\n").unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let clip = walker("walk", 12, 0.0);
    let out = dir.path().join("out.mp4");
    let anim = AnimationOptions { frames: Some(2..12), fps: Some(15.0) };
    raster::render_mp4_with(&fake, &[&clip], &small(), &anim, &out).unwrap();
    let raw = std::fs::read(&out).unwrap();
    assert_eq!(raw.len(), 5 * 160 * 120 * 4);

    let failing = dir.path().join("failing");
    std::fs::write(&failing, "#!/bin/sh\necho 'unknown encoder' >&2\nexit 3\n").unwrap();
    std::fs::set_permissions(&failing, std::fs::Permissions::from_mode(0o755)).unwrap();
    let err = raster::render_mp4_with(&failing, &[&clip], &small(), &anim, &out).unwrap_err();
    assert!(matches!(err, Error::Ffmpeg { .. }), "{err}");
    assert!(err.to_string().contains("unknown encoder"), "{err}");
}

/// Whether `name` is an executable on `PATH`.
fn on_path(name: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(name).is_file()))
}

/// With a real `ffmpeg` (CI installs Debian's): a valid H.264 MP4 with one
/// video frame per rendered frame, as `ffprobe` counts them.
#[test]
fn mp4_with_a_real_ffmpeg() {
    if !(on_path("ffmpeg") && on_path("ffprobe")) {
        assert!(
            std::env::var("BVHKIT_REQUIRE_FFMPEG").as_deref() != Ok("1"),
            "BVHKIT_REQUIRE_FFMPEG=1 but ffmpeg/ffprobe are not on PATH"
        );
        bvhkit_testdata::skip(
            "mp4_with_a_real_ffmpeg",
            "no ffmpeg on PATH (apt-get install ffmpeg)",
        );
        return;
    }
    let clip = walker("walk", 12, 0.0);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("walk.mp4");
    raster::render_mp4(&[&clip], &small(), &AnimationOptions::default(), &out).unwrap();
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(&bytes[4..8], b"ftyp", "not an MP4 container");
    let probe = std::process::Command::new("ffprobe")
        .args(["-v", "error", "-count_frames", "-select_streams", "v:0"])
        .args(["-show_entries", "stream=codec_name,width,height,nb_read_frames"])
        .args(["-of", "csv=p=0"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(probe.status.success(), "{}", String::from_utf8_lossy(&probe.stderr));
    assert_eq!(String::from_utf8_lossy(&probe.stdout).trim(), "h264,160,120,12");
}

/// A corpus file as a clip (lenient reading, position channels replace).
fn corpus_clip(path: &std::path::Path) -> Option<(bvhkit::Bvh, Clip)> {
    let bytes = std::fs::read(path).unwrap();
    let (bvh, _) = bvhkit::ReadOptions::new().lenient(true).parse(&bytes).ok()?;
    let name = path.file_stem().unwrap().to_string_lossy().into_owned();
    let clip = Clip::from_bvh(&bvh, &name, bvhkit::PositionChannels::Replace);
    Some((bvh, clip))
}

/// Pixels whose hue is figure 0's (blue over red): the figure and its label.
fn blue_pixels(rgba: &[u8], w: u32) -> Vec<(u32, u32)> {
    rgba.chunks_exact(4)
        .enumerate()
        .filter(|(_, p)| i32::from(p[2]) - i32::from(p[0]) > 50)
        .map(|(i, _)| (i as u32 % w, i as u32 / w))
        .collect()
}

fn bbox(px: &[(u32, u32)]) -> (u32, u32, u32, u32) {
    px.iter().fold((u32::MAX, u32::MAX, 0, 0), |(x0, y0, x1, y1), &(x, y)| {
        (x0.min(x), y0.min(y), x1.max(x), y1.max(y))
    })
}

/// Every corpus file: the clip's unit guess is the file's
/// (`of_clip` = `UnitGuess::of_bvh`, what the three tools use), and a
/// file without motion is one frame, its rest pose, which renders.
#[test]
fn corpus_clips_guess_the_files_units_and_render_without_motion() {
    use bvhkit_render::units::{UnitGuess, of_clip};
    let Some(_) = bvhkit_testdata::corpus_or_skip("corpus_clips_guess_the_files_units") else {
        return;
    };
    let mut no_motion = 0;
    for path in bvhkit_testdata::corpus_files() {
        let Some((bvh, clip)) = corpus_clip(&path) else { continue };
        let mode = bvhkit::PositionChannels::Replace;
        let (drawn, read) = (of_clip(&clip), UnitGuess::of_bvh(&bvh, mode));
        assert_eq!((drawn.units, drawn.size), (read.units, read.size), "{}", path.display());
        // The limb the names tell, measured on the drawn pose: the
        // skeleton's length within rounding.
        use bvhkit::units::Basis::*;
        match (drawn.basis, read.basis) {
            (Size, Size) => {}
            (Limb(a, x), Limb(b, y)) | (NoHumanLimb(a, x), NoHumanLimb(b, y)) => {
                assert_eq!(a, b, "{}", path.display());
                assert!((x - y).abs() <= 1e-9 * y, "{}: {x} against {y}", path.display());
            }
            (a, b) => panic!("{}: drawn {a:?}, read {b:?}", path.display()),
        }
        if bvh.motion().n_frames() == 0 {
            no_motion += 1;
            assert_eq!(clip.n_frames, 1);
            assert_eq!(clip.positions, bvhkit::units::rest_pose(bvh.skeleton(), mode));
            let opts = RenderOptions { labels: false, ..RenderOptions::default() };
            let (w, h, rgba) = decode_png(&render_png(&[&clip], 0, &opts).unwrap());
            let (_, y0, _, y1) = bbox(&blue_pixels(&rgba, w));
            assert!(f64::from(y1 - y0) > 0.5 * f64::from(h), "rest pose {y0}..{y1} of {h}");
        }
    }
    assert!(no_motion >= 1, "the corpus has a file without motion");
}

/// A still late in the CMU walk (it travels about 90 units, several body
/// heights): framed on the frame, the figure is centred and most of the
/// picture's height; framed on the whole motion (as an animation is), it
/// is much smaller. Its name is written just over it.
#[test]
fn a_late_still_of_a_walk_is_framed_on_the_figure() {
    let Some(dir) = bvhkit_testdata::corpus_or_skip("a_late_still_of_a_walk_is_framed") else {
        return;
    };
    let (_, clip) = corpus_clip(&dir.join("cmu_01_01_walk_cgspeed_mb_names.bvh")).unwrap();
    let frame = 2400;
    let figure = |framing: Framing, labels: bool| {
        let opts = RenderOptions { framing, labels, ..RenderOptions::default() };
        let (w, h, rgba) = decode_png(&render_png(&[&clip], frame, &opts).unwrap());
        (w, h, rgba)
    };
    let (w, h, rgba) = figure(Framing::Frame, false);
    let (x0, y0, x1, y1) = bbox(&blue_pixels(&rgba, w));
    let (cx, cy) = (f64::from(x0 + x1) / 2.0, f64::from(y0 + y1) / 2.0);
    assert!((cx / f64::from(w) - 0.5).abs() < 0.1, "x {x0}..{x1} of {w}");
    assert!((cy / f64::from(h) - 0.5).abs() < 0.15, "y {y0}..{y1} of {h}");
    let height = f64::from(y1 - y0) / f64::from(h);
    assert!(height > 0.6, "the figure is {height} of the height");
    let (w2, h2, whole) = figure(Framing::Motion, false);
    let (_, m0, _, m1) = bbox(&blue_pixels(&whole, w2));
    let whole_height = f64::from(m1 - m0) / f64::from(h2);
    assert!(whole_height < 0.6 * height, "whole motion {whole_height}, frame {height}");
    // Labels: the name just over the figure (and the frame number in the
    // corner, dark grey, outside the blue hue).
    let (_, _, labelled) = figure(Framing::Frame, true);
    let added: Vec<(u32, u32)> = blue_pixels(&labelled, w)
        .into_iter()
        .filter(|&(x, y)| !(x0..=x1).contains(&x) || !(y0..=y1).contains(&y))
        .collect();
    assert!(added.len() > 150, "only {} label pixels", added.len());
    let (lx0, _, lx1, ly1) = bbox(&added);
    assert!((f64::from(lx0 + lx1) / 2.0 - cx).abs() < 20.0, "label {lx0}..{lx1}");
    assert!(ly1 < y0 && y0 - ly1 < 30, "label bottom {ly1}, figure top {y0}");
}

/// A contact sheet over a few frames (`SheetOptions::frames`, `bvh render
/// --contact-sheet --frames`) is framed on those frames: late in the CMU
/// walk the figure fills most of each cell, where the sheet of the whole
/// walk draws it far smaller; a range with no frame of the clip is an
/// error, not an empty picture.
#[test]
fn a_contact_sheet_of_a_few_frames_is_framed_on_them() {
    let Some(dir) = bvhkit_testdata::corpus_or_skip("a_contact_sheet_of_a_few_frames") else {
        return;
    };
    let (_, clip) = corpus_clip(&dir.join("cmu_01_01_walk_cgspeed_mb_names.bvh")).unwrap();
    let opts = RenderOptions { width: 200, height: 300, labels: false, ..RenderOptions::default() };
    let height_in_first_cell = |frames: Option<std::ops::Range<usize>>| {
        let sheet = SheetOptions { cells: 2, columns: 2, labels: false, frames };
        let (w, h, rgba) = decode_png(&raster::render_contact_sheet(&clip, &opts, &sheet).unwrap());
        assert_eq!((w, h), (400, 300));
        let first: Vec<(u32, u32)> =
            blue_pixels(&rgba, w).into_iter().filter(|&(x, _)| x < 200).collect();
        let (_, y0, _, y1) = bbox(&first);
        f64::from(y1 - y0) / f64::from(h)
    };
    let close = height_in_first_cell(Some(2400..2408));
    assert!(close > 0.6, "the figure is {close} of the cell");
    let whole = height_in_first_cell(None);
    assert!(whole < 0.6 * close, "whole walk {whole}, frames 2400..2408 {close}");
    // Past the end: clamped to the last frame (one cell of it).
    let last = SheetOptions { cells: 2, frames: Some(5000..6000), ..SheetOptions::default() };
    assert!(raster::render_contact_sheet(&clip, &opts, &last).is_ok());
    let empty = SheetOptions { frames: Some(10..10), ..SheetOptions::default() };
    assert!(raster::render_contact_sheet(&clip, &opts, &empty).is_err());
}

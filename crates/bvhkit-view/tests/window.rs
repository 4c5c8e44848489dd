//! The player in a real window: runs the `bvh-view-shot` example in
//! screenshot mode (its own process: winit wants the main thread), then
//! checks the PNG against the sidecar JSON: the skeleton is on screen
//! wherever the sidecar says a joint was drawn.
//!
//! A plain `cargo test` builds the example; `cargo test --test window`
//! alone does not rebuild it, so run `cargo build -p bvhkit-view --examples`
//! first when changing the player that way.
//!
//! Needs a display. Without `DISPLAY` the window tests print SKIPPED (see
//! `bvhkit_testdata::skip`) and pass, except in CI or with
//! `BVHKIT_REQUIRE_ALL=1` or `BVHKIT_REQUIRE_DISPLAY=1`, where they fail. Under
//! CI: `Xvfb :99 -screen 0 1280x800x24 & DISPLAY=:99 cargo test -p bvhkit-view`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The example binary next to this test's: `target/<profile>/examples/`.
fn example_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let profile_dir = exe.parent().and_then(Path::parent).expect("target/<profile>");
    let bin =
        profile_dir.join("examples").join(format!("bvh-view-shot{}", std::env::consts::EXE_SUFFIX));
    assert!(bin.exists(), "{} not built (cargo test builds examples)", bin.display());
    bin
}

/// Whether a display is available; panics when one is required but missing.
fn have_display(test: &str) -> bool {
    if std::env::var_os("DISPLAY").is_some_and(|d| !d.is_empty()) {
        return true;
    }
    if std::env::var("BVHKIT_REQUIRE_DISPLAY").as_deref() == Ok("1") {
        panic!("{test}: BVHKIT_REQUIRE_DISPLAY=1 but DISPLAY is unset");
    }
    bvhkit_testdata::skip(
        test,
        "no DISPLAY (run under Xvfb, e.g. `Xvfb :99 & DISPLAY=:99 cargo test`)",
    );
    false
}

/// Runs the example with `args`, killing it after two minutes.
fn run_example(args: &[&std::ffi::OsStr]) -> (bool, String) {
    // One window at a time: three clients connecting to Xvfb at once now
    // and then got "Failed to open connection to X server" (about one run
    // in three on a loaded 2-core machine).
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut child = Command::new(example_binary())
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn bvh-view-shot");
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                use std::io::Read;
                let _ = e.read_to_string(&mut err);
            }
            return (status.success(), err);
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("bvh-view-shot did not exit within 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

struct Picture {
    width: usize,
    height: usize,
    rgba: Vec<u8>,
}

impl Picture {
    fn read(path: &Path) -> Picture {
        let dec = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
        let mut r = dec.read_info().unwrap();
        let mut buf = vec![0; r.output_buffer_size().unwrap()];
        let info = r.next_frame(&mut buf).unwrap();
        assert_eq!(info.color_type, png::ColorType::Rgba);
        buf.truncate(info.buffer_size());
        Picture { width: info.width as usize, height: info.height as usize, rgba: buf }
    }

    fn px(&self, x: usize, y: usize) -> [u8; 3] {
        let i = (y * self.width + x) * 4;
        [self.rgba[i], self.rgba[i + 1], self.rgba[i + 2]]
    }
}

fn diff(a: [u8; 3], b: [u8; 3]) -> u32 {
    a.iter().zip(&b).map(|(x, y)| u32::from(x.abs_diff(*y))).sum()
}

fn rgb(v: &Value) -> [u8; 3] {
    let a = v.as_array().unwrap();
    [0, 1, 2].map(|i| a[i].as_u64().unwrap() as u8)
}

/// Takes a screenshot of `files` at `frame` and checks it against its
/// sidecar; returns the sidecar.
fn shoot_and_check(name: &str, files: &[PathBuf], frame: usize) -> Value {
    shoot_with_keys(name, files, frame, "")
}

/// As [`shoot_and_check`], after sending the comma-separated `keys`.
fn shoot_with_keys(name: &str, files: &[PathBuf], frame: usize, keys: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let png_path = dir.path().join(format!("{name}.png"));
    let frame_s = frame.to_string();
    let mut args: Vec<&std::ffi::OsStr> = vec![
        "--shot".as_ref(),
        png_path.as_os_str(),
        "--frame".as_ref(),
        frame_s.as_ref(),
        "--size".as_ref(),
        "960x640".as_ref(),
    ];
    if !keys.is_empty() {
        args.push("--keys".as_ref());
        args.push(keys.as_ref());
    }
    args.extend(files.iter().map(|f| f.as_os_str()));
    let (ok, err) = run_example(&args);
    assert!(ok, "bvh-view-shot failed: {err}");
    let json_path = dir.path().join(format!("{name}.png.json"));
    let side: Value = serde_json::from_slice(&std::fs::read(&json_path).unwrap()).unwrap();
    let pic = Picture::read(&png_path);
    if let Ok(keep) = std::env::var("BVHKIT_VIEW_SHOTS") {
        // Keep the pictures for a person to look at.
        std::fs::create_dir_all(&keep).unwrap();
        std::fs::copy(&png_path, Path::new(&keep).join(format!("{name}.png"))).unwrap();
        std::fs::copy(&json_path, Path::new(&keep).join(format!("{name}.png.json"))).unwrap();
    }
    assert_eq!(side["width"].as_u64().unwrap() as usize, pic.width);
    assert_eq!(side["height"].as_u64().unwrap() as usize, pic.height);
    let bg = rgb(&side["background"]);
    let view = &side["view"];
    let (vx, vy) = (view["x"].as_f64().unwrap(), view["y"].as_f64().unwrap());
    let (vw, vh) = (view["width"].as_f64().unwrap(), view["height"].as_f64().unwrap());
    assert!(vw > 200.0 && vh > 200.0, "view too small: {view}");
    // The view's corners are empty background.
    for (x, y) in [(vx + 3.0, vy + 3.0), (vx + vw - 4.0, vy + 3.0)] {
        let p = pic.px(x as usize, y as usize);
        assert!(diff(p, bg) <= 12, "corner ({x}, {y}) is {p:?}, background {bg:?}");
    }
    let clips = side["clips"].as_array().unwrap();
    assert_eq!(clips.len(), files.len());
    let mut checked = 0;
    for clip in clips {
        let color = rgb(&clip["color"]);
        for j in clip["joints"].as_array().unwrap() {
            let (Some(x), Some(y)) = (j["x"].as_f64(), j["y"].as_f64()) else {
                panic!("joint {j} is behind the camera");
            };
            assert!(
                x >= vx && x < vx + vw && y >= vy && y < vy + vh,
                "joint {} of {} at ({x}, {y}) is outside the view {view}",
                j["name"],
                clip["name"]
            );
            // Something other than the background within 2 pixels.
            let (cx, cy) = (x.round() as i64, y.round() as i64);
            let drawn = (-2..=2).any(|dy| {
                (-2..=2).any(|dx| {
                    let p = pic.px((cx + dx) as usize, (cy + dy) as usize);
                    diff(p, bg) > 40
                })
            });
            assert!(drawn, "nothing drawn at joint {} of {} ({x}, {y})", j["name"], clip["name"]);
            checked += 1;
        }
        // The figure's own colour is on screen.
        let mut hits = 0;
        for y in vy as usize..(vy + vh) as usize {
            for x in vx as usize..(vx + vw) as usize {
                if diff(pic.px(x, y), color) < 45 {
                    hits += 1;
                }
            }
        }
        assert!(hits > 40, "figure colour {color:?} of {} barely on screen: {hits}", clip["name"]);
    }
    assert!(checked > 0);
    side
}

/// A small skeleton in centimetres, walking along +X.
fn stick_bvh(dx: f64) -> String {
    let mut s = String::from(
        "HIERARCHY
ROOT Hips
{
  OFFSET 0 90 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Spine
  {
    OFFSET 0 40 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    JOINT Head
    {
      OFFSET 0 40 0
      CHANNELS 3 Zrotation Xrotation Yrotation
      End Site
      {
        OFFSET 0 18 0
      }
    }
    JOINT LeftArm
    {
      OFFSET 15 30 0
      CHANNELS 3 Zrotation Xrotation Yrotation
      End Site
      {
        OFFSET 0 -55 0
      }
    }
    JOINT RightArm
    {
      OFFSET -15 30 0
      CHANNELS 3 Zrotation Xrotation Yrotation
      End Site
      {
        OFFSET 0 -55 0
      }
    }
  }
  JOINT LeftUpLeg
  {
    OFFSET 10 0 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 -88 0
    }
  }
  JOINT RightUpLeg
  {
    OFFSET -10 0 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 -88 0
    }
  }
}
MOTION
Frames: 10
Frame Time: 0.0333333
",
    );
    for f in 0..10 {
        let swing = (f as f64 * 0.6).sin() * 25.0;
        s.push_str(&format!(
            "{} 90 0 0 0 0 0 0 0 0 0 0 {swing} 0 0 {} 0 0 {} 0 0 {swing} 0 0\n",
            dx * f as f64,
            -swing,
            -swing
        ));
    }
    s
}

/// Writes [`stick_bvh`]`(dx)` to `dir/name.bvh` and returns its path.
fn write_stick(dir: &Path, name: &str, dx: f64) -> PathBuf {
    let path = dir.join(format!("{name}.bvh"));
    std::fs::write(&path, stick_bvh(dx)).unwrap();
    path
}

#[test]
fn missing_file_fails_before_opening_a_window() {
    let (ok, err) = run_example(&["/nonexistent/nothing.bvh".as_ref()]);
    assert!(!ok);
    assert!(err.contains("cannot open: /nonexistent/nothing.bvh"), "{err}");
}

#[test]
fn synthetic_clips_side_by_side_are_on_screen() {
    if !have_display("synthetic_clips_side_by_side_are_on_screen") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let a = write_stick(dir.path(), "walker", 5.0);
    let b = write_stick(dir.path(), "stander", 0.0);
    let side = shoot_and_check("synthetic", &[a, b], 4);
    assert_eq!(side["frame"], 4);
    assert_eq!(side["clips"][0]["name"], "walker");
    assert_eq!(side["clips"][1]["frame"], 4);
    // Side by side: the second figure is to the right of the first.
    let hips = |c: usize| side["clips"][c]["joints"][0]["x"].as_f64().unwrap();
    assert!(hips(1) > hips(0) + 50.0, "{} {}", hips(0), hips(1));
}

#[test]
fn corpus_walk_is_on_screen() {
    if !have_display("corpus_walk_is_on_screen") {
        return;
    }
    let Some(file) = bvhkit_testdata::corpus_file_or_skip(
        "corpus_walk_is_on_screen",
        "cmu_01_01_walk_cgspeed_mb_names.bvh",
    ) else {
        return;
    };
    let side = shoot_and_check("corpus_walk", &[file], 120);
    assert_eq!(side["clips"][0]["joints"].as_array().unwrap().len(), 38);
}

#[test]
fn keyboard_shortcuts_drive_the_timeline() {
    if !have_display("keyboard_shortcuts_drive_the_timeline") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let files = [write_stick(dir.path(), "walker", 5.0)];
    // From frame 4: Right, Right, Left steps to 5; nothing plays.
    let side = shoot_with_keys("keys_step", &files, 4, "Right,Right,Left");
    assert_eq!(side["frame"], 5);
    assert_eq!(side["playing"], false);
    // Space starts playing, End jumps to the last frame (9), Home to 0.
    let side = shoot_with_keys("keys_play", &files, 4, "Space,End");
    assert_eq!(side["frame"], 9);
    assert_eq!(side["playing"], true);
    let side = shoot_with_keys("keys_home", &files, 4, "Home");
    assert_eq!(side["frame"], 0);
    assert_eq!(side["playing"], false);
    // The figure drawn is the one of the frame reached.
    assert_eq!(side["clips"][0]["frame"], 0);
}

#[test]
fn an_unknown_key_is_refused() {
    let (ok, err) =
        run_example(&["--shot".as_ref(), "x.png".as_ref(), "--keys".as_ref(), "Spaec".as_ref()]);
    assert!(!ok);
    assert!(err.contains("unknown key 'Spaec'"), "{err}");
}

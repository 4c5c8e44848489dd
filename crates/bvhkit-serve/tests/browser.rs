//! The page in a real headless browser (Chromium).
//!
//! Each check runs Chromium twice against the same URL: once with `--dump-dom` to
//! read the projected joint positions the page writes into `<pre id="debug">` when
//! given `?debug=1`, once with `--screenshot` to check that the skeleton is drawn
//! there. Chromium is looked for in `$BVHKIT_CHROMIUM`, then on `PATH` as
//! `chromium`, `chromium-browser`, `google-chrome`. Without one the tests print a
//! skip notice and pass (`bvhkit_testdata::skip`), except in CI or with
//! `BVHKIT_REQUIRE_ALL=1` or `BVHKIT_REQUIRE_BROWSER=1`, where they fail.
//! `BVHKIT_KEEP_SCREENSHOT=<dir>` keeps the screenshots for a look.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use bvhkit_testdata::chromium_or_skip;
use common::{Running, stick_clip};
use serde_json::Value;

const WIDTH: u32 = 1000;
const HEIGHT: u32 = 700;
/// Fixed canvas size (`?size=`): `--dump-dom` and `--screenshot` runs get different
/// viewports from the same `--window-size`, so the canvas must not depend on it.
const CANVAS: &str = "740x560";

/// Headless Chromium on `url` at the test's window size, `extra` arguments
/// added: its standard output.
fn run_chromium(chromium: &Path, url: &str, extra: &[String]) -> String {
    let mut args =
        vec!["--virtual-time-budget=3000".to_string(), format!("--window-size={WIDTH},{HEIGHT}")];
    args.extend_from_slice(extra);
    bvhkit_testdata::run_headless_chromium(chromium, url, &args, Duration::from_secs(90))
}

/// The page's debug state for `query` (e.g. `frame=3`), read from the dumped DOM.
fn debug_state(chromium: &Path, server: &Running, query: &str) -> Value {
    let url = server.url(&format!("/?debug=1&size={CANVAS}&{query}"));
    let dom = run_chromium(chromium, &url, &["--dump-dom".to_string()]);
    let start =
        dom.find("<pre id=\"debug\"").unwrap_or_else(|| panic!("no debug element in:\n{dom}"));
    let body = &dom[start..];
    let body = &body[body.find('>').unwrap() + 1..body.find("</pre>").unwrap()];
    let text = body
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    let state: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text:?}"));
    assert_eq!(state["ready"], true, "page not ready: {state}");
    assert_eq!(state["errors"].as_array().map(Vec::len), Some(0), "page errors: {state}");
    state
}

/// Screenshot of the page for `query`, decoded to RGB rows.
fn screenshot(chromium: &Path, server: &Running, query: &str, keep_as: &str) -> Image {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("shot.png");
    let url = server.url(&format!("/?debug=1&size={CANVAS}&{query}"));
    run_chromium(chromium, &url, &[format!("--screenshot={}", file.display())]);
    if let Some(keep) = std::env::var_os("BVHKIT_KEEP_SCREENSHOT") {
        std::fs::create_dir_all(&keep).unwrap();
        std::fs::copy(&file, Path::new(&keep).join(keep_as)).unwrap();
    }
    Image::decode(&file)
}

struct Image {
    width: u32,
    height: u32,
    rgb: Vec<[u8; 3]>,
}

impl Image {
    fn decode(path: &Path) -> Image {
        let decoder =
            png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        let channels = info.color_type.samples();
        assert_eq!(info.bit_depth, png::BitDepth::Eight);
        let rgb = buf[..info.buffer_size()]
            .chunks_exact(channels)
            .map(|px| if channels >= 3 { [px[0], px[1], px[2]] } else { [px[0]; 3] })
            .collect();
        Image { width: info.width, height: info.height, rgb }
    }

    fn at(&self, x: i64, y: i64) -> Option<[u8; 3]> {
        (x >= 0 && y >= 0 && x < self.width as i64 && y < self.height as i64)
            .then(|| self.rgb[(y as usize) * self.width as usize + x as usize])
    }
}

/// Skeletons are drawn in saturated clip colours; background, grid and text are grey.
fn is_skeleton(px: [u8; 3]) -> bool {
    let max = px.iter().max().unwrap();
    let min = px.iter().min().unwrap();
    max - min > 50
}

/// Projected joints `(x, y)` of each clip, in screenshot pixels.
fn joints(state: &Value) -> Vec<Vec<Option<(f64, f64)>>> {
    let dpr = state["dpr"].as_f64().unwrap();
    state["clips"]
        .as_array()
        .unwrap()
        .iter()
        .map(|clip| {
            clip["joints"]
                .as_array()
                .unwrap()
                .iter()
                .map(|j| {
                    j.as_array()
                        .map(|xy| (xy[0].as_f64().unwrap() * dpr, xy[1].as_f64().unwrap() * dpr))
                })
                .collect()
        })
        .collect()
}

fn dist_to_segment(p: (f64, f64), a: (f64, f64), b: (f64, f64)) -> f64 {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let len2 = dx * dx + dy * dy;
    let t = if len2 > 0.0 {
        (((p.0 - a.0) * dx + (p.1 - a.1) * dy) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    ((p.0 - a.0 - t * dx).powi(2) + (p.1 - a.1 - t * dy).powi(2)).sqrt()
}

#[test]
fn skeletons_are_drawn_where_the_page_says() {
    let Some(chromium) = chromium_or_skip("skeletons_are_drawn_where_the_page_says") else {
        return;
    };
    let clips = [stick_clip("walk", 30), stick_clip("walk2", 20)];
    let parents: Vec<Option<usize>> = clips[0].parents.clone();
    let server = Running::start(&clips);
    let query = "frame=10";
    let state = debug_state(&chromium, &server, query);
    let image = screenshot(&chromium, &server, query, "skeletons.png");
    assert_eq!((image.width, image.height), (WIDTH, HEIGHT));
    assert_eq!(state["units"], "cm");
    assert_eq!(state["frame"], 10);

    let joints = joints(&state);
    assert_eq!(joints.len(), 2);
    for clip in &joints {
        assert_eq!(clip.len(), 16);
        for (j, p) in clip.iter().enumerate() {
            let (x, y) = p.unwrap_or_else(|| panic!("joint {j} not projected"));
            assert!(
                x > 0.0 && y > 0.0 && x < WIDTH as f64 && y < HEIGHT as f64,
                "joint {j} off screen"
            );
            let drawn = (-3..=3).any(|dy| {
                (-3..=3).any(|dx| image.at(x as i64 + dx, y as i64 + dy).is_some_and(is_skeleton))
            });
            assert!(drawn, "nothing drawn at joint {j} ({x}, {y})");
        }
    }

    // Side by side: the second clip is offset along +X, to the right on screen.
    let mean_x =
        |c: &Vec<Option<(f64, f64)>>| c.iter().map(|p| p.unwrap().0).sum::<f64>() / c.len() as f64;
    assert!(mean_x(&joints[1]) > mean_x(&joints[0]) + 50.0);
    let max_x0 = joints[0].iter().map(|p| p.unwrap().0).fold(f64::MIN, f64::max);
    let min_x1 = joints[1].iter().map(|p| p.unwrap().0).fold(f64::MAX, f64::min);
    assert!(max_x0 < min_x1, "clips overlap on screen: {max_x0} >= {min_x1}");

    // Negative control: skeleton-coloured pixels only near bones and joints.
    let canvas = &state["canvas"];
    let (left, top) = (canvas["left"].as_f64().unwrap(), canvas["top"].as_f64().unwrap());
    let (right, bottom) =
        (left + canvas["width"].as_f64().unwrap(), top + canvas["height"].as_f64().unwrap());
    let mut n_skeleton = 0;
    for y in top as i64..bottom as i64 {
        for x in left as i64..right as i64 {
            if !image.at(x, y).is_some_and(is_skeleton) {
                continue;
            }
            n_skeleton += 1;
            let p = (x as f64, y as f64);
            let near = joints.iter().any(|clip| {
                clip.iter().enumerate().any(|(j, q)| {
                    let q = q.unwrap();
                    let a = parents[j].map_or(q, |parent| clip[parent].unwrap());
                    dist_to_segment(p, a, q) < 25.0
                })
            });
            assert!(near, "skeleton-coloured pixel far from any bone at ({x}, {y})");
        }
    }
    assert!(n_skeleton > 500, "only {n_skeleton} skeleton pixels");
}

#[test]
fn controls_change_the_pose() {
    let Some(chromium) = chromium_or_skip("controls_change_the_pose") else { return };
    let server = Running::start(&[stick_clip("walk", 30)]);
    let hips = |state: &Value| joints(state)[0][0].unwrap();
    let left_hand = |state: &Value| joints(state)[0][5].unwrap();

    let first = debug_state(&chromium, &server, "");
    assert_eq!(first["frame"], 0);
    assert_eq!(first["n_frames"], 30);
    assert_eq!(first["playing"], false);
    assert_eq!(first["units"], "cm");

    let later = debug_state(&chromium, &server, "frame=5");
    assert_eq!(later["frame"], 5);
    assert_ne!(left_hand(&first), left_hand(&later), "pose did not change with the frame");

    let stepped =
        debug_state(&chromium, &server, "keys=ArrowRight,ArrowRight,ArrowRight,ArrowLeft");
    assert_eq!(stepped["frame"], 2);
    let end = debug_state(&chromium, &server, "frame=3&keys=End");
    assert_eq!(end["frame"], 29);
    let home = debug_state(&chromium, &server, "frame=7&keys=Home");
    assert_eq!(home["frame"], 0);
    let played = debug_state(&chromium, &server, "keys=Space&speed=2.5");
    assert_eq!(played["playing"], true);
    assert_eq!(played["speed"], 2.5);

    // Playback advances by elapsed time times speed, at the clip's 30 fps
    // (`elapse` runs the animation loop's clock for that many seconds).
    for (query, frame, playing) in [
        ("elapse=0.5", 15, false),
        ("elapse=0.4&speed=2", 24, false),
        ("elapse=0.5&speed=0.1", 1, false),
        ("elapse=1.1", 3, false),         // looped past the end
        ("elapse=1.1&loop=0", 29, false), // stopped at the end
        ("frame=10&range=10-19&elapse=0.5", 15, false), // 25 wraps inside the loop range
    ] {
        let state = debug_state(&chromium, &server, query);
        assert_eq!(
            (&state["frame"], &state["playing"]),
            (&frame.into(), &playing.into()),
            "{query}"
        );
    }

    // Without "in place" the root walks across the screen; with it, it stays put.
    let walk0 = debug_state(&chromium, &server, "frame=0&inplace=1");
    let walk20 = debug_state(&chromium, &server, "frame=20&inplace=1");
    assert_eq!(walk20["in_place"], true);
    let (a, b) = (hips(&walk0), hips(&walk20));
    assert!((a.0 - b.0).abs() < 0.5 && (a.1 - b.1).abs() < 0.5, "{a:?} vs {b:?}");
    let moved = debug_state(&chromium, &server, "frame=20");
    let c = hips(&moved);
    assert!((c.0 - hips(&first).0).abs() + (c.1 - hips(&first).1).abs() > 5.0, "root did not move");

    // Selecting a joint shows its world position at the current frame.
    let selected = debug_state(&chromium, &server, "frame=2&select=LeftHand");
    assert_eq!(selected["selected"]["j"], 5);
    let text = selected["selected_text"].as_str().unwrap();
    let z = 4.0 + 25.0 * (0.6f64).sin();
    assert!(text.contains("LeftHand"), "{text}");
    assert!(text.contains(&format!("y 110.00  z {z:.2}")), "{text}");

    // The selected joint is ringed in white on screen.
    let image = screenshot(&chromium, &server, "frame=2&select=LeftHand", "selected.png");
    let (x, y) = left_hand(&selected);
    let ringed = (-14..=14).any(|dy| {
        (-14..=14).any(|dx| {
            image.at(x as i64 + dx, y as i64 + dy).is_some_and(|px| px.iter().all(|&c| c > 230))
        })
    });
    assert!(ringed, "no highlight around the selected joint at ({x}, {y})");
}

#[test]
fn broken_clips_do_not_break_the_page() {
    let Some(chromium) = chromium_or_skip("broken_clips_do_not_break_the_page") else { return };
    let mut holes = stick_clip("holes", 10);
    for f in 0..10 {
        holes.positions[f * 16 + 3].y = f64::NAN; // Head_End missing in every frame
    }
    holes.frame_time = 0.0;
    let mut empty = stick_clip("empty", 0);
    empty.joint_names.clear();
    let server = Running::start(&[holes, empty]);
    let state = debug_state(&chromium, &server, "frame=4&keys=ArrowRight,f");
    assert_eq!(state["frame"], 5);
    let joints = joints(&state);
    assert!(joints[0][3].is_none(), "a joint without a position was drawn");
    assert!(joints[0][2].is_some());
    assert!(joints[1].iter().all(Option::is_none));
}

/// A real recording through the whole pipeline (parse, FK, JSON, page):
/// the ShaderMotion capture of the shared corpus, whose five glitch frames
/// (the figure 2.5 km away) the page leaves out of its framing, so the
/// figure fills the view instead of shrinking to a dot.
#[test]
fn a_corpus_recording_with_glitch_frames_is_framed_on_the_figure() {
    let Some(chromium) =
        chromium_or_skip("a_corpus_recording_with_glitch_frames_is_framed_on_the_figure")
    else {
        return;
    };
    let Some(file) = bvhkit_testdata::corpus_file_or_skip(
        "a_corpus_recording_with_glitch_frames_is_framed_on_the_figure",
        "shadermotion_vrchat_tab_separated.bvh",
    ) else {
        return;
    };
    let (bvh, _) =
        bvhkit::ReadOptions::new().lenient(true).parse(&std::fs::read(&file).unwrap()).unwrap();
    let clip =
        bvhkit_render::Clip::from_bvh(&bvh, "shadermotion", bvhkit::PositionChannels::Replace);
    assert_eq!(clip.glitch_frames(), vec![2, 3, 4, 5, 6]);
    let server = Running::start(std::slice::from_ref(&clip));
    let state = debug_state(&chromium, &server, "frame=100");
    let image = screenshot(&chromium, &server, "frame=100", "corpus.png");
    let joints = joints(&state);
    assert_eq!(joints[0].len(), bvh.skeleton().len());
    let ys: Vec<f64> = joints[0].iter().map(|p| p.expect("joint projected").1).collect();
    for (j, p) in joints[0].iter().enumerate() {
        let (x, y) = p.unwrap();
        let drawn = (-3..=3).any(|dy| {
            (-3..=3).any(|dx| image.at(x as i64 + dx, y as i64 + dy).is_some_and(is_skeleton))
        });
        assert!(drawn, "nothing drawn at joint {j} ({x}, {y})");
    }
    let tall =
        ys.iter().copied().fold(f64::MIN, f64::max) - ys.iter().copied().fold(f64::MAX, f64::min);
    assert!(tall > 0.3 * HEIGHT as f64, "the figure is only {tall} px tall on screen");
}

/// A CMU walker (about 25 units tall) beside the same walk in metres: the
/// page reads the units the server guessed (the one guess of
/// `bvhkit_render::units`, which `bvh render` makes too), so both are drawn
/// 1.5 m tall.
#[test]
fn a_cmu_recording_is_shown_in_the_units_the_server_guessed() {
    let Some(chromium) =
        chromium_or_skip("a_cmu_recording_is_shown_in_the_units_the_server_guessed")
    else {
        return;
    };
    let Some(file) = bvhkit_testdata::corpus_file_or_skip(
        "a_cmu_recording_is_shown_in_the_units_the_server_guessed",
        "cmu_01_01_walk_cgspeed_mb_names.bvh",
    ) else {
        return;
    };
    use bvhkit_render::units::{CMU_UNIT_M, Units, of_clip};
    let (bvh, _) =
        bvhkit::ReadOptions::new().lenient(true).parse(&std::fs::read(&file).unwrap()).unwrap();
    let cmu = bvhkit_render::Clip::from_bvh(&bvh, "cmu", bvhkit::PositionChannels::Replace);
    let mut metres = cmu.clone().scaled(CMU_UNIT_M);
    metres.name = "metres".into();
    assert_eq!(of_clip(&cmu).units, Units::CmuScale);
    assert_eq!(of_clip(&metres).units, Units::Metres);
    let server = Running::start(&[cmu.clone(), metres]);
    let state = debug_state(&chromium, &server, "frame=0&inplace=1");
    let _ = screenshot(&chromium, &server, "frame=0&inplace=1", "cmu_and_metres.png");
    assert_eq!(state["units"], "cmu, m");
    let shown = &state["clips"][0];
    assert_eq!(shown["units"], "cmu");
    assert!((shown["height"].as_f64().unwrap() - of_clip(&cmu).size).abs() < 1e-3);
    // Both are drawn in metres, as tall as the guess says the CMU walker is
    // (26.07 CMU units, 1.47 m; the screenshot shows them so; perspective
    // makes the nearer one taller on screen).
    let expected = of_clip(&cmu).drawn_size_m();
    assert!((1.4..1.6).contains(&expected), "the CMU walker is {expected} m tall");
    for clip in state["clips"].as_array().unwrap() {
        let m = clip["height_m"].as_f64().unwrap();
        assert!((m - expected).abs() < 0.01, "{} drawn {m} m tall, not {expected}", clip["name"]);
    }
    for clip in joints(&state) {
        let ys: Vec<f64> = clip.iter().map(|p| p.expect("joint projected").1).collect();
        let tall = ys.iter().copied().fold(f64::MIN, f64::max)
            - ys.iter().copied().fold(f64::MAX, f64::min);
        assert!(tall > 0.2 * HEIGHT as f64, "a figure is only {tall} px tall on screen");
    }
}

/// Nine clips stand in a 3 x 3 grid, not in one long row: on screen their
/// centres fall into three rows of three, in clip order, left to right and
/// front (lower on screen) to back, every figure drawn and on screen.
#[test]
fn many_clips_stand_in_a_grid() {
    let Some(chromium) = chromium_or_skip("many_clips_stand_in_a_grid") else { return };
    let clips: Vec<_> = (0..9).map(|k| stick_clip(&format!("walk{k}"), 30)).collect();
    let server = Running::start(&clips);
    let state = debug_state(&chromium, &server, "frame=10");
    let image = screenshot(&chromium, &server, "frame=10", "grid.png");
    assert_eq!(state["grid"], serde_json::json!({"cols": 3, "rows": 3}));
    let joints = joints(&state);
    assert_eq!(joints.len(), 9);
    let mut centres = Vec::new();
    for (k, clip) in joints.iter().enumerate() {
        assert_eq!(state["clips"][k]["cell"], serde_json::json!([k % 3, k / 3]));
        let points: Vec<(f64, f64)> = clip
            .iter()
            .map(|p| p.unwrap_or_else(|| panic!("clip {k}: joint not projected")))
            .collect();
        for &(x, y) in &points {
            assert!(
                x > 0.0 && y > 0.0 && x < WIDTH as f64 && y < HEIGHT as f64,
                "clip {k} off screen"
            );
            let drawn = (-3..=3).any(|dy| {
                (-3..=3).any(|dx| image.at(x as i64 + dx, y as i64 + dy).is_some_and(is_skeleton))
            });
            assert!(drawn, "clip {k}: nothing drawn at ({x}, {y})");
        }
        let n = points.len() as f64;
        centres.push((
            points.iter().map(|p| p.0).sum::<f64>() / n,
            points.iter().map(|p| p.1).sum::<f64>() / n,
        ));
    }
    // Three rows: sorted by height on screen, the centres split into groups of
    // three (clips 0-2, 3-5, 6-8) by two gaps far wider than any gap inside a group.
    let mut order: Vec<usize> = (0..9).collect();
    order.sort_by(|&a, &b| centres[b].1.total_cmp(&centres[a].1)); // lowest on screen first
    let groups: Vec<Vec<usize>> = order
        .chunks(3)
        .map(|g| {
            let mut g = g.to_vec();
            g.sort_unstable();
            g
        })
        .collect();
    assert_eq!(groups, [vec![0, 1, 2], vec![3, 4, 5], vec![6, 7, 8]], "centres {centres:?}");
    let ys: Vec<f64> = order.iter().map(|&k| centres[k].1).collect();
    let gaps: Vec<f64> = ys.windows(2).map(|w| w[0] - w[1]).collect();
    let within = [gaps[0], gaps[1], gaps[3], gaps[4], gaps[6], gaps[7]];
    let within = within.iter().copied().fold(0.0, f64::max);
    assert!(gaps[2] > 3.0 * within && gaps[5] > 3.0 * within, "rows not apart: {gaps:?}");
    // Within a row, columns left to right, no figure overlapping its neighbour.
    for row in 0..3 {
        for col in 0..2 {
            let (a, b) = (row * 3 + col, row * 3 + col + 1);
            let right_of_a = joints[a].iter().map(|p| p.unwrap().0).fold(f64::MIN, f64::max);
            let left_of_b = joints[b].iter().map(|p| p.unwrap().0).fold(f64::MAX, f64::min);
            assert!(
                right_of_a < left_of_b,
                "clips {a} and {b} overlap: {right_of_a} >= {left_of_b}"
            );
        }
    }
}

/// Serves a live feed whose skeleton carries the whole `walk` (so the view is
/// framed as for the clip itself); once the page has connected, pushes frames
/// 1 to `last` of it and finishes the feed.
fn live_server(walk: &bvhkit_serve::Clip, last: usize) -> (Running, std::thread::JoinHandle<()>) {
    let server = Running::start(&[]);
    let feed = server.feed.clone();
    feed.set_skeleton(walk);
    let walk = walk.clone();
    let pusher = std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(60);
        while feed.subscribers() == 0 {
            assert!(Instant::now() < deadline, "the page never connected to the live feed");
            std::thread::sleep(Duration::from_millis(5));
        }
        let n = walk.n_joints();
        for f in 1..=last {
            feed.push(f as f64 * walk.frame_time, &walk.positions[f * n..(f + 1) * n]).unwrap();
        }
        feed.finish();
    });
    (server, pusher)
}

/// Frames pushed from Rust move the figure in the page: after frames 1 to 20
/// of a walk arrive (in order, none missing), the page shows frame 20 exactly
/// where the clip player shows frame 20 of the same walk, and draws it there.
#[test]
fn live_frames_move_the_figure() {
    let Some(chromium) = chromium_or_skip("live_frames_move_the_figure") else { return };
    let walk = stick_clip("walk", 30);

    let (server, pusher) = live_server(&walk, 20);
    let state = debug_state(&chromium, &server, "live=1");
    pusher.join().unwrap();
    let live = &state["live"];
    assert_eq!(live["seq"], 20, "{live}");
    assert_eq!(live["frames"], 20, "{live}");
    assert_eq!((&live["gaps"], &live["stale"]), (&0.into(), &0.into()), "{live}");
    assert_eq!(live["ended"], true);
    assert!((live["time"].as_f64().unwrap() - 20.0 / 30.0).abs() < 1e-9, "{live}");
    assert!(live["latency_ms"].as_f64().is_some_and(f64::is_finite), "{live}");

    // The same pose through the clip player (clips.json, frame=20).
    let clip_server = Running::start(std::slice::from_ref(&walk));
    let reference = debug_state(&chromium, &clip_server, "frame=20");
    let (got, want) = (joints(&state), joints(&reference));
    assert_eq!(got[0].len(), 16);
    for (j, (g, w)) in got[0].iter().zip(&want[0]).enumerate() {
        let (g, w) = (g.unwrap(), w.unwrap());
        assert!((g.0 - w.0).abs() < 0.5 && (g.1 - w.1).abs() < 0.5, "joint {j}: {g:?} vs {w:?}");
    }
    // And not the rest pose it started from.
    let rest = debug_state(&chromium, &clip_server, "frame=0");
    let moved = joints(&rest)[0].iter().zip(&got[0]).any(|(r, g)| {
        let (r, g) = (r.unwrap(), g.unwrap());
        (r.0 - g.0).abs() + (r.1 - g.1).abs() > 5.0
    });
    assert!(moved, "the live figure still shows the rest pose");

    // On screen, with its own feed (each page run gets one).
    let (server, pusher) = live_server(&walk, 20);
    let image = screenshot(&chromium, &server, "live=1", "live.png");
    pusher.join().unwrap();
    for (j, p) in got[0].iter().enumerate() {
        let (x, y) = p.unwrap();
        let drawn = (-3..=3).any(|dy| {
            (-3..=3).any(|dx| image.at(x as i64 + dx, y as i64 + dy).is_some_and(is_skeleton))
        });
        assert!(drawn, "nothing drawn at live joint {j} ({x}, {y})");
    }
}

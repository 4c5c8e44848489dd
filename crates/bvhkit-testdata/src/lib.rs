//! Deterministic synthetic BVH text and corpus lookup for bvhkit's tests
//! and benches.
//!
//! - [`synth_text`] makes a humanoid-like skeleton (spine, limbs, then
//!   fingers and extra chains as `joints` grows) with mixed rotation orders,
//!   six channels on the root (and on a few other joints), and a motion of
//!   smooth random walks written like real exporters write them
//!   (`-12.345678`, with a sprinkle of `1.234567e-05`).
//! - [`synth_text_of_size`] picks the frame count for a target size.
//! - [`corpus_dir`], [`corpus_files`] and [`largest_corpus_files`] find the shared corpus of
//!   real files, when it is there.
//! - [`golden_positions`] and [`position_rows`] read the golden world
//!   positions and `bvh positions` CSV output.
//! - [`assert_bit_identical`] compares two models bit for bit (round-trip
//!   tests and the fuzz target).
//! - [`to_y_up`] is the export tests' reference of an up axis turned to Y
//!   up, written out by hand (not the core's `AxesMap`).
//! - [`corpus_file_or_skip`] finds one named corpus file; [`chromium_or_skip`]
//!   and [`run_headless_chromium`] find and run the browser the page and
//!   glTF tests draw with.
//!
//! The same arguments always give the same bytes, on every platform.
//!
//! # Example
//! ```
//! let text = bvhkit_testdata::synth_text(7, 30, 100);
//! assert!(text.starts_with("HIERARCHY\nROOT Hips\n"));
//! assert_eq!(text, bvhkit_testdata::synth_text(7, 30, 100));
//! ```
//!
//! # Implementation notes
//!
//! A deterministic synthetic BVH generator for tests and benchmarks (the 100 MB
//! benchmark input is generated, never committed), the one lookup of the shared
//! corpus (`corpus_dir`, honouring `BVHKIT_CORPUS`; `corpus_file_or_skip` for
//! one named file), the one way the tests find and run headless Chromium
//! (`chromium_or_skip`, `run_headless_chromium`: the browser player's and the
//! glTF viewer's tests) and the one bit-for-bit model comparison
//! (`assert_bit_identical`) that the tests, benches and fuzz target share; and
//! the cargo-fuzz targets for the parser (their own workspace): `parse`
//! (arbitrary bytes, with a keyword dictionary) and `expand` (a small
//! `arbitrary` description expanded into a BVH text of up to 4 MiB, so the
//! parallel parser and the streaming reader's read boundaries are exercised),
//! both through one set of checks (`fuzz_targets/common.rs`).

use std::path::{Path, PathBuf};

/// SplitMix64: tiny, fast, and the same everywhere.
#[derive(Clone, Debug)]
struct Rng(u64);

impl Rng {
    fn new(seed: u64, stream: u64) -> Rng {
        Rng(seed ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15))
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }

    /// True with probability `1 / n`.
    fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }
}

/// The humanoid template: (name, parent index, offset in cm).
const HUMANOID: &[(&str, usize, [f64; 3])] = &[
    ("Hips", usize::MAX, [0.0, 0.0, 0.0]),
    ("Spine", 0, [0.0, 10.5, -1.2]),
    ("Spine1", 1, [0.0, 12.25, 0.0]),
    ("Spine2", 2, [0.0, 11.75, 0.5]),
    ("Neck", 3, [0.0, 14.0, 1.5]),
    ("Head", 4, [0.0, 9.5, 2.0]),
    ("LeftShoulder", 3, [4.5, 10.0, 0.0]),
    ("LeftArm", 6, [12.0, 0.0, 0.0]),
    ("LeftForeArm", 7, [27.5, 0.0, 0.0]),
    ("LeftHand", 8, [24.75, 0.0, 0.0]),
    ("RightShoulder", 3, [-4.5, 10.0, 0.0]),
    ("RightArm", 10, [-12.0, 0.0, 0.0]),
    ("RightForeArm", 11, [-27.5, 0.0, 0.0]),
    ("RightHand", 12, [-24.75, 0.0, 0.0]),
    ("LeftUpLeg", 0, [9.25, -4.0, 0.0]),
    ("LeftLeg", 14, [0.0, -42.5, 0.0]),
    ("LeftFoot", 15, [0.0, -41.0, -1.0]),
    ("LeftToeBase", 16, [0.0, -6.5, 12.5]),
    ("RightUpLeg", 0, [-9.25, -4.0, 0.0]),
    ("RightLeg", 18, [0.0, -42.5, 0.0]),
    ("RightFoot", 19, [0.0, -41.0, -1.0]),
    ("RightToeBase", 20, [0.0, -6.5, 12.5]),
];

const FINGERS: [&str; 5] = ["Thumb", "Index", "Middle", "Ring", "Pinky"];

const ORDERS: [[u8; 3]; 6] = [
    [b'Z', b'X', b'Y'],
    [b'Z', b'Y', b'X'],
    [b'Y', b'X', b'Z'],
    [b'X', b'Y', b'Z'],
    [b'Y', b'Z', b'X'],
    [b'X', b'Z', b'Y'],
];

struct Node {
    name: String,
    parent: Option<usize>,
    offset: [f64; 3],
    /// Position channels before the rotations (root and a few others).
    positions: bool,
    order: [u8; 3],
    children: Vec<usize>,
}

fn build_tree(rng: &mut Rng, joints: usize) -> Vec<Node> {
    let main_order = ORDERS[rng.below(3) as usize];
    let mut nodes: Vec<Node> = Vec::with_capacity(joints);
    let push = |nodes: &mut Vec<Node>,
                rng: &mut Rng,
                name: String,
                parent: Option<usize>,
                offset: [f64; 3]| {
        let order = if parent.is_some() && rng.one_in(5) {
            ORDERS[rng.below(6) as usize]
        } else {
            main_order
        };
        let positions = parent.is_none() || rng.one_in(20);
        let id = nodes.len();
        nodes.push(Node { name, parent, offset, positions, order, children: Vec::new() });
        if let Some(p) = parent {
            nodes[p].children.push(id);
        }
    };
    for &(name, parent, offset) in HUMANOID.iter().take(joints) {
        let parent = (parent != usize::MAX).then_some(parent);
        push(&mut nodes, rng, name.to_string(), parent, offset);
    }
    // Fingers: three segments each, on both hands, while joints remain.
    'hands: for (side, hand, sign) in [("Left", 9usize, 1.0), ("Right", 13, -1.0)] {
        for (f, finger) in FINGERS.iter().enumerate() {
            let mut parent = hand;
            for seg in 1..=3 {
                if nodes.len() >= joints || hand >= nodes.len() {
                    break 'hands;
                }
                let x = if seg == 1 { 3.5 } else { 2.25 - 0.25 * seg as f64 };
                let z = if seg == 1 { 2.0 - f as f64 } else { 0.0 };
                let id = nodes.len();
                push(
                    &mut nodes,
                    rng,
                    format!("{side}Hand{finger}{seg}"),
                    Some(parent),
                    [sign * x, 0.0, z],
                );
                parent = id;
            }
        }
    }
    // Beyond that: chains of 2 to 5 segments hung on random joints.
    let mut chain = 0;
    while nodes.len() < joints {
        let mut parent = rng.below(nodes.len() as u64) as usize;
        let len = rng.range(2, 5);
        for seg in 1..=len {
            if nodes.len() >= joints {
                break;
            }
            let off = [
                rng.range(-50_000, 50_000) as f64 / 1e4,
                rng.range(-50_000, 50_000) as f64 / 1e4,
                rng.range(-50_000, 50_000) as f64 / 1e4,
            ];
            let id = nodes.len();
            push(&mut nodes, rng, format!("Extra{chain}_{seg}"), Some(parent), off);
            parent = id;
        }
        chain += 1;
    }
    nodes
}

fn push_offset(out: &mut String, v: f64) {
    use std::fmt::Write as _;
    let _ = write!(out, "{v:.6}");
}

fn indent(out: &mut String, depth: usize) {
    out.extend(std::iter::repeat_n('\t', depth));
}

fn write_hierarchy(out: &mut String, nodes: &[Node]) -> usize {
    use std::fmt::Write as _;
    out.push_str("HIERARCHY\n");
    let mut channels = 0;
    // Iterative depth-first walk: (node, depth, children written so far).
    let mut stack: Vec<(usize, usize, usize)> = vec![(0, 0, 0)];
    let mut opened = vec![false; nodes.len()];
    while let Some(&mut (id, depth, ref mut next)) = stack.last_mut() {
        let n = &nodes[id];
        if !opened[id] {
            opened[id] = true;
            indent(out, depth);
            out.push_str(if n.parent.is_none() { "ROOT " } else { "JOINT " });
            out.push_str(&n.name);
            out.push('\n');
            indent(out, depth);
            out.push_str("{\n");
            indent(out, depth + 1);
            out.push_str("OFFSET");
            for v in n.offset {
                out.push(' ');
                push_offset(out, v);
            }
            out.push('\n');
            indent(out, depth + 1);
            let k = if n.positions { 6 } else { 3 };
            channels += k;
            let _ = write!(out, "CHANNELS {k}");
            if n.positions {
                out.push_str(" Xposition Yposition Zposition");
            }
            for a in n.order {
                out.push(' ');
                out.push(char::from(a));
                out.push_str("rotation");
            }
            out.push('\n');
            if n.children.is_empty() {
                indent(out, depth + 1);
                out.push_str("End Site\n");
                indent(out, depth + 1);
                out.push_str("{\n");
                indent(out, depth + 2);
                let tip = if n.name.starts_with("Extra") { 2.5 } else { 7.75 };
                let _ = writeln!(out, "OFFSET 0.000000 {tip:.6} 0.000000");
                indent(out, depth + 1);
                out.push_str("}\n");
            }
        }
        if *next < n.children.len() {
            let child = n.children[*next];
            *next += 1;
            stack.push((child, depth + 1, 0));
        } else {
            indent(out, depth);
            out.push_str("}\n");
            stack.pop();
        }
    }
    channels
}

/// Appends `micro / 1e6` with exactly six decimals (`-12.345678`).
fn push_fixed6(out: &mut String, micro: i64) {
    if micro < 0 {
        out.push('-');
    }
    let a = micro.unsigned_abs();
    let (int, frac) = (a / 1_000_000, a % 1_000_000);
    let mut buf = [0u8; 32];
    let mut i = buf.len();
    let mut x = frac;
    for _ in 0..6 {
        i -= 1;
        buf[i] = b'0' + (x % 10) as u8;
        x /= 10;
    }
    i -= 1;
    buf[i] = b'.';
    let mut x = int;
    loop {
        i -= 1;
        buf[i] = b'0' + (x % 10) as u8;
        x /= 10;
        if x == 0 {
            break;
        }
    }
    // Only ASCII digits, '.' and '-' are ever written.
    out.push_str(std::str::from_utf8(&buf[i..]).unwrap_or_default());
}

/// Appends a small value in scientific notation: `-3.141593e-05`.
fn push_scientific(out: &mut String, rng: &mut Rng) {
    use std::fmt::Write as _;
    let m = rng.range(1_000_000, 9_999_999);
    let e = rng.range(2, 9);
    let sign = if rng.one_in(2) { "-" } else { "" };
    let _ = write!(out, "{sign}{}.{:06}e-{e:02}", m / 1_000_000, m % 1_000_000);
}

fn write_motion(out: &mut String, rng: &mut Rng, nodes: &[Node], channels: usize, frames: usize) {
    use std::fmt::Write as _;
    let _ = write!(out, "MOTION\nFrames: {frames}\nFrame Time: 0.008333\n");
    // Per channel: (current value, limit), in millionths.
    let mut state: Vec<(i64, i64, bool)> = Vec::with_capacity(channels);
    for n in nodes {
        if n.positions {
            let root = n.parent.is_none();
            for axis in 0..3 {
                let start =
                    if root && axis == 1 { 92_500_000 } else { (n.offset[axis] * 1e6) as i64 };
                let limit = if root { 250_000_000 } else { 30_000_000 };
                state.push((start, limit, true));
            }
        }
        for _ in 0..3 {
            state.push((rng.range(-45_000_000, 45_000_000), 179_999_999, false));
        }
    }
    debug_assert_eq!(state.len(), channels);
    for _ in 0..frames {
        for (k, s) in state.iter_mut().enumerate() {
            if k > 0 {
                out.push(' ');
            }
            let step = if s.2 { 400_000 } else { 2_500_000 };
            s.0 = (s.0 + rng.range(-step, step)).clamp(-s.1, s.1);
            if !s.2 && rng.one_in(64) {
                push_scientific(out, rng);
            } else {
                push_fixed6(out, s.0);
            }
        }
        out.push('\n');
    }
}

/// The skeleton of [`synth_text`]`(5, joints, 0)` with `frames` frames of
/// random values in [-180, 180) on every channel (a fixed generator, so
/// the same clip every time), made directly without going through text:
/// the benches' synthetic clip.
pub fn random_angles_clip(joints: usize, frames: usize) -> bvhkit::Bvh {
    let (skel, _) =
        bvhkit::Bvh::parse(synth_text(5, joints, 0)).expect("synthetic skeleton").into_parts();
    let c = skel.n_channels();
    let mut x: u64 = 0x1234_5678;
    let values = (0..c * frames)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((x >> 11) as f64 / (1u64 << 53) as f64) * 360.0 - 180.0
        })
        .collect();
    let motion = bvhkit::Motion::new(1.0 / 120.0, c, values).expect("motion");
    bvhkit::Bvh::new(skel, motion).expect("bvh")
}

/// A BVH text with `joints` joints (`ROOT`/`JOINT`, at least 1; End Sites
/// come on top, one per leaf) and `frames` frames, the same for the same
/// arguments.
///
/// The skeleton follows a humanoid (hips, spine, neck, head, arms, legs),
/// then adds finger chains to the hands, then chains of extra joints hung
/// on random joints. The root has six channels, about one joint in twenty
/// has six too, the others three; one joint in five uses a rotation order
/// other than the skeleton's. Values are random walks with six decimals,
/// about one rotation value in 64 written in scientific notation.
pub fn synth_text(seed: u64, joints: usize, frames: usize) -> String {
    let joints = joints.max(1);
    let mut tree_rng = Rng::new(seed, 1);
    let nodes = build_tree(&mut tree_rng, joints);
    let mut out = String::with_capacity(joints * 160 + frames * joints * 33);
    let channels = write_hierarchy(&mut out, &nodes);
    let mut motion_rng = Rng::new(seed, 2);
    write_motion(&mut out, &mut motion_rng, &nodes, channels, frames);
    out
}

/// Joints of the skeleton [`synth_text_of_size`] uses: a humanoid with
/// fingers (about the size of a Perception Neuron or Rokoko skeleton).
pub const SIZED_JOINTS: usize = 52;

/// A [`synth_text`] of [`SIZED_JOINTS`] joints with as many frames as make
/// about `approx_bytes` bytes (within one frame, at least one frame).
pub fn synth_text_of_size(seed: u64, approx_bytes: usize) -> String {
    const PROBE: usize = 256;
    let header = synth_text(seed, SIZED_JOINTS, 0).len();
    let probe = synth_text(seed, SIZED_JOINTS, PROBE).len();
    let per_frame = ((probe - header) / PROBE).max(1);
    let frames = (approx_bytes.saturating_sub(header) / per_frame).max(1);
    synth_text(seed, SIZED_JOINTS, frames)
}

/// The floor every parse speed is measured against: split `bytes` on ASCII
/// whitespace and parse every token with `fast-float2` (header words fail
/// and are skipped), storing nothing; returns the sum of the values and
/// their count. The core's parse benches and the CLI's `split_floor`
/// example (the end-to-end floor of `bvh check`) both run this loop.
///
/// ```
/// assert_eq!(bvhkit_testdata::split_floor(b"Frames: 2\n1.5 -2\n"), (1.5, 3));
/// ```
pub fn split_floor(bytes: &[u8]) -> (f64, usize) {
    let mut sum = 0.0;
    let mut n = 0;
    for tok in bytes.split(u8::is_ascii_whitespace) {
        if tok.is_empty() {
            continue;
        }
        if let Ok(v) = fast_float2::parse::<f64, _>(tok) {
            sum += v;
            n += 1;
        }
    }
    (sum, n)
}

/// Says that a test cannot run, where a person sees it, and fails the test
/// where skipping is not allowed.
///
/// libtest swallows what a passing test prints with `eprintln!`, so the
/// notice is written straight to the process's standard error, which the
/// harness does not capture: `SKIPPED test: reason` appears in the output
/// of `cargo test` between the test lines.
///
/// A skip panics (a failed test) when `CI` is set to anything but `false`
/// or `0` (CI runs `.ci/run` with `CI=true`), or when
/// `BVHKIT_REQUIRE_ALL=1` (the README's test command sets it after it has
/// installed everything the tests need).
///
/// ```
/// fn needs_ffmpeg() {
///     if which_ffmpeg().is_none() {
///         bvhkit_testdata::skip("needs_ffmpeg", "no ffmpeg on PATH (apt-get install ffmpeg)");
///         return;
///     }
///     // ...
/// }
/// # fn which_ffmpeg() -> Option<()> { Some(()) }
/// # needs_ffmpeg();
/// ```
#[track_caller]
pub fn skip(test: &str, reason: &str) {
    if skips_fail() {
        panic!(
            "{test} cannot run: {reason} (a skip is a failure here: CI or BVHKIT_REQUIRE_ALL=1 is set)"
        );
    }
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr().lock(), "SKIPPED {test}: {reason}");
}

/// Whether a test that cannot run must fail instead of skipping (see [`skip`]).
pub fn skips_fail() -> bool {
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    ci || std::env::var("BVHKIT_REQUIRE_ALL").as_deref() == Ok("1")
}

/// The shared corpus folder ([`corpus_dir`]), or `None` after a visible
/// [`skip`] notice for `test` (a failure in CI).
#[track_caller]
pub fn corpus_or_skip(test: &str) -> Option<PathBuf> {
    let dir = corpus_dir();
    if dir.is_none() {
        skip(test, "the shared corpus (../shared/corpus, or $BVHKIT_CORPUS) is absent");
    }
    dir
}

/// The names in folder `dir`, sorted (hidden and temporary files
/// included): what a test checks to see that nothing was left behind.
pub fn file_names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a folder entry").file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// The corpus file `name` (`cmu_01_01_walk_cgspeed_mb_names.bvh`), or
/// `None` after a visible [`skip`] notice for `test` when the corpus or
/// that file is absent (a failure in CI).
#[track_caller]
pub fn corpus_file_or_skip(test: &str, name: &str) -> Option<PathBuf> {
    let file = corpus_dir().map(|d| d.join(name)).filter(|f| f.is_file());
    if file.is_none() {
        skip(test, &format!("the shared corpus file {name} is absent"));
    }
    file
}

/// Chromium: `$BVHKIT_CHROMIUM` when set, else the first of `chromium`,
/// `chromium-browser`, `google-chrome`, `google-chrome-stable` on `PATH`.
pub fn find_chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("BVHKIT_CHROMIUM") {
        return Some(PathBuf::from(path)).filter(|p| p.is_file());
    }
    let names = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"];
    let dirs: Vec<PathBuf> =
        std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    names.iter().flat_map(|name| dirs.iter().map(move |dir| dir.join(name))).find(|p| p.is_file())
}

/// [`find_chromium`], or `None` after a visible [`skip`] notice for `test`
/// (a failure in CI, with `BVHKIT_REQUIRE_ALL=1` or with
/// `BVHKIT_REQUIRE_BROWSER=1`).
#[track_caller]
pub fn chromium_or_skip(test: &str) -> Option<PathBuf> {
    let found = find_chromium();
    if found.is_none() {
        if std::env::var("BVHKIT_REQUIRE_BROWSER").as_deref() == Ok("1") {
            panic!("BVHKIT_REQUIRE_BROWSER=1 but no Chromium found (apt-get install -y chromium)");
        }
        skip(
            test,
            "no Chromium found (install with `apt-get install -y chromium` or set BVHKIT_CHROMIUM)",
        );
    }
    found
}

/// Runs headless Chromium (`chromium`, from [`find_chromium`]) on `url`
/// with `extra` arguments after the common ones (headless, no sandbox, GPU,
/// network extras, first-run screens, audio or scroll bars, a device scale
/// of 1), in a fresh profile folder removed afterwards, and returns its
/// standard output. Both pipes are drained on threads, so a full pipe
/// cannot block the browser. Panics with the browser's stderr when it fails
/// and kills it when it runs longer than `limit`.
#[track_caller]
pub fn run_headless_chromium(
    chromium: &Path,
    url: &str,
    extra: &[String],
    limit: std::time::Duration,
) -> String {
    use std::process::{Command, Stdio};
    use std::sync::atomic::{AtomicUsize, Ordering};
    /// The profile folder, removed when the run ends (or panics).
    struct Profile(PathBuf);
    impl Drop for Profile {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let profile = Profile(std::env::temp_dir().join(format!(
        "bvhkit-chromium-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )));
    std::fs::create_dir_all(&profile.0).expect("creating a Chromium profile folder");
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-dev-shm-usage",
            "--mute-audio",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
        ])
        .arg(format!("--user-data-dir={}", profile.0.display()))
        .args(extra)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting chromium");
    let drain = |mut r: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = r.read_to_string(&mut s);
            s
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("piped stdout")));
    let err = drain(Box::new(child.stderr.take().expect("piped stderr")));
    let deadline = std::time::Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for chromium") {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within {} s on {url}", limit.as_secs());
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let (out, err) = (out.join().unwrap_or_default(), err.join().unwrap_or_default());
    assert!(status.success(), "chromium failed ({status}) on {url}:\n{err}");
    out
}

/// The shared corpus of real BVH files: `$BVHKIT_CORPUS` when set, else
/// `../shared/corpus` beside the workspace root; `None` when that is not a
/// directory (callers print a skip message).
pub fn corpus_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("BVHKIT_CORPUS") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"),
    };
    let dir = dir.canonicalize().ok()?;
    dir.is_dir().then_some(dir)
}

/// Every `.bvh` file of the corpus, sorted by name; empty when there is no
/// corpus.
pub fn corpus_files() -> Vec<PathBuf> {
    let Some(dir) = corpus_dir() else { return Vec::new() };
    let Ok(entries) = std::fs::read_dir(&dir) else { return Vec::new() };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x.eq_ignore_ascii_case("bvh")))
        .collect();
    files.sort();
    files
}

/// The `n` largest `.bvh` files of the corpus, largest first (ties by
/// name); empty when there is no corpus.
pub fn largest_corpus_files(n: usize) -> Vec<PathBuf> {
    let mut files: Vec<(u64, PathBuf)> = corpus_files()
        .into_iter()
        .filter_map(|p| Some((std::fs::metadata(&p).ok()?.len(), p)))
        .collect();
    files.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    files.into_iter().take(n).map(|(_, p)| p).collect()
}

/// The rows of a world-positions CSV (`frame,joint,x,y,z`: the golden
/// files' format and `bvh positions`'): frame, joint name (which may hold
/// commas) and position. Panics on a malformed row.
pub fn position_rows(csv: &str) -> Vec<(usize, String, bvhkit::glam::DVec3)> {
    csv.lines()
        .skip(1)
        .map(|l| {
            let c: Vec<&str> = l.split(',').collect();
            let n = c.len();
            let v = |i: usize| c[i].parse::<f64>().unwrap_or_else(|e| panic!("{l}: {e}"));
            let frame = c[0].parse().unwrap_or_else(|e| panic!("{l}: {e}"));
            (frame, c[1..n - 3].join(","), bvhkit::glam::DVec3::new(v(n - 3), v(n - 2), v(n - 1)))
        })
        .collect()
}

/// The golden world positions (`../shared/golden/<stem>.<mode>.csv`, mode
/// `replace` or `add`) of a corpus file, or `None` when there is none.
pub fn golden_positions(
    stem: &str,
    mode: &str,
) -> Option<Vec<(usize, String, bvhkit::glam::DVec3)>> {
    let path = corpus_dir()?.join("../golden").join(format!("{stem}.{mode}.csv"));
    Some(position_rows(&std::fs::read_to_string(path).ok()?))
}

/// Panics unless `a` and `b` hold the same skeleton (names, kinds, tree,
/// channels, offsets) and the same motion (frame time and every value), all
/// compared bit for bit; `what` starts each message.
#[track_caller]
pub fn assert_bit_identical(a: &bvhkit::Bvh, b: &bvhkit::Bvh, what: &str) {
    let (sa, sb) = (a.skeleton(), b.skeleton());
    assert_eq!(sa.len(), sb.len(), "{what}: joint count");
    for (ja, jb) in sa.joints().iter().zip(sb.joints()) {
        assert_eq!(ja.name(), jb.name(), "{what}: name");
        assert_eq!(ja.kind(), jb.kind(), "{what}: kind of {}", ja.name());
        assert_eq!(ja.parent(), jb.parent(), "{what}: parent of {}", ja.name());
        assert_eq!(ja.channels(), jb.channels(), "{what}: channels of {}", ja.name());
        assert_eq!(
            ja.offset().to_array().map(f64::to_bits),
            jb.offset().to_array().map(f64::to_bits),
            "{what}: offset of {}",
            ja.name()
        );
    }
    let (ma, mb) = (a.motion(), b.motion());
    assert_eq!(ma.frame_time().to_bits(), mb.frame_time().to_bits(), "{what}: frame time");
    assert_eq!(
        (ma.n_frames(), ma.n_channels()),
        (mb.n_frames(), mb.n_channels()),
        "{what}: frames x channels"
    );
    for (i, (x, y)) in ma.values().iter().zip(mb.values()).enumerate() {
        assert_eq!(x.to_bits(), y.to_bits(), "{what}: motion value {i}: {x:e} vs {y:e}");
    }
}

/// A small clip (a root with position channels, one joint, one End Site)
/// whose root turns 2.3 times about Y and whose joint's middle angle
/// swings to ±88° (near the gimbal, where Euler continuity may switch
/// branch); the angles are written wrapped into [-180, 180) as exporters
/// write them. Transforms that keep Euler angles continuous from frame to
/// frame carry them several turns away from their principal range on it.
pub fn spinning_text(frames: usize) -> String {
    let mut t = String::from(
        "HIERARCHY\nROOT Hips\n{\n\tOFFSET 0 0 0\n\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n\
         \tJOINT A\n\t{\n\t\tOFFSET 0 10 0\n\t\tCHANNELS 3 Zrotation Xrotation Yrotation\n\
         \t\tEnd Site\n\t\t{\n\t\t\tOFFSET 0 5 0\n\t\t}\n\t}\n}\nMOTION\n",
    );
    t.push_str(&format!("Frames: {frames}\nFrame Time: 0.01\n"));
    let wrap = |a: f64| a - 360.0 * ((a + 180.0) / 360.0).floor();
    for f in 0..frames {
        let s = f as f64 / frames.max(1) as f64;
        let yaw = wrap(828.0 * s);
        t.push_str(&format!(
            "{:.6} 90 {:.6} {:.6} {:.6} {:.6} {:.6} {:.6} {:.6}\n",
            s * 100.0,
            -s * 50.0,
            wrap(20.0 * (s * 11.0).cos()),
            30.0 * (s * 7.0).sin(),
            yaw,
            wrap(300.0 * (s * 5.0).cos()),
            88.0 * (s * 37.0).sin(),
            wrap(yaw * 2.0),
        ));
    }
    t
}

/// A world position of a file whose up axis is `up`, in Y-up axes, as the
/// glTF export's conversion and the FBX file's stated axis system give it:
/// the rotation that takes `up` to +Y and the default forward (Blender's: Y
/// up looks along -Z, Z up along +Y; the others turned the shortest way) to
/// -Z, front to +Z. `None` and `+Y`: unchanged. The reference of the export
/// tests (`bvhkit-gltf`'s `node.rs`, `bvhkit-fbx`'s `blender.rs` and
/// `fbx2gltf.rs`), written out rather than taken from the core.
///
/// ```
/// use bvhkit::edit::axes::SignedAxis;
/// use bvhkit::glam::DVec3;
/// let p = bvhkit_testdata::to_y_up(Some(SignedAxis::PosZ), DVec3::new(1.0, 2.0, 3.0));
/// assert_eq!(p, DVec3::new(1.0, 3.0, -2.0));
/// ```
pub fn to_y_up(
    up: Option<bvhkit::edit::axes::SignedAxis>,
    p: bvhkit::glam::DVec3,
) -> bvhkit::glam::DVec3 {
    use bvhkit::edit::axes::SignedAxis;
    use bvhkit::glam::DVec3;
    let DVec3 { x, y, z } = p;
    match up {
        None | Some(SignedAxis::PosY) => p,
        Some(SignedAxis::PosZ) => DVec3::new(x, z, -y),
        Some(SignedAxis::NegZ) => DVec3::new(x, -z, y),
        Some(SignedAxis::NegY) => DVec3::new(x, -y, -z),
        Some(SignedAxis::PosX) => DVec3::new(-y, x, z),
        Some(SignedAxis::NegX) => DVec3::new(y, -x, z),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed6_spells_like_exporters() {
        let mut s = String::new();
        for v in [0, 1, -1, 12_345_678, -12_345_678, 180_000_000, -999_999] {
            s.push(' ');
            push_fixed6(&mut s, v);
        }
        assert_eq!(s, " 0.000000 0.000001 -0.000001 12.345678 -12.345678 180.000000 -0.999999");
    }
}

//! Inputs shared by the benches: the largest corpus files and one large
//! synthetic text, each made or read once per bench binary.

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use bvhkit::{Bvh, ReadOptions};
use criterion::{BenchmarkGroup, SamplingMode, measurement::WallTime};

/// Size of the synthetic text in MB: `$BVHKIT_BENCH_MB`, default 100.
pub(crate) fn synth_mb() -> usize {
    std::env::var("BVHKIT_BENCH_MB").ok().and_then(|s| s.parse().ok()).unwrap_or(100)
}

/// An input: a short name for bench ids and its bytes.
pub(crate) struct Input {
    pub(crate) name: String,
    pub(crate) bytes: Vec<u8>,
    /// Whether strict parsing rejects it (then benches parse it leniently).
    pub(crate) lenient: bool,
}

impl Input {
    fn new(name: String, bytes: Vec<u8>) -> Input {
        let lenient = match Bvh::parse(&bytes) {
            Ok(_) => false,
            Err(e) => {
                eprintln!("note: {name} does not parse strictly ({e}); benched leniently");
                true
            }
        };
        Input { name, bytes, lenient }
    }

    /// Read options for this input: strict unless it needs lenient.
    pub(crate) fn options(&self, parallel: bool) -> ReadOptions {
        let mut o = ReadOptions::new();
        o.lenient(self.lenient).parallel(parallel);
        o
    }

    /// The parsed model.
    pub(crate) fn parse(&self) -> Bvh {
        match self.options(true).parse(&self.bytes) {
            Ok((bvh, _)) => bvh,
            Err(e) => panic!("{}: {e}", self.name),
        }
    }
}

/// The `n` largest corpus files, or none with a printed skip message.
pub(crate) fn corpus_inputs(n: usize) -> Vec<Input> {
    let files: Vec<PathBuf> = bvhkit_testdata::largest_corpus_files(n);
    if files.is_empty() {
        eprintln!(
            "skipped: corpus benches (no shared corpus at ../shared/corpus; set BVHKIT_CORPUS)"
        );
    }
    files
        .into_iter()
        .map(|p| {
            let name = p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            let short: String = name.split('_').take(2).collect::<Vec<_>>().join("_");
            let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            Input::new(short, bytes)
        })
        .collect()
}

/// The synthetic text of [`synth_mb`] MB, made on first use.
pub(crate) fn synth_input() -> &'static Input {
    static SYNTH: OnceLock<Input> = OnceLock::new();
    SYNTH.get_or_init(|| {
        let mb = synth_mb();
        let text = bvhkit_testdata::synth_text_of_size(1, mb * 1_000_000);
        Input::new(format!("synth_{mb}MB"), text.into_bytes())
    })
}

/// The largest corpus files then the synthetic text.
pub(crate) fn all_inputs(n_corpus: usize) -> Vec<&'static Input> {
    static CORPUS: OnceLock<Vec<Input>> = OnceLock::new();
    let corpus = CORPUS.get_or_init(|| corpus_inputs(n_corpus));
    corpus.iter().chain(std::iter::once(synth_input())).collect()
}

/// Short runs: ten flat samples, a few seconds each group member.
pub(crate) fn configure(g: &mut BenchmarkGroup<'_, WallTime>) {
    g.sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
}

/// A synthetic skeleton of `joints` joints with `frames` frames of random
/// angles in [-180, 180) (made directly, without going through text).
pub(crate) fn synth_fk(joints: usize, frames: usize) -> Bvh {
    bvhkit_testdata::random_angles_clip(joints, frames)
}

/// Frames for the synthetic FK input: `$BVHKIT_FK_FRAMES`, default 100,000.
pub(crate) fn fk_frames() -> usize {
    std::env::var("BVHKIT_FK_FRAMES").ok().and_then(|s| s.parse().ok()).unwrap_or(100_000)
}

/// Forward kinematics of every frame of `motion` into one reused buffer,
/// the kernel the FK figures report (and the baseline the edit benches
/// report beside theirs): returns the sum of the last joint's x, so the
/// work cannot be optimised away.
pub(crate) fn fk_every_frame(
    fk: &bvhkit::Kinematics,
    scratch: &mut bvhkit::FkScratch,
    out: &mut [bvhkit::glam::DVec3],
    motion: &bvhkit::Motion,
) -> f64 {
    let mut acc = 0.0;
    for frame in motion.frames() {
        fk.positions_with(frame, scratch, out);
        acc += out[out.len() - 1].x;
    }
    acc
}

/// Adds the FK baseline to group `g`: `fk_positions_with_reused_buffers`,
/// [`fk_every_frame`] over `motion` of `skeleton` (read with
/// `PositionChannels::Replace`), the figure every edit, mix and retarget
/// bench reports beside its own. The group's throughput is whatever the
/// caller set (one element = one joint in one frame).
pub(crate) fn bench_fk(
    g: &mut BenchmarkGroup<'_, WallTime>,
    skeleton: &bvhkit::Skeleton,
    motion: &bvhkit::Motion,
) {
    let fk = bvhkit::Kinematics::new(skeleton, bvhkit::PositionChannels::Replace);
    let mut scratch = fk.scratch();
    let mut pos = vec![bvhkit::glam::DVec3::ZERO; skeleton.len()];
    g.bench_function("fk_positions_with_reused_buffers", |b| {
        b.iter(|| fk_every_frame(&fk, &mut scratch, &mut pos, std::hint::black_box(motion)))
    });
}

/// Runs `bench` on the largest corpus file (when the corpus is there) and
/// on a synthetic 100-joint clip of 20,000 frames of random angles.
pub(crate) fn corpus_then_synthetic(
    c: &mut criterion::Criterion,
    bench: fn(&mut criterion::Criterion, &str, &Bvh),
) {
    if let Some(input) = corpus_inputs(1).pop() {
        bench(c, &input.name, &input.parse());
    }
    bench(c, "synthetic", &synth_fk(100, 20_000));
}

/// Channel indices standing for three angles per joint of a `joints`-joint
/// skeleton: what the FK floors read.
pub(crate) fn floor_indices(motion: &bvhkit::Motion, joints: usize) -> Vec<usize> {
    let n_ch = motion.n_channels().max(1);
    (0..3 * joints).map(|i| i % n_ch).collect()
}

/// The FK floor: `sin_cos(angle)` of the channels `idx` in every frame, and
/// nothing else.
pub(crate) fn fk_floor(
    motion: &bvhkit::Motion,
    idx: &[usize],
    sin_cos: impl Fn(f64) -> (f64, f64),
) -> f64 {
    let mut acc = 0.0;
    for frame in motion.frames() {
        for &i in idx {
            let (s, c) = sin_cos(frame[i]);
            acc += s + c;
        }
    }
    acc
}

/// `f64::sin_cos` of an angle in degrees, the way a straightforward FK
/// would call it.
pub(crate) fn std_sin_cos_deg(deg: f64) -> (f64, f64) {
    deg.to_radians().sin_cos()
}

/// Streams every frame of `bytes` through a `FrameReader` into one reused
/// buffer; returns the sum of each frame's first value (so nothing is
/// optimised away).
pub(crate) fn stream_all(opts: &ReadOptions, bytes: &[u8]) -> f64 {
    let mut rdr = opts.frame_reader(bytes).expect("header");
    let mut frame = vec![0.0; rdr.skeleton().n_channels()];
    let mut sum = 0.0;
    while rdr.read_frame(&mut frame).expect("frame") {
        sum += frame.first().copied().unwrap_or(0.0);
    }
    sum
}

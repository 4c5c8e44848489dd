//! `bvhkit::clean` on corpus walks with noise and spikes injected at known
//! frames and joints: spikes found and repaired, few false repairs on the
//! clean clips, jitter (`quality::lint`'s metric) reduced, channels outside
//! the joints cleaned bit for bit, no Euler jump in the output.

use bvhkit::clean::{self, Butterworth, Options, SavGol};
use bvhkit::edit::JointChannels;
use bvhkit::glam::DQuat;
use bvhkit::quality;
use bvhkit::{Bvh, ReadOptions};

use crate::util::{corpus_dir, stem};

/// The corpus walks (the Second Life walk, 14 frames, is too short for
/// 20 spikes or a Butterworth filter's padding).
const WALKS: [&str; 3] = [
    "cmu_01_01_walk_cgspeed_mb_names",
    "cmu_12_01_walk_cgspeed_pybvh",
    "pymo_demo_av_8walk_meredith",
];

/// The corpus files `names` (stems), read leniently, with their stems;
/// none when the corpus is absent.
fn clips(names: &[&str]) -> Vec<(String, Bvh)> {
    let Some(dir) = corpus_dir() else { return Vec::new() };
    names
        .iter()
        .map(|name| {
            let p = dir.join(format!("{name}.bvh"));
            let bvh = ReadOptions::new().lenient(true).read_path(&p).unwrap().0;
            (stem(&p), bvh)
        })
        .collect()
}

fn walks() -> Vec<(String, Bvh)> {
    clips(&WALKS)
}

/// A small deterministic generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn uniform(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn gauss(&mut self) -> f64 {
        let (u, v) = (self.uniform().max(1e-300), self.uniform());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

/// Joints with three rotation channels.
fn rotating(bvh: &Bvh) -> Vec<usize> {
    bvh.skeleton()
        .joints()
        .iter()
        .enumerate()
        .filter(|(_, j)| j.channels().iter().filter(|c| c.is_rotation()).count() == 3)
        .map(|(i, _)| i)
        .collect()
}

/// Joints whose rotation moves in the clip (a spike on a joint held still
/// is found just as well, but the test wants moving joints too).
fn moving(bvh: &Bvh) -> Vec<usize> {
    let m = bvh.motion();
    rotating(bvh)
        .into_iter()
        .filter(|&j| {
            let r = bvh.skeleton().joints()[j].channel_range();
            r.clone().any(|c| (0..m.n_frames()).any(|f| m.frame(f)[c] != m.frame(0)[c]))
        })
        .collect()
}

/// `bvh` with `count` spikes at known (joint, frame): a rotation of 15 to
/// 40 degrees about a random axis composed onto one frame of a moving
/// joint, frames at least 8 apart and 3 from the ends.
fn inject_spikes(bvh: &Bvh, rng: &mut Rng, count: usize) -> (Bvh, Vec<(usize, usize)>) {
    let mut out = bvh.clone();
    let n = bvh.motion().n_frames();
    let joints = moving(bvh);
    assert!(n >= 10 * count + 6 && !joints.is_empty(), "a clip long enough, with moving joints");
    let mut at: Vec<(usize, usize)> = Vec::new();
    while at.len() < count {
        let f = 3 + rng.below(n - 6);
        if at.iter().any(|&(_, g)| f.abs_diff(g) < 8) {
            continue;
        }
        at.push((joints[rng.below(joints.len())], f));
    }
    let layouts: Vec<JointChannels> =
        bvh.skeleton().joints().iter().map(JointChannels::of).collect();
    for &(j, f) in &at {
        let c = &layouts[j];
        let row = out.motion_mut().frame_mut(f);
        let axis = bvhkit::glam::DVec3::new(rng.gauss(), rng.gauss(), rng.gauss()).normalize();
        let angle = (15.0 + 25.0 * rng.uniform()).to_radians();
        let q = c.rotation(row) * DQuat::from_axis_angle(axis, angle);
        let near = c.angles(row);
        c.write_rotation(q, Some(near), row);
    }
    at.sort();
    (out, at)
}

/// `bvh` with Gaussian noise of `sigma` degrees on every rotation channel.
fn add_noise(bvh: &Bvh, sigma: f64, rng: &mut Rng) -> Bvh {
    let mut out = bvh.clone();
    let rot: Vec<usize> = bvh
        .skeleton()
        .joints()
        .iter()
        .flat_map(|j| {
            j.channels()
                .iter()
                .enumerate()
                .filter(|(_, c)| c.is_rotation())
                .map(move |(k, _)| j.first_channel() + k)
        })
        .collect();
    for f in 0..bvh.motion().n_frames() {
        let row = out.motion_mut().frame_mut(f);
        for &c in &rot {
            row[c] += sigma * rng.gauss();
        }
    }
    out
}

fn local(bvh: &Bvh, j: usize, f: usize) -> DQuat {
    JointChannels::of(&bvh.skeleton().joints()[j]).rotation(bvh.motion().frame(f))
}

/// Clips of several rigs and capture systems for the spike tests: the
/// walks, and CMU (another cgspeed release), Bandai Namco (30 fps, six
/// channels on every joint), Rokoko, Perception Neuron, SFU, Azure Kinect,
/// Meta FAIR and the Xsens-style clip (61 frames: 5 spikes).
const SPIKE_CLIPS: [&str; 10] = [
    "cmu_01_01_walk_cgspeed_mb_names",
    "cmu_12_01_walk_cgspeed_pybvh",
    "pymo_demo_av_8walk_meredith",
    "bandai_namco_ds1_kick_6ch_every_joint",
    "rokoko_jesse_dance_yxz_fingers",
    "perception_neuron_axis_yxz_fingers_crlf",
    "sfu_0005_jumprope_crlf_xyz",
    "azure_kinect_xyz_no_end_sites",
    "fair_zombie_animated_drawings_xyz_yxz",
    "xsens_mvn_style_mpi_1space_yxz_crlf",
];

fn spike_clips() -> Vec<(String, Bvh)> {
    clips(&SPIKE_CLIPS)
}

/// Whether `bvh lint` (an independent detector: world-position
/// accelerations above median + 40 MAD and 150 m/s², per joint) finds a
/// spike at frame `f` (±1) on joint `j` or a joint under it (a rotation
/// spike moves the joints under the rotated one); on any joint for a whole
/// glitch frame (`j` is `None`).
fn lint_confirms(bvh: &Bvh, lint: &quality::Report, j: Option<usize>, f: usize) -> bool {
    let skel = bvh.skeleton();
    let sub = match j {
        Some(j) => j..skel.subtree_end(bvhkit::JointId::new(j)),
        None => 0..skel.len(),
    };
    lint.findings.iter().any(|x| {
        x.kind == quality::Kind::Spike
            && x.frames.0 <= f + 1
            && f <= x.frames.1 + 1
            && x.joints.iter().any(|k| sub.contains(k))
    })
}

#[test]
fn spikes_injected_in_walks_are_found_and_repaired() {
    spikes_on_clips(walks(), Bounds { found_percent: 95, false_per_1000: false });
}

/// The issue's bounds on the corpus walks: at least 95% of the injected
/// spikes found and repaired; at most one false repair per 1,000 frames of
/// the clean walks, a false repair being one where `bvh lint` finds no
/// acceleration spike. The clean walks do have real one-frame glitches
/// (CMU 01_01: both thighs out 6° to 9° and back at frames 975 and 980,
/// the whole figure with them; toes and fingers out 10° to 16° and back),
/// which are repaired and which lint confirms.
#[test]
fn spikes_few_false_repairs_on_clean_walks() {
    spikes_on_clips(walks(), Bounds { found_percent: 95, false_per_1000: true });
}

/// Spikes injected into clips of ten rigs and capture systems, and the
/// clean clips: at most one false repair per 1,000 frames, and at least
/// 90% of the injected spikes found and repaired.
#[test]
fn spikes_on_many_rigs() {
    spikes_on_clips(spike_clips(), Bounds { found_percent: 90, false_per_1000: true });
}

/// The issue's 95% on the ten rigs: 184 of 185. The finger phalanges of the
/// Perception Neuron and Rokoko clips, whose 15° to 40° turn moves the
/// finger tip less than 0.75% of the figure's size
/// ([`clean::spikes::SEEN_SIZE`]), are found by their angle: a one-frame
/// out-and-back of at least [`clean::spikes::ONE_FRAME_DEG`] out of calm
/// motion. The clean clips keep their repairs (17, 8 of them not confirmed
/// by lint: the Bandai toes and a CMU toe).
#[test]
fn spikes_found_on_many_rigs_at_95_percent() {
    spikes_on_clips(spike_clips(), Bounds { found_percent: 95, false_per_1000: true });
}

/// What [`spikes_on_clips`] asserts.
struct Bounds {
    /// Injected spikes found and repaired, at least (percent).
    found_percent: usize,
    /// At most one false repair per 1,000 frames of the clean clips.
    false_per_1000: bool,
}

fn spikes_on_clips(clips: Vec<(String, Bvh)>, bounds: Bounds) {
    let opts = Options { spikes: Some(clean::DEFAULT_SPIKE_K), ..Options::default() };
    let (mut injected, mut found, mut frames, mut false_clean, mut all_clean) = (0, 0, 0, 0, 0);
    for (name, bvh) in clips {
        let n = bvh.motion().n_frames();
        let (_, clean_report) = clean::clean(&bvh, &opts).unwrap();
        let on_clean = repairs(&clean_report);
        let lint = quality::lint(&bvh, &quality::Options::default());
        let unconfirmed: Vec<(Option<usize>, usize)> =
            on_clean.iter().copied().filter(|&(j, f)| !lint_confirms(&bvh, &lint, j, f)).collect();
        let mut rng = Rng(n as u64);
        let count = 20.min((n - 6) / 10);
        let (spiky, at) = inject_spikes(&bvh, &mut rng, count);
        let (out, report) = clean::clean(&spiky, &opts).unwrap();
        let repaired = &repaired_by(&report);
        let hit = at.iter().filter(|p| repaired.contains(p)).count();
        // Each spike repaired back close to the clean pose: within a few
        // degrees of the clean rotation (the SLERP of its neighbours).
        let mut worst = 0.0f64;
        for &(j, f) in &at {
            if repaired.contains(&(j, f)) {
                worst = worst.max(local(&out, j, f).angle_between(local(&bvh, j, f)).to_degrees());
            }
        }
        let names = bvh.skeleton().display_names();
        println!(
            "{name}: {hit}/{count} spikes found, {} joint-frames repaired, worst residual {worst:.2}°; \
             clean clip: {} repairs in {n} frames, {} not confirmed by lint {:?}",
            repaired.len(),
            on_clean.len(),
            unconfirmed.len(),
            unconfirmed
                .iter()
                .map(|&(j, f)| format!("{}@{f}", j.map_or("frame", |j| names[j].as_str())))
                .collect::<Vec<_>>()
        );
        let missed: Vec<String> = at
            .iter()
            .filter(|p| !repaired.contains(p))
            .map(|&(j, f)| format!("{}@{f}", names[j]))
            .collect();
        if !missed.is_empty() {
            println!("  missed: {missed:?}");
        }
        assert!(worst < 5.0, "{name}: a repaired spike is {worst}° from the clean pose");
        // Bone lengths: the skeleton is the input's.
        assert_eq!(out.skeleton(), spiky.skeleton());
        assert_eq!(out.motion().n_frames(), n);
        injected += count;
        found += hit;
        frames += n;
        false_clean += unconfirmed.len();
        all_clean += on_clean.len();
        for f in 0..n {
            for v in out.motion().frame(f) {
                assert!(v.is_finite());
            }
        }
    }
    if injected == 0 {
        return;
    }
    println!(
        "found {found} of {injected} spikes; {all_clean} repairs on the clean clips in {frames} \
         frames, {false_clean} of them false (no lint spike there)"
    );
    assert!(found * 100 >= injected * bounds.found_percent, "found {found} of {injected} spikes");
    if bounds.false_per_1000 {
        assert!(
            false_clean * 1000 <= frames,
            "{false_clean} false repairs on the clean clips in {frames} frames"
        );
    }
}

#[test]
fn butterworth_removes_most_injected_jitter() {
    for (name, bvh) in walks() {
        let mut rng = Rng(7);
        let noisy = add_noise(&bvh, 2.0, &mut rng);
        let opts = Options {
            butterworth: Some(Butterworth { cutoff_hz: 6.0, order: 4 }),
            ..Options::default()
        };
        let (out, _) = clean::clean(&noisy, &opts).unwrap();
        let q = quality::Options::default();
        let jitter = |b: &Bvh| quality::lint(b, &q).metrics.jitter.unwrap();
        let (j0, j1, j2) = (jitter(&bvh), jitter(&noisy), jitter(&out));
        println!("{name}: jitter clean {j0:.1}, noisy {j1:.1}, cleaned {j2:.1} m/s³");
        assert!(j2 <= 0.3 * j1, "{name}: jitter {j1} -> {j2}, not reduced by 70%");
        assert_eq!(out.skeleton(), bvh.skeleton());
        assert_eq!(out.motion().n_frames(), bvh.motion().n_frames());
    }
}

#[test]
fn smoothing_keeps_other_joints_bit_for_bit_and_euler_continuous() {
    for (name, bvh) in walks() {
        let skel = bvh.skeleton();
        let picked: Vec<String> = rotating(&bvh)
            .into_iter()
            .step_by(3)
            .map(|j| skel.joints()[j].name().to_string())
            .collect();
        let opts = Options {
            savgol: Some(SavGol { window: 9, poly: 2 }),
            butterworth: Some(Butterworth { cutoff_hz: 4.0, order: 2 }),
            joints: Some(picked.clone()),
            ..Options::default()
        };
        let (out, report) = clean::clean(&bvh, &opts).unwrap();
        assert_eq!(report.steps.len(), 2);
        let width = bvh.motion().n_channels();
        for joint in skel.joints() {
            let cleaned = picked.iter().any(|p| p == joint.name());
            for c in joint.channel_range() {
                let (mut max_step_in, mut max_step_out) = (0.0f64, 0.0f64);
                for f in 0..bvh.motion().n_frames() {
                    let (a, b) = (
                        bvh.motion().values()[f * width + c],
                        out.motion().values()[f * width + c],
                    );
                    if !cleaned {
                        assert_eq!(a.to_bits(), b.to_bits(), "{name}: {} changed", joint.name());
                    }
                    if f > 0 {
                        let (pa, pb) = (
                            bvh.motion().values()[(f - 1) * width + c],
                            out.motion().values()[(f - 1) * width + c],
                        );
                        max_step_in = max_step_in.max((a - pa).abs());
                        max_step_out = max_step_out.max((b - pb).abs());
                    }
                }
                // No new wrap: a channel without a jump of 180° keeps none.
                if max_step_in < 180.0 {
                    assert!(
                        max_step_out < 180.0,
                        "{name}: {} channel {c} jumps {max_step_out}°",
                        joint.name()
                    );
                }
            }
        }
    }
}

#[test]
fn bad_options_fail_before_anything_changes() {
    let bvh = Bvh::parse(
        "HIERARCHY ROOT Hips { OFFSET 0 0 0 CHANNELS 3 Zrotation Xrotation Yrotation
         End Site { OFFSET 0 1 0 } } MOTION Frames: 3 Frame Time: 0.1
         0 0 0\n1 0 0\n2 0 0\n",
    )
    .unwrap();
    let err = |o: Options| clean::clean(&bvh, &o).unwrap_err().to_string();
    let b = |cutoff_hz, order| Options {
        butterworth: Some(Butterworth { cutoff_hz, order }),
        ..Options::default()
    };
    assert!(err(b(1.0, 4)).contains("needs more than 15 frames"), "{}", err(b(1.0, 4)));
    assert!(err(b(5.0, 4)).contains("Nyquist"));
    assert!(err(b(1.0, 0)).contains("order 0"));
    let s = |window, poly| Options { savgol: Some(SavGol { window, poly }), ..Options::default() };
    assert!(err(s(5, 2)).contains("longer than the clip"));
    assert!(err(s(3, 3)).contains("less than the window"));
    let j = Options { joints: Some(vec!["Nope".into()]), ..Options::default() };
    assert!(err(j).contains("no joint named \"Nope\""));
    // A foot that is not a joint is refused, not left out of the feet.
    let feet = |names: &[&str]| Options {
        lock_feet: true,
        quality: quality::Options {
            feet: Some(names.iter().map(|n| n.to_string()).collect()),
            ..Default::default()
        },
        ..Options::default()
    };
    assert_eq!(err(feet(&["Hips", "Nope"])), "no joint named \"Nope\" (--feet)");
    assert!(clean::clean(&bvh, &feet(&["Hips"])).is_ok());
    // Too short for spikes: nothing repaired, nothing changed.
    let (out, _) =
        clean::clean(&bvh, &Options { spikes: Some(40.0), ..Options::default() }).unwrap();
    assert_eq!(out, bvh);
}

/// World positions of every joint, frame-major, in metres.
fn world_m(bvh: &Bvh, mpu: f64) -> Vec<bvhkit::glam::DVec3> {
    let fk = bvhkit::Kinematics::new(bvh.skeleton(), bvhkit::PositionChannels::Replace);
    fk.positions_all(bvh.motion()).into_iter().map(|p| p * mpu).collect()
}

/// The corpus clips with walking, stepping or standing feet that foot
/// locking is measured on: the three walks, Xia's angry walk, CMU 16_15 and
/// 131_01, and the Bandai Namco, Rokoko, Perception Neuron and SFU rigs.
const LOCK_CLIPS: [&str; 10] = [
    "cmu_01_01_walk_cgspeed_mb_names",
    "cmu_12_01_walk_cgspeed_pybvh",
    "pymo_demo_av_8walk_meredith",
    "xia_style_angry_13_000",
    "cmu_16_15_imusim_asf_names_sci",
    "cmu_131_01_cgspeed_3dsmax_mixed_eol",
    "bandai_namco_ds1_kick_6ch_every_joint",
    "rokoko_jesse_dance_yxz_fingers",
    "perception_neuron_axis_yxz_fingers_crlf",
    "sfu_0005_jumprope_crlf_xyz",
];

fn lock_clips() -> Vec<(String, Bvh)> {
    clips(&LOCK_CLIPS)
}

/// Every bound of the issue on every clip of [`LOCK_CLIPS`] and on the
/// outputs of `retarget` and `concat --crossfade` (see [`check_locked`]):
/// the skating ratio at ground 0, the feet's speed in contact, pins, the
/// rest of the body, the knee's angular speed, continuity.
#[test]
fn foot_locking_meets_every_issue_bound() {
    let mut failed = lock_corpus();
    failed.extend(lock_made());
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

fn lock_corpus() -> Vec<String> {
    let opts = Options { lock_feet: true, ..Options::default() };
    let mut failed = Vec::new();
    for (name, bvh) in lock_clips() {
        let (out, report) = clean::clean(&bvh, &opts).unwrap();
        // The library function over the whole clip gives the same clip.
        let mut direct = bvh.clone();
        let n = bvh.motion().n_frames();
        let locked = clean::lock_feet_in(&mut direct, 0..n, &opts).unwrap();
        assert_eq!(direct, out, "{name}: lock_feet_in differs from clean");
        assert_eq!(report.steps[0].spans, locked.spans.len());
        failed.extend(check_locked(&name, &bvh, &out, &locked, 0..n));
    }
    failed
}

/// Foot locking on the output of `retarget` (CMU 01_01 onto the PyMO
/// skeleton and the PyMO walk onto CMU's) and of `concat --crossfade` (two
/// pieces of CMU 01_01), and over the crossfade's frames alone
/// ([`clean::lock_feet_in`] with a range: frames outside it bit for bit).
fn lock_made() -> Vec<String> {
    let Some(dir) = corpus_dir() else { return Vec::new() };
    let read = |name: &str| {
        ReadOptions::new().lenient(true).read_path(&dir.join(format!("{name}.bvh"))).unwrap().0
    };
    let (cmu, pymo) = (read(WALKS[0]), read(WALKS[2]));
    let opts = Options { lock_feet: true, ..Options::default() };
    let ro = bvhkit::retarget::Options { lock_feet: false, ..Default::default() };
    let mut failed = Vec::new();
    let mut made = Vec::new();
    made.push(("cmu onto pymo", bvhkit::retarget::retarget(&cmu, &pymo, &ro).unwrap().0));
    made.push(("pymo onto cmu", bvhkit::retarget::retarget(&pymo, &cmu, &ro).unwrap().0));
    let piece = |a: usize, b: usize| {
        bvhkit::edit::frames::Selection::new(a..b, 1).unwrap().apply(&cmu).unwrap()
    };
    let (a, b) = (piece(0, 900), piece(1200, 2200));
    let co = bvhkit::mix::concat::ConcatOptions {
        crossfade: bvhkit::mix::Span::Frames(60),
        ..Default::default()
    };
    let (joined, cr) = bvhkit::mix::concat::concat(&[("a", &a), ("b", &b)], &co).unwrap();
    made.push(("concat --crossfade 60", joined.clone()));
    for (name, bvh) in &made {
        let n = bvh.motion().n_frames();
        let mut out = bvh.clone();
        let locked = clean::lock_feet_in(&mut out, 0..n, &opts).unwrap();
        failed.extend(check_locked(name, bvh, &out, &locked, 0..n));
    }
    // Over the crossfade only: frames outside bit for bit.
    let seam = &cr.seams[0];
    let start = a.motion().n_frames() - seam.dropped.0 - seam.crossfade;
    let range = start.saturating_sub(30)..start + seam.crossfade + 30;
    let mut out = joined.clone();
    let locked = clean::lock_feet_in(&mut out, range.clone(), &opts).unwrap();
    let width = joined.motion().n_channels();
    for f in (0..joined.motion().n_frames()).filter(|f| !range.contains(f)) {
        let (x, y) = (joined.motion().frame(f), out.motion().frame(f));
        assert!(x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits()), "frame {f} changed");
    }
    assert!(out.motion().values()[..width] == joined.motion().values()[..width]);
    assert!(!locked.spans.is_empty(), "no span in the crossfade");
    for s in &locked.spans {
        assert!(range.contains(&s.frames.0) && range.contains(&s.frames.1), "{s:?}");
    }
    failed.extend(check_locked("concat, crossfade frames only", &joined, &out, &locked, range));
    // A range outside the clip fails.
    let n = joined.motion().n_frames();
    assert!(clean::lock_feet_in(&mut out, n - 5..n + 1, &opts).is_err());
    assert!(clean::lock_feet_in(&mut out, 5..5, &opts).is_err());
    failed
}

/// Contact spans given by the caller are the spans locked.
#[test]
fn foot_locking_takes_contacts_from_a_file() {
    let Some(dir) = corpus_dir() else { return };
    let bvh = ReadOptions::new()
        .lenient(true)
        .read_path(&dir.join(format!("{}.bvh", WALKS[0])))
        .unwrap()
        .0;
    let text = "joint,start,end\nLeftFoot,100,160\n# the right foot\nRightFoot, 200, 260\n";
    let contacts = clean::parse_contacts(text).unwrap();
    let opts = Options { lock_feet: true, contacts: Some(contacts), ..Options::default() };
    let mut out = bvh.clone();
    let n = bvh.motion().n_frames();
    let locked = clean::lock_feet_in(&mut out, 0..n, &opts).unwrap();
    let spans: Vec<(usize, usize)> = locked.spans.iter().map(|s| s.frames).collect();
    assert_eq!(spans, vec![(100, 160), (200, 260)]);
    // Across the up axis, the toe within 5 mm of its pin on every frame.
    let skel = bvh.skeleton();
    assert_eq!(skel.joints()[locked.spans[0].foot].name(), "LeftFoot");
    assert_eq!(skel.joints()[locked.spans[1].foot].name(), "RightFoot");
    let lint = quality::lint(&bvh, &quality::Options::default());
    let (mpu, u) = (lint.metres_per_unit, lint.up.vector());
    let p1 = world_m(&out, mpu);
    let nj = skel.len();
    for s in &locked.spans {
        for f in s.frames.0..=s.frames.1 {
            let d = p1[f * nj + s.point] - s.pin * mpu;
            let miss = (d - u * d.dot(u)).length();
            assert!(miss <= 0.005, "frame {f}: {miss} m from the pin");
        }
    }
    // Unknown joints and frames past the clip fail before anything runs.
    for bad in ["Nope,1,2", "LeftFoot,10,999999"] {
        let o = Options {
            lock_feet: true,
            contacts: Some(clean::parse_contacts(bad).unwrap()),
            ..Options::default()
        };
        let e = clean::clean(&bvh, &o).unwrap_err().to_string();
        assert!(e.contains("--contacts"), "{e}");
    }
}

/// The clips `flatten_feet` is measured on: the three walks (CMU 01_01
/// over its whole length), Xia's angry walk, CMU 16_15 and 131_01 and the
/// Bandai Namco kick (the first seven [`LOCK_CLIPS`]): five rigs, each foot
/// with a toe joint.
const FLAT_CLIPS: &[&str] = LOCK_CLIPS.split_at(7).0;

/// A joint's world rotation composed from the file's channels up its chain
/// (`local`: the channels in the joint's own order), independent of FK.
fn world_rotation(bvh: &Bvh, j: usize, f: usize) -> DQuat {
    let skel = bvh.skeleton();
    let mut q = DQuat::IDENTITY;
    let mut at = Some(j);
    while let Some(i) = at {
        q = local(bvh, i, f) * q;
        at = skel.joints()[i].parent().map(|p| p.index());
    }
    q
}

/// `flatten_feet` on [`FLAT_CLIPS`], against the lock without it (`a`) in
/// every locked frame, measured from world positions (FK) and from world
/// rotations composed from the channels:
/// - the ankle where the lock without it puts it (1e-9 units); every
///   channel outside the locked legs bit for bit the lock's without it and,
///   but for the root's (the hips' lowering), the input's;
/// - the toe (the contact point) at most 1 cm higher than without it and at
///   most 1 cm below the span's ground (its pin's height): the part of the
///   foot on the ground stays there. CMU 01_01 frame 2434 (both feet on
///   tiptoe), whose toes the flattening about the ankle to the rest pose
///   lifted by up to 14 cm, is named: its toes within 6 mm of their height
///   without;
/// - where laying the foot at its planted pitch (the median of its toe
///   line's elevation over its locked frames) about the ankle moves the toe
///   by at most 0.4 mm (0.2 mm across), the toe line within 1° of that
///   pitch; at least 1% of the locked frames are such;
/// - the roll (the angle about the toe line from the horizontal to the
///   rest pose's side axis `up × toe` turned by the world rotation) within
///   1° of its planted roll (the median without) where the toe line is
///   within 20° of the planted pitch;
/// - every bound of the lock ([`check_locked`]) on the flattened output;
/// - lint's pops and spikes (at ground 0) no more than without it.
#[test]
fn foot_locking_flattens_the_feet_when_asked() {
    let clips = clips(FLAT_CLIPS);
    if clips.is_empty() {
        return;
    }
    let mut failed: Vec<String> = Vec::new();
    for (name, bvh) in clips {
        let plain = Options { lock_feet: true, ..Options::default() };
        let flat = Options { flatten_feet: true, ..plain.clone() };
        let n = bvh.motion().n_frames();
        let (mut a, mut b) = (bvh.clone(), bvh.clone());
        let la = clean::lock_feet_in(&mut a, 0..n, &plain).unwrap();
        let lb = clean::lock_feet_in(&mut b, 0..n, &flat).unwrap();
        assert_eq!(la.spans, lb.spans, "{name}");
        assert!(!lb.spans.is_empty(), "{name}: nothing locked");
        let lint = quality::lint(&bvh, &quality::Options::default());
        let (u, mpu) = (lint.up.vector(), lint.metres_per_unit);
        let skel = bvh.skeleton();
        let nj = skel.len();
        let (pa, pb) = (world_m(&a, 1.0), world_m(&b, 1.0));
        let feet: Vec<usize> = {
            let mut f: Vec<usize> = lb.spans.iter().map(|s| s.foot).collect();
            f.sort_unstable();
            f.dedup();
            f
        };
        // The locked legs: each foot and its ancestors that are no other
        // foot's. Every channel outside them bit for bit the lock's without
        // flattening, and, but for the root's (the hips' lowering), the
        // input's.
        let up_from = |j: usize| {
            let mut v = vec![j];
            while let Some(p) = skel.joints()[*v.last().unwrap()].parent() {
                v.push(p.index());
            }
            v
        };
        let chains: Vec<Vec<usize>> = feet.iter().map(|&f| up_from(f)).collect();
        let leg = |j: usize| {
            chains.iter().enumerate().any(|(i, c)| {
                c.contains(&j) && chains.iter().enumerate().all(|(k, d)| k == i || !d.contains(&j))
            })
        };
        for j in (0..nj).filter(|&j| !leg(j)) {
            for ch in skel.joints()[j].channel_range() {
                for f in 0..n {
                    let (x, y) = (a.motion().frame(f)[ch], b.motion().frame(f)[ch]);
                    assert_eq!(x.to_bits(), y.to_bits(), "{name}: joint {j} frame {f}");
                    if j != 0 {
                        let z = bvh.motion().frame(f)[ch];
                        assert_eq!(z.to_bits(), y.to_bits(), "{name}: joint {j} frame {f}");
                    }
                }
            }
        }
        let elev =
            |d: bvhkit::glam::DVec3| d.dot(u).atan2((d - u * d.dot(u)).length()).to_degrees();
        let mut flat_frames = 0usize;
        let (mut pitch_before, mut pitch_after) = (0.0f64, 0.0f64);
        let (mut roll_before, mut roll_after) = (0.0f64, 0.0f64);
        let (mut rise, mut sink, mut toe_moved) = (f64::NEG_INFINITY, f64::NEG_INFINITY, 0.0f64);
        let (mut ankle_moved, mut toe_across, mut roll_frames) = (0.0f64, 0.0f64, 0usize);
        for &foot in &feet {
            let mine: Vec<&clean::LockedSpan> =
                lb.spans.iter().filter(|s| s.foot == foot).collect();
            let toe = mine[0].point;
            assert_ne!(toe, foot, "{name}: the foot has a toe");
            // The toe's offset from the foot in the rest pose, and the
            // foot's side axis there.
            let mut o = bvhkit::glam::DVec3::ZERO;
            let mut j = toe;
            while j != foot {
                o += skel.joints()[j].offset();
                j = skel.joints()[j].parent().unwrap().index();
            }
            let side = u.cross(o).normalize();
            let len = o.length() * mpu;
            // The planted pitch: the median elevation of the toe line
            // over the foot's locked frames without flattening.
            let mut all: Vec<f64> = mine
                .iter()
                .flat_map(|s| s.frames.0..=s.frames.1)
                .map(|f| elev(pa[f * nj + toe] - pa[f * nj + foot]))
                .collect();
            all.sort_by(f64::total_cmp);
            let planted = all[all.len() / 2];
            // The roll: the angle about the toe line from the horizontal
            // across it to the side axis; planted, its median without.
            let roll = |x: &Bvh, f: usize| {
                let q = world_rotation(x, foot, f);
                let t = (q * o).normalize();
                let level = u.cross(t).normalize();
                let v = q * side;
                level.cross(v).dot(t).atan2(level.dot(v)).to_degrees()
            };
            let mut all: Vec<f64> =
                mine.iter().flat_map(|s| s.frames.0..=s.frames.1).map(|f| roll(&a, f)).collect();
            all.sort_by(f64::total_cmp);
            let planted_roll = all[all.len() / 2];
            for s in &mine {
                let ground = s.pin.dot(u);
                for f in s.frames.0..=s.frames.1 {
                    // The ankle at its height; the toe on its pin across
                    // the up axis (the ankle moves across it for that).
                    let ankle = pb[f * nj + foot] - pa[f * nj + foot];
                    assert!(ankle.length() <= 1e-9, "{name} frame {f}: ankle moved {ankle}");
                    ankle_moved = ankle_moved.max(ankle.length() * mpu);
                    let d = pb[f * nj + toe] - pa[f * nj + toe];
                    toe_moved = toe_moved.max(d.length() * mpu);
                    toe_across = toe_across.max((d - u * d.dot(u)).length() * mpu);
                    // The toe: no higher than without, nor below the ground.
                    let (ha, hb) = (pa[f * nj + toe].dot(u), pb[f * nj + toe].dot(u));
                    rise = rise.max((hb - ha) * mpu);
                    sink = sink.max((ground - hb) * mpu);
                    if (hb - ha) * mpu > 0.01 {
                        failed
                            .push(format!("{name} frame {f}: toe {:.4} m higher", (hb - ha) * mpu));
                    }
                    if (ground - hb) * mpu > 0.01 {
                        failed.push(format!(
                            "{name} frame {f}: toe {:.4} m below its ground",
                            (ground - hb) * mpu
                        ));
                    }
                    // The pitch, where laying the foot at its planted pitch
                    // about the ankle neither lifts its toe (by 1.5 mm) nor
                    // puts it below the ground (by 1.5 mm).
                    let e = elev(pb[f * nj + toe] - pb[f * nj + foot]);
                    let e0 = elev(pa[f * nj + toe] - pa[f * nj + foot]);
                    let up = len * (planted.to_radians().sin() - e0.to_radians().sin());
                    let (c, c0) = (planted.to_radians().cos(), e0.to_radians().cos());
                    let across = len * (c - c0).abs();
                    if up.abs() <= 0.0004 && across <= 0.0002 {
                        flat_frames += 1;
                        pitch_before = pitch_before.max((e0 - planted).abs());
                        pitch_after = pitch_after.max((e - planted).abs());
                        if (e - planted).abs() > 1.0 {
                            failed.push(format!(
                                "{name} frame {f}: toe at {e:.2}°, planted {planted:.2}°"
                            ));
                        }
                    }
                    // The roll: the side axis at the planted roll, where
                    // the toe line is within 20° of the planted pitch (a
                    // foot on tiptoe keeps its roll, a twist about the shin).
                    let (ra, rb) = (roll(&a, f), roll(&b, f));
                    let off = |r: f64| (r - planted_roll + 540.0).rem_euclid(360.0) - 180.0;
                    if (e0 - planted).abs() <= 20.0 {
                        roll_frames += 1;
                        roll_before = roll_before.max(off(ra).abs());
                        roll_after = roll_after.max(off(rb).abs());
                        if off(rb).abs() > 1.0 {
                            failed.push(format!(
                                "{name} frame {f}: roll {rb:.2}°, planted {planted_roll:.2}°"
                            ));
                        }
                    }
                }
            }
        }
        let locked: usize = lb.spans.iter().map(|s| s.frames.1 - s.frames.0 + 1).sum();
        let at0 = quality::Options { ground: quality::Ground::Height(0.0), ..Default::default() };
        let (qa, qb) = (quality::lint(&a, &at0), quality::lint(&b, &at0));
        println!(
            "{name}: {} spans, {locked} foot-frames locked, {flat_frames} laid flat: toe pitch off the planted pitch at most {pitch_before:.2}° without, {pitch_after:.2}° with; {roll_frames} within 20° of it: roll off the planted roll at most {roll_before:.2}° without, {roll_after:.4}° with; toe higher by at most {:.4} m, below its ground by at most {:.4} m, moved at most {toe_moved:.4} m, across the up axis {toe_across:.6} m; ankle moved at most {ankle_moved:.4} m; unsolved {} -> {}; pops {} -> {}, spikes {} -> {}, euler jumps {} -> {}, ground penetration {:?} -> {:?} m, foot slide {:?} -> {:?}",
            lb.spans.len(),
            rise,
            sink,
            la.unsolved,
            lb.unsolved,
            qa.metrics.pops,
            qb.metrics.pops,
            qa.metrics.spikes,
            qb.metrics.spikes,
            qa.metrics.euler_jumps,
            qb.metrics.euler_jumps,
            qa.metrics.ground_penetration,
            qb.metrics.ground_penetration,
            qa.metrics.foot_slide,
            qb.metrics.foot_slide,
        );
        // Every bound of the issue, as without flattening.
        failed.extend(check_locked(&format!("{name} flattened"), &bvh, &b, &lb, 0..n));
        if flat_frames * 100 < locked {
            failed.push(format!("{name}: few frames laid flat ({flat_frames} of {locked})"));
        }
        if name == FLAT_CLIPS[0] {
            // Frame 2434: both feet on tiptoe in the capture.
            let f = 2434;
            for &foot in &feet {
                let toe = lb.spans.iter().find(|s| s.foot == foot).unwrap().point;
                let d = (pb[f * nj + toe].dot(u) - pa[f * nj + toe].dot(u)) * mpu;
                assert!(d.abs() <= 0.006, "{name} frame {f}: toe {d:.4} m higher");
                println!("{name} frame {f}: {} toe {:+.4} m", skel.joints()[toe].name(), d);
            }
            let near = lb.spans.iter().filter(|s| s.frames.0 <= f + 5 && f <= s.frames.1 + 5);
            assert_eq!(near.count(), 2, "{name}: both feet locked at frame {f}");
        }
        if qb.metrics.pops > qa.metrics.pops || qb.metrics.spikes > qa.metrics.spikes {
            failed.push(format!("{name}: more pops or spikes"));
        }
    }
    let shown: Vec<&String> = failed.iter().take(40).collect();
    assert!(failed.is_empty(), "{} failures:\n{shown:#?}", failed.len());
}

/// Checks the issue's bounds of `out` (the failures, one line each), `bvh`
/// with its feet locked over
/// `range` as `locked` says, against lint's measures of both (metres):
/// - the GMD skating ratio on the file's own floor (`--ground 0`) at most
///   0.01 and never above the input's;
/// - the speed of the feet (lint's `foot_speed`, the slowest point of each
///   foot) over the steps of the input's contact spans down by 90%;
/// - each span is one of the input's contact spans (lint's or given), its
///   pin the contact point's captured position at a frame of the span, and
///   the contact point within 5 mm of it on every frame of the span;
/// - every joint outside the legs (thigh and below) moved by at most 1 mm
///   apart from the hips' lowering, which is straight down and what
///   `locked` reports;
/// - the knee's angular speed at most 1.5 times its fastest before;
/// - no rotation channel of the output jumps by 180° or more where the
///   input's did not; skeleton and frame count unchanged.
fn check_locked(
    name: &str,
    bvh: &Bvh,
    out: &Bvh,
    locked: &clean::Locked,
    range: std::ops::Range<usize>,
) -> Vec<String> {
    // The lock's contacts: lint's, against the pooled ground (`footlock`'s
    // **Contacts**).
    let q = quality::Options { ground: quality::Ground::Pooled, ..quality::Options::default() };
    let at0 = quality::Options { ground: quality::Ground::Height(0.0), ..q.clone() };
    let (before, after) = (quality::lint(bvh, &q), quality::lint(out, &q));
    let (s0, s1) = (
        quality::lint(bvh, &at0).metrics.skate_ratio.unwrap(),
        quality::lint(out, &at0).metrics.skate_ratio.unwrap(),
    );
    let skel = bvh.skeleton();
    let nj = skel.len();
    let n = bvh.motion().n_frames();
    let mpu = before.metres_per_unit;
    let u = before.up.vector();
    let (p0, p1) = (world_m(bvh, mpu), world_m(out, mpu));
    let parent = |j: usize| skel.joints()[j].parent().unwrap().index();
    let mut leg = vec![false; nj];
    // The knee's speed ratio over every step, and without the first step
    // (the first frame of the cgspeed conversions is another pose: its
    // step is the clip's fastest and would hide a pop).
    let (mut pinned_miss, mut knee_ratio, mut knee_strict) = (0.0f64, 0.0f64, 0.0f64);
    let (mut slide0, mut slide1, mut steps) = (0.0, 0.0, 0usize);
    for (fi, foot) in before.feet.iter().enumerate() {
        let (a, pin) = (foot.points[0], foot.skate_point);
        let (k, h) = (parent(a), parent(parent(a)));
        for l in leg.iter_mut().take(skel.subtree_end(bvhkit::JointId::new(h))).skip(h) {
            *l = true;
        }
        let mine: Vec<&clean::LockedSpan> = locked.spans.iter().filter(|s| s.foot == a).collect();
        for s in &mine {
            assert_eq!(s.point, pin, "{name}: the pinned point is the skate point");
            let (b, e) = s.frames;
            assert!(range.contains(&b) && range.contains(&e) && b < e);
            assert!((b..=e).contains(&s.pin_frame));
            let captured = p0[s.pin_frame * nj + pin];
            assert!((captured - s.pin * mpu).length() < 1e-9, "{name}: pin not a captured point");
            // Across the up axis on every frame; along it too where the
            // point was captured at most 1 cm above its pin (in contact, not
            // lifted at a heel strike or toe-off).
            for f in b..=e {
                let d = p1[f * nj + pin] - captured;
                let on = p0[f * nj + pin].dot(u) - captured.dot(u) <= clean::footlock::LIFT_METRES;
                let miss = if on { d.length() } else { (d - u * d.dot(u)).length() };
                pinned_miss = pinned_miss.max(miss);
            }
            for f in b..e {
                slide0 += before.series.foot_speed[fi][f];
                slide1 += after.series.foot_speed[fi][f];
                steps += 1;
            }
        }
        // Lint's spans (when no contacts were given): each one of two frames
        // or more inside the range is locked.
        let runs = quality::runs(before.series.contact[fi].iter().copied());
        let inside = runs.iter().filter(|(b, e)| e > b && range.contains(b) && range.contains(e));
        for r in inside {
            // Whole clip: inside a locked span (close spans are merged);
            // part of a clip: locked where it is away from the part's ends.
            let whole = range.start == 0 && range.end == n;
            let margin = (clean::footlock::RAMP_SECONDS * bvh.motion().fps()).round() as usize;
            let away = r.1 >= range.start + margin && r.0 + margin < range.end;
            assert!(
                mine.iter().any(|s| s.frames.0 <= r.0 && r.1 <= s.frames.1)
                    || (!whole && !away)
                    || (!whole && mine.iter().any(|s| s.frames.0 <= r.1 && r.0 <= s.frames.1)),
                "{name}: span {r:?} not locked"
            );
        }
        let local_k = |b: &Bvh, f: usize| local(b, k, f);
        let speed = |b: &Bvh, from: usize| {
            (from..n).map(|f| local_k(b, f).angle_between(local_k(b, f - 1))).fold(0.0, f64::max)
        };
        knee_ratio = knee_ratio.max(speed(out, 1) / speed(bvh, 1));
        knee_strict = knee_strict.max(speed(out, 2) / speed(bvh, 2));
    }
    // The hips' lowering: the root moves straight down, by what is reported.
    let mut lowest = 0.0f64;
    let mut others = 0.0f64;
    for f in 0..n {
        let r = p1[f * nj] - p0[f * nj];
        assert!((r - u * r.dot(u)).length() < 1e-9, "{name}: the root moved sideways at {f}");
        assert!(r.dot(u) <= 1e-12, "{name}: the root rose at {f}");
        lowest = lowest.max(-r.dot(u));
        for j in (0..nj).filter(|&j| !leg[j]) {
            others = others.max((p1[f * nj + j] - p0[f * nj + j] - r).length());
        }
    }
    assert!((lowest - locked.hips_lowered * mpu).abs() < 1e-9, "{name}: lowering not reported");
    // Rotation channels stay continuous.
    let width = bvh.motion().n_channels();
    let (vi, vo) = (bvh.motion().values(), out.motion().values());
    for joint in skel.joints() {
        for c in joint.channel_range() {
            let step = |v: &[f64]| {
                (1..n)
                    .map(|f| (v[f * width + c] - v[(f - 1) * width + c]).abs())
                    .fold(0.0, f64::max)
            };
            if step(vi) < 180.0 {
                let at = (1..n)
                    .max_by(|&f, &g| {
                        let d = |f: usize| (vo[f * width + c] - vo[(f - 1) * width + c]).abs();
                        d(f).total_cmp(&d(g))
                    })
                    .unwrap_or(0);
                assert!(
                    step(vo) < 180.0,
                    "{name}: {} channel {c} jumps by {:.1} at frame {at} ({:.1} -> {:.1})",
                    joint.name(),
                    step(vo),
                    vo[at.saturating_sub(1) * width + c],
                    vo[at * width + c]
                );
            }
        }
    }
    let slide = |x: f64| x / steps.max(1) as f64;
    println!(
        "{name}: {} spans (ramps {}..{} frames); skate_ratio at ground 0 {s0:.4} -> {s1:.4}; \
         speed in contact {:.4} -> {:.4} m/s (lint foot_slide {:.3} -> {:.3}); pinned within {:.3} mm; \
         other joints {:.2e} mm; hips lowered {:.1} mm; knee speed x{knee_ratio:.2} (x{knee_strict:.2} after the first step); {} unsolved",
        locked.spans.len(),
        locked.spans.iter().map(|s| s.ramps.0.min(s.ramps.1)).min().unwrap_or(0),
        locked.spans.iter().map(|s| s.ramps.0.max(s.ramps.1)).max().unwrap_or(0),
        slide(slide0),
        slide(slide1),
        before.metrics.foot_slide.unwrap_or(f64::NAN),
        after.metrics.foot_slide.unwrap_or(f64::NAN),
        pinned_miss * 1e3,
        others * 1e3,
        lowest * 1e3,
        locked.unsolved,
    );
    for note in &locked.notes {
        println!("  note: {note}");
    }
    assert_eq!(out.skeleton(), bvh.skeleton());
    assert_eq!(out.motion().n_frames(), n);
    let mut failed = Vec::new();
    let mut bound = |ok: bool, what: String| {
        if !ok {
            failed.push(format!("{name}: {what}"));
        }
    };
    bound(!locked.spans.is_empty(), "no span locked".into());
    bound(slide1 <= 0.1 * slide0, format!("speed in contact {slide0} -> {slide1}"));
    bound(pinned_miss <= 0.005, format!("a pinned foot is {pinned_miss} m off"));
    bound(others <= 0.001, format!("a joint outside the legs moved {others} m"));
    bound(s1 <= 0.01 && s1 <= s0, format!("skate_ratio {s0} -> {s1}"));
    bound(knee_ratio <= 1.5, format!("knee angular speed x{knee_ratio}"));
    bound(knee_strict <= 1.5, format!("knee angular speed x{knee_strict} after the first step"));
    failed
}

/// Every joint-frame the spike steps (glitch frames and spikes) repaired.
fn repaired_by(report: &clean::Report) -> Vec<(usize, usize)> {
    let mut r: Vec<(usize, usize)> = report
        .steps
        .iter()
        .filter(|s| s.name.starts_with("spikes") || s.name.starts_with("glitch frames"))
        .flat_map(|s| s.repaired.iter().copied())
        .collect();
    r.sort_unstable();
    r.dedup();
    r
}

/// The repairs of the spike steps: (joint, frame) for each joint-frame of
/// the spikes step, (`None`, frame) for each whole glitch frame.
fn repairs(report: &clean::Report) -> Vec<(Option<usize>, usize)> {
    let mut r: Vec<(Option<usize>, usize)> = Vec::new();
    for s in &report.steps {
        if s.name.starts_with("spikes") {
            r.extend(s.repaired.iter().map(|&(j, f)| (Some(j), f)));
        } else if s.name.starts_with("glitch frames") {
            r.extend(s.repaired.iter().map(|&(_, f)| (None, f)));
        }
    }
    r.sort_unstable();
    r.dedup();
    r
}

/// `bvh` with whole glitch frames at known frames: the root moved 10 to
/// 20 cm in a random direction and every joint turned 4° to 8° about a
/// random axis (each joint about at the per-joint spike floor of 5°: the
/// whole figure is what is far from where it travels), frames at least 30
/// apart. Each is
/// repaired, back to within 3° of the clean pose on every joint (the SLERP
/// of its neighbours is not the clean frame where a finger jitters), 1 cm
/// RMS over the joints and 1 cm at the root.
fn inject_glitch_frames(bvh: &Bvh, rng: &mut Rng, count: usize, mpu: f64) -> (Bvh, Vec<usize>) {
    let mut out = bvh.clone();
    let n = bvh.motion().n_frames();
    let mut at: Vec<usize> = Vec::new();
    while at.len() < count {
        let f = 10 + rng.below(n - 20);
        if at.iter().all(|&g| f.abs_diff(g) >= 30) {
            at.push(f);
        }
    }
    at.sort_unstable();
    let layouts: Vec<JointChannels> =
        bvh.skeleton().joints().iter().map(JointChannels::of).collect();
    let dir =
        |rng: &mut Rng| bvhkit::glam::DVec3::new(rng.gauss(), rng.gauss(), rng.gauss()).normalize();
    for &f in &at {
        let row = out.motion_mut().frame_mut(f);
        let shift = dir(rng) * (0.1 + 0.1 * rng.uniform()) / mpu;
        let root = &layouts[0];
        for k in 0..root.n_pos as usize {
            row[root.pos_index[k]] += shift[root.pos_axes[k].index()];
        }
        for c in layouts.iter().filter(|c| c.n_rot == 3) {
            let q = c.rotation(row)
                * DQuat::from_axis_angle(dir(rng), (4.0 + 4.0 * rng.uniform()).to_radians());
            let near = c.angles(row);
            c.write_rotation(q, Some(near), row);
        }
    }
    (out, at)
}

#[test]
fn whole_glitch_frames_are_found_and_repaired() {
    let opts = Options { spikes: Some(clean::DEFAULT_SPIKE_K), ..Options::default() };
    let (mut missed, mut injected) = (Vec::new(), 0);
    for (name, bvh) in walks() {
        injected += 5;
        let lint = quality::lint(&bvh, &quality::Options::default());
        let mpu = lint.metres_per_unit;
        let mut rng = Rng(11);
        let (glitchy, at) = inject_glitch_frames(&bvh, &mut rng, 5, mpu);
        let (out, report) = clean::clean(&glitchy, &opts).unwrap();
        let step = report.steps.iter().find(|s| s.name.starts_with("glitch frames")).unwrap();
        let frames: std::collections::BTreeSet<usize> = step.repaired.iter().map(|r| r.1).collect();
        // Each injected frame repaired as a whole frame, back to within a
        // degree of the clean pose on every joint and 1 cm at the root.
        let (p_clean, p_out) = (world_m(&bvh, mpu), world_m(&out, mpu));
        let nj = bvh.skeleton().len();
        let (mut worst_deg, mut worst_root, mut worst_pose) = (0.0f64, 0.0f64, 0.0f64);
        for &f in &at {
            if !frames.contains(&f) {
                missed.push(format!("{name}@{f}"));
                continue;
            }
            for j in rotating(&bvh) {
                worst_deg =
                    worst_deg.max(local(&out, j, f).angle_between(local(&bvh, j, f)).to_degrees());
            }
            worst_root = worst_root.max((p_out[f * nj] - p_clean[f * nj]).length());
            let sq: f64 =
                (0..nj).map(|j| (p_out[f * nj + j] - p_clean[f * nj + j]).length_squared()).sum();
            worst_pose = worst_pose.max((sq / nj as f64).sqrt());
        }
        // The report says which frames: the injected ones and, on the
        // clean walk, only frames where lint finds a spike.
        let (_, clean_report) = clean::clean(&bvh, &opts).unwrap();
        let on_clean: std::collections::BTreeSet<usize> = clean_report
            .steps
            .iter()
            .filter(|s| s.name.starts_with("glitch frames"))
            .flat_map(|s| s.repaired.iter().map(|r| r.1))
            .collect();
        println!(
            "{name}: glitch frames {at:?} -> repaired {frames:?}; worst joint {worst_deg:.2}°, \
             root {:.1} mm, pose {:.1} mm RMS; on the clean walk: {on_clean:?}",
            worst_root * 1e3,
            worst_pose * 1e3
        );
        assert!(worst_deg < 3.0, "{name}: a repaired glitch frame is {worst_deg}° off");
        assert!(worst_pose < 0.01, "{name}: a repaired pose is {worst_pose} m off (RMS)");
        assert!(worst_root < 0.01, "{name}: a repaired root is {worst_root} m off");
        for f in &frames {
            assert!(at.contains(f) || on_clean.contains(f), "{name}: frame {f} repaired");
        }
        for &f in &on_clean {
            assert!(
                lint_confirms(&bvh, &lint, None, f),
                "{name}: glitch frame {f} on the clean walk"
            );
        }
        assert_eq!(out.skeleton(), bvh.skeleton());
        assert_eq!(out.motion().n_frames(), bvh.motion().n_frames());
    }
    // At most one in ten missed (PyMO's frame 787, where the figure moves
    // fast, is today: its pose is 2.2% of the figure's size away, less than
    // four frames of its own motion).
    println!("glitch frames missed: {missed:?} of {injected}");
    assert!(missed.len() * 10 <= injected, "glitch frames missed: {missed:?}");
}

/// Every channel of `a` and `b` bit for bit except `skip`.
fn same_except(a: &Bvh, b: &Bvh, skip: &[usize], name: &str) {
    assert_eq!(a.skeleton(), b.skeleton(), "{name}: skeleton");
    assert_eq!(a.motion().n_frames(), b.motion().n_frames(), "{name}: frames");
    let w = a.motion().n_channels();
    for (i, (x, y)) in a.motion().values().iter().zip(b.motion().values()).enumerate() {
        if !skip.contains(&(i % w)) {
            assert_eq!(x.to_bits(), y.to_bits(), "{name}: channel {} of frame {}", i % w, i / w);
        }
    }
}

/// The root's position channels: (channel index, axis index).
fn root_position_channels(bvh: &Bvh) -> Vec<(usize, usize)> {
    let c = JointChannels::of(&bvh.skeleton().joints()[0]);
    (0..c.n_pos as usize).map(|k| (c.pos_index[k], c.pos_axes[k].index())).collect()
}

#[test]
fn remove_drift_brings_the_end_back_to_the_start_and_changes_nothing_else() {
    let opts = Options { remove_drift: true, ..Options::default() };
    for (name, bvh) in walks() {
        let up = quality::lint(&bvh, &quality::Options::default()).up.axis().index();
        let (out, report) = clean::clean(&bvh, &opts).unwrap();
        let pos = root_position_channels(&bvh);
        let across: Vec<usize> = pos.iter().filter(|p| p.1 != up).map(|p| p.0).collect();
        assert_eq!(across.len(), 2, "{name}");
        same_except(&bvh, &out, &across, &name);
        let (n, m0, m1) = (bvh.motion().n_frames(), bvh.motion(), out.motion());
        for &c in &across {
            let travel = m0.frame(n - 1)[c] - m0.frame(0)[c];
            let left = m1.frame(n - 1)[c] - m1.frame(0)[c];
            println!("{name}: channel {c}: end - start {travel:.3} -> {left:.2e}");
            assert!(left.abs() <= 1e-9 * travel.abs().max(1.0), "{name}: {left}");
            assert_eq!(m1.frame(0)[c], m0.frame(0)[c], "{name}: the first frame moved");
            // A straight-line correction: half of it at the middle frame.
            let mid = (n - 1) / 2;
            let want = m0.frame(mid)[c] - travel * mid as f64 / (n - 1) as f64;
            assert!((m1.frame(mid)[c] - want).abs() < 1e-9 * travel.abs().max(1.0));
        }
        assert_eq!(report.steps[0].changes.len(), 1, "{name}: only the root changes");
    }
}

#[test]
fn ground_puts_the_contacts_at_zero_and_changes_nothing_else() {
    let opts = Options { ground: true, ..Options::default() };
    let q = quality::Options::default();
    for (name, bvh) in walks() {
        let before = quality::lint(&bvh, &q);
        let (out, _) = clean::clean(&bvh, &opts).unwrap();
        let after = quality::lint(&out, &q);
        let up = before.up.axis().index();
        let vertical: Vec<usize> =
            root_position_channels(&bvh).iter().filter(|p| p.1 == up).map(|p| p.0).collect();
        assert_eq!(vertical.len(), 1);
        same_except(&bvh, &out, &vertical, &name);
        println!("{name}: contact ground {:.4} m -> {:.2e} m", before.ground, after.ground);
        assert!(before.ground.abs() > 0.001, "{name}: already on the ground");
        assert!(after.ground.abs() < 1e-6, "{name}: ground {} m after", after.ground);
    }
}

/// A walk whose root rises 20 cm over the clip (a slope, an inertial
/// capture's height drift): `ground_over_time` keeps the feet in contact
/// where the clean walk has them above its floor, within 15 mm at the
/// median and at worst a quarter of what one constant leaves (8 cm or
/// more); only the root's vertical channel changes. Figures today: CMU
/// 01_01 median 2.3 mm, worst 9.3 mm; CMU 12_01 (4.4 s, feet rarely
/// still) median 9.6 mm, worst 28.5 mm against the constant's 109.8 mm,
/// so its bound is 0.3 of the constant's: since 2026-11-30, when the
/// ground and the curve became the lowest foot's, the curve is nearer
/// (before: median 12.6 mm, worst 34 mm) but the constant even more so
/// (its worst 154.3 mm before, the curve's worst 0.22 of it), and the
/// bound is a share of the constant's error; the issue asks no number
/// here.
#[test]
fn ground_over_time_follows_a_drifting_floor() {
    let q = quality::Options::default();
    for (name, bvh) in walks() {
        let lint = quality::lint(&bvh, &q);
        let (mpu, up) = (lint.metres_per_unit, lint.up);
        let vertical = root_position_channels(&bvh).into_iter().find(|p| p.1 == up.axis().index());
        let c = vertical.unwrap().0;
        let n = bvh.motion().n_frames();
        let mut ramped = bvh.clone();
        for f in 0..n {
            ramped.motion_mut().frame_mut(f)[c] +=
                up.sign() * 0.2 / mpu * f as f64 / (n - 1) as f64;
        }
        // The feet in contact in the clean walk, and how high they stand
        // above its (flat) contact ground: what they should stand at.
        let nj = bvh.skeleton().len();
        let clean_pos = world_m(&bvh, mpu);
        let height = |p: &[bvhkit::glam::DVec3], f: usize, j: usize| {
            up.sign() * p[f * nj + j][up.axis().index()]
        };
        let err = |b: &Bvh| -> (f64, f64) {
            let p = world_m(b, mpu);
            let mut e = Vec::new();
            for (fi, foot) in lint.feet.iter().enumerate() {
                for f in (0..n).filter(|&f| lint.series.contact[fi][f]) {
                    let j = foot.skate_point;
                    e.push((height(&p, f, j) - (height(&clean_pos, f, j) - lint.ground)).abs());
                }
            }
            e.sort_by(f64::total_cmp);
            (e[e.len() / 2], e[e.len() - 1])
        };
        let smooth = Options { ground: true, ground_over_time: true, ..Options::default() };
        let constant = Options { ground: true, ..Options::default() };
        let (out, report) = clean::clean(&ramped, &smooth).unwrap();
        let (out_c, _) = clean::clean(&ramped, &constant).unwrap();
        let ((med, max), (_, max_c)) = (err(&out), err(&out_c));
        println!(
            "{name}: feet in contact off the floor, over time: median {:.1} mm, max {:.1} mm; \
             constant: max {:.1} mm",
            med * 1e3,
            max * 1e3,
            max_c * 1e3
        );
        assert_eq!(report.steps[0].name, "ground over time");
        assert!(max_c > 0.08, "{name}: the constant ground is already right ({max_c} m)");
        let share = if name.starts_with("cmu_12_01") { 0.3 } else { 0.25 };
        assert!(med < 0.015 && max < share * max_c, "{name}: median {med} m, max {max} m");
        same_except(&ramped, &out, &[c], &name);
        // On the clean walk (a flat floor) the curve is nearly the constant.
        let (flat, _) = clean::clean(&bvh, &smooth).unwrap();
        let (flat_c, _) = clean::clean(&bvh, &constant).unwrap();
        let most = (0..n)
            .map(|f| (flat.motion().frame(f)[c] - flat_c.motion().frame(f)[c]).abs() * mpu)
            .fold(0.0, f64::max);
        println!(
            "{name}: on the flat floor the curve is within {:.1} mm of the constant",
            most * 1e3
        );
    }
}

/// The smallest rotation vector of `q` (radians).
fn log(q: DQuat) -> bvhkit::glam::DVec3 {
    let q = if q.w < 0.0 { -q } else { q };
    let (axis, angle) = q.to_axis_angle();
    axis * angle
}

/// Per-joint strength on noisy walks: factor 0 (a whole subtree) keeps the
/// joints bit for bit, factor 1 (the root) gives the full filter's values
/// bit for bit, factor 0.5 moves each rotation by half the full filter's
/// change (`log(q⁻¹ q') = ½ log(q⁻¹ q_full)`) and each position channel
/// halfway; `*=0` changes nothing at all.
#[test]
fn strength_blends_zero_unchanged_one_full() {
    let mut rng = Rng(7);
    for (name, bvh) in walks() {
        let bvh = add_noise(&bvh, 2.0, &mut rng);
        let skel = bvh.skeleton();
        let names: Vec<String> = skel.joints().iter().map(|j| j.name().to_string()).collect();
        // A joint with at least two joints below it, not the root.
        let sub = (1..skel.len())
            .find(|&j| skel.subtree_end(bvhkit::JointId::new(j)) - j >= 3)
            .expect("a joint with a subtree");
        let below = sub + 1..skel.subtree_end(bvhkit::JointId::new(sub));
        let bw = Some(Butterworth { cutoff_hz: 6.0, order: 4 });
        let full =
            clean::clean(&bvh, &Options { butterworth: bw, ..Options::default() }).unwrap().0;
        let opts = Options {
            butterworth: bw,
            strength: vec![
                ("*".into(), 0.5),
                (names[0].clone(), 1.0),
                (format!("{}/*", names[sub]), 0.0),
            ],
            ..Options::default()
        };
        let (out, report) = clean::clean(&bvh, &opts).unwrap();
        let width = bvh.motion().n_channels();
        let (vin, vfull, vout) =
            (bvh.motion().values(), full.motion().values(), out.motion().values());
        let (mut worst_rot, mut worst_pos) = (0.0f64, 0.0f64);
        for (j, joint) in skel.joints().iter().enumerate() {
            let c = JointChannels::of(joint);
            for f in 0..bvh.motion().n_frames() {
                let row = |v: &[f64]| v[f * width..(f + 1) * width].to_vec();
                let (a, b, o) = (row(vin), row(vfull), row(vout));
                for ch in joint.channel_range() {
                    if below.contains(&j) {
                        assert_eq!(a[ch].to_bits(), o[ch].to_bits(), "{name}: {} moved", names[j]);
                    } else if j == 0 {
                        assert_eq!(
                            b[ch].to_bits(),
                            o[ch].to_bits(),
                            "{name}: root not fully filtered"
                        );
                    }
                }
                if j == 0 || below.contains(&j) {
                    continue;
                }
                if c.n_rot > 0 {
                    let (qa, qb, qo) = (c.rotation(&a), c.rotation(&b), c.rotation(&o));
                    let want = log(qa.inverse() * qb) * 0.5;
                    worst_rot = worst_rot.max((log(qa.inverse() * qo) - want).length());
                }
                for &i in &c.pos_index[..c.n_pos as usize] {
                    worst_pos = worst_pos.max((o[i] - (a[i] + 0.5 * (b[i] - a[i]))).abs());
                }
            }
        }
        println!("{name}: strength 0.5 off by {worst_rot:e} rad, {worst_pos:e} units");
        assert!(worst_rot < 1e-9 && worst_pos < 1e-9, "{name}: {worst_rot} rad, {worst_pos}");
        assert!(report.steps[0].changes.iter().all(|c| !below.contains(&c.joint)));
        // Nothing at all.
        let none =
            Options { butterworth: bw, strength: vec![("*".into(), 0.0)], ..Options::default() };
        let (same, report) = clean::clean(&bvh, &none).unwrap();
        assert_eq!(same, bvh, "{name}: *=0 changed the clip");
        assert!(report.steps[0].changes.is_empty());
        // Bad entries fail before anything runs.
        let err = |s: Vec<(String, f64)>| {
            clean::clean(&bvh, &Options { butterworth: bw, strength: s, ..Options::default() })
                .unwrap_err()
                .to_string()
        };
        let e = err(vec![("Nope".into(), 1.0)]);
        assert!(e.contains("no joint named \"Nope\"") && e.contains("--strength"), "{e}");
        let e = err(vec![(names[0].clone(), 1.5)]);
        assert!(e.contains("strength 1.5") && e.contains("between 0 and 1"), "{e}");
    }
}

/// A `--joints` mask and `--strength` entries.
type MaskAndStrength = (Option<Vec<String>>, Vec<(String, f64)>);

/// `OneEuroFrames`, fed one frame at a time, gives `clean`'s one-euro
/// result bit for bit, with a mask and strengths too.
#[test]
fn one_euro_frames_equal_clean_bit_for_bit() {
    let mut rng = Rng(11);
    for (name, bvh) in walks() {
        let bvh = add_noise(&bvh, 2.0, &mut rng);
        let skel = bvh.skeleton();
        let p = clean::OneEuro { min_cutoff: 1.2, beta: 0.05, d_cutoff: 1.0 };
        let names: Vec<String> = skel
            .joints()
            .iter()
            .filter(|j| !j.is_end_site())
            .map(|j| j.name().to_string())
            .collect();
        let cases: [MaskAndStrength; 2] = [
            (None, Vec::new()),
            (
                Some(names.iter().step_by(2).cloned().collect()),
                vec![("*".into(), 0.3), (names[0].clone(), 1.0)],
            ),
        ];
        for (joints, strength) in cases {
            let opts = Options {
                one_euro: Some(p),
                joints: joints.clone(),
                strength: strength.clone(),
                ..Options::default()
            };
            let whole = clean::clean(&bvh, &opts).unwrap().0;
            let mut live = clean::OneEuroFrames::new(
                skel,
                p,
                bvh.motion().fps(),
                joints.as_deref(),
                &strength,
            )
            .unwrap();
            let mut changed = 0;
            for (f, frame) in bvh.motion().frames().enumerate() {
                let mut row = frame.to_vec();
                live.filter(&mut row);
                let want = whole.motion().frame(f);
                for (c, (a, b)) in row.iter().zip(want).enumerate() {
                    assert_eq!(a.to_bits(), b.to_bits(), "{name}: frame {f} channel {c}");
                }
                changed += usize::from(row != frame);
            }
            assert!(changed > bvh.motion().n_frames() / 2, "{name}: the filter did little");
        }
    }
}

/// An [`Output`](bvhkit::edit::run::Output) in memory: the header the
/// stream gives at the end, then its frames.
#[derive(Default)]
struct Memory {
    bytes: Vec<u8>,
    begun: usize,
}

impl bvhkit::edit::run::Output for Memory {
    type Body = Vec<u8>;
    type Error = String;
    fn begin(&mut self, room: &[u8]) -> Result<Vec<u8>, String> {
        self.begun += 1;
        Ok(room.to_vec())
    }
    fn finish(&mut self, body: Vec<u8>, room: &[u8], header: &[u8]) -> Result<(), String> {
        self.bytes = [header, &body[room.len()..]].concat();
        Ok(())
    }
    fn whole(&mut self, _: &Bvh) -> Result<(), String> {
        Err("the stream never writes a whole clip".into())
    }
}

/// `clean::stream::stream` of `text` with `opts`: the bytes and the report.
fn streamed(
    text: &[u8],
    opts: &Options,
) -> Result<(Vec<u8>, clean::Report), bvhkit::edit::run::EditError<String>> {
    let mut read = ReadOptions::new();
    read.lenient(true);
    let mut open = || read.frame_reader_slice(text);
    let mut out = Memory::default();
    let (report, _) = clean::stream::stream(&mut open, opts, &mut out, None)?;
    Ok((out.bytes, report))
}

/// `bvh clean --one-euro` streamed from input to output, a frame at a time:
/// on every corpus file that reads, with and without `--joints` and
/// `--strength`, the bytes the whole clip's `clean` writes and its summary
/// (equal reports: the same joints and largest changes, bit for bit).
#[test]
fn one_euro_streams_the_whole_clips_bytes_and_summary() {
    let p = clean::OneEuro { min_cutoff: 1.0, beta: 0.05, d_cutoff: 1.0 };
    let mut files = 0;
    for path in crate::util::corpus_files() {
        let text = std::fs::read(&path).unwrap();
        let Ok((bvh, _)) = ReadOptions::new().lenient(true).parse(&text) else { continue };
        let names: Vec<String> = bvh
            .skeleton()
            .joints()
            .iter()
            .filter(|j| j.kind() != bvhkit::JointKind::EndSite)
            .map(|j| j.name().to_string())
            .collect();
        let some: Vec<String> = names.iter().step_by(3).cloned().collect();
        let cases = [
            Options { one_euro: Some(p), ..Options::default() },
            Options {
                one_euro: Some(p),
                joints: Some(some),
                strength: vec![("*".into(), 0.5), (names[0].clone(), 1.0)],
                ..Options::default()
            },
        ];
        for opts in cases {
            let (whole, report) = clean::clean(&bvh, &opts).unwrap();
            let (bytes, got) = streamed(&text, &opts).unwrap();
            assert!(
                bytes == whole.to_bytes().unwrap(),
                "{}: not the whole clip's bytes",
                stem(&path)
            );
            assert_eq!(got, report, "{}", stem(&path));
        }
        files += 1;
    }
    assert!(files >= 36 || corpus_dir().is_none(), "{files} files read");
}

/// `bvh clean --spikes` streamed (four reads of the file, never its
/// frames held): on every corpus file that reads, at K = 40, 10 and 3 (at
/// 3 the candidates of many tracks run into each other over the whole
/// clip), with one-euro after it, and on corpus clips with spikes and
/// whole glitch frames injected, the bytes the whole clip's `clean`
/// writes and its report, equal field by field (the repaired joint-frames
/// and each joint's largest change, to the bit).
#[test]
fn spikes_stream_the_whole_clips_bytes_and_summary() {
    let euro = clean::OneEuro { min_cutoff: 1.0, beta: 0.05, d_cutoff: 1.0 };
    let same = |name: &str, text: &[u8], opts: &Options| -> usize {
        let (bvh, _) = ReadOptions::new().lenient(true).parse(text).unwrap();
        let (whole, report) = clean::clean(&bvh, opts).unwrap();
        let (bytes, got) = streamed(text, opts).unwrap_or_else(|e| {
            let why = match e {
                bvhkit::edit::run::EditError::GaveUp => "gave up".to_string(),
                bvhkit::edit::run::EditError::Read(e) => e.to_string(),
                _ => "another error".to_string(),
            };
            panic!("{name} {opts:?}: the stream failed: {why}")
        });
        assert!(
            bytes == whole.to_bytes().unwrap(),
            "{name} {:?}: not the whole clip's bytes",
            opts.spikes
        );
        assert_eq!(got, report, "{name} {:?}", opts.spikes);
        assert_eq!(got.to_string(), report.to_string());
        report.steps.iter().map(|s| s.repaired.len()).sum()
    };
    let (mut files, mut repaired, mut injected_repaired) = (0, 0, 0);
    for path in crate::util::corpus_files() {
        let text = std::fs::read(&path).unwrap();
        let Ok((bvh, _)) = ReadOptions::new().lenient(true).parse(&text) else { continue };
        let name = stem(&path);
        for k in [40.0, 10.0, 3.0] {
            repaired += same(&name, &text, &Options { spikes: Some(k), ..Options::default() });
        }
        let both = Options { spikes: Some(40.0), one_euro: Some(euro), ..Options::default() };
        same(&name, &text, &both);
        // Spikes and glitch frames injected where the clip is long enough.
        let n = bvh.motion().n_frames();
        if n >= 200 && !moving(&bvh).is_empty() {
            let mut rng = Rng(28);
            let (spiky, _) = inject_spikes(&bvh, &mut rng, 8);
            let mpu = quality::lint(&bvh, &quality::Options::default()).metres_per_unit;
            let (glitchy, _) = inject_glitch_frames(&spiky, &mut rng, 3, mpu);
            let text = glitchy.to_bytes().unwrap();
            for k in [40.0, 10.0] {
                let opts = Options { spikes: Some(k), ..Options::default() };
                injected_repaired += same(&name, &text, &opts);
            }
            // Spikes 1 to 3 frames apart, of one and two frames, on two
            // joints and the root's position: candidates whose spans
            // meet, resolved together, largest first.
            let mut dense = bvh.clone();
            let layouts: Vec<JointChannels> =
                bvh.skeleton().joints().iter().map(JointChannels::of).collect();
            let joints = moving(&bvh);
            for (i, f) in [60, 62, 63, 66, 67, 70, 72, 73, 74, 78, 80].into_iter().enumerate() {
                let c = &layouts[joints[i % 2 * (joints.len() - 1)]];
                let row = dense.motion_mut().frame_mut(f);
                let angle = (10.0 + 3.0 * i as f64).to_radians();
                let axis = bvhkit::glam::DVec3::new(1.0, i as f64, 0.5).normalize();
                let q = c.rotation(row) * DQuat::from_axis_angle(axis, angle);
                let near = c.angles(row);
                c.write_rotation(q, Some(near), row);
                if let Some(&x) = layouts[0].pos_index[..layouts[0].n_pos as usize].first() {
                    row[x] += (3 + i % 4) as f64 / mpu * 0.01;
                }
            }
            let text = dense.to_bytes().unwrap();
            for k in [40.0, 10.0, 3.0] {
                let opts = Options { spikes: Some(k), ..Options::default() };
                injected_repaired += same(&name, &text, &opts);
            }
        }
        files += 1;
    }
    if corpus_dir().is_some() {
        assert!(files >= 36, "{files} files read");
        assert!(repaired > 100 && injected_repaired > 3000, "{repaired} {injected_repaired}");
    }
}

/// The stream gives up, before writing anything, on what it cannot do
/// alone: steps that need the whole clip, an unknown joint (the whole
/// clip's check says so); a number out of range is the reader's error.
#[test]
fn one_euro_stream_gives_up_where_the_whole_clip_decides() {
    use bvhkit::edit::run::EditError;
    let text = b"HIERARCHY ROOT Hips { OFFSET 0 0 0 CHANNELS 3 Zrotation Xrotation Yrotation
        End Site { OFFSET 0 1 0 } } MOTION Frames: 3 Frame Time: 0.1
        0 0 0\n1 0 0\n2 0 0\n";
    let p = Some(clean::OneEuro { min_cutoff: 1.0, beta: 0.0, d_cutoff: 1.0 });
    let gave_up = |opts: Options| matches!(streamed(text, &opts), Err(EditError::GaveUp));
    let butterworth = Some(Butterworth { cutoff_hz: 1.0, order: 2 });
    assert!(gave_up(Options { one_euro: p, butterworth, ..Options::default() }));
    assert!(gave_up(Options { spikes: Some(40.0), butterworth, ..Options::default() }));
    assert!(gave_up(Options { one_euro: p, lock_feet: true, ..Options::default() }));
    assert!(gave_up(Options {
        one_euro: p,
        joints: Some(vec!["Nope".into()]),
        ..Options::default()
    }));
    assert!(gave_up(Options::default()));
    assert!(gave_up(Options {
        spikes: Some(40.0),
        joints: Some(vec!["Nope".into()]),
        ..Options::default()
    }));
    let (_, _) = streamed(text, &Options { one_euro: p, ..Options::default() }).unwrap();
    // A value out of range is the reader's error, at its place, as the
    // whole clip's.
    let inf = String::from_utf8_lossy(text).replace("1 0 0", "1e999 0 0");
    let whole = ReadOptions::new().lenient(true).parse(inf.as_bytes()).unwrap_err();
    match streamed(inf.as_bytes(), &Options { one_euro: p, ..Options::default() }) {
        Err(EditError::Read(e)) => assert_eq!(e.to_string(), whole.to_string()),
        r => panic!("{:?}", r.map(|x| x.0.len())),
    }
}

/// The one-frame rule on a small joint: a fingertip (its reach 1 unit of
/// a figure of about 112) turned 20° for one frame moves its tip far less
/// than [`clean::spikes::SEEN_SIZE`] of the figure, and is repaired all
/// the same ([`clean::spikes::ONE_FRAME_DEG`]); turned 10° for one frame,
/// or 20° for two frames, it is left alone (below the one-frame angle; a
/// longer span keeps the visible size).
#[test]
fn one_frame_spikes_of_a_fingertip_are_repaired_by_their_angle() {
    let mut text = String::from(
        "HIERARCHY\nROOT Hips { OFFSET 0 0 0 CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n\
         JOINT Spine { OFFSET 0 50 0 CHANNELS 3 Zrotation Xrotation Yrotation\n\
         JOINT Hand { OFFSET 0 50 0 CHANNELS 3 Zrotation Xrotation Yrotation\n\
         JOINT Finger { OFFSET 0 10 0 CHANNELS 3 Zrotation Xrotation Yrotation\n\
         JOINT Tip { OFFSET 0 1 0 CHANNELS 3 Zrotation Xrotation Yrotation\n\
         End Site { OFFSET 0 1 0 } } } } } }\nMOTION\nFrames: 200\nFrame Time: 0.0333333\n",
    );
    for f in 0..200 {
        let t = f as f64 / 30.0;
        let tip = match f {
            50 => 20.0,
            100 => 10.0,
            150 | 151 => 20.0,
            _ => 0.0,
        };
        let s = |a: f64, w: f64| a * (w * t).sin();
        let v = [
            s(3.0, 0.5),
            90.0,
            0.0,
            s(5.0, 1.0),
            s(4.0, 0.7),
            s(3.0, 0.9),
            s(5.0, 1.1),
            s(4.0, 0.8),
            0.0,
            s(6.0, 1.3),
            s(5.0, 0.6),
            0.0,
            s(8.0, 1.0),
            s(5.0, 1.2),
            0.0,
            s(8.0, 0.9) + tip,
            s(5.0, 1.4),
            0.0,
        ];
        let row: Vec<String> = v.iter().map(|x| format!("{x:.6}")).collect();
        text += &row.join(" ");
        text.push('\n');
    }
    let bvh = Bvh::parse(&text).unwrap();
    let tip = bvh.skeleton().find("Tip").unwrap().index();
    let opts = Options { spikes: Some(clean::DEFAULT_SPIKE_K), ..Options::default() };
    let (out, report) = clean::clean(&bvh, &opts).unwrap();
    let repaired = repaired_by(&report);
    assert!(repaired.contains(&(tip, 50)), "{repaired:?}");
    for f in [100, 150, 151] {
        assert!(!repaired.contains(&(tip, f)), "frame {f} repaired: {repaired:?}");
    }
    assert!(repaired.iter().all(|&(j, _)| j == tip), "{repaired:?}");
    // Repaired to the SLERP of its neighbours: within a degree of where
    // the clean motion is.
    let mid = local(&out, tip, 49).slerp(local(&out, tip, 51), 0.5);
    let off = local(&out, tip, 50).angle_between(mid).to_degrees();
    assert!(off < 1.0, "{off}° from its neighbours");
}

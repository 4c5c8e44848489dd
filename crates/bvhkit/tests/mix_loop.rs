//! Loops: the last frame flows into the first, on every well-formed corpus
//! file and on a synthetic walk whose cycle is exact.
use bvhkit::edit::root;
use bvhkit::glam::DQuat;
use bvhkit::mix::looping::{LoopOptions, Travel, make_loop};
use bvhkit::mix::{Span, up_axis};
use bvhkit::{Bvh, JointId, PositionChannels};

use crate::fk::reference_world;
use crate::mix_util::{angle, bits, corpus, local_quat, smoothstep, three_channel_joints, walk};

/// Joint `j`'s local rotation in every frame.
fn rotations(bvh: &Bvh, j: usize) -> Vec<DQuat> {
    bvh.motion().frames().map(|f| local_quat(bvh, j, f)).collect()
}

/// The largest frame-to-frame angle of joint `j` over a clip.
fn max_step(q: &[DQuat]) -> f64 {
    q.windows(2).map(|w| angle(w[0], w[1])).fold(0.0, f64::max)
}

/// The seam bound: the loop's last frame is the clip's frame `L - 1` and its
/// first is the SLERP of the clip's frame `L` (moved back, which changes
/// no joint's local rotation but the carrier's) towards frame 0 at the
/// first crossfade weight `w0`; so across the seam a joint turns at most
/// its own step from `L - 1` to `L` plus `w0` times the angle from frame `L`
/// to frame 0 (triangle inequality), and when the clip is a cycle (frame `L`
/// is frame 0) at most the clip's own largest step.
#[test]
fn a_loop_flows_from_its_last_frame_into_its_first_on_the_corpus() {
    let mut worst: f64 = 0.0;
    for (name, bvh) in corpus(8) {
        let n = bvh.motion().n_frames();
        let nf = (n / 8).clamp(1, 30);
        let opts = LoopOptions {
            crossfade: Span::Frames(nf),
            travel: Travel::Keep,
            ..LoopOptions::default()
        };
        let (out, report) = match make_loop(&bvh, &opts) {
            Ok(x) => x,
            Err(e) => panic!("{name}: {e}"),
        };
        let l = n - nf;
        assert_eq!(out.motion().n_frames(), l);
        assert_eq!(report.frames, l);
        // Outside the crossfade: the clip's frames bit for bit.
        for k in nf..l {
            assert_eq!(bits(out.motion().frame(k)), bits(bvh.motion().frame(k)), "{name}");
        }
        let carrier = root::carrier(&bvh).unwrap().index();
        let w0 = smoothstep(1.0 / (nf + 1) as f64);
        for j in three_channel_joints(&bvh) {
            if j == carrier {
                continue;
            }
            let q = rotations(&bvh, j);
            let qo = rotations(&out, j);
            let seam = angle(qo[l - 1], qo[0]);
            let bound = angle(q[l - 1], q[l]) + w0 * angle(q[l], q[0]) + 1e-9;
            assert!(seam <= bound, "{name}: joint {j} turns {seam} across the seam, bound {bound}");
            // The stated bound relative to the clip's own speed: at most
            // 1.5 times its largest frame-to-frame step (1.11 measured).
            let v = max_step(&q);
            assert!(
                seam <= 1.5 * v + 1e-9,
                "{name}: joint {j} turns {seam} across the seam, clip at most {v}"
            );
            if v > 1e-6 {
                worst = worst.max(seam / v);
            }
        }
    }
    println!("largest seam step over the clip's own largest step: {worst:.3}");
}

#[test]
fn a_walk_cycle_loops_seamlessly_keeping_or_removing_its_travel() {
    // Period 40 frames, 10 crossfaded: frame 40 is frame 0 moved on.
    for turn in [0.0, 1.5] {
        let clip = walk(50, 40.0, 1.0, turn, 1.0 / 30.0);
        for travel in [Travel::Keep, Travel::Remove] {
            let opts =
                LoopOptions { crossfade: Span::Frames(10), travel, ..LoopOptions::default() };
            let (out, report) = make_loop(&clip, &opts).unwrap();
            assert_eq!(out.motion().n_frames(), 40);
            assert!((report.cycle.turn_deg - 40.0 * turn).abs() < 2.0, "{report}");
            for j in 1..out.skeleton().len() {
                if out.skeleton().joints()[j].channels().is_empty() {
                    continue;
                }
                let q = rotations(&clip, j);
                let qo = rotations(&out, j);
                let seam = angle(qo[39], qo[0]);
                assert!(
                    seam <= 1.01 * max_step(&q) + 1e-12,
                    "joint {j}: {seam} vs {}",
                    max_step(&q)
                );
            }
            let h = |b: &Bvh, k: usize| {
                let w = reference_world(b, k, PositionChannels::Replace);
                let p = w[0].w_axis.truncate();
                bvhkit::glam::DVec2::new(p.x, p.z)
            };
            let step = (1..40).map(|k| (h(&out, k) - h(&out, k - 1)).length()).fold(0.0, f64::max);
            match travel {
                Travel::Keep => {
                    // The walk walks: about 39 units over the cycle.
                    assert!((h(&out, 39) - h(&out, 0)).length() > 35.0);
                    assert!(step < 1.1, "{step}");
                }
                Travel::Remove => {
                    // In place: the cycle's travel is gone, the seam has no jump.
                    assert!((h(&out, 39) - h(&out, 0)).length() < 1.1, "{:?}", h(&out, 39));
                    assert!((h(&out, 0) - h(&out, 39)).length() <= 1.5 * step.max(1e-9));
                    let q = rotations(&out, 0);
                    assert!(angle(q[39], q[0]) <= 1.5 * max_step(&q) + 1e-12);
                }
            }
        }
    }
}

#[test]
fn loop_crossfades_are_checked() {
    let clip = walk(10, 40.0, 1.0, 0.0, 0.1);
    let opts = |s: &str| LoopOptions { crossfade: s.parse().unwrap(), ..LoopOptions::default() };
    assert_eq!(
        make_loop(&clip, &opts("6")).unwrap_err().to_string(),
        "the crossfade (6 frames) is longer than half the clip (10 frames): a loop crossfades it at each end, so it can be 5 frames at most here"
    );
    // A frame count whose double overflows.
    for huge in [usize::MAX, usize::MAX / 2 + 1] {
        assert_eq!(
            make_loop(&clip, &opts(&huge.to_string())).unwrap_err().to_string(),
            format!(
                "the crossfade ({huge} frames) is longer than half the clip (10 frames): a loop crossfades it at each end, so it can be 5 frames at most here"
            )
        );
    }
    assert_eq!(
        make_loop(&clip, &opts("1e308s")).unwrap_err().to_string(),
        "the crossfade (1e308s = about 1e309 frames) is longer than half the clip (10 frames): a loop crossfades it at each end, so it can be 5 frames at most here"
    );
    assert_eq!(
        make_loop(&clip, &opts("0")).unwrap_err().to_string(),
        "a loop needs a crossfade of at least one frame"
    );
    assert_eq!(make_loop(&clip, &opts("0.5s")).unwrap().0.motion().n_frames(), 5);
    let (up, found) = up_axis(&clip, None);
    assert!(found && up.to_string() == "y");
    let _ = JointId::new(0);
}

/// A walk cycle (period 40 frames) cut to start 7 frames into its cycle
/// and end 63 frames later: without the search the loop's ends are 53
/// frames apart, out of phase; the search drops frames from the start and
/// the end until they are one period apart (13 frames in all), and the
/// loop is then seamless.
#[test]
fn the_loop_search_finds_the_cycle() {
    let clip = bvhkit::edit::frames::range(&walk(70, 40.0, 1.0, 0.0, 1.0 / 30.0), 7..70).unwrap();
    let opts = LoopOptions {
        crossfade: Span::Frames(10),
        search: Span::Frames(10),
        ..LoopOptions::default()
    };
    let (out, report) = make_loop(&clip, &opts).unwrap();
    let (s, e) = report.dropped;
    assert_eq!(s + e, 13, "{report}");
    assert!(s <= 10 && e <= 10, "{report}");
    assert_eq!(out.motion().n_frames(), 40);
    assert!(report.to_string().contains("seam moved to match the ends"), "{report}");
    // Outside the crossfade: the clip's frames from the new start.
    for k in 10..40 {
        assert_eq!(bits(out.motion().frame(k)), bits(clip.motion().frame(s + k)));
    }
    // Seamless: across the seam no joint turns more than the clip's
    // largest step; without the search the seam is visibly worse.
    let (plain, r0) = make_loop(&clip, &LoopOptions { search: Span::Frames(0), ..opts }).unwrap();
    assert_eq!(r0.dropped, (0, 0));
    let mut worst_plain: f64 = 0.0;
    for j in 1..out.skeleton().len() {
        if out.skeleton().joints()[j].channels().is_empty() {
            continue;
        }
        let q = rotations(&clip, j);
        let qo = rotations(&out, j);
        let seam = angle(qo[39], qo[0]);
        assert!(seam <= 1.01 * max_step(&q) + 1e-12, "joint {j}: {seam} vs {}", max_step(&q));
        // The plain loop blends poses a third of a cycle apart.
        let qp = rotations(&plain, j);
        let mid = (1..10).map(|k| angle(qp[k - 1], qp[k])).fold(0.0, f64::max);
        worst_plain = worst_plain.max(mid / max_step(&q).max(1e-12));
    }
    assert!(worst_plain > 1.1, "the plain loop's crossfade steps {worst_plain}x the clip's");
}

/// A standing figure with knees (cm, Y up, 100 fps, 100 frames): the right
/// foot planted throughout, the left planted from frame 40 on (so through
/// the loop's tail) and lifted, swinging, in frames 0 to 39 (so through
/// the whole start): never in contact on both sides of the crossfade. The
/// root shifts on the ground only in frames 45 to 64, away from both ends.
fn one_foot_swings_at_the_start() -> Bvh {
    let leg = |side: &str, x: f64| {
        format!(
            "JOINT {side}UpLeg {{ OFFSET {x} 0 0 CHANNELS 3 Zrotation Xrotation Yrotation
             JOINT {side}Leg {{ OFFSET 0 -45 0 CHANNELS 3 Zrotation Xrotation Yrotation
             JOINT {side}Foot {{ OFFSET 0 -42 0 CHANNELS 3 Zrotation Xrotation Yrotation
             JOINT {side}ToeBase {{ OFFSET 0 -6 12 CHANNELS 3 Zrotation Xrotation Yrotation
             End Site {{ OFFSET 0 0 5 }} }} }} }} }}"
        )
    };
    let rows: Vec<String> = (0..100)
        .map(|k| {
            let k = k as f64;
            let shift = if (45.0..65.0).contains(&k) {
                3.0 * (std::f64::consts::PI * (k - 45.0) / 20.0).sin()
            } else {
                0.0
            };
            // The left leg: lifted from frame 0, landing at frame 40.
            let s = if k < 40.0 { (std::f64::consts::PI * (k + 10.0) / 50.0).sin() } else { 0.0 };
            let (thigh, knee, ankle) = (-45.0 * s, 80.0 * s, -20.0 * s);
            format!(
                "{shift} 93 0 0 0 0 0 0 0 0 0 0 0 {thigh} 0 0 {knee} 0 0 {ankle} 0 0 0 0 \
                 0 0 0 0 0 0 0 0 0 0 0 0"
            )
        })
        .collect();
    let text = format!(
        "HIERARCHY\nROOT Hips {{ OFFSET 0 0 0 CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
         JOINT Spine {{ OFFSET 0 10 0 CHANNELS 3 Zrotation Xrotation Yrotation
         JOINT Head {{ OFFSET 0 60 0 CHANNELS 3 Zrotation Xrotation Yrotation End Site {{ OFFSET 0 15 0 }} }} }}
         {} {} }}\nMOTION\nFrames: 100\nFrame Time: 0.01\n{}\n",
        leg("Left", 10.0),
        leg("Right", -10.0),
        rows.join("\n")
    );
    Bvh::parse(text).unwrap()
}

/// A foot planted through the loop's tail and swinging through its start
/// (in contact on one side only) is held where it stands with the tail's
/// weight in the crossfade, `1 - w`, and handed over to the start's swing
/// as `w` rises: in crossfade frame `k` the toe is off its place by at
/// most half what the plain mix puts it off (`w` times the start's toe's
/// distance from it: the mix moves it at once). Before, nothing was
/// locked: the toe slid off by the mix's `w`.
#[test]
fn a_foot_planted_on_one_side_of_the_loop_stays_while_that_side_weighs() {
    let clip = one_foot_swings_at_the_start();
    let opts = LoopOptions { crossfade: Span::Frames(25), ..LoopOptions::default() };
    let (out, report) = make_loop(&clip, &opts).unwrap();
    assert_eq!((report.crossfade, report.frames), (25, 75));
    let toe = clip.skeleton().find("LeftToeBase").unwrap().index();
    let fk = bvhkit::Kinematics::new(clip.skeleton(), PositionChannels::Replace);
    let at = |b: &Bvh, f: usize| {
        let mut p = vec![bvhkit::glam::DVec3::ZERO; fk.len()];
        fk.positions(b.motion().frame(f), &mut p);
        p[toe]
    };
    // Output frame 0 is the tail's frame 75 (moved back), the toe planted.
    let pin = at(&out, 0);
    let mut worst: f64 = 0.0;
    for k in 1..25 {
        let x = k as f64 / 25.0;
        let w = x * x * x * (10.0 + x * (6.0 * x - 15.0));
        let off = at(&out, k).distance(pin);
        // The start's frame k is not moved: its toe, in the air.
        let mixed = w * at(&clip, k).distance(pin);
        assert!(off <= mixed + 0.05, "frame {k}: the toe is {off} cm off, the mix {mixed}");
        if w <= 0.5 {
            worst = worst.max(off / mixed.max(1e-9));
        }
    }
    // Held with the weight 1 - w: off by about w times the mix's offset.
    assert!(worst <= 0.55, "the toe moved {worst} of the mix's offset");
    // Past the crossfade: the clip's own frames.
    assert_eq!(bits(out.motion().frame(30)), bits(clip.motion().frame(30)));
}

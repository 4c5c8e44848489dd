//! Forward kinematics against the golden positions (`../shared/golden`,
//! checked against three.js, Blender and bvhio) and against a reference
//! implementation that multiplies 4x4 matrices exactly as the format texts
//! describe.
use bvhkit::glam::{DMat4, DVec3};
use bvhkit::rotation::sin_cos_deg;
use bvhkit::{Bvh, Channel, FkLanes, Kinematics, PositionChannels, ReadOptions};

use crate::util::{corpus_dir, corpus_files, stem};

/// Straight from the format texts: M = T(offset [+|=] positions) · R1 · R2 · R3
/// in listed order, world = parent world · M, with 4x4 matrices.
fn reference(bvh: &Bvh, frame: usize, mode: PositionChannels) -> Vec<DVec3> {
    reference_world(bvh, frame, mode).iter().map(|m| m.w_axis.truncate()).collect()
}

/// The world matrices of [`reference`] (also used by the `edit` tests).
pub(crate) fn reference_world(bvh: &Bvh, frame: usize, mode: PositionChannels) -> Vec<DMat4> {
    let s = bvh.skeleton();
    let f = bvh.motion().frame(frame);
    let mut world: Vec<DMat4> = Vec::new();
    for j in s.joints() {
        let mut t = j.offset().to_array();
        let mut rot = DMat4::IDENTITY;
        for (k, c) in j.channels().iter().enumerate() {
            let v = f[j.first_channel() + k];
            let a = match c {
                Channel::Xposition | Channel::Xrotation => 0,
                Channel::Yposition | Channel::Yrotation => 1,
                Channel::Zposition | Channel::Zrotation => 2,
            };
            if c.is_position() {
                match mode {
                    PositionChannels::Replace => t[a] = v,
                    PositionChannels::Add => t[a] += v,
                }
            } else {
                let r = v.to_radians();
                rot *= match a {
                    0 => DMat4::from_rotation_x(r),
                    1 => DMat4::from_rotation_y(r),
                    _ => DMat4::from_rotation_z(r),
                };
            }
        }
        let local = DMat4::from_translation(DVec3::from_array(t)) * rot;
        let w = match j.parent() {
            Some(p) => world[p.index()] * local,
            None => local,
        };
        world.push(w);
    }
    world
}

#[test]
fn positions_match_the_golden_files() {
    let mut checked = 0;
    for path in corpus_files() {
        let name = stem(&path);
        let bvh = ReadOptions::new().lenient(true).parse(&std::fs::read(&path).unwrap()).unwrap().0;
        for (mode, tag) in [(PositionChannels::Replace, "replace"), (PositionChannels::Add, "add")]
        {
            let Some(rows) = bvhkit_testdata::golden_positions(&name, tag) else {
                assert!(name.starts_with("malformed_"), "{name}: golden file missing");
                continue;
            };
            let n = bvh.skeleton().len();
            assert_eq!(rows.len() % n, 0, "{name}: golden rows are whole frames");
            let (lo, hi) = rows
                .iter()
                .fold((DVec3::MAX, DVec3::MIN), |(lo, hi), r| (lo.min(r.2), hi.max(r.2)));
            let height = (hi - lo).max_element();
            let tol = 1e-6 * height;
            let names = bvh.skeleton().display_names();
            let fk = Kinematics::new(bvh.skeleton(), mode);
            let mut out = vec![DVec3::ZERO; n];
            let mut worst: f64 = 0.0;
            for chunk in rows.chunks(n) {
                let frame = chunk[0].0;
                fk.positions(bvh.motion().frame(frame), &mut out);
                for (k, (f, joint, p)) in chunk.iter().enumerate() {
                    assert_eq!(*f, frame);
                    // Golden names fold inner whitespace like display_names.
                    if !bvh.skeleton().joints()[k].is_end_site() {
                        assert_eq!(joint, &names[k], "{name}: joint order");
                    }
                    worst = worst.max((out[k] - *p).abs().max_element());
                }
            }
            assert!(worst <= tol, "{name} ({tag}): off by {worst:e}, tolerance {tol:e}");
            checked += 1;
        }
    }
    if corpus_dir().is_some() {
        assert_eq!(checked, 72, "36 well-formed files, two readings each");
    }
}

#[test]
fn positions_match_the_reference_implementation_on_every_frame() {
    for path in corpus_files() {
        let name = stem(&path);
        let bvh = ReadOptions::new().lenient(true).parse(&std::fs::read(&path).unwrap()).unwrap().0;
        for mode in [PositionChannels::Replace, PositionChannels::Add] {
            let fk = Kinematics::new(bvh.skeleton(), mode);
            let all = fk.positions_all(bvh.motion());
            assert_eq!(all, fk.positions_all_serial(bvh.motion()), "{name}: parallel = serial");
            let n = bvh.skeleton().len();
            let world = fk.world_all(bvh.motion());
            let local = fk.local_all(bvh.motion());
            assert_eq!(world.len(), all.len());
            for (k, w) in world.iter().enumerate() {
                assert!(
                    (w.translation - all[k]).length() <= 1e-9 * (1.0 + all[k].length()),
                    "{name}: world_all"
                );
                // world = parent world · local
                let j = k % n;
                if let Some(p) = bvh.skeleton().joints()[j].parent() {
                    let composed = world[k - j + p.index()] * local[k];
                    assert!(
                        composed.abs_diff_eq(*w, 1e-9 * (1.0 + w.translation.length())),
                        "{name}: composition"
                    );
                }
            }
            let step = (bvh.motion().n_frames() / 50).max(1);
            let mut scratch = fk.scratch();
            let mut batched = vec![bvhkit::glam::DAffine3::IDENTITY; n];
            let mut from_rot = vec![DVec3::ZERO; n];
            for f in (0..bvh.motion().n_frames()).step_by(step) {
                let r = reference(&bvh, f, mode);
                let scale = r.iter().fold(1.0f64, |m, p| m.max(p.abs().max_element()));
                for (k, p) in r.iter().enumerate() {
                    let d = (all[f * n + k] - *p).abs().max_element();
                    assert!(d <= 1e-9 * scale, "{name} frame {f} joint {k}: {d:e}");
                }
                // The batched world transforms are the scalar ones, bit for bit.
                let frame = bvh.motion().frame(f);
                fk.world_with(frame, &mut scratch, &mut batched);
                assert_eq!(batched[..], world[f * n..(f + 1) * n], "{name} frame {f}: world_with");
                // Positions from the world rotations agree with the reference.
                let rot: Vec<_> = batched.iter().map(|w| w.matrix3).collect();
                fk.positions_from_rotations(frame, &rot, &mut from_rot);
                for (k, p) in r.iter().enumerate() {
                    let d = (from_rot[k] - *p).abs().max_element();
                    assert!(d <= 1e-9 * scale, "{name} frame {f} joint {k}: from rotations {d:e}");
                }
            }
        }
    }
}

#[test]
fn world_transforms_agree_with_positions() {
    let text =
        std::fs::read_to_string(crate::util::data_dir("quirks").join("odd_channel_layouts.bvh"))
            .unwrap();
    let bvh = Bvh::parse(text).unwrap();
    for mode in [PositionChannels::Replace, PositionChannels::Add] {
        let fk = Kinematics::new(bvh.skeleton(), mode);
        let mut world = vec![bvhkit::glam::DAffine3::IDENTITY; fk.len()];
        let mut pos = vec![DVec3::ZERO; fk.len()];
        fk.world(bvh.motion().frame(0), &mut world);
        fk.positions(bvh.motion().frame(0), &mut pos);
        let r = reference(&bvh, 0, mode);
        for k in 0..fk.len() {
            assert!((world[k].translation - pos[k]).length() < 1e-12);
            assert!((pos[k] - r[k]).length() < 1e-12, "joint {k}: {} vs {}", pos[k], r[k]);
        }
    }
}

/// Bit for bit, component by component.
fn same_bits(a: &[DVec3], b: &[DVec3]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(a, b)| {
            a.to_array().iter().zip(b.to_array()).all(|(x, y)| x.to_bits() == y.to_bits())
        })
}

/// `positions_many` (eight frames on SIMD lanes) gives `positions_with`'s
/// bits frame by frame, on every corpus file in both position-channel
/// readings, for runs of every length around the lane count (spare lanes),
/// and on odd channel layouts (position channels on inner joints, one and
/// two rotation channels, huge angles).
#[test]
fn positions_many_is_positions_with_bit_for_bit() {
    let check = |name: &str, bvh: &Bvh| {
        for mode in [PositionChannels::Replace, PositionChannels::Add] {
            let fk = Kinematics::new(bvh.skeleton(), mode);
            let (n, nc) = (fk.len(), bvh.skeleton().n_channels());
            let frames = bvh.motion().n_frames();
            let mut scratch = fk.scratch();
            let mut want = vec![DVec3::ZERO; frames * n];
            for f in 0..frames {
                fk.positions_with(
                    bvh.motion().frame(f),
                    &mut scratch,
                    &mut want[f * n..(f + 1) * n],
                );
            }
            let mut lanes = fk.lanes_scratch();
            let mut got = vec![DVec3::ZERO; frames * n];
            fk.positions_many(bvh.motion().values(), &mut lanes, &mut got);
            assert!(same_bits(&got, &want), "{name} {mode:?}: all frames at once");
            // Runs of 1 to 17 frames from a few starts, the scratch reused.
            for len in 1..=17.min(frames) {
                for start in [0, (frames - len) / 2, frames - len] {
                    let vals = &bvh.motion().values()[start * nc..(start + len) * nc];
                    let mut got = vec![DVec3::ZERO; len * n];
                    fk.positions_many(vals, &mut lanes, &mut got);
                    assert!(
                        same_bits(&got, &want[start * n..(start + len) * n]),
                        "{name} {mode:?}: frames {start}..{}",
                        start + len
                    );
                    // The last group's sines and cosines, lane by lane
                    // (spare lanes repeat the last frame): `sin_cos_deg`'s.
                    let (sin, cos) = lanes.sin_cos();
                    let w = FkLanes::LANES;
                    let first = (len - 1) / w * w;
                    for l in 0..w {
                        let f = start + first + l.min(len - 1 - first);
                        for (ch, &a) in bvh.motion().frame(f).iter().enumerate() {
                            let (s, c) = sin_cos_deg(a);
                            let got = (sin[ch * w + l].to_bits(), cos[ch * w + l].to_bits());
                            assert_eq!(got, (s.to_bits(), c.to_bits()), "{name}: frame {f}");
                        }
                    }
                }
            }
        }
    };
    let mut files = 0;
    for path in corpus_files() {
        let bvh = ReadOptions::new().lenient(true).parse(&std::fs::read(&path).unwrap()).unwrap().0;
        if bvh.motion().n_frames() > 0 {
            check(&stem(&path), &bvh);
            files += 1;
        }
    }
    assert!(files >= 36, "only {files} corpus files with frames");
    let text =
        std::fs::read_to_string(crate::util::data_dir("quirks").join("odd_channel_layouts.bvh"))
            .unwrap();
    let bvh = Bvh::parse(&text).unwrap();
    check("odd_channel_layouts", &bvh);
    // The same skeleton with 11 frames of large and huge values (past the
    // exact quarter-turn reduction, so some lanes take the slow path).
    let nc = bvh.skeleton().n_channels();
    let head = &text[..text.find("MOTION").unwrap()];
    let mut more = format!("{head}MOTION\nFrames: 11\nFrame Time: 0.1\n");
    for f in 0..11 {
        let row: Vec<String> = (0..nc)
            .map(|c| match (f + c) % 5 {
                0 => format!("{}", 1e300 * if c % 2 == 0 { 1.0 } else { -1.0 }),
                1 => format!("{}", 123456.789 * (f as f64 - 5.0)),
                _ => format!("{}", (f * 37 + c * 11) as f64 * 1.25 - 90.0),
            })
            .collect();
        more.push_str(&row.join(" "));
        more.push('\n');
    }
    check("odd_channel_layouts, large angles", &Bvh::parse(&more).unwrap());
}

/// `UnitGuess::of_bvh` (frame sizes on the pool, runs of frames on SIMD
/// lanes) is the guess of the frames met one at a time (`FrameSizes`,
/// which streaming callers use), size bit for bit, on every corpus file
/// that parses, in both readings of position channels.
#[test]
fn the_unit_guess_of_a_whole_clip_is_the_one_of_its_frames_one_by_one() {
    use bvhkit::units::{FrameSizes, UnitGuess};
    let mut checked = 0;
    for path in corpus_files() {
        let Ok((bvh, _)) = ReadOptions::new().read_path(&path) else { continue };
        for mode in [PositionChannels::Replace, PositionChannels::Add] {
            let mut one_by_one = FrameSizes::new(bvh.skeleton(), mode);
            for f in bvh.motion().frames() {
                one_by_one.push(f);
            }
            let (a, b) = (UnitGuess::of_bvh(&bvh, mode), one_by_one.guess());
            assert_eq!(a.size.to_bits(), b.size.to_bits(), "{} {mode:?}", stem(&path));
            assert_eq!(a.units, b.units, "{} {mode:?}", stem(&path));
            checked += 1;
        }
    }
    if corpus_dir().is_some() {
        assert!(checked >= 72, "{checked}");
    }
}

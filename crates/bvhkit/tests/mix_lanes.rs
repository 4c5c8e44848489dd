//! The mixer's lane pass (`rotation::batch::MixLanes`: the joints with
//! three rotation channels of a frame in one SIMD pass) against the plain
//! scalar path it replaced, one joint at a time: `euler_to_quat` of both
//! frames, `resample::slerp` (after the reference's inverse, and with the
//! base in front, for a layer), then `quat_to_euler_near` next to the
//! previous output frame. On every frame of every well-formed corpus file.

use bvhkit::edit::JointChannels;
use bvhkit::edit::{frames, resample};
use bvhkit::glam::{DMat3, DQuat};
use bvhkit::mix::Mixer;
use bvhkit::rotation::{euler_to_mat3, quat_to_euler_near, sin_cos_deg};

use crate::mix_util::{corpus, mat_diff};

/// The three-channel joints' channels of `bvh`.
fn lanes_of(bvh: &bvhkit::Bvh) -> Vec<JointChannels> {
    bvh.skeleton()
        .joints()
        .iter()
        .map(JointChannels::of)
        .filter(|j| j.rotation_order().is_some())
        .collect()
}

/// Compares the mixed angles `got` of joint `j` with the scalar path's
/// `want`: within 1e-9 degrees, or, where the middle angle's cosine is
/// below 1e-6 (within about 2e-4 degrees of ±90°: gimbal lock: only the sum or difference of the first
/// and third angles is defined, and it is ill-conditioned near there), the
/// same rotation within 3e-11 and the same middle angle within 1e-9. (The
/// mixer writes its angles rounded to nine decimals, 5e-10 degrees or
/// 8.7e-12 radians each, which moves a matrix element by up to 2.7e-11;
/// the unrounded rotation is within 1e-12.)
fn check(j: &JointChannels, got: [f64; 3], want: [f64; 3], what: &str) -> bool {
    let axes = j.rotation_axes();
    let near_lock = sin_cos_deg(want[1]).1.abs() <= 1e-6;
    if near_lock {
        let d = mat_diff(euler_to_mat3(axes, &got), euler_to_mat3(axes, &want));
        assert!(d < 3e-11 && (got[1] - want[1]).abs() < 1e-9, "{what}: {got:?} vs {want:?}");
    } else {
        for k in 0..3 {
            assert!((got[k] - want[k]).abs() <= 1e-9, "{what}: {got:?} vs {want:?}");
        }
    }
    near_lock
}

#[test]
fn mixer_lanes_are_the_scalar_slerp_and_extraction_on_the_corpus() {
    let mut checked = 0usize;
    let mut locked = 0usize;
    for (name, a) in corpus(2) {
        let b = frames::reverse(&a).unwrap();
        let (am, bm) = (a.motion(), b.motion());
        let n = am.n_frames();
        let nc = a.skeleton().n_channels();
        let joints = lanes_of(&a);
        let mut mixer = Mixer::new(a.skeleton(), None);
        let reference = mixer.reference(bm.frame(n / 2));
        let ref_inv: Vec<DQuat> =
            joints.iter().map(|j| j.rotation(bm.frame(n / 2)).inverse()).collect();
        for (w, layered) in [(0.3, false), (0.77, false), (1e-9, false), (0.6, true)] {
            let mut prev = am.frame(0).to_vec();
            let mut out = vec![0.0; nc];
            for k in 0..n {
                let (fa, fb) = (am.frame(k), bm.frame(k));
                if layered {
                    mixer.layer(fa, fb, &reference, w, &prev, &mut out);
                } else {
                    mixer.blend(fa, fb, w, &prev, &mut out);
                }
                for (ji, j) in joints.iter().enumerate() {
                    let order = j.rotation_order().unwrap();
                    let q = if layered {
                        // The mixer copies the base's bits where the layer
                        // holds its reference (another test pins that).
                        let r = bm.frame(n / 2);
                        if j.rot_index.iter().all(|&c| fb[c].to_bits() == r[c].to_bits()) {
                            continue;
                        }
                        j.rotation(fa)
                            * resample::slerp(DQuat::IDENTITY, ref_inv[ji] * j.rotation(fb), w)
                    } else {
                        resample::slerp(j.rotation(fa), j.rotation(fb), w)
                    };
                    let want = quat_to_euler_near(q, order, j.angles(&prev));
                    let got = j.angles(&out);
                    locked += check(j, got, want, &format!("{name} w {w} frame {k}")) as usize;
                    checked += 1;
                    // And the rotation itself, from the SLERP's formula
                    // through matrices (within the nine decimals' 2.7e-11).
                    let d = mat_diff(DMat3::from_quat(q), euler_to_mat3(j.rotation_axes(), &got));
                    assert!(d < 3e-11, "{name} w {w} frame {k}: rotation off by {d}");
                }
                std::mem::swap(&mut prev, &mut out);
            }
        }
    }
    if checked == 0 {
        bvhkit_testdata::skip(
            "mixer_lanes_are_the_scalar_slerp_and_extraction_on_the_corpus",
            "no corpus clip",
        );
        return;
    }
    eprintln!("mix lanes: {checked} joint-frames checked ({locked} at gimbal lock)");
}

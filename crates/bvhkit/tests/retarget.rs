//! Retargeting against the plain 4x4-matrix forward kinematics of
//! `tests/fk.rs`: onto a clip's own skeleton (the identity, every
//! well-formed corpus file), and across real corpus skeletons (CMU, Bandai
//! Namco, Rokoko, Perception Neuron, Xsens-style and back): mapped bones
//! point where the source's do, feet stay on the ground, knees and elbows
//! bend the same way.
use bvhkit::glam::{DMat4, DVec3};
use bvhkit::retarget::map::{JointMap, Reason};
use bvhkit::retarget::names::{Bone, Limb, Side};
use bvhkit::retarget::{Options, Reference, RestKind, retarget};
use bvhkit::{Bvh, PositionChannels, ReadOptions};

use crate::util::{corpus_dir, corpus_files, stem};

/// World matrices of every joint of one frame: the plain 4x4-matrix
/// reference of `tests/fk.rs`, straight from the format texts.
fn world(bvh: &Bvh, frame: usize) -> Vec<DMat4> {
    crate::fk::reference_world(bvh, frame, PositionChannels::Replace)
}

fn pos(m: &DMat4) -> DVec3 {
    m.w_axis.truncate()
}

/// At most about `n` frames spread over the clip.
fn sample(bvh: &Bvh, n: usize) -> Vec<usize> {
    let f = bvh.motion().n_frames();
    let step = f.div_ceil(n).max(1);
    (0..f).step_by(step).collect()
}

/// The figure's size over the frames: its largest extent.
fn height(bvh: &Bvh, frames: &[usize]) -> f64 {
    let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
    for &f in frames {
        for m in world(bvh, f) {
            lo = lo.min(pos(&m));
            hi = hi.max(pos(&m));
        }
    }
    let e = hi - lo;
    e.x.max(e.y).max(e.z).max(1e-3)
}

fn read(path: &std::path::Path) -> Bvh {
    ReadOptions::new().lenient(true).parse(&std::fs::read(path).unwrap()).unwrap().0
}

fn corpus(name: &str) -> Option<Bvh> {
    let dir = corpus_dir()?;
    Some(read(&dir.join(format!("{name}.bvh"))))
}

#[test]
fn onto_its_own_skeleton_is_the_identity() {
    let mut checked = 0;
    for path in corpus_files() {
        let name = stem(&path);
        if name.starts_with("malformed_") {
            continue;
        }
        let bvh = read(&path);
        if bvh.motion().n_frames() == 0 {
            println!("{name}: no frames, nothing to retarget");
            continue;
        }
        let (out, report) = retarget(&bvh, &bvh, &Options::default()).unwrap();
        assert_eq!(report.scale, 1.0, "{name}");
        assert!(report.unmapped_target.is_empty(), "{name}: {:?}", report.unmapped_target);
        assert_eq!(out.motion().n_frames(), bvh.motion().n_frames(), "{name}");
        assert_eq!(out.skeleton(), bvh.skeleton(), "{name}");
        let frames = sample(&bvh, 100);
        let h = height(&bvh, &frames);
        let mut worst = 0.0f64;
        for &f in &frames {
            let (a, b) = (world(&bvh, f), world(&out, f));
            for (x, y) in a.iter().zip(&b) {
                worst = worst.max((pos(x) - pos(y)).abs().max_element());
            }
        }
        println!(
            "{name}: largest world position difference {:.2e} of height {h:.1} ({} pairs, rest {})",
            worst,
            report.pairs.len(),
            report.source.rest
        );
        assert!(worst <= 1e-9 * h, "{name}: {worst} > 1e-9 * {h}");
        checked += 1;
    }
    if corpus_dir().is_some() {
        assert!(checked >= 30, "only {checked} files checked");
    }
}

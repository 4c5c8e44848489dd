//! The edit-b transforms (mirror, root motion, joints, rest pose) against a
//! plain 4x4-matrix forward kinematics written here, on synthetic clips and
//! on every well-formed corpus file.
use bvhkit::edit::mirror::{Mirror, MirrorOptions};
use bvhkit::glam::{DMat3, DMat4, DVec3};
use bvhkit::{Bvh, Channel, PositionChannels, ReadOptions};

use crate::util::{corpus_files, stem};

/// World matrices of every joint of one frame, straight from the format
/// texts: `M = T(offset with position channels replacing or added) · R1 · R2 · R3`.
fn world(bvh: &Bvh, frame: usize, mode: PositionChannels) -> Vec<DMat4> {
    let f = bvh.motion().frame(frame);
    let mut out: Vec<DMat4> = Vec::new();
    for j in bvh.skeleton().joints() {
        let mut t = j.offset().to_array();
        let mut rot = DMat4::IDENTITY;
        for (k, c) in j.channels().iter().enumerate() {
            let v = f[j.first_channel() + k];
            let a = c.axis().index();
            if c.is_position() {
                match mode {
                    PositionChannels::Replace => t[a] = v,
                    PositionChannels::Add => t[a] += v,
                }
            } else {
                let r = v.to_radians();
                rot *= match c {
                    Channel::Xrotation => DMat4::from_rotation_x(r),
                    Channel::Yrotation => DMat4::from_rotation_y(r),
                    _ => DMat4::from_rotation_z(r),
                };
            }
        }
        let local = DMat4::from_translation(DVec3::from_array(t)) * rot;
        let w = match j.parent() {
            Some(p) => out[p.index()] * local,
            None => local,
        };
        out.push(w);
    }
    out
}

fn position(m: &DMat4) -> DVec3 {
    m.w_axis.truncate()
}

fn rotation(m: &DMat4) -> DMat3 {
    DMat3::from_mat4(*m)
}

/// The size of the figure: the largest extent of its joints over the frames
/// checked, at least 1e-3 so that degenerate clips still get a tolerance.
fn height(bvh: &Bvh, frames: &[usize]) -> f64 {
    let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
    for &f in frames {
        for m in world(bvh, f, PositionChannels::Replace) {
            lo = lo.min(position(&m));
            hi = hi.max(position(&m));
        }
    }
    let e = hi - lo;
    e.x.max(e.y).max(e.z).max(1e-3)
}

/// At most about 200 frames spread over the clip.
fn sample(bvh: &Bvh) -> Vec<usize> {
    let n = bvh.motion().n_frames();
    let step = n.div_ceil(200).max(1);
    (0..n).step_by(step).collect()
}

fn well_formed() -> Vec<(String, Bvh)> {
    corpus_files()
        .into_iter()
        .filter(|p| !stem(p).starts_with("malformed_"))
        .map(|p| {
            let bvh =
                ReadOptions::new().lenient(true).parse(&std::fs::read(&p).unwrap()).unwrap().0;
            (stem(&p), bvh)
        })
        .collect()
}

fn reflect(v: DVec3, a: usize) -> DVec3 {
    let mut v = v;
    v[a] = -v[a];
    v
}

#[test]
fn mirror_pairs_on_the_corpus() {
    // Printed so that a human can read every pair the finder makes.
    for (name, bvh) in well_formed() {
        let m = Mirror::new(&bvh, &MirrorOptions::default()).unwrap();
        let names = bvh.skeleton().display_names();
        let pairs: Vec<String> = m
            .pairs()
            .iter()
            .filter(|(l, _)| !bvh.skeleton().joint(*l).is_end_site())
            .map(|(l, r)| format!("{}|{}", names[l.index()], names[r.index()]))
            .collect();
        println!(
            "{name}: world {} rest {} pairs {}: {}",
            m.world_axis(),
            m.rest_axis(),
            pairs.len(),
            pairs.join(" ")
        );
        for (l, r, why) in m.rejected() {
            println!("    rejected {}|{}: {why}", names[l.index()], names[r.index()]);
        }
    }
}

#[test]
fn mirror_reflects_world_motion_and_twice_is_identity() {
    let mut checked = 0;
    for (name, bvh) in well_formed() {
        let m = Mirror::new(&bvh, &MirrorOptions::default()).unwrap();
        let mirrored = m.apply(&bvh).unwrap();
        let back = Mirror::new(&mirrored, &MirrorOptions::default()).unwrap();
        assert_eq!(back.pairs(), m.pairs(), "{name}: the mirrored skeleton pairs the same way");
        let twice = back.apply(&mirrored).unwrap();
        let frames = sample(&bvh);
        let h = height(&bvh, &frames);
        let a = m.world_axis().index();
        let frames_of: Vec<usize> = m.joint_axes().iter().map(|x| x.index()).collect();
        let partner: Vec<usize> = m.partners().map(|p| p.index()).collect();
        assert_eq!(twice.skeleton(), bvh.skeleton(), "{name}: skeleton mirrored twice");
        for &f in &frames {
            for mode in [PositionChannels::Replace, PositionChannels::Add] {
                let orig = world(&bvh, f, mode);
                let mir = world(&mirrored, f, mode);
                let tw = world(&twice, f, mode);
                for j in 0..orig.len() {
                    let expected = reflect(position(&orig[partner[j]]), a);
                    let got = position(&mir[j]);
                    assert!(
                        (got - expected).length() <= 1e-9 * h,
                        "{name} frame {f} joint {j}: mirrored at {got}, reflected partner at {expected}"
                    );
                    let sw = DMat3::from_diagonal(reflect(DVec3::ONE, a));
                    let sr = DMat3::from_diagonal(reflect(DVec3::ONE, frames_of[j]));
                    let r_expected = sw * rotation(&orig[partner[j]]) * sr;
                    assert!(
                        rotation(&mir[j]).abs_diff_eq(r_expected, 1e-9),
                        "{name} frame {f} joint {j}: rotation"
                    );
                    assert!(
                        (position(&tw[j]) - position(&orig[j])).length() <= 1e-9 * h,
                        "{name} frame {f} joint {j}: mirrored twice"
                    );
                }
            }
        }
        checked += 1;
    }
    println!("mirrored {checked} corpus files");
}

use super::*;
use crate::rotation::{euler_to_mat3, mat3_to_euler, mat3_to_euler_near};

/// Distance in ulps between two doubles of the same sign (or zeros).
fn ulps(a: f64, b: f64) -> u64 {
    if a == b {
        return 0;
    }
    let key = |v: f64| {
        let bits = v.to_bits() as i64;
        if bits < 0 { i64::MIN - bits } else { bits }
    };
    key(a).abs_diff(key(b))
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// Uniform in [-1, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

/// The mix lanes' `atan2` is within 3 ulp of `f64::atan2` on the
/// pairs the lanes make (every quadrant, magnitudes from 1e-13 to 4,
/// ratios across the reduction's boundaries, axes and signed zeros),
/// and plain, AVX2 and AVX-512 loops give it the same bits.
#[test]
fn mix_atan2_is_within_three_ulps_of_libm() {
    let mut rng = Rng(8080);
    let mut worst = 0;
    let mut pairs = Vec::new();
    for n in 0..2_000_000u32 {
        let scale = [1.0, 4.0, 1e-3, 1e-9, 1e-13][(n % 5) as usize];
        let (y, x) = match n % 7 {
            // Near the boundaries 7/16 and 1 of |y| / |x| (and of its
            // inverse), and the axes.
            0 => (7.0 / 16.0 * (1.0 + 1e-12 * rng.unit()), 1.0),
            1 => (1.0 + 1e-15 * rng.unit(), 1.0),
            2 => (1.0, 7.0 / 16.0 * (1.0 + 1e-12 * rng.unit())),
            3 => ([0.0, -0.0, 1.0][(n % 3) as usize], [1.0, -1.0, 0.5][(n / 3 % 3) as usize]),
            _ => (rng.unit(), rng.unit()),
        };
        let signs = rng.next();
        let y = if signs & 1 == 0 { y } else { -y } * scale;
        let x = if signs & 2 == 0 { x } else { -x } * scale;
        if y == 0.0 && x == 0.0 {
            continue;
        }
        let (got, want) = (atan2_mix::<false, false>(y, x), y.atan2(x));
        assert!(got.is_sign_negative() == want.is_sign_negative(), "({y}, {x}): {got}");
        let u = ulps(got, want);
        assert!(u <= 3, "({y:e}, {x:e}): {got} vs {want}, {u} ulp");
        worst = worst.max(u);
        if n < 4096 {
            pairs.push((y, x, got));
        }
    }
    eprintln!("mix atan2: worst {worst} ulp");
    // The loop on SIMD lanes gives the scalar bits, on every build.
    simd_kernel! {
        fn lanes(simd: Simd, p: &[(f64, f64, f64)], out: &mut [f64]) {
            for (o, &(y, x, _)) in out.iter_mut().zip(p) {
                *o = atan2_mix::<false, false>(y, x);
            }
        }
    }
    for simd in Simd::available() {
        let mut out = vec![0.0; pairs.len()];
        lanes(simd, &pairs, &mut out);
        for (&(y, x, want), got) in pairs.iter().zip(out) {
            assert_eq!(got.to_bits(), want.to_bits(), "({y}, {x}) {simd:?}");
        }
    }
}

/// Every quadrant, tiny and huge ratios, signed zeros, axes, infinities,
/// equal magnitudes, subnormals and random bit patterns: within 2 ulp of
/// `f64::atan2`, the special values exactly, and the slice gives the
/// scalar's bits.
#[test]
fn atan2_is_within_two_ulps_of_libm() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let specials = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::MIN_POSITIVE,
        -5e-324,
        5e-324,
        f64::MAX,
        -f64::MAX,
        1e-300,
        1e300,
        0.5,
        7.0 / 16.0,
        11.0 / 16.0,
        19.0 / 16.0,
        39.0 / 16.0,
    ];
    let mut ys = Vec::new();
    let mut xs = Vec::new();
    for &y in &specials {
        for &x in &specials {
            ys.push(y);
            xs.push(x);
        }
    }
    for n in 0..3_000_000u64 {
        let (y, x) = match n % 6 {
            // Uniform on the square: every quadrant.
            0 => (rng.unit(), rng.unit()),
            // Ratios over a huge range of exponents.
            1 => {
                let e = (rng.next() % 160) as i32 - 80;
                (rng.unit() * 2f64.powi(e), rng.unit())
            }
            // Near the interval boundaries of the reduction and
            // equal magnitudes.
            2 => {
                let x = rng.unit();
                let r = [7.0 / 16.0, 11.0 / 16.0, 1.0, 19.0 / 16.0, 39.0 / 16.0]
                    [(rng.next() % 5) as usize];
                (x * r * (1.0 + rng.unit() * 1e-12), x)
            }
            // Random bit patterns (any exponent, NaNs included).
            3 => (f64::from_bits(rng.next()), f64::from_bits(rng.next())),
            // Unit vectors: what rotation extraction passes.
            4 => {
                let (s, c) = (rng.unit() * 4.0).sin_cos();
                (s, c)
            }
            // Subnormal and tiny against ordinary.
            _ => (rng.unit() * 1e-310, rng.unit() * 10f64.powi((rng.next() % 40) as i32 - 20)),
        };
        ys.push(y);
        xs.push(x);
    }
    let mut out = vec![0.0; ys.len()];
    atan2_slice(&ys, &xs, &mut out);
    let mut worst = (0, 0.0, 0.0);
    for ((&y, &x), &got) in ys.iter().zip(&xs).zip(&out) {
        assert_eq!(
            got.to_bits(),
            atan2(y, x).to_bits(),
            "slice and scalar differ at ({y:e}, {x:e})"
        );
        let want = y.atan2(x);
        if want.is_nan() {
            assert!(got.is_nan(), "atan2({y:e}, {x:e}) = {got:e}, want NaN");
            continue;
        }
        assert_eq!(got.is_sign_negative(), want.is_sign_negative(), "sign of atan2({y:e}, {x:e})");
        let u = ulps(got, want);
        if u > worst.0 {
            worst = (u, y, x);
        }
    }
    eprintln!("atan2: worst error {} ulp at ({:e}, {:e})", worst.0, worst.1, worst.2);
    assert!(worst.0 <= 2, "atan2 error {} ulp at ({:e}, {:e})", worst.0, worst.1, worst.2);
    // The special values of C99 exactly.
    use std::f64::consts::{FRAC_PI_2, FRAC_PI_4, PI};
    assert_eq!(atan2(0.0, -0.0), PI);
    assert_eq!(atan2(-0.0, -0.0), -PI);
    assert_eq!(atan2(0.0, 0.0).to_bits(), 0.0f64.to_bits());
    assert_eq!(atan2(-0.0, 0.0).to_bits(), (-0.0f64).to_bits());
    assert_eq!(atan2(1.0, 0.0), FRAC_PI_2);
    assert_eq!(atan2(-1.0, -0.0), -FRAC_PI_2);
    assert_eq!(atan2(f64::INFINITY, f64::INFINITY), FRAC_PI_4);
    assert_eq!(atan2(1.0, f64::NEG_INFINITY), PI);
    assert!(atan2(f64::NAN, 1.0).is_nan() && atan2(1.0, f64::NAN).is_nan());
}

/// [`atan2`] as it was written before its reduction took the centre
/// `m` (five-way picks of each coefficient; the operands and the
/// polynomial are unchanged and shared): the reference the new
/// reduction must give bit for bit.
fn atan2_five_way(y: f64, x: f64) -> f64 {
    let (a, b) = atan2_operands(y, x);
    let k = 16.0 * a;
    let (c7, c11, c19, c39) = (k <= 7.0 * b, k <= 11.0 * b, k <= 19.0 * b, k <= 39.0 * b);
    let pick = |v: [f64; 5]| {
        select(c7, v[0], select(c11, v[1], select(c19, v[2], select(c39, v[3], v[4]))))
    };
    let pa = pick([1.0, 2.0, 1.0, 1.0, 0.0]);
    let pb = pick([0.0, -1.0, -1.0, -1.5, -1.0]);
    let qa = pick([0.0, 1.0, 1.0, 1.5, 1.0]);
    let qb = pick([1.0, 2.0, 1.0, 1.0, 0.0]);
    let hi = pick([0.0, ATAN_HI[0], ATAN_HI[1], ATAN_HI[2], ATAN_HI[3]]);
    let lo = pick([0.0, ATAN_LO[0], ATAN_LO[1], ATAN_LO[2], ATAN_LO[3]]);
    let num = pa * a + pb * b;
    let den = qa * a + qb * b;
    atan2_finish::<false>(y, x, num, den, hi, lo)
}

/// The centre-based reduction gives the five-way form's bits: random
/// pairs over every quadrant and a wide range of ratios, the interval
/// boundaries and the special values.
#[test]
fn atan2_keeps_the_bits_of_the_five_way_reduction() {
    let mut rng = Rng(0x5eed);
    let specials =
        [0.0, -0.0, 1.0, -1.0, f64::INFINITY, f64::NEG_INFINITY, 5e-324, f64::MAX, 1e-300];
    let mut pairs = Vec::new();
    for &y in &specials {
        for &x in &specials {
            pairs.push((y, x));
        }
    }
    for n in 0..2_000_000u64 {
        let x = rng.unit();
        pairs.push(match n % 4 {
            0 => (rng.unit(), x),
            1 => (rng.unit() * 2f64.powi((rng.next() % 120) as i32 - 60), x),
            2 => {
                let r = [7.0 / 16.0, 11.0 / 16.0, 1.0, 19.0 / 16.0, 39.0 / 16.0]
                    [(rng.next() % 5) as usize];
                (x * r * (1.0 + rng.unit() * 1e-15), x)
            }
            _ => (f64::from_bits(rng.next()), f64::from_bits(rng.next())),
        });
    }
    for (y, x) in pairs {
        let (got, want) = (atan2(y, x), atan2_five_way(y, x));
        assert!(
            got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
            "atan2({y:e}, {x:e}): {got:e} vs {want:e}"
        );
    }
}

/// The lane pass gives the same bits on every instruction set (plain
/// SSE2, AVX2, AVX-512: no FMA anywhere), and the scalar path's angles
/// (`euler_to_quat`, `resample::slerp`, `quat_to_euler_near`) within
/// 1e-9 degrees away from gimbal lock, on random angles (huge ones
/// included), weights and previous angles, for blends and layers.
#[test]
fn mix_lanes_are_the_same_bits_everywhere_and_the_scalar_path() {
    use crate::edit::resample::slerp;
    use crate::rotation::{euler_to_quat, quat_to_euler_near};
    let mut rng = Rng(2024);
    let n = 1001;
    let mut lanes = MixLanes::with_capacity(n);
    for round in 0..40 {
        let layered = round % 2 == 1;
        let t = [0.0, 1.0, 0.5, 1e-9, 0.3, 0.999][round % 6] * (1.0 - 1e-3 * (round / 6) as f64);
        lanes.clear();
        let mut cases = Vec::new();
        for k in 0..n {
            let order = RotationOrder::ALL[(rng.next() % 6) as usize];
            let mut ang = || match rng.next() % 9 {
                0 => 1e20 * rng.unit(),
                1 => 90.0,
                2 => -180.0,
                _ => 400.0 * rng.unit(),
            };
            let a = [ang(), ang(), ang()];
            let b = if k % 7 == 0 { a } else { [ang(), ang(), ang()] };
            let near = [ang() % 1000.0, ang() % 1000.0, ang() % 1000.0];
            let inv = euler_to_quat(&order.axes(), &[ang(), ang(), ang()]).inverse();
            lanes.push(order, a, b, near, layered.then_some(inv));
            cases.push((order, a, b, near, inv));
        }
        lanes.solve(t, layered);
        let best = lanes.out.clone();
        mix_lanes_plain(&mut lanes, t, layered);
        assert_eq!(lanes.out, best, "plain loop");
        for simd in Simd::available() {
            if layered {
                mix_pass::<true, false>(simd, &mut lanes, Source::Angles, t);
            } else {
                mix_pass::<false, false>(simd, &mut lanes, Source::Angles, t);
            }
            lanes.redo_undecided(Source::Angles, t, layered);
            assert_eq!(lanes.out, best, "{simd:?}");
        }
        for (l, (order, a, b, near, inv)) in cases.into_iter().enumerate() {
            let axes = order.axes();
            let (qa, qb) = (euler_to_quat(&axes, &a), euler_to_quat(&axes, &b));
            let q =
                if layered { qa * slerp(DQuat::IDENTITY, inv * qb, t) } else { slerp(qa, qb, t) };
            let want = quat_to_euler_near(q, order, near);
            let got = lanes.angles(l);
            let m = |e: [f64; 3]| DMat3::from_quat(euler_to_quat(&axes, &e));
            let d = (m(got) - m(want)).to_cols_array().iter().fold(0.0f64, |x, y| x.max(y.abs()));
            // The lanes' angles are rounded to nine decimals (`snap_angle`:
            // 5e-10 degrees, 8.7e-12 radians each), which moves a matrix
            // element by up to three times that: 2.7e-11 (the lanes'
            // rotation itself is within 1e-12 of the scalar path's).
            assert!(d < 3e-11, "{order} t {t}: {got:?} vs {want:?}");
            // Away from gimbal lock (the middle angle's cosine above
            // 1e-6, about 2e-4 degrees off ±90°).
            if crate::rotation::sin_cos_deg(want[1]).1.abs() > 1e-6 {
                assert_angles_close(got, want, &format!("{order} t {t} layered {layered}"));
            }
        }
    }
}

/// The plain (SSE2) lane loop, then the undecided lanes again, as
/// [`MixLanes::solve`] runs them.
fn mix_lanes_plain(lanes: &mut MixLanes, t: f64, layered: bool) {
    if layered {
        mix_lanes::<true, false, STEP, false>(lanes, Source::Angles, t);
    } else {
        mix_lanes::<false, false, STEP, false>(lanes, Source::Angles, t);
    }
    lanes.redo_undecided(Source::Angles, t, layered);
}

/// The lane pass as it was before its continuity choice took
/// [`near_deg_fast`]: one lane at a time, each half angle's sine and
/// cosine by the scalar `sin_cos_deg` (which reduces huge angles
/// itself), the closed-form quaternion, the SLERP or layer, the
/// extraction with the general [`atan2`] and [`near_deg`]'s seven
/// divisions.
fn lane_reference(
    order: RotationOrder,
    a: [f64; 3],
    b: [f64; 3],
    near: [f64; 3],
    inv: Option<DQuat>,
    t: f64,
) -> [f64; 3] {
    use crate::rotation::sin_cos_deg;
    let (i, j, k, e) = PERMUTATIONS[order as usize];
    let quat = |x: [f64; 3]| {
        let sc = x.map(|x| sin_cos_deg(0.5 * x));
        euler3_quat_lane(sc.map(|p| p.0), sc.map(|p| p.1), e)
    };
    let (qa, qb) = (quat(a), quat(b));
    let q = match inv {
        Some(q) => {
            let v = [q.x, q.y, q.z];
            let delta = quat_mul([e * v[i], e * v[j], e * v[k], q.w], qb);
            quat_mul(qa, slerp_lane::<false>([0.0, 0.0, 0.0, 1.0], delta, t))
        }
        None => slerp_lane::<false>(qa, qb, t),
    };
    let (r, n, _) = quat_matrix_scaled::<true>(q);
    let (rad, locked) = extract_rad_mix::<true, false>(r, n, e);
    // As written: nine decimals, the scalar `snap_angle` (the lanes run it
    // on every SIMD build).
    near_deg(rad, locked, e, near).map(snap_angle)
}

/// Angles that make the continuity choice hard: half and whole turns
/// from each other, exact quarter turns, huge ones and ordinary ones.
fn hard_angle(rng: &mut Rng) -> f64 {
    match rng.next() % 12 {
        0 => 180.0,
        1 => -180.0,
        2 => 90.0,
        3 => -90.0,
        4 => 0.0,
        5 => 540.0,
        6 => 1e20 * rng.unit(),
        7 => 180.0 + 1e-9 * rng.unit(),
        8 => (rng.next() % 9) as f64 * 45.0 - 180.0,
        _ => 400.0 * rng.unit(),
    }
}

/// The fast continuity choice is [`near_deg`]'s, bit for bit, wherever
/// it says it decided, on random principal extractions next to random,
/// half-turn and whole-turn previous angles (ties included); and it
/// decides nearly everywhere on ordinary motion.
#[test]
fn fast_continuity_choice_is_near_deg_where_it_decides() {
    let mut rng = Rng(31337);
    let (mut decided, mut total) = (0usize, 0usize);
    for n in 0..2_000_000u64 {
        let e = if n % 2 == 0 { 1.0 } else { -1.0 };
        let deg = [hard_angle(&mut rng) % 360.0, rng.unit() * 90.0, hard_angle(&mut rng)];
        let deg = [
            crate::rotation::canonical_deg(deg[0].clamp(-180.0, 180.0)),
            match n % 5 {
                0 => 90.0,
                1 => -90.0,
                _ => deg[1],
            },
            crate::rotation::canonical_deg(deg[2].clamp(-180.0, 180.0)),
        ];
        let rad = deg.map(f64::to_radians);
        let locked = n % 11 == 0;
        let prev = match n % 6 {
            0 => deg,
            1 => [deg[0] + 180.0, deg[1] - 180.0, deg[2] + 180.0],
            2 => [deg[0] - 180.0, 180.0 - deg[1], deg[2] + 540.0],
            3 => [hard_angle(&mut rng), hard_angle(&mut rng), hard_angle(&mut rng)],
            4 => [deg[0] + 0.1 * rng.unit(), deg[1] + 0.1 * rng.unit(), deg[2] + 180.0],
            _ => [1e9 * rng.unit(), 1e7 * rng.unit(), 360.0 * rng.unit()],
        };
        let (got, undecided) = near_deg_fast::<false>(rad, locked, prev);
        // With `ROUND`: the same flag, and where it decides the same bits.
        let (rounded, u) = near_deg_fast::<true>(rad, locked, prev);
        assert_eq!(u, undecided);
        if !u {
            assert_eq!(rounded.map(f64::to_bits), got.map(f64::to_bits));
        }
        let want = near_deg(rad, locked, e, prev);
        total += 1;
        if !undecided {
            decided += 1;
            assert_eq!(
                got.map(f64::to_bits),
                want.map(f64::to_bits),
                "{rad:?} locked {locked} e {e} near {prev:?}: {got:?} vs {want:?}"
            );
        }
    }
    eprintln!("fast continuity choice: {decided} of {total} decided");
    assert!(decided > total / 2, "{decided} of {total} decided");
    // Ordinary motion: small steps from the previous frame.
    let mut undecided = 0;
    for _ in 0..100_000 {
        let deg = [rng.unit() * 180.0, rng.unit() * 89.0, rng.unit() * 180.0];
        let prev = deg.map(|d| d + 2.0 * rng.unit());
        let rad = deg.map(f64::to_radians);
        let (got, u) = near_deg_fast::<false>(rad, false, prev);
        let (rounded, u_rounded) = near_deg_fast::<true>(rad, false, prev);
        assert_eq!((rounded.map(f64::to_bits), u_rounded), (got.map(f64::to_bits), u));
        undecided += u as usize;
        if !u {
            assert_eq!(got.map(f64::to_bits), near_deg(rad, false, 1.0, prev).map(f64::to_bits));
        }
    }
    assert_eq!(undecided, 0, "undecided on ordinary motion");
}

/// Random and hard cases, many of them undecided by the fast choice:
/// the lane pass (whichever instruction set) gives the reference
/// lane's bits, for blends and layers; and [`QuatLanes`] with
/// [`MixLanes::solve_quats`] give those same bits.
#[test]
fn mix_lanes_are_the_reference_lane_bit_for_bit() {
    use crate::rotation::euler_to_quat;
    let mut rng = Rng(4711);
    let n = 997;
    let mut lanes = MixLanes::with_capacity(n);
    let mut by_quats = MixLanes::with_capacity(n);
    let (mut qa, mut qb) = (QuatLanes::with_capacity(n), QuatLanes::with_capacity(n));
    let mut redone = 0;
    for round in 0..60 {
        let layered = round % 3 == 2;
        let t = [0.0, 1.0, 0.5, 1e-9, 0.3, 0.999, 0.25][round % 7];
        lanes.clear();
        by_quats.clear();
        qa.clear();
        qb.clear();
        let mut cases = Vec::new();
        for k in 0..n {
            let (order, a, b, near, inv) = hard_case(&mut rng, k, layered);
            assert_eq!(lanes.push(order, a, b, near, inv), k);
            assert_eq!(by_quats.push_near(order, near, inv), k);
            assert_eq!((qa.push(order, a), qb.push(order, b)), (k, k));
            cases.push((order, a, b, near, inv));
        }
        lanes.solve(t, layered);
        qa.solve();
        qb.solve();
        by_quats.solve_quats(&qa, &qb, t, layered);
        redone += lanes.redo[..n].iter().filter(|&&r| r != 0.0).count();
        for (l, &(order, a, b, near, inv)) in cases.iter().enumerate() {
            let want = lane_reference(order, a, b, near, inv, t).map(f64::to_bits);
            let what = format!("{order} {a:?} {b:?} near {near:?} t {t} inv {inv:?}");
            assert_eq!(lanes.angles(l).map(f64::to_bits), want, "{what}");
            assert_eq!(by_quats.angles(l).map(f64::to_bits), want, "quats: {what}");
            // The quaternion lanes hold the rotation in the order's axes.
            let (i, j, k, e) = PERMUTATIONS[order as usize];
            let q = euler_to_quat(&order.axes(), &a);
            let v = [q.x, q.y, q.z];
            let want_q = DQuat::from_xyzw(e * v[i], e * v[j], e * v[k], q.w);
            let got_q = DQuat::from_array(qa.quat(l));
            assert!(
                got_q.abs_diff_eq(want_q, 1e-14) || got_q.abs_diff_eq(-want_q, 1e-14),
                "{order} {a:?}: {got_q:?} vs {want_q:?}"
            );
        }
        mix_lanes_plain(&mut lanes, t, layered);
        for (l, &(order, a, b, near, inv)) in cases.iter().enumerate() {
            let want = lane_reference(order, a, b, near, inv, t).map(f64::to_bits);
            assert_eq!(lanes.angles(l).map(f64::to_bits), want, "plain loop");
        }
    }
    eprintln!("mix lanes: {redone} lanes solved again");
    assert!(redone > 100, "only {redone} lanes exercised the exact choice");
}

/// Every frame of every corpus file mixed with the same file reversed,
/// each frame next to the output frame before it: the lanes (from
/// angles, and from [`QuatLanes`]) give the reference lane's bits.
#[test]
fn mix_lanes_are_the_reference_lane_on_the_corpus() {
    let test = "rotation::batch::mix_lanes_are_the_reference_lane_on_the_corpus";
    let Some(clips) = crate::test_corpus::clips(test) else {
        return;
    };
    let (mut compared, mut redone) = (0usize, 0usize);
    for (name, bvh) in clips {
        let joints = lane_joints(&bvh);
        let m = bvh.motion();
        let frames = m.n_frames();
        if joints.is_empty() || frames == 0 {
            continue;
        }
        let n = joints.len();
        let mut lanes = MixLanes::with_capacity(n);
        let mut by_quats = MixLanes::with_capacity(n);
        let (mut qa, mut qb) = (QuatLanes::with_capacity(n), QuatLanes::with_capacity(n));
        let inv_frame = m.frame(frames / 2);
        for (t, layered) in [(0.3, false), (0.5, false), (0.7, true)] {
            let mut prev = m.frame(0).to_vec();
            for k in 0..frames {
                let (fa, fb) = (m.frame(k), m.frame(frames - 1 - k));
                lanes.clear();
                by_quats.clear();
                qa.clear();
                qb.clear();
                let mut cases = Vec::with_capacity(n);
                for &(idx, order) in &joints {
                    let (a, b, near) =
                        (idx.map(|c| fa[c]), idx.map(|c| fb[c]), idx.map(|c| prev[c]));
                    let inv = layered.then(|| {
                        crate::rotation::euler_to_quat(&order.axes(), &idx.map(|c| inv_frame[c]))
                            .inverse()
                    });
                    lanes.push(order, a, b, near, inv);
                    by_quats.push_near(order, near, inv);
                    qa.push(order, a);
                    qb.push(order, b);
                    cases.push((order, a, b, near, inv));
                }
                lanes.solve(t, layered);
                qa.solve();
                qb.solve();
                by_quats.solve_quats(&qa, &qb, t, layered);
                redone += lanes.redo[..n].iter().filter(|&&r| r != 0.0).count();
                for (l, &(order, a, b, near, inv)) in cases.iter().enumerate() {
                    let want = lane_reference(order, a, b, near, inv, t);
                    let got = lanes.angles(l);
                    assert_eq!(got.map(f64::to_bits), want.map(f64::to_bits), "{}", name);
                    assert_eq!(by_quats.angles(l).map(f64::to_bits), want.map(f64::to_bits));
                    for (&c, v) in joints[l].0.iter().zip(got) {
                        prev[c] = v;
                    }
                }
                compared += n;
            }
        }
    }
    eprintln!("mix lanes on the corpus: {compared} lanes compared, {redone} solved again");
    assert!(compared > 1_000_000, "{compared} lanes compared");
}

/// `sin_quarter` against libm's `sin` on `[0, π/2]`.
#[test]
fn sine_of_a_quarter_turn_is_within_one_ulp() {
    let mut rng = Rng(12345);
    let mut worst = 0;
    for n in 0..1_000_000 {
        let x = if n == 0 {
            std::f64::consts::FRAC_PI_2
        } else {
            (rng.unit() + 1.0) * std::f64::consts::FRAC_PI_4
        };
        worst = worst.max(ulps(sin_quarter(x), x.sin()));
    }
    assert!(worst <= 1, "sin error {worst} ulp");
}

/// SLERP written plainly from its formula, with `acos`.
fn slerp_formula(q0: DQuat, q1: DQuat, t: f64) -> DQuat {
    let q1 = if q0.dot(q1) < 0.0 { -q1 } else { q1 };
    let theta = q0.dot(q1).clamp(-1.0, 1.0).acos();
    if theta.sin() < 1e-9 {
        return (q0 * (1.0 - t) + q1 * t).normalize();
    }
    q0 * (((1.0 - t) * theta).sin() / theta.sin()) + q1 * ((t * theta).sin() / theta.sin())
}

fn random_quat(rng: &mut Rng) -> DQuat {
    loop {
        let q = DQuat::from_xyzw(rng.unit(), rng.unit(), rng.unit(), rng.unit());
        let l = q.length();
        if l > 0.1 && l <= 1.0 {
            return q / l;
        }
    }
}

#[test]
fn slerp_slice_is_slerp_from_its_formula() {
    let mut rng = Rng(777);
    let n = 20_000;
    let mut a = Vec::new();
    let mut b = Vec::new();
    for k in 0..n {
        let q = random_quat(&mut rng);
        a.push(q);
        b.push(match k % 5 {
            0 => random_quat(&mut rng),
            1 => -q,                                             // the same rotation
            2 => (q + random_quat(&mut rng) * 1e-7).normalize(), // nearly the same
            3 => -random_quat(&mut rng),                         // the long way round
            _ => DQuat::from_xyzw(-q.y, q.x, -q.w, q.z),         // a half turn away
        });
    }
    let mut out = vec![DQuat::IDENTITY; n];
    for t in [0.0, 1e-9, 0.25, 0.5, 0.8, 1.0, 1.5, -0.25] {
        slerp_slice(&a, &b, t, &mut out);
        for k in 0..n {
            let want = slerp_formula(a[k], b[k], t);
            assert!(out[k].abs_diff_eq(want, 2e-13), "t {t}: {:?} vs {want:?}", out[k]);
            let scalar = crate::edit::resample::slerp(a[k], b[k], t);
            assert!(out[k].abs_diff_eq(scalar, 2e-15), "t {t}: {:?} vs {scalar:?}", out[k]);
        }
    }
    // The ends are the inputs (the second on the shortest arc).
    slerp_slice(&a, &b, 1.0, &mut out);
    for k in 0..n {
        let b = if a[k].dot(b[k]) < 0.0 { -b[k] } else { b[k] };
        assert!(out[k].abs_diff_eq(b, 1e-15));
    }
}

/// The closed-form three-channel quaternion against the product of the
/// elementary quaternions, for every order.
#[test]
fn closed_form_euler_quaternions_are_the_products() {
    use crate::rotation::{euler_to_quat, euler3_to_quat_sin_cos, sin_cos_deg};
    let mut rng = Rng(99);
    for n in 0..60_000 {
        let order = RotationOrder::ALL[n % 6];
        let angles = [rng.unit() * 400.0, rng.unit() * 400.0, rng.unit() * 400.0];
        let half: Vec<(f64, f64)> = angles.iter().map(|a| sin_cos_deg(0.5 * a)).collect();
        let q = euler3_to_quat_sin_cos(
            order,
            [half[0].0, half[1].0, half[2].0],
            [half[0].1, half[1].1, half[2].1],
        );
        let want = euler_to_quat(&order.axes(), &angles);
        assert!(q.abs_diff_eq(want, 1e-15), "{order} {angles:?}: {q:?} vs {want:?}");
    }
}

fn assert_angles_close(got: [f64; 3], want: [f64; 3], what: &str) {
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= 1e-9, "{what}: {got:?} vs {want:?}");
    }
}

/// Random rotations, gimbal lock (exact and near), ±180° wraps and far
/// previous angles: the batch gives the scalar extraction's angles.
#[test]
fn euler_batch_matches_the_scalar_extraction() {
    let mut rng = Rng(4242);
    let mut batch = EulerBatch::new();
    let mut cases = Vec::new();
    for n in 0..60_000 {
        let order = RotationOrder::ALL[n % 6];
        let mut angles = [rng.unit() * 180.0, rng.unit() * 90.0, rng.unit() * 180.0];
        match n % 7 {
            0 => angles[1] = if rng.unit() < 0.0 { 90.0 } else { -90.0 },
            1 => angles[1] = 90.0 - rng.unit().abs() * 1e-7,
            2 => angles[0] = 180.0 - rng.unit().abs() * 1e-10,
            3 => angles = [180.0, 0.0, -180.0],
            4 => angles[2] = -180.0,
            _ => {}
        }
        let m = euler_to_mat3(&order.axes(), &angles);
        let near = match n % 4 {
            0 => None,
            1 => Some(angles),
            2 => Some([angles[0] + 350.0, angles[1] - 20.0, angles[2] + 725.0]),
            _ => Some([rng.unit() * 1000.0, rng.unit() * 1000.0, rng.unit() * 1000.0]),
        };
        cases.push((m, order, near));
    }
    // Twice: the second time in a reused batch.
    for _ in 0..2 {
        batch.clear();
        for (m, order, near) in &cases {
            batch.push_mat3(m, *order, *near);
        }
        batch.solve();
        for (i, (m, order, near)) in cases.iter().enumerate() {
            let want = match near {
                Some(p) => mat3_to_euler_near(*m, *order, *p),
                None => mat3_to_euler(*m, *order),
            };
            assert_angles_close(batch.angles(i), want, &format!("{order} near {near:?}"));
        }
    }
}

/// A batch gives each entry the same bits whatever its size and the
/// entry's place in it (`solve` pads a batch to whole vectors): every
/// prefix of 1 to 40 entries, matrices and quaternions mixed, with and
/// without a previous frame, against each entry solved alone, and the
/// batch keeps its own length (a push after a solve).
#[test]
fn euler_batch_bits_do_not_depend_on_its_size_or_padding() {
    use crate::rotation::euler_to_quat;
    let mut rng = Rng(77);
    let cases: Vec<_> = (0..40)
        .map(|n| {
            let order = RotationOrder::ALL[n % 6];
            let angles = [rng.unit() * 180.0, rng.unit() * 90.0, rng.unit() * 180.0];
            let near = (n % 3 != 0).then(|| [rng.unit() * 400.0, rng.unit() * 100.0, 0.0]);
            (order, angles, near, n % 5 == 0)
        })
        .collect();
    let push = |b: &mut EulerBatch,
                &(order, angles, near, quat): &(RotationOrder, [f64; 3], _, bool)| {
        if quat {
            b.push_quat(euler_to_quat(&order.axes(), &angles), order, near)
        } else {
            b.push_mat3(&euler_to_mat3(&order.axes(), &angles), order, near)
        }
    };
    let alone: Vec<[u64; 3]> = cases
        .iter()
        .map(|c| {
            let mut b = EulerBatch::new();
            let i = push(&mut b, c);
            b.solve();
            b.angles(i).map(f64::to_bits)
        })
        .collect();
    let mut batch = EulerBatch::new();
    for n in 1..=cases.len() {
        batch.clear();
        // The entries in reverse: each at another place than alone.
        for c in cases[..n].iter().rev() {
            push(&mut batch, c);
        }
        batch.solve();
        assert_eq!(batch.len(), n);
        for (i, want) in alone[..n].iter().rev().enumerate() {
            assert_eq!(batch.angles(i).map(f64::to_bits), *want, "entry {i} of {n}");
        }
    }
    // A push after a solve extends the batch by one entry.
    let i = push(&mut batch, &cases[0]);
    assert_eq!(i, cases.len());
    batch.solve();
    assert_eq!(batch.angles(i).map(f64::to_bits), alone[0]);
}

/// Every SIMD build the CPU has (each padding to its own width) and each
/// kind of batch (matrices alone, quaternions alone, both: three loops)
/// give every entry the bits of the portable build's mixed loop, at every
/// batch size from 1 to 23 (whole vectors, and every remainder).
#[test]
fn euler_batch_builds_and_kinds_give_the_same_bits() {
    use crate::rotation::euler_to_quat;
    let mut rng = Rng(2024);
    let cases: Vec<_> = (0..23)
        .map(|n| {
            let order = RotationOrder::ALL[n % 6];
            let mut angles = [rng.unit() * 180.0, rng.unit() * 90.0, rng.unit() * 180.0];
            if n % 7 == 3 {
                angles[1] = 90.0; // gimbal lock
            }
            let near = (n % 4 != 0).then(|| [rng.unit() * 400.0, rng.unit() * 100.0, 0.0]);
            let q = euler_to_quat(&order.axes(), &angles);
            (order, q, DMat3::from_quat(q), near)
        })
        .collect();
    // `kind`: 0 matrices alone, 1 quaternions alone, 2 both (alternating).
    let solve = |simd: Simd, kind: usize, n: usize| {
        let mut b = EulerBatch::new();
        for (i, &(order, q, m, near)) in cases[..n].iter().enumerate() {
            if kind == 1 || (kind == 2 && i % 2 == 1) {
                b.push_quat(q, order, near);
            } else {
                b.push_mat3(&m, order, near);
            }
        }
        b.solve_with(simd);
        (0..n).map(|i| b.angles(i).map(f64::to_bits)).collect::<Vec<_>>()
    };
    // The mixed loop on both kinds: the reference for matrices and for
    // quaternions (a matrix from `DMat3::from_quat` is not the lanes' own).
    let (mut mats, mut quats) = (Vec::new(), Vec::new());
    for start in 0..2 {
        let mut b = EulerBatch::new();
        for (i, &(order, q, m, near)) in cases.iter().enumerate() {
            if (i + start) % 2 == 0 {
                b.push_mat3(&m, order, near);
            } else {
                b.push_quat(q, order, near);
            }
        }
        b.solve_with(Simd::PORTABLE);
        for (i, out) in [&mut mats, &mut quats].into_iter().enumerate() {
            if out.is_empty() {
                out.resize(cases.len(), [0; 3]);
            }
            for e in (0..cases.len()).filter(|e| (e + start) % 2 == i) {
                out[e] = b.angles(e).map(f64::to_bits);
            }
        }
    }
    for simd in Simd::available() {
        for n in 1..=cases.len() {
            let want_mixed: Vec<_> =
                (0..n).map(|i| if i % 2 == 1 { quats[i] } else { mats[i] }).collect();
            assert_eq!(solve(simd, 0, n), mats[..n], "{simd:?} matrices, {n}");
            assert_eq!(solve(simd, 1, n), quats[..n], "{simd:?} quaternions, {n}");
            assert_eq!(solve(simd, 2, n), want_mixed, "{simd:?} both, {n}");
        }
    }
}

/// The mixes' kernels (FAST) within their stated errors of std's `sin`,
/// `cos` and `atan2`: the sine and cosine within 3e-16 and 1e-15 on
/// `[-π/4, π/4]`, `atan2` within 1e-15 radians and its short form within
/// 1.3e-13, on pairs in every quadrant, across the reduction's
/// boundaries, and from 1e-13 to 4 in magnitude.
#[test]
fn mix_kernels_are_within_their_stated_errors() {
    let mut rng = Rng(606);
    let (mut sin, mut cos, mut full, mut short) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    for n in 0..2_000_000u32 {
        let x = rng.unit() * std::f64::consts::FRAC_PI_4;
        let (s, c) = sin_cos_kernel_mix(x);
        sin = sin.max((s - x.sin()).abs());
        cos = cos.max((c - x.cos()).abs());
        let scale = [1.0, 4.0, 1e-3, 1e-9, 1e-13][(n % 5) as usize];
        let (y, x) = match n % 5 {
            0 => (7.0 / 16.0 * (1.0 + 1e-12 * rng.unit()), 1.0),
            1 => (1.0 + 1e-15 * rng.unit(), 1.0),
            2 => (1.0, 7.0 / 16.0 * (1.0 + 1e-12 * rng.unit())),
            _ => (rng.unit(), rng.unit()),
        };
        let signs = rng.next();
        let y = if signs & 1 == 0 { y } else { -y } * scale;
        let x = if signs & 2 == 0 { x } else { -x } * scale;
        let want = y.atan2(x);
        full = full.max((atan2_mix::<true, false>(y, x) - want).abs());
        short = short.max((atan2_mix::<true, true>(y, x) - want).abs());
    }
    eprintln!("mix kernels: sin {sin:e}, cos {cos:e}, atan2 {full:e}, short atan2 {short:e}");
    assert!(sin <= 3e-16 && cos <= 1e-15, "sin {sin:e} cos {cos:e}");
    assert!(full <= 1e-15 && short <= 1.3e-13, "atan2 {full:e} short {short:e}");
}

/// The lane pass of [`MixLanes::solve`] on the SIMD build `simd`, then
/// the undecided lanes again, in the lanes' own mode (`fast` or not).
fn mix_pass_then_redo(simd: Simd, lanes: &mut MixLanes, t: f64, layered: bool) {
    match (layered, lanes.fast) {
        (true, true) => mix_pass::<true, true>(simd, lanes, Source::Angles, t),
        (true, false) => mix_pass::<true, false>(simd, lanes, Source::Angles, t),
        (false, true) => mix_pass::<false, true>(simd, lanes, Source::Angles, t),
        (false, false) => mix_pass::<false, false>(simd, lanes, Source::Angles, t),
    }
    lanes.redo_undecided(Source::Angles, t, layered);
    if lanes.fast && !layered {
        lanes.keep_same();
    }
}

/// [`lane_reference`] with the mixes' short kernels (FAST): one lane at a
/// time, the exact continuity choice [`near_deg`].
fn lane_reference_fast(
    order: RotationOrder,
    a: [f64; 3],
    b: [f64; 3],
    near: [f64; 3],
    inv: Option<DQuat>,
    t: f64,
) -> [f64; 3] {
    let e = PERMUTATIONS[order as usize].3;
    let huge = |x: [f64; 3]| {
        let mut x = x;
        reduce_huge(&mut x);
        x
    };
    let (qa, qb) = (quat_of::<true>(huge(a), e), quat_of::<true>(huge(b), e));
    let layered = inv.is_some();
    let inv = inv.map_or([0.0, 0.0, 0.0, 1.0], |q| lane_quat(q, order));
    let out = mix_one::<true, true, false>(qa, qb, e, inv, near, t, layered).0.map(snap_angle);
    if layered { out } else { keep_same(out, huge(a), huge(b)) }
}

/// The rotation channels and order of each joint of `bvh` with three
/// rotation channels: the lanes a frame of it fills.
fn lane_joints(bvh: &crate::Bvh) -> Vec<([usize; 3], RotationOrder)> {
    bvh.skeleton()
        .joints()
        .iter()
        .map(crate::edit::JointChannels::of)
        .filter_map(|j| Some((j.rot_index, j.rotation_order()?)))
        .collect()
}

/// Lane `k`'s case of the mix lane tests: a rotation order, two frames'
/// hard angles (every fifth pair the same, every fifth after it the same
/// rotation turned by whole turns), the previous output frame's angles
/// and, for a layer, a reference's inverse.
fn hard_case(rng: &mut Rng, k: usize, layered: bool) -> LaneCase {
    use crate::rotation::euler_to_quat;
    let order = RotationOrder::ALL[(rng.next() % 6) as usize];
    let a = [hard_angle(rng), hard_angle(rng), hard_angle(rng)];
    let b = match k % 5 {
        0 => a,
        1 => [a[0] + 360.0, a[1], a[2] - 720.0],
        _ => [hard_angle(rng), hard_angle(rng), hard_angle(rng)],
    };
    let near = match k % 4 {
        0 => a.map(|x| x % 1000.0),
        1 => a.map(|x| (x + 180.0) % 1000.0),
        _ => [hard_angle(rng) % 1e4, hard_angle(rng), hard_angle(rng)],
    };
    let inv = layered.then(|| {
        let r = [hard_angle(rng), hard_angle(rng), hard_angle(rng)];
        euler_to_quat(&order.axes(), &r).inverse()
    });
    (order, a, b, near, inv)
}

/// The mixes' lanes (FAST, [`MixLanes::fast_with_capacity`]) give the same
/// bits on every instruction set and in the plain loop, and those of the
/// one-lane reference with the exact continuity choice (so the fast
/// choice and the lanes solved again change nothing), on hard angles
/// (huge ones, half turns, quarter turns), for blends and layers.
#[test]
fn fast_mix_lanes_are_the_same_bits_everywhere_and_the_reference_lane() {
    let mut rng = Rng(9091);
    let n = 997;
    let mut lanes = MixLanes::fast_with_capacity(n);
    let mut redone = 0;
    for round in 0..36 {
        let layered = round % 3 == 2;
        let t = [0.5, 1e-9, 0.3, 0.999, 0.25, 0.0][round % 6];
        lanes.clear();
        let mut cases = Vec::new();
        for k in 0..n {
            let (order, a, b, near, inv) = hard_case(&mut rng, k, layered);
            assert_eq!(lanes.push(order, a, b, near, inv), k);
            cases.push((order, a, b, near, inv));
        }
        lanes.solve(t, layered);
        redone += lanes.redo[..n].iter().filter(|&&r| r != 0.0).count();
        let best = lanes.out.clone();
        for (l, &(order, a, b, near, inv)) in cases.iter().enumerate() {
            let want = lane_reference_fast(order, a, b, near, inv, t).map(f64::to_bits);
            let what = format!("{order} {a:?} {b:?} near {near:?} t {t} inv {inv:?}");
            assert_eq!(lanes.angles(l).map(f64::to_bits), want, "{what}");
        }
        for round in [false, true] {
            match (layered, round) {
                (true, false) => {
                    mix_lanes::<true, true, STEP, false>(&mut lanes, Source::Angles, t)
                }
                (true, true) => mix_lanes::<true, true, STEP, true>(&mut lanes, Source::Angles, t),
                (false, false) => {
                    mix_lanes::<false, true, STEP, false>(&mut lanes, Source::Angles, t)
                }
                (false, true) => {
                    mix_lanes::<false, true, STEP, true>(&mut lanes, Source::Angles, t)
                }
            }
            lanes.redo_undecided(Source::Angles, t, layered);
            if !layered {
                lanes.keep_same();
            }
            assert_eq!(lanes.out, best, "plain loop, round {round}");
        }
        for simd in Simd::available() {
            mix_pass_then_redo(simd, &mut lanes, t, layered);
            assert_eq!(lanes.out, best, "{simd:?}");
        }
    }
    eprintln!("fast mix lanes: {redone} lanes solved again");
    assert!(redone > 100, "only {redone} lanes exercised the exact choice");
}

/// A joint's rotation from its angles (degrees, listing order) written
/// plainly: the product of the axes' quaternions, std's sine and cosine.
fn quat_formula(order: RotationOrder, angles: [f64; 3]) -> DQuat {
    order.axes().iter().zip(angles).fold(DQuat::IDENTITY, |q, (axis, x)| {
        q * DQuat::from_axis_angle(axis.unit_vector(), x.to_radians())
    })
}

/// Euler angles of `q` in `order` from its matrix (glam's) with std's
/// `atan2` and `hypot`, the solution next to `near` by the crate's one
/// continuity rule ([`near_deg`]), and the middle angle's cosine.
fn euler_formula(q: DQuat, order: RotationOrder, near: [f64; 3]) -> ([f64; 3], f64) {
    let m = DMat3::from_quat(q.normalize());
    let (i, j, k, e) = PERMUTATIONS[order as usize];
    let r = |row: usize, col: usize| m.col(col)[row];
    let cos_b = r(i, i).hypot(r(i, j));
    let b = (e * r(i, k)).atan2(cos_b);
    // In gimbal lock only the first and third angles' sum is known: the
    // crate's choice, no turn about the third axis.
    let locked = cos_b < GIMBAL_LOCK_EPSILON;
    let rad = if locked {
        [(e * r(k, j)).atan2(r(j, j)), b, 0.0]
    } else {
        [(-e * r(j, k)).atan2(r(k, k)), b, (-e * r(i, j)).atan2(r(i, i))]
    };
    (near_deg(rad, locked, e, near), cos_b)
}

/// The mix of `a` and `b` (or the layer of `b` over `a` with the
/// reference's inverse `inv`) at `t`, from the formulas: SLERP with
/// `acos`, Euler angles from the matrix.
fn mix_formula(
    order: RotationOrder,
    a: [f64; 3],
    b: [f64; 3],
    near: [f64; 3],
    inv: Option<DQuat>,
    t: f64,
) -> ([f64; 3], f64) {
    let (qa, qb) = (quat_formula(order, a), quat_formula(order, b));
    let q = match inv {
        Some(inv) => qa * slerp_formula(DQuat::IDENTITY, inv * qb, t),
        None => slerp_formula(qa, qb, t),
    };
    euler_formula(q, order, near)
}

/// The largest difference (degrees) between the angles of the mixes'
/// lanes (FAST) and the formulas', and the same of the exact lanes (the
/// resample's), over every corpus clip mixed with itself reversed (a
/// blend at 0.3 and 0.5, a layer at 0.7 over the middle frame, each
/// output frame next to the one before) and over random angles: the
/// mixes' short kernels stay within 1e-9 degrees.
#[test]
fn fast_mix_lanes_are_within_1e_9_degrees_of_the_formulas() {
    let mut worst = Worst::default();
    // Random angles in [-180, 180), blends and layers, next to the
    // formula's own principal angles moved by up to 30 degrees.
    let mut rng = Rng(1337);
    let n = 1000;
    let mut lanes = [MixLanes::fast_with_capacity(n), MixLanes::with_capacity(n)];
    for round in 0..200 {
        let layered = round % 4 == 3;
        let t = [0.5, 0.3, 0.9, 0.01][round % 4];
        let mut cases = Vec::new();
        for _ in 0..n {
            let order = RotationOrder::ALL[(rng.next() % 6) as usize];
            let mut ang = || [180.0 * rng.unit(), 180.0 * rng.unit(), 180.0 * rng.unit()];
            let (a, b, r) = (ang(), ang(), ang());
            let inv = layered.then(|| quat_formula(order, r).inverse());
            let principal = mix_formula(order, a, b, [0.0; 3], inv, t).0;
            let near = principal.map(|x| x + 30.0 * rng.unit());
            cases.push((order, a, b, near, inv));
        }
        worst.solve_and_check(&mut lanes, &cases, t, layered, |_| format!("t {t}"));
    }
    eprintln!("random angles: {worst}");
    assert!(worst.d[0] <= 1e-9, "random angles: {worst}");
    let test = "rotation::batch::fast_mix_lanes_are_within_1e_9_degrees_of_the_formulas";
    let Some(clips) = crate::test_corpus::clips(test) else {
        return;
    };
    let mut random = std::mem::take(&mut worst);
    for (name, bvh) in clips {
        let joints = lane_joints(&bvh);
        let m = bvh.motion();
        let frames = m.n_frames();
        if joints.is_empty() || frames == 0 {
            continue;
        }
        let n = joints.len();
        let mut lanes = [MixLanes::fast_with_capacity(n), MixLanes::with_capacity(n)];
        let middle = m.frame(frames / 2);
        for (t, layered) in [(0.3, false), (0.5, false), (0.7, true)] {
            let mut prev = m.frame(0).to_vec();
            for k in 0..frames {
                let (fa, fb) = (m.frame(k), m.frame(frames - 1 - k));
                let mut cases = Vec::with_capacity(n);
                for &(idx, order) in &joints {
                    let (a, b, near) =
                        (idx.map(|c| fa[c]), idx.map(|c| fb[c]), idx.map(|c| prev[c]));
                    let inv =
                        layered.then(|| quat_formula(order, idx.map(|c| middle[c])).inverse());
                    cases.push((order, a, b, near, inv));
                }
                let what = |l| format!("{name} frame {k} joint {l} t {t}");
                worst.solve_and_check(&mut lanes, &cases, t, layered, what);
                for (l, (idx, _)) in joints.iter().enumerate() {
                    for (&c, v) in idx.iter().zip(lanes[0].angles(l)) {
                        prev[c] = v;
                    }
                }
            }
        }
    }
    eprintln!("corpus: {worst}");
    assert!(worst.d[0] <= 1e-9, "corpus: {worst}");
    random.compared += worst.compared;
    assert!(random.compared > 1_000_000, "{} joints compared", random.compared);
}

/// The largest differences (degrees) of the fast and the exact lanes'
/// angles from the formulas', where the fast lanes' was, and how many
/// joints were compared, how many of them in gimbal lock.
#[derive(Default)]
struct Worst {
    d: [f64; 2],
    at: String,
    compared: usize,
    locked: usize,
}

/// A lane's case of the mix lane tests: the order, the two frames'
/// angles, the previous output frame's and, for a layer, the reference's
/// inverse.
type LaneCase = (RotationOrder, [f64; 3], [f64; 3], [f64; 3], Option<DQuat>);

impl Worst {
    /// Mixes `cases` at `t` on both lanes (fast, exact), one lane each,
    /// and [`Worst::check`]s every lane against [`mix_formula`] (`what`
    /// of the lane names it).
    fn solve_and_check(
        &mut self,
        lanes: &mut [MixLanes; 2],
        cases: &[LaneCase],
        t: f64,
        layered: bool,
        what: impl Fn(usize) -> String,
    ) {
        for l in lanes.iter_mut() {
            l.clear();
            for &(order, a, b, near, inv) in cases {
                l.push(order, a, b, near, inv);
            }
            l.solve(t, layered);
        }
        for (k, &(order, a, b, near, inv)) in cases.iter().enumerate() {
            let want = mix_formula(order, a, b, near, inv, t);
            let got = [lanes[0].angles(k), lanes[1].angles(k)];
            let what = || format!("{}: {order} {a:?} {b:?} near {near:?}", what(k));
            self.check(order, got, want, what);
        }
    }

    /// Compares the lanes' angles `got` (fast, exact) with the formulas'
    /// `want` (and its middle angle's cosine): angle by angle, or in gimbal
    /// lock, where the split between the first and third angles is the
    /// extraction's choice (`cos b` below 1e-9: about 6e-8 degrees from a
    /// quarter turn), the rotations (their matrices within 1e-12).
    fn check(
        &mut self,
        order: RotationOrder,
        got: [[f64; 3]; 2],
        (want, cos_b): ([f64; 3], f64),
        what: impl Fn() -> String,
    ) {
        self.compared += 1;
        if cos_b < 1e-9 {
            let m = |e: [f64; 3]| DMat3::from_quat(quat_formula(order, e));
            for g in got {
                let d = (m(g) - m(want)).to_cols_array().iter().fold(0.0f64, |x, y| x.max(y.abs()));
                // Within 1e-12, plus the nine decimals' rounding (up to
                // 2.7e-11 in a matrix element: see
                // `mix_lanes_are_the_same_bits_everywhere_and_the_scalar_path`).
                assert!(d < 3e-11, "{}: {g:?} vs {want:?} in gimbal lock", what());
            }
            self.locked += 1;
            return;
        }
        let d = got.map(|g| (0..3).fold(0.0f64, |d, k| d.max((g[k] - want[k]).abs())));
        // NaN differences count as the worst.
        let d = d.map(|x| if x.is_nan() { f64::INFINITY } else { x });
        if d[0] > self.d[0] {
            self.at = format!("{}: {:?} vs {want:?}", what(), got[0]);
        }
        self.d = [self.d[0].max(d[0]), self.d[1].max(d[1])];
    }
}

impl std::fmt::Display for Worst {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} joints ({} in gimbal lock: the same rotations), fast lanes within {:e}, exact \
             lanes within {:e} degrees (fast worst: {})",
            self.compared, self.locked, self.d[0], self.d[1], self.at
        )
    }
}

/// [`MixLanes::gather`] leaves out only joints whose lanes (FAST, a blend)
/// give their angles back bit for bit: a joint whose three angles are the
/// same bits in both frames and the previous output frame, and
/// [`settled`], is written straight into the output, with the bits that
/// pushing every joint and solving gives it, at any weight; the other
/// joints' lanes, in `lane_rot`'s order, give theirs too. Hard angles:
/// middle angles at and around the one-degree margin from gimbal lock
/// and beyond it, magnitudes at and around [`SETTLED_DEG`], huge and
/// non-finite ones, half and quarter turns.
#[test]
fn gathered_blend_lanes_leave_out_only_joints_the_lanes_give_back() {
    let mut rng = Rng(4242);
    let n = 797;
    let mut gathered = MixLanes::fast_with_capacity(n);
    let mut pushed = MixLanes::fast_with_capacity(n);
    let angle = |rng: &mut Rng, k: usize| match k % 9 {
        0 => 89.0 * [1.0, -1.0][(rng.next() % 2) as usize] + 1e-9 * rng.unit(),
        1 => 90.0 + 2.0 * rng.unit() + 180.0 * (rng.next() % 5) as f64,
        2 => SETTLED_DEG * (1.0 + 1e-12 * rng.unit()),
        3 => -SETTLED_DEG + 400.0 * rng.unit().abs(),
        4 => [f64::NAN, f64::INFINITY, 1e20][(rng.next() % 3) as usize],
        5 => 89.999_999_9 + 1e-7 * rng.unit(),
        _ => hard_angle(rng),
    };
    let (mut left_out, mut lanes_used) = (0, 0);
    for round in 0..24 {
        let t = [0.5, 1e-9, 0.3, 0.999][round % 4];
        let orders: Vec<RotationOrder> =
            (0..n).map(|_| RotationOrder::ALL[(rng.next() % 6) as usize]).collect();
        let mut a = vec![0.0; 3 * n];
        for (k, x) in a.iter_mut().enumerate() {
            *x = if rng.next().is_multiple_of(3) {
                angle(&mut rng, k / 3 + round)
            } else {
                hard_angle(&mut rng)
            };
        }
        let (mut b, mut near) = (a.clone(), a.clone());
        for s in 0..n {
            match rng.next() % 8 {
                0 => b[3 * s + (s % 3)] = hard_angle(&mut rng),
                1 => near[3 * s + 2] += 1e-9,
                2 => near[3 * s] = -near[3 * s],
                _ => {}
            }
        }
        let rot: Vec<[usize; 3]> = (0..n).map(|s| [3 * s, 3 * s + 1, 3 * s + 2]).collect();
        let parity: Vec<f64> = orders.iter().map(|&o| parity_of(o)).collect();
        let mut out = vec![f64::NAN; 3 * n];
        let mut lane_rot = vec![[0; 3]; n];
        gathered.clear();
        let all = gathered.gather::<true>(&rot, &parity, &a, &b, &near, &mut out, &mut lane_rot);
        gathered.solve(t, false);
        let lanes = gathered.len();
        let lane_rot = if all { &rot[..] } else { &lane_rot[..lanes] };
        for (l, r) in lane_rot.iter().enumerate() {
            write3::<true>(&mut out, *r, gathered.angles(l));
        }
        pushed.clear();
        for (s, r) in rot.iter().enumerate() {
            let [x, y, p] = [&a, &b, &near].map(|f| read3::<true>(f, *r));
            pushed.push(orders[s], x, y, p, None);
        }
        pushed.solve(t, false);
        for (s, r) in rot.iter().enumerate() {
            let got = read3::<true>(&out, *r).map(f64::to_bits);
            let what = format!(
                "{} {:?} {:?} near {:?} t {t}",
                orders[s],
                read3::<true>(&a, *r),
                read3::<true>(&b, *r),
                read3::<true>(&near, *r)
            );
            assert_eq!(got, pushed.angles(s).map(f64::to_bits), "{what}");
        }
        left_out += n - lanes;
        lanes_used += lanes;
    }
    eprintln!("gathered blend lanes: {left_out} joints left out, {lanes_used} solved");
    assert!(left_out > 2000 && lanes_used > 10_000, "{left_out} left out, {lanes_used} solved");
}

/// [`unwrap_deg_fast`] with `ROUND` (`round_ties_even`) gives the bits and
/// the flag of the `ROUNDING` sum and its signed zero: around every
/// half-integer quotient, the zeros of both signs, quotients just either
/// side of zero, NaN, infinities and targets up to [`FAR_DEG`] (beyond,
/// its callers flag the lane whatever it gives: the sum rounds to
/// integers only below `2^51`).
#[test]
fn rounded_unwrap_is_the_magic_sum() {
    let mut rng = Rng(0x5eed_0037);
    let mut cases = vec![
        (0.0, 0.0),
        (-0.0, 0.0),
        (0.0, -0.0),
        (-0.0, -0.0),
        (1e-300, 0.0),
        (-1e-300, 0.0),
        (0.0, 1e-300),
        (0.0, -1e-300),
        (0.0, 180.0),
        (0.0, -180.0),
        (180.0, 0.0),
        (-180.0, 0.0),
        (0.0, 540.0),
        (0.0, -540.0),
        (f64::NAN, 0.0),
        (0.0, f64::NAN),
        (0.0, f64::INFINITY),
        (0.0, f64::NEG_INFINITY),
        (0.0, FAR_DEG.next_down()),
        (0.0, -FAR_DEG.next_down()),
        (1e-9, FAR_DEG.next_down()),
    ];
    for k in -1000..=1000 {
        let target = 180.0 * k as f64;
        for d in [0.0, 1e-9, -1e-9, 1e-5, -1e-5, 0.3, -0.3] {
            cases.push((rng.unit() * 180.0, target + d));
            cases.push((d, target));
            cases.push((d + 180.0, target + 180.0 * d));
        }
    }
    for _ in 0..100_000 {
        cases.push((rng.unit() * 360.0, rng.unit() * 1e6));
        cases.push((rng.unit() * 180.0, rng.unit() * 720.0));
    }
    for (x, target) in cases {
        let bits = |(v, tie): (f64, bool)| (v.to_bits(), tie);
        assert_eq!(
            bits(unwrap_deg_fast::<true, true>(x, target)),
            bits(unwrap_deg_fast::<true, false>(x, target)),
            "signed zero, {x} next to {target}"
        );
        // Without the signed zero, for the candidates its callers give it
        // (never -0).
        if x.to_bits() != (-0.0f64).to_bits() {
            assert_eq!(
                bits(unwrap_deg_fast::<false, true>(x, target)),
                bits(unwrap_deg_fast::<false, false>(x, target)),
                "{x} next to {target}"
            );
        }
    }
}

/// [`reduce_half_quarter_turns`] is [`reduce_quarter_turns`] of the half
/// angle, bit for bit: random angles, multiples of 45 and 90 degrees and
/// their neighbours, zeros, subnormals (odd and even), the smallest
/// normals, angles up to twice the reduction's limit, NaN.
#[test]
fn half_reduction_is_the_reduction_of_the_half() {
    let mut rng = Rng(0x5eed_1800);
    let mut xs = vec![
        0.0,
        -0.0,
        f64::MIN_POSITIVE,
        -f64::MIN_POSITIVE,
        2.0 * f64::MIN_POSITIVE,
        f64::from_bits(1),
        -f64::from_bits(1),
        f64::from_bits(3),
        f64::from_bits(0x000f_ffff_ffff_ffff),
        -f64::from_bits(0x000f_ffff_ffff_ffff),
        f64::from_bits(0x0010_0000_0000_0001),
        f64::NAN,
        -f64::NAN,
        1.9 * crate::rotation::REDUCE_LIMIT,
        -1.9 * crate::rotation::REDUCE_LIMIT,
    ];
    for k in -2000..=2000 {
        let x = 90.0 * k as f64;
        xs.extend([x, x + 45.0, x - 45.0, x.next_up(), x.next_down(), (x + 45.0).next_up()]);
    }
    for _ in 0..200_000 {
        xs.push(rng.unit() * 720.0);
        xs.push(rng.unit() * 1e9);
        xs.push(rng.unit() * 1e-300);
        xs.push(rng.unit() * 1e-310);
    }
    for x in xs {
        let (r, q) = reduce_half_quarter_turns(x);
        let (want_r, want_q) = crate::rotation::reduce_quarter_turns(0.5 * x);
        assert_eq!((r.to_bits(), q), (want_r.to_bits(), want_q), "{x:e}");
    }
}

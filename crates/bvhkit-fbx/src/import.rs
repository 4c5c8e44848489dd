//! The import: an FBX file read by `ufbx` back into a [`Bvh`].

use bvhkit::glam::{DQuat, DVec3};
use bvhkit::rotation::{Axis, RotationOrder, quat_to_euler_near};
use bvhkit::{Bvh, Channel, JointId, Motion, SkeletonBuilder};

use crate::export::{TICKS_PER_SECOND, frame_ticks};
use crate::{Error, Import, ImportOptions, raw};

/// BVH listing order (`R = R_a·R_b·R_c`) of an FBX rotation order (the
/// axes in the order they are applied): the reverse.
fn listing(order: ufbx::RotationOrder) -> [Axis; 3] {
    use Axis::*;
    match order {
        ufbx::RotationOrder::Xyz => [Z, Y, X],
        ufbx::RotationOrder::Xzy => [Y, Z, X],
        ufbx::RotationOrder::Yzx => [X, Z, Y],
        ufbx::RotationOrder::Yxz => [Z, X, Y],
        ufbx::RotationOrder::Zxy => [Y, X, Z],
        // Spheric has no Euler angles; its rotation is baked in ZXY.
        ufbx::RotationOrder::Zyx | ufbx::RotationOrder::Spheric => [X, Y, Z],
    }
}

fn position_channel(a: Axis) -> Channel {
    match a {
        Axis::X => Channel::Xposition,
        Axis::Y => Channel::Yposition,
        Axis::Z => Channel::Zposition,
    }
}

fn rotation_channel(a: Axis) -> Channel {
    match a {
        Axis::X => Channel::Xrotation,
        Axis::Y => Channel::Yrotation,
        Axis::Z => Channel::Zrotation,
    }
}

fn vec3(v: ufbx::Vec3) -> DVec3 {
    DVec3::new(v.x, v.y, v.z)
}

/// Where a channel's values come from.
enum Source<'a> {
    /// A value that does not change.
    Constant(f64),
    /// A curve (and the value where it has no key).
    Curve(&'a ufbx::AnimCurve, f64),
    /// Component `k` of the node's evaluated local translation.
    Translation(usize),
    /// Angle `k` (listing order) of the node's evaluated local rotation.
    Rotation(usize),
}

struct Joint<'a> {
    node: &'a ufbx::Node,
    parent: Option<usize>,
    end_site: bool,
    offset: DVec3,
    channels: Vec<Channel>,
    sources: Vec<Source<'a>>,
    /// Rotation baked from the evaluated transform, in this order.
    baked: Option<RotationOrder>,
}

/// Where the keys of the curves come from.
#[derive(Clone, Copy)]
enum Keys<'k, 'b> {
    /// `ufbx`'s keyframes (the scene loaded with its animation).
    Ufbx,
    /// The file's own arrays (the scene loaded without its animation's keys).
    Raw(&'k raw::Curves<'b>),
}

impl Keys<'_, '_> {
    fn has_keys(self, c: &ufbx::AnimCurve) -> bool {
        match self {
            Keys::Ufbx => !c.keyframes.is_empty(),
            Keys::Raw(r) => r.of(c).is_some_and(|a| a.times.count > 0),
        }
    }
}

fn curves<'a>(
    keys: Keys<'_, '_>,
    layer: Option<&'a ufbx::AnimLayer>,
    node: &'a ufbx::Node,
    prop: &str,
) -> [Option<&'a ufbx::AnimCurve>; 3] {
    let Some(layer) = layer else { return [None, None, None] };
    let Some(ap) = ufbx::find_anim_prop(layer, &node.element, prop) else {
        return [None, None, None];
    };
    let v: &ufbx::AnimValue = &ap.anim_value;
    [0, 1, 2].map(|k| v.curves[k].as_deref().filter(|c| keys.has_keys(c)))
}

fn prop_vec3(node: &ufbx::Node, name: &str) -> Option<DVec3> {
    node.element
        .props
        .find_prop(name)
        .map(|p| DVec3::new(p.value_vec4.x, p.value_vec4.y, p.value_vec4.z))
}

/// The shortest decimal frame time (up to 15 significant digits) whose
/// ticks are `ticks` at frames 1 and `n - 1`; `dt` when there is none.
fn tidy_frame_time(dt: f64, ticks: &[i64]) -> f64 {
    let n = ticks.len();
    for digits in 1..=15 {
        let scale = 10f64.powi(digits - 1 - dt.abs().log10().floor() as i32);
        let d = (dt * scale).round() / scale;
        if d > 0.0
            && [1, n - 1].iter().all(|&i| frame_ticks(i, d) - ticks[0] == ticks[i] - ticks[0])
        {
            return d;
        }
    }
    dt
}

fn load(bytes: &[u8], keys: bool) -> Result<ufbx::SceneRoot, Error> {
    let opts = ufbx::LoadOpts {
        ignore_geometry: true,
        ignore_embedded: true,
        ignore_animation: !keys,
        retain_dom: !keys,
        ..Default::default()
    };
    ufbx::load_memory(bytes, opts)
        .map_err(|e| Error::Read(format!("{} {}", e.description, e.info()).trim().to_string()))
}

/// The fast path: the scene without its keys, and the curves' arrays read
/// from the file (`raw`), when every curve has its keys on the frames;
/// `None` for anything else (or a file the fast path does not parse).
pub(crate) fn import_fast_path(
    bytes: &[u8],
    options: &ImportOptions,
) -> Result<Option<Import>, Error> {
    if options.fps.is_some() || !raw::is_binary(bytes) {
        return Ok(None);
    }
    let scene = load(bytes, false)?;
    if scene.metadata.version < 7000 || scene.metadata.big_endian {
        return Ok(None);
    }
    let Ok(curves) = raw::Curves::read(bytes, scene.metadata.version) else { return Ok(None) };
    if !scene.anim_curves.iter().all(|c| curves.of(c).is_some()) {
        return Ok(None);
    }
    read_scene(&scene, options, Keys::Raw(&curves))
}

/// The import through ufbx's keys.
pub(crate) fn import_through_ufbx_keys(
    bytes: &[u8],
    options: &ImportOptions,
) -> Result<Import, Error> {
    let scene = load(bytes, true)?;
    read_scene(&scene, options, Keys::Ufbx)?
        .ok_or_else(|| Error::Read("the animation could not be read".into()))
}

pub(crate) fn import(bytes: &[u8], options: &ImportOptions) -> Result<Import, Error> {
    match import_fast_path(bytes, options)? {
        Some(done) => Ok(done),
        None => import_through_ufbx_keys(bytes, options),
    }
}

/// The import of a loaded scene; `None` when `keys` is [`Keys::Raw`] and
/// the file needs ufbx's keys (curves off the frames, joints to bake).
fn read_scene(
    scene: &ufbx::Scene,
    options: &ImportOptions,
    keys: Keys<'_, '_>,
) -> Result<Option<Import>, Error> {
    let raw_keys = matches!(keys, Keys::Raw(_));
    let mut notes = Vec::new();

    // The animation stack and its first layer.
    let stack = match &options.stack {
        Some(name) => Some(
            ufbx::find_anim_stack(scene, name)
                .ok_or_else(|| Error::Read(format!("no animation stack named {name:?}")))?,
        ),
        None => scene.anim_stacks.first().map(|s| &**s),
    };
    let layer = stack.and_then(|s| s.layers.first().map(|l| &**l));
    if let Some(s) = stack
        && s.layers.len() > 1
    {
        notes.push(format!(
            "animation stack {:?}: only its first layer is read",
            s.element.name.as_ref() as &str
        ));
    }

    // The skeleton: LimbNodes (bones) from their topmost ancestors down, in
    // pre-order; without any, every node under the scene root.
    let is_bone = |n: &ufbx::Node| n.bone.is_some();
    let any_bone = scene.nodes.iter().any(|n| is_bone(n));
    let take = |n: &ufbx::Node| !n.is_root && (!any_bone || is_bone(n));
    let mut order: Vec<(&ufbx::Node, Option<usize>)> = Vec::new();
    let mut stack_nodes: Vec<(&ufbx::Node, Option<usize>)> = Vec::new();
    for n in scene.nodes.iter().rev() {
        let n: &ufbx::Node = n;
        let parent_taken = n.parent.as_deref().is_some_and(&take);
        if take(n) && !parent_taken {
            stack_nodes.push((n, None));
        }
    }
    while let Some((n, parent)) = stack_nodes.pop() {
        let me = order.len();
        order.push((n, parent));
        for c in n.children.iter().rev() {
            let c: &ufbx::Node = c;
            if take(c) {
                stack_nodes.push((c, Some(me)));
            }
        }
    }
    if order.is_empty() {
        return Err(Error::NoSkeleton);
    }
    for (n, parent) in &order {
        if parent.is_none()
            && let Some(p) = n.parent.as_deref()
            && !p.is_root
        {
            let m = &p.node_to_world;
            let identity = [
                m.m00 - 1.0,
                m.m11 - 1.0,
                m.m22 - 1.0,
                m.m01,
                m.m02,
                m.m10,
                m.m12,
                m.m20,
                m.m21,
                m.m03,
                m.m13,
                m.m23,
            ]
            .iter()
            .all(|x| x.abs() < 1e-12);
            if !identity {
                let (a, b): (&str, &str) = (&n.element.name, &p.element.name);
                notes.push(format!(
                    "{a}: the transform of its parent {b} (not a bone) is not applied"
                ));
            }
        }
    }
    let has_children: Vec<bool> = {
        let mut v = vec![false; order.len()];
        for (_, p) in &order {
            if let Some(p) = p {
                v[*p] = true;
            }
        }
        v
    };

    let mut joints: Vec<Joint<'_>> = Vec::with_capacity(order.len());
    let mut key_ticks: Vec<f64> = Vec::new();
    // The key times of the first curve met: a curve with the very same
    // times (every curve of a bvhkit export) adds nothing to the union, so
    // only the other curves' keys are gathered and sorted.
    let mut first_times: Option<Vec<f64>> = None;
    // With the file's arrays: the first curve's stored `KeyTime`, and
    // whether every curve has the first one's times.
    let mut first_raw: Option<raw::Array<'_>> = None;
    let mut all_first = true;
    let ticks_per_second = scene.metadata.ktime_second as f64;
    for (i, &(node, parent)) in order.iter().enumerate() {
        let t_curves = curves(keys, layer, node, "Lcl Translation");
        let r_curves = curves(keys, layer, node, "Lcl Rotation");
        let animated = t_curves.iter().chain(&r_curves).any(Option::is_some);
        let marked =
            node.element.props.find_prop("bvhkit_end_site").is_some_and(|p| p.value_int != 0);
        let name: &str = &node.element.name;
        let end_site = !has_children[i]
            && parent.is_some()
            && (marked || (!animated && name.to_ascii_lowercase().ends_with("end")));
        // The local transform is T·R of its Lcl properties: the curves are
        // the joint's channels, read as they are.
        let plain = node.rotation_order != ufbx::RotationOrder::Spheric
            && prop_vec3(node, "Lcl Scaling").is_none_or(|s| s == DVec3::ONE)
            && !curves(keys, layer, node, "Lcl Scaling").iter().any(Option::is_some)
            && [
                "PreRotation",
                "PostRotation",
                "RotationOffset",
                "RotationPivot",
                "ScalingOffset",
                "ScalingPivot",
            ]
            .iter()
            .all(|n| prop_vec3(node, n).is_none_or(|v| v == DVec3::ZERO));
        let mut j = Joint {
            node,
            parent,
            end_site,
            offset: prop_vec3(node, "Lcl Translation")
                .unwrap_or(vec3(node.local_transform.translation)),
            channels: Vec::new(),
            sources: Vec::new(),
            baked: None,
        };
        if !plain {
            if raw_keys {
                // Baked from ufbx's evaluation, which needs its keys.
                return Ok(None);
            }
            j.offset = vec3(node.local_transform.translation);
        }
        for c in t_curves.iter().chain(&r_curves).flatten() {
            let times: Vec<f64> = match keys {
                Keys::Ufbx => {
                    let k = &c.keyframes;
                    match &first_times {
                        Some(first)
                            if first.len() == k.len()
                                && first.iter().zip(k.iter()).all(|(a, k)| *a == k.time) =>
                        {
                            continue;
                        }
                        _ => k.iter().map(|k| k.time).collect(),
                    }
                }
                Keys::Raw(r) => {
                    let a =
                        r.of(c).ok_or_else(|| Error::Read("a curve without keys".into()))?.times;
                    // The same stored array (an export writes one in every
                    // curve) is the same times: nothing to decode.
                    if first_raw.is_some_and(|f| f == a) {
                        continue;
                    }
                    let times = a.times(ticks_per_second)?;
                    if first_times.as_ref().is_some_and(|f| *f == times) {
                        continue;
                    }
                    if first_times.is_some() {
                        all_first = false;
                    } else {
                        first_raw = Some(a);
                    }
                    times
                }
            };
            if first_times.is_none() {
                key_ticks.extend_from_slice(&times);
                first_times = Some(times);
            } else {
                key_ticks.extend_from_slice(&times);
            }
        }
        let listed: Option<Vec<Channel>> = node
            .element
            .props
            .find_prop("bvhkit_channels")
            .and_then(|p| p.value_str.split_whitespace().map(Channel::from_name).collect());
        if let (Some(list), true, false) = (listed, plain, end_site) {
            // A bvhkit export: its channels as they were listed.
            let statics_t = prop_vec3(node, "Lcl Translation").unwrap_or(j.offset);
            let statics_r = prop_vec3(node, "Lcl Rotation").unwrap_or(DVec3::ZERO);
            for c in list {
                let k = c.axis().index();
                let (curve, stat) = if c.is_rotation() {
                    (r_curves[k], statics_r[k])
                } else {
                    (t_curves[k], statics_t[k])
                };
                j.channels.push(c);
                j.sources.push(curve.map_or(Source::Constant(stat), |c| Source::Curve(c, stat)));
            }
        } else if !end_site {
            let statics = prop_vec3(node, "Lcl Translation").unwrap_or(j.offset);
            for (k, c) in t_curves.iter().enumerate() {
                let axis = [Axis::X, Axis::Y, Axis::Z][k];
                match (c, plain) {
                    (Some(c), true) => {
                        j.channels.push(position_channel(axis));
                        j.sources.push(Source::Curve(c, statics[k]));
                    }
                    (_, false) if t_curves.iter().any(Option::is_some) => {
                        j.channels.push(position_channel(axis));
                        j.sources.push(Source::Translation(k));
                    }
                    _ => {}
                }
            }
            let axes = listing(node.rotation_order);
            if plain {
                let statics = prop_vec3(node, "Lcl Rotation").unwrap_or(DVec3::ZERO);
                let present = |a: Axis| r_curves[a.index()].is_some() || statics[a.index()] != 0.0;
                for a in axes.into_iter().filter(|&a| present(a)) {
                    j.channels.push(rotation_channel(a));
                    j.sources.push(match r_curves[a.index()] {
                        Some(c) => Source::Curve(c, statics[a.index()]),
                        None => Source::Constant(statics[a.index()]),
                    });
                }
            } else {
                let order = RotationOrder::from_axes(&axes).expect("three distinct axes");
                for (k, a) in axes.into_iter().enumerate() {
                    j.channels.push(rotation_channel(a));
                    j.sources.push(Source::Rotation(k));
                }
                j.baked = Some(order);
                notes.push(format!(
                    "{name}: rotation baked from its transform (pivots, pre- or post-rotation, or scaling)"
                ));
            }
        }
        joints.push(j);
    }

    // Frame times: the keys when they are evenly spaced, else a resample.
    key_ticks.sort_by(f64::total_cmp);
    key_ticks.dedup_by(|a, b| (*a - *b).abs() < 1e-9);
    let (times, frame_time) = match (options.fps, key_ticks.len()) {
        (None, 0) => (Vec::new(), 1.0 / scene.settings.frames_per_second.max(1e-9)),
        (None, 1) => (key_ticks.clone(), 1.0 / scene.settings.frames_per_second.max(1e-9)),
        (fps, n) => {
            let dt = (key_ticks[n.max(1) - 1] - key_ticks[0]) / (n.max(2) - 1) as f64;
            let even = key_ticks.windows(2).all(|w| ((w[1] - w[0]) - dt).abs() <= 1e-6 * dt);
            if fps.is_none() && even {
                let ticks: Vec<i64> = key_ticks
                    .iter()
                    .map(|t| (t * TICKS_PER_SECOND as f64).round() as i64)
                    .collect();
                // The exact frame time a bvhkit export records, when its
                // ticks are these keys; else the shortest decimal that has them.
                let recorded = stack
                    .and_then(|s| s.element.props.find_prop("bvhkit_frame_time"))
                    .map(|p| p.value_vec4.x)
                    .filter(|&ft| {
                        ticks
                            .iter()
                            .enumerate()
                            .all(|(i, &t)| frame_ticks(i, ft) - ticks[0] == t - ticks[0])
                    });
                (key_ticks.clone(), recorded.unwrap_or_else(|| tidy_frame_time(dt, &ticks)))
            } else {
                if raw_keys {
                    // Sampled between keys: ufbx's evaluation of its keys.
                    return Ok(None);
                }
                let fps = fps.unwrap_or(scene.settings.frames_per_second);
                if !(fps.is_finite() && fps > 0.0) {
                    return Err(Error::Read(format!("frame rate {fps} is not a positive number")));
                }
                let (t0, t1) = (key_ticks[0], key_ticks[n - 1]);
                // The frames are counted before any is made: a rate or a
                // span too large for the memory is refused, not allocated.
                let count = ((t1 - t0) * fps + 1e-6).floor() + 1.0;
                let n_channels: usize = joints.iter().map(|j| j.channels.len()).sum();
                let max = bvhkit::edit::resample::MAX_VALUES;
                let values = count * n_channels.max(1) as f64;
                if !values.is_finite() || values > max as f64 {
                    return Err(Error::Read(format!(
                        "sampling {:e} s at {fps:e} frames per second gives {count:e} frames of \
                         {n_channels} channels: more than the limit of {max} values",
                        t1 - t0
                    )));
                }
                let count = count as usize;
                notes.push(format!("animation sampled at {fps} frames per second"));
                ((0..count).map(|i| t0 + i as f64 / fps).collect(), 1.0 / fps)
            }
        }
    };

    // The skeleton.
    let mut b = SkeletonBuilder::new();
    let mut ids: Vec<JointId> = Vec::with_capacity(joints.len());
    for j in &joints {
        let name: &str = &j.node.element.name;
        let id = match j.parent {
            None => b.root(name, j.offset, &j.channels),
            Some(p) if j.end_site => b.end_site(ids[p], j.offset),
            Some(p) => b.joint(ids[p], name, j.offset, &j.channels),
        }
        .map_err(|e| Error::Skeleton(format!("{name}: {e}")))?;
        ids.push(id);
    }
    let skeleton = b.build();

    // The motion.
    let n_channels = skeleton.n_channels();
    if let Keys::Raw(r) = keys {
        // Every curve's keys are the frames (else ufbx's keys are needed).
        if !all_first || first_times.as_ref().is_some_and(|f| *f != times) {
            return Ok(None);
        }
        let values = raw_values(r, &joints, times.len(), n_channels)?;
        return finish(frame_time, n_channels, values, skeleton, scene, notes).map(Some);
    }
    let mut values = vec![0.0; times.len() * n_channels];
    let anim: Option<&ufbx::Anim> = stack.map(|s| &*s.anim);
    let mut previous: Vec<[f64; 3]> = vec![[0.0; 3]; joints.len()];
    for (f, &t) in times.iter().enumerate() {
        let row = &mut values[f * n_channels..(f + 1) * n_channels];
        let mut at = 0;
        for (ji, j) in joints.iter().enumerate() {
            let transform = match (
                anim,
                j.sources.iter().any(|s| matches!(s, Source::Translation(_) | Source::Rotation(_))),
            ) {
                (Some(a), true) => Some(ufbx::evaluate_transform(a, j.node, t)),
                _ => None,
            };
            let angles = match (j.baked, &transform) {
                (Some(order), Some(tr)) => {
                    let q = tr.rotation;
                    let e = quat_to_euler_near(
                        DQuat::from_xyzw(q.x, q.y, q.z, q.w),
                        order,
                        previous[ji],
                    );
                    previous[ji] = e;
                    e
                }
                _ => [0.0; 3],
            };
            for s in &j.sources {
                row[at] = match s {
                    Source::Curve(c, default) => {
                        let keys = &c.keyframes;
                        if keys.len() == times.len() && (keys[f].time - t).abs() < 1e-9 {
                            keys[f].value
                        } else {
                            ufbx::evaluate_curve(c, t, *default)
                        }
                    }
                    Source::Constant(v) => *v,
                    Source::Translation(k) => {
                        transform.as_ref().map_or(j.offset[*k], |tr| vec3(tr.translation)[*k])
                    }
                    Source::Rotation(k) => angles[*k],
                };
                at += 1;
            }
        }
    }
    finish(frame_time, n_channels, values, skeleton, scene, notes).map(Some)
}

fn finish(
    frame_time: f64,
    n_channels: usize,
    values: Vec<f64>,
    skeleton: bvhkit::Skeleton,
    scene: &ufbx::Scene,
    notes: Vec<String>,
) -> Result<Import, Error> {
    let motion =
        Motion::new(frame_time, n_channels, values).map_err(|e| Error::Skeleton(e.to_string()))?;
    let bvh = Bvh::new(skeleton, motion).map_err(|e| Error::Skeleton(e.to_string()))?;
    Ok(Import { bvh, metres_per_unit: scene.settings.unit_meters, notes })
}

/// Frames a piece of the parallel fill of [`raw_values`] holds.
const PIECE_FRAMES: usize = 512;

/// The motion values of `n_frames` frames from the file's own arrays, each
/// curve's value `f` in frame `f` (the caller checked that every curve's
/// keys are the frames): pieces of frames filled in parallel, a channel at
/// a time within each piece.
fn raw_values(
    r: &raw::Curves<'_>,
    joints: &[Joint<'_>],
    n_frames: usize,
    n_channels: usize,
) -> Result<Vec<f64>, Error> {
    use rayon::prelude::*;
    enum Column<'v> {
        Constant(f64),
        Curve(raw::Values<'v>),
    }
    let max = bvhkit::edit::resample::MAX_VALUES;
    if n_frames.checked_mul(n_channels).is_none_or(|v| v > max) {
        return Err(Error::Read(format!(
            "{n_frames} frames of {n_channels} channels: more than the limit of {max} values"
        )));
    }
    let mut columns = Vec::with_capacity(n_channels);
    for s in joints.iter().flat_map(|j| &j.sources) {
        columns.push(match s {
            Source::Constant(v) => Column::Constant(*v),
            Source::Curve(c, _) => {
                let a = r.of(c).ok_or_else(|| Error::Read("a curve without keys".into()))?;
                if a.values.count != n_frames {
                    return Err(Error::Read(format!(
                        "a curve has {} values for {n_frames} keys",
                        a.values.count
                    )));
                }
                Column::Curve(a.values.values()?)
            }
            // Only joints read through ufbx's evaluation have these.
            Source::Translation(_) | Source::Rotation(_) => {
                return Err(Error::Read("a baked joint on the fast path".into()));
            }
        });
    }
    let mut values = vec![0.0; n_frames * n_channels];
    let piece = (PIECE_FRAMES * n_channels).max(1);
    values.par_chunks_mut(piece).enumerate().for_each(|(p, rows)| {
        let first = p * PIECE_FRAMES;
        for (c, column) in columns.iter().enumerate() {
            let cells = rows.iter_mut().skip(c).step_by(n_channels);
            match column {
                Column::Constant(v) => cells.for_each(|x| *x = *v),
                Column::Curve(vals) => {
                    cells.enumerate().for_each(|(i, x)| *x = vals.get(first + i));
                }
            }
        }
    });
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listing_is_the_export_s_inverse() {
        use crate::export::fbx_rotation_order;
        let all = [
            ufbx::RotationOrder::Xyz,
            ufbx::RotationOrder::Xzy,
            ufbx::RotationOrder::Yzx,
            ufbx::RotationOrder::Yxz,
            ufbx::RotationOrder::Zxy,
            ufbx::RotationOrder::Zyx,
        ];
        for o in all {
            let (v, full) = fbx_rotation_order(&listing(o));
            assert_eq!(v, o as i32);
            assert_eq!(full, listing(o));
        }
    }

    #[test]
    fn frame_times_come_back_as_written() {
        // The spellings files use come back as they were.
        for dt in [0.0333333, 0.033333, 0.008333, 0.00833333, 0.0416667, 0.01] {
            let ticks: Vec<i64> = (0..500).map(|i| frame_ticks(i, dt)).collect();
            let measured = (ticks[499] - ticks[0]) as f64 / TICKS_PER_SECOND as f64 / 499.0;
            assert_eq!(tidy_frame_time(measured, &ticks), dt, "{dt}");
        }
        // Others (1/30 itself) as a decimal with the same ticks.
        let dt = 1.0 / 30.0;
        let ticks: Vec<i64> = (0..500).map(|i| frame_ticks(i, dt)).collect();
        let tidy = tidy_frame_time(
            (ticks[499] - ticks[0]) as f64 / TICKS_PER_SECOND as f64 / 499.0,
            &ticks,
        );
        assert!((tidy - dt).abs() < 1e-12);
        assert_eq!(frame_ticks(499, tidy), ticks[499]);
    }
}

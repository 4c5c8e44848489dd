//! The export: a [`Bvh`] as a binary FBX 7.4 document (see the crate docs
//! and `docs/fbx.md`).

use std::collections::HashSet;

use bvhkit::edit::axes::SignedAxis;
use bvhkit::glam::DVec3;
use bvhkit::rotation::Axis;
use bvhkit::{Bvh, PositionChannels, Skeleton};

use crate::node::{
    CREATION_TIME, FILE_ID, Node, Sink, footer, header, object_name, p, p_f64, p_int, p_str,
    p_time, p_vec3,
};
use crate::{Applied, Error, Export, ExportOptions};

/// FBX time units per second.
pub const TICKS_PER_SECOND: i64 = 46_186_158_000;

/// `KeyAttrFlags` of a linear key.
const LINEAR: i32 = 0x0000_0004;
/// `KeyAttrFlags` of a constant key.
const CONSTANT: i32 = 0x0000_0002;
/// The default tangent weights (1/3 each, 16-bit fixed point, packed).
const DEFAULT_WEIGHTS: u32 = 218_434_821;

/// FBX's `RotationOrder` enum value (`eEulerXYZ` = 0, ... `eEulerZYX` = 5:
/// the axes in the order they are applied) of BVH rotation channels listed
/// `axes` (`R = R_a·R_b·R_c`, so `c` is applied first), completed to three
/// axes when fewer are listed (the missing ones after them, X before Y
/// before Z: a channel that is not there is a zero angle anywhere).
pub(crate) fn fbx_rotation_order(listed: &[Axis]) -> (i32, [Axis; 3]) {
    let mut full: Vec<Axis> = listed.to_vec();
    for a in [Axis::X, Axis::Y, Axis::Z] {
        if !full.contains(&a) {
            full.push(a);
        }
    }
    let full = [full[0], full[1], full[2]];
    // Applied first to last: reversed listing order.
    let applied = [full[2], full[1], full[0]];
    let value = match applied {
        [Axis::X, Axis::Y, Axis::Z] => 0,
        [Axis::X, Axis::Z, Axis::Y] => 1,
        [Axis::Y, Axis::Z, Axis::X] => 2,
        [Axis::Y, Axis::X, Axis::Z] => 3,
        [Axis::Z, Axis::X, Axis::Y] => 4,
        _ => 5,
    };
    (value, full)
}

/// The axes of GlobalSettings for a file whose up axis is `up`: (axis,
/// sign) of up, front and coordinate (right) axes, a right-handed system
/// whose conversion to Y up (up to +Y, front to +Z, coordinate to +X) is
/// Blender's axis conversion from `up` (what `bvh edit --up y` applies).
pub(crate) fn axis_system(up: SignedAxis) -> [(i32, i32); 3] {
    use SignedAxis::*;
    let (front, coord) = match up {
        PosY => (PosZ, PosX),
        PosZ => (NegY, PosX),
        NegZ => (PosY, PosX),
        NegY => (NegZ, PosX),
        PosX => (PosZ, NegY),
        NegX => (PosZ, PosY),
    };
    let enc = |a: SignedAxis| (a.axis().index() as i32, a.sign() as i32);
    [enc(up), enc(front), enc(coord)]
}

/// Gives out unique object ids.
struct Ids(i64);

impl Ids {
    fn next(&mut self) -> i64 {
        self.0 += 1;
        self.0
    }
}

/// The FBX names of the joints: each joint's own name as written, each End
/// Site's display name, a suffix `_2`, `_3`, ... for a name already taken
/// (reported in `renamed`).
fn fbx_names(skeleton: &Skeleton) -> (Vec<String>, Vec<(String, String)>) {
    let display = skeleton.display_names();
    let mut used: HashSet<String> = HashSet::new();
    let mut names = Vec::with_capacity(skeleton.len());
    let mut renamed = Vec::new();
    for (j, d) in skeleton.joints().iter().zip(display) {
        let base = if j.is_end_site() || j.name().is_empty() { d } else { j.name().to_string() };
        let mut name = base.clone();
        let mut k = 2;
        while used.contains(&name) {
            name = format!("{base}_{k}");
            k += 1;
        }
        if name != base {
            renamed.push((base, name.clone()));
        }
        used.insert(name.clone());
        names.push(name);
    }
    (names, renamed)
}

/// The key time of frame `i`, in ticks: the nearest tick to `i * frame_time`.
pub fn frame_ticks(i: usize, frame_time: f64) -> i64 {
    (i as f64 * frame_time * TICKS_PER_SECOND as f64).round() as i64
}

/// Writes the file into `w` (a few MiB at a time); the [`Export`]'s
/// `bytes` are empty.
pub(crate) fn export(
    bvh: &Bvh,
    options: &ExportOptions,
    w: &mut dyn std::io::Write,
) -> Result<Export, Error> {
    let skeleton = bvh.skeleton();
    let motion = bvh.motion();
    let n_frames = motion.n_frames();
    let frame_time = motion.frame_time();
    if n_frames > 1 && !(frame_time.is_finite() && frame_time > 0.0) {
        return Err(Error::FrameTime(frame_time));
    }
    let common = &options.common;
    let (up, detected) = common.up.resolve(bvh);
    let unit = common.scale.resolve(bvh, common.position_channels).map_err(Error::Scale)?;
    let (factor, guess, guessed) = (unit.factor, unit.guess, unit.guessed);
    // Each channel's keys take 12 bytes a frame (an i64 time, an f32
    // value); 7.4's offsets are 32-bit.
    let curve_bytes = n_frames.saturating_mul(skeleton.n_channels()).saturating_mul(12);
    let estimate = curve_bytes.saturating_add(skeleton.len().saturating_mul(4096));
    if estimate > u32::MAX as usize {
        return Err(Error::TooLarge(estimate));
    }
    let (names, renamed) = fbx_names(skeleton);
    for (j, name) in skeleton.joints().iter().zip(&names) {
        if !j.offset().is_finite() {
            return Err(Error::NotFinite { joint: name.clone(), frame: None });
        }
    }
    let keep: Vec<bool> =
        skeleton.joints().iter().map(|j| options.end_sites || !j.is_end_site()).collect();
    let anim_name = common.animation_name();
    // The last key's time; a single frame lasts one frame time (readers
    // skip an animation of zero length).
    let stop = match n_frames {
        0 => 0,
        1 => frame_ticks(
            1,
            if frame_time > 0.0 && frame_time.is_finite() { frame_time } else { 1.0 / 30.0 },
        ),
        n => frame_ticks(n - 1, frame_time),
    };
    let fps = if frame_time > 0.0 && frame_time.is_finite() { 1.0 / frame_time } else { 30.0 };

    let mut ids = Ids(1_000_000_000);
    let mut objects = Node::new("Objects");
    let mut connections = Node::new("Connections");
    let oo = |child: i64, parent: i64| Node::new("C").str("OO").i64(child).i64(parent);
    let op = |child: i64, parent: i64, prop: &str| {
        Node::new("C").str("OP").i64(child).i64(parent).str(prop)
    };

    // Skeleton: one LimbNode model and its attribute per joint.
    let size = guess.size.max(f64::MIN_POSITIVE);
    let mut model_ids = vec![0i64; skeleton.len()];
    let mut rest_world = vec![DVec3::ZERO; skeleton.len()];
    let mut n_models = 0usize;
    for (i, j) in skeleton.joints().iter().enumerate() {
        if !keep[i] {
            continue;
        }
        n_models += 1;
        let attr = ids.next();
        let model = ids.next();
        model_ids[i] = model;
        let parent_id = j.parent().map_or(0, |p| model_ids[p.index()]);
        rest_world[i] = j.parent().map_or(DVec3::ZERO, |p| rest_world[p.index()]) + j.offset();
        let listed: Vec<Axis> = j.rotation_axes().collect();
        let (order, _) = fbx_rotation_order(&listed);
        let mut props = Node::new("Properties70")
            .child(p_int("RotationOrder", "enum", "", order))
            .child(p_int("RotationActive", "bool", "", 1))
            .child(p_int("InheritType", "enum", "", 1))
            .child(p_vec3("ScalingMax", "Vector3D", "Vector", "", [0.0; 3]))
            .child(p_int("DefaultAttributeIndex", "int", "Integer", 0))
            .child(p_vec3("Lcl Translation", "Lcl Translation", "", "A", j.offset().to_array()));
        if !j.channels().is_empty() {
            // The BVH channel list as written, for the import (kept even
            // without frames, and in its order when positions follow rotations).
            let list: Vec<&str> = j.channels().iter().map(|c| c.name()).collect();
            props.push(p("bvhkit_channels", "KString", "", "U").str(&list.join(" ")));
        }
        if j.is_end_site() {
            // Marks the leaf as a BVH End Site for the import.
            props.push(p("bvhkit_end_site", "bool", "", "U").i32(1));
        }
        objects.push(
            Node::new("NodeAttribute")
                .i64(attr)
                .str_bytes(&object_name(&names[i], "NodeAttribute"))
                .str("LimbNode")
                .child(Node::new("Properties70").child(p_f64(
                    "Size",
                    "double",
                    "Number",
                    "",
                    0.05 * size,
                )))
                .child(Node::new("TypeFlags").str("Skeleton")),
        );
        objects.push(
            Node::new("Model")
                .i64(model)
                .str_bytes(&object_name(&names[i], "Model"))
                .str("LimbNode")
                .child(Node::new("Version").i32(232))
                .child(props)
                .child(Node::new("Shading").bool(true))
                .child(Node::new("Culling").str("CullingOff")),
        );
        connections.push(oo(attr, model));
        connections.push(oo(model, parent_id));
    }

    // The mesh: a box along every bone, skinned to the bone's joint.
    let mut mesh_objects = 0usize;
    let mut mesh_model = None;
    if common.mesh {
        let boxes = bone_boxes(skeleton, &keep, &rest_world, size);
        if !boxes.vertices.is_empty() {
            mesh_objects = 1;
            let (geometry, model, skin) = (ids.next(), ids.next(), ids.next());
            mesh_model = Some(model);
            let mesh_name = format!("{anim_name}_bones");
            objects.push(
                Node::new("Geometry")
                    .i64(geometry)
                    .str_bytes(&object_name(&mesh_name, "Geometry"))
                    .str("Mesh")
                    .child(Node::new("Vertices").f64s(&boxes.vertices))
                    .child(Node::new("PolygonVertexIndex").i32s(&boxes.polygons))
                    .child(Node::new("GeometryVersion").i32(124))
                    .child(
                        Node::new("LayerElementNormal")
                            .i32(0)
                            .child(Node::new("Version").i32(101))
                            .child(Node::new("Name").str(""))
                            .child(Node::new("MappingInformationType").str("ByPolygonVertex"))
                            .child(Node::new("ReferenceInformationType").str("Direct"))
                            .child(Node::new("Normals").f64s(&boxes.normals)),
                    )
                    .child(
                        Node::new("Layer").i32(0).child(Node::new("Version").i32(100)).child(
                            Node::new("LayerElement")
                                .child(Node::new("Type").str("LayerElementNormal"))
                                .child(Node::new("TypedIndex").i32(0)),
                        ),
                    ),
            );
            objects.push(
                Node::new("Model")
                    .i64(model)
                    .str_bytes(&object_name(&mesh_name, "Model"))
                    .str("Mesh")
                    .child(Node::new("Version").i32(232))
                    .child(
                        Node::new("Properties70")
                            .child(p_int("InheritType", "enum", "", 1))
                            .child(p_int("DefaultAttributeIndex", "int", "Integer", 0)),
                    )
                    .child(Node::new("Shading").bool(true))
                    .child(Node::new("Culling").str("CullingOff")),
            );
            connections.push(oo(geometry, model));
            connections.push(oo(model, 0));
            objects.push(
                Node::new("Deformer")
                    .i64(skin)
                    .str_bytes(&object_name(&mesh_name, "Deformer"))
                    .str("Skin")
                    .child(Node::new("Version").i32(101))
                    .child(Node::new("Link_DeformAcuracy").f64(50.0)),
            );
            connections.push(oo(skin, geometry));
            for (j, vertices) in boxes.per_joint.iter().enumerate() {
                // Every joint with bones below it gets a cluster, empty when
                // its bones have no length, so that the skin's joints
                // include each tree's root.
                if !keep[j] || skeleton.joints()[j].is_end_site() {
                    continue;
                }
                mesh_objects += 1;
                let cluster = ids.next();
                let t = rest_world[j];
                let link = [
                    1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, t.x, t.y, t.z, 1.0,
                ];
                let inverse = [
                    1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, -t.x, -t.y, -t.z,
                    1.0,
                ];
                objects.push(
                    Node::new("Deformer")
                        .i64(cluster)
                        .str_bytes(&object_name(&names[j], "SubDeformer"))
                        .str("Cluster")
                        .child(Node::new("Version").i32(100))
                        .child(Node::new("UserData").str("").str(""))
                        .child(Node::new("Indexes").i32s(vertices))
                        .child(Node::new("Weights").f64s(&vec![1.0; vertices.len()]))
                        .child(Node::new("Transform").f64s(&inverse))
                        .child(Node::new("TransformLink").f64s(&link)),
                );
                connections.push(oo(cluster, skin));
                connections.push(oo(model_ids[j], cluster));
            }
        }
    }

    // The bind pose: every model's rest world matrix (translations only).
    let pose_id = ids.next();
    let mut pose = Node::new("Pose")
        .i64(pose_id)
        .str_bytes(&object_name(&anim_name, "Pose"))
        .str("BindPose")
        .child(Node::new("Type").str("BindPose"))
        .child(Node::new("Version").i32(100))
        .child(Node::new("NbPoseNodes").i32((n_models + usize::from(mesh_model.is_some())) as i32));
    if let Some(m) = mesh_model {
        let identity =
            [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0];
        pose.push(
            Node::new("PoseNode")
                .child(Node::new("Node").i64(m))
                .child(Node::new("Matrix").f64s(&identity)),
        );
    }
    for i in 0..skeleton.len() {
        if !keep[i] {
            continue;
        }
        let t = rest_world[i];
        let m = [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, t.x, t.y, t.z, 1.0];
        pose.push(
            Node::new("PoseNode")
                .child(Node::new("Node").i64(model_ids[i]))
                .child(Node::new("Matrix").f64s(&m)),
        );
    }
    objects.push(pose);

    // Animation: one stack and layer; a curve node for the translation and
    // the rotation of each animated joint, one curve per channel.
    let mut n_curve_nodes = 0usize;
    let mut n_curves = 0usize;
    let mut has_anim = false;
    // The key times' array property (deferred property 0) and each curve's
    // channel, added base and joint (deferred property `k + 1`).
    let mut times_array = Vec::new();
    let mut curves: Vec<(usize, f64, usize)> = Vec::new();
    if n_frames > 0 {
        has_anim = true;
        let stack = ids.next();
        let layer = ids.next();
        objects.push(
            Node::new("AnimationStack")
                .i64(stack)
                .str_bytes(&object_name(&anim_name, "AnimStack"))
                .str("")
                .child(
                    Node::new("Properties70")
                        .child(p_time("LocalStart", 0))
                        .child(p_time("LocalStop", stop))
                        .child(p_time("ReferenceStart", 0))
                        .child(p_time("ReferenceStop", stop))
                        // The BVH frame time exactly, for the import (ticks round it).
                        .child(p("bvhkit_frame_time", "double", "Number", "U").f64(frame_time)),
                ),
        );
        objects.push(
            Node::new("AnimationLayer")
                .i64(layer)
                .str_bytes(&object_name("BaseLayer", "AnimLayer"))
                .str(""),
        );
        connections.push(oo(layer, stack));
        let times: Vec<i64> = (0..n_frames).map(|i| frame_ticks(i, frame_time)).collect();
        // Every curve has the same key times: encoded once (deflated, as
        // the Autodesk SDK stores large arrays, when that is smaller) and
        // written in every curve.
        let raw: Vec<u8> = times.iter().flat_map(|t| t.to_le_bytes()).collect();
        let deflated = crate::node::deflate_i64s(&times);
        times_array = Vec::with_capacity(13 + raw.len());
        if deflated.len() < raw.len() {
            crate::node::array_head(&mut times_array, b'l', n_frames, 1, deflated.len());
            times_array.extend_from_slice(&deflated);
        } else {
            crate::node::array_head(&mut times_array, b'l', n_frames, 0, raw.len());
            times_array.extend_from_slice(&raw);
        }
        let add = options.common.position_channels == PositionChannels::Add;
        for (i, j) in skeleton.joints().iter().enumerate() {
            if !keep[i] || j.channels().is_empty() {
                continue;
            }
            for rotation in [false, true] {
                let chans: Vec<(usize, Axis)> = j
                    .channels()
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| c.is_rotation() == rotation)
                    .map(|(k, c)| (j.first_channel() + k, c.axis()))
                    .collect();
                if chans.is_empty() {
                    continue;
                }
                let defaults = if rotation { [0.0; 3] } else { j.offset().to_array() };
                let curve_node = ids.next();
                n_curve_nodes += 1;
                let (short, prop) =
                    if rotation { ("R", "Lcl Rotation") } else { ("T", "Lcl Translation") };
                let mut cn_props = Node::new("Properties70");
                for (a, label) in ["d|X", "d|Y", "d|Z"].iter().enumerate() {
                    cn_props.push(p_f64(label, "Number", "", "A", defaults[a]));
                }
                objects.push(
                    Node::new("AnimationCurveNode")
                        .i64(curve_node)
                        .str_bytes(&object_name(short, "AnimCurveNode"))
                        .str("")
                        .child(cn_props),
                );
                connections.push(oo(curve_node, layer));
                connections.push(op(curve_node, model_ids[i], prop));
                for (ch, axis) in chans {
                    let base = if !rotation && add { defaults[axis.index()] } else { 0.0 };
                    // The values are gathered while the file is written
                    // (`curves[k]`, the deferred property `k + 1`).
                    curves.push((ch, base, i));
                    let first = (base + motion.frame(0)[ch]) as f32;
                    let curve = ids.next();
                    n_curves += 1;
                    let flags = if options.constant { CONSTANT } else { LINEAR };
                    objects.push(
                        Node::new("AnimationCurve")
                            .i64(curve)
                            .str_bytes(&object_name("", "AnimCurve"))
                            .str("")
                            .child(Node::new("Default").f64(f64::from(first)))
                            .child(Node::new("KeyVer").i32(4008))
                            .child(Node::new("KeyTime").deferred(0, times_array.len()))
                            .child(
                                Node::new("KeyValueFloat")
                                    .deferred(curves.len(), 13 + 4 * n_frames),
                            )
                            .child(Node::new("KeyAttrFlags").i32s(&[flags]))
                            .child(Node::new("KeyAttrDataFloat").f32s(&[
                                0.0,
                                0.0,
                                f32::from_bits(DEFAULT_WEIGHTS),
                                0.0,
                            ]))
                            .child(Node::new("KeyAttrRefCount").i32s(&[n_frames as i32])),
                    );
                    let label = ["d|X", "d|Y", "d|Z"][axis.index()];
                    connections.push(op(curve, curve_node, label));
                }
            }
        }
    }

    // Header extension, settings, documents, definitions.
    let [(ua, us), (fa, fs), (ca, cs)] = axis_system(up.unwrap_or(SignedAxis::PosY));
    let mut out = Vec::with_capacity(4 << 20);
    header(&mut out);
    let creator = format!("bvhkit-fbx {}", env!("CARGO_PKG_VERSION"));
    Node::new("FBXHeaderExtension")
        .child(Node::new("FBXHeaderVersion").i32(1003))
        .child(Node::new("FBXVersion").i32(crate::node::VERSION as i32))
        .child(Node::new("EncryptionType").i32(0))
        .child(
            Node::new("CreationTimeStamp")
                .child(Node::new("Version").i32(1000))
                .child(Node::new("Year").i32(1970))
                .child(Node::new("Month").i32(1))
                .child(Node::new("Day").i32(1))
                .child(Node::new("Hour").i32(10))
                .child(Node::new("Minute").i32(0))
                .child(Node::new("Second").i32(0))
                .child(Node::new("Millisecond").i32(0)),
        )
        .child(Node::new("Creator").str(&creator))
        .child(
            Node::new("SceneInfo")
                .str_bytes(&object_name("GlobalInfo", "SceneInfo"))
                .str("UserData")
                .child(Node::new("Type").str("UserData"))
                .child(Node::new("Version").i32(100))
                .child(
                    Node::new("MetaData")
                        .child(Node::new("Version").i32(100))
                        .child(Node::new("Title").str(""))
                        .child(Node::new("Subject").str(""))
                        .child(Node::new("Author").str(""))
                        .child(Node::new("Keywords").str(""))
                        .child(Node::new("Revision").str(""))
                        .child(Node::new("Comment").str("")),
                )
                .child(
                    Node::new("Properties70")
                        .child(p_str("Original|ApplicationVendor", "bvhkit"))
                        .child(p_str("Original|ApplicationName", "bvhkit-fbx"))
                        .child(p_str("Original|ApplicationVersion", env!("CARGO_PKG_VERSION"))),
                ),
        )
        .write(&mut out);
    Node::new("FileId").raw(&FILE_ID).write(&mut out);
    Node::new("CreationTime").str(CREATION_TIME).write(&mut out);
    Node::new("Creator").str(&creator).write(&mut out);
    let cm_per_unit = 100.0 * factor;
    Node::new("GlobalSettings")
        .child(Node::new("Version").i32(1000))
        .child(
            Node::new("Properties70")
                .child(p_int("UpAxis", "int", "Integer", ua))
                .child(p_int("UpAxisSign", "int", "Integer", us))
                .child(p_int("FrontAxis", "int", "Integer", fa))
                .child(p_int("FrontAxisSign", "int", "Integer", fs))
                .child(p_int("CoordAxis", "int", "Integer", ca))
                .child(p_int("CoordAxisSign", "int", "Integer", cs))
                .child(p_int("OriginalUpAxis", "int", "Integer", ua))
                .child(p_int("OriginalUpAxisSign", "int", "Integer", us))
                .child(p_f64("UnitScaleFactor", "double", "Number", "", cm_per_unit))
                .child(p_f64("OriginalUnitScaleFactor", "double", "Number", "", cm_per_unit))
                .child(p_vec3("AmbientColor", "ColorRGB", "Color", "", [0.0; 3]))
                .child(p_str("DefaultCamera", "Producer Perspective"))
                .child(p_int("TimeMode", "enum", "", 14))
                .child(p_int("TimeProtocol", "enum", "", 2))
                .child(p_int("SnapOnFrameMode", "enum", "", 0))
                .child(p_time("TimeSpanStart", 0))
                .child(p_time("TimeSpanStop", stop))
                .child(p_f64("CustomFrameRate", "double", "Number", "", fps))
                .child(p("TimeMarker", "Compound", "", ""))
                .child(p_int("CurrentTimeMarker", "int", "Integer", -1)),
        )
        .write(&mut out);
    let doc = ids.next();
    Node::new("Documents")
        .child(Node::new("Count").i32(1))
        .child(
            Node::new("Document")
                .i64(doc)
                .str("")
                .str("Scene")
                .child(
                    Node::new("Properties70").child(p("SourceObject", "object", "", "")).child(
                        p_str("ActiveAnimStackName", if has_anim { &anim_name } else { "" }),
                    ),
                )
                .child(Node::new("RootNode").i64(0)),
        )
        .write(&mut out);
    Node::new("References").write(&mut out);
    let mut defs = Node::new("Definitions").child(Node::new("Version").i32(100));
    let mut types: Vec<(&'static str, usize)> =
        vec![("GlobalSettings", 1), ("Model", n_models), ("NodeAttribute", n_models), ("Pose", 1)];
    if mesh_model.is_some() {
        types[1].1 += 1;
        types.extend([("Geometry", 1), ("Deformer", mesh_objects)]);
    }
    if has_anim {
        types.extend([
            ("AnimationStack", 1),
            ("AnimationLayer", 1),
            ("AnimationCurveNode", n_curve_nodes),
            ("AnimationCurve", n_curves),
        ]);
    }
    let total: usize = types.iter().map(|t| t.1).sum();
    defs.push(Node::new("Count").i32(total as i32));
    for (t, n) in types {
        defs.push(Node::new("ObjectType").str(t).child(Node::new("Count").i32(n as i32)));
    }
    defs.write(&mut out);
    // The curves' values, straight into the file; the first value that is
    // not a finite 32-bit float is the error. The curves come in order;
    // the values of the next `GROUP` curves are gathered in one pass over
    // the frames (a frame's channels sit side by side, so each row is read
    // once a group instead of once a curve).
    const GROUP: usize = 32;
    let mut not_finite: Option<(usize, usize)> = None;
    let mut group_start: Option<usize> = None;
    let mut group: Vec<f32> = Vec::new();
    let mut sink = Sink::new(out, w);
    objects.stream(&mut sink, &mut |key, out| {
        if key == 0 {
            out.extend_from_slice(&times_array);
            return;
        }
        let k = key - 1;
        let start = match group_start {
            Some(s) if (s..s + GROUP).contains(&k) => s,
            _ => {
                let end = (k + GROUP).min(curves.len());
                group.clear();
                group.resize((end - k) * n_frames, 0.0);
                for f in 0..n_frames {
                    let row = motion.frame(f);
                    for (g, &(ch, base, _)) in curves[k..end].iter().enumerate() {
                        group[g * n_frames + f] = (base + row[ch]) as f32;
                    }
                }
                group_start = Some(k);
                k
            }
        };
        let values = &group[(k - start) * n_frames..(k - start + 1) * n_frames];
        crate::node::array_head(out, b'f', n_frames, 0, 4 * n_frames);
        out.reserve(4 * n_frames);
        for (f, y) in values.iter().enumerate() {
            if !y.is_finite() && not_finite.is_none() {
                not_finite = Some((curves[k].2, f));
            }
            out.extend_from_slice(&y.to_le_bytes());
        }
    });
    if let Some((joint, f)) = not_finite {
        return Err(Error::NotFinite { joint: names[joint].clone(), frame: Some(f) });
    }
    connections.stream(&mut sink, &mut |_, _| unreachable!());
    let mut takes =
        Node::new("Takes").child(Node::new("Current").str(if has_anim { &anim_name } else { "" }));
    if has_anim {
        takes.push(
            Node::new("Take")
                .str(&anim_name)
                .child(Node::new("FileName").str(&format!("{anim_name}.tak")))
                .child(Node::new("LocalTime").i64(0).i64(stop))
                .child(Node::new("ReferenceTime").i64(0).i64(stop)),
        );
    }
    takes.stream(&mut sink, &mut |_, _| unreachable!());
    let at = sink.offset() - sink.buf.len();
    footer(&mut sink.buf, at);
    sink.finish().map_err(|e| Error::Write(e.to_string()))?;
    Ok(Export {
        bytes: Vec::new(),
        applied: Applied { factor, guess, guessed, up, detected },
        names,
        renamed,
    })
}

/// The boxes of the mesh: vertices (x, y, z), polygons (FBX's
/// `PolygonVertexIndex`: a polygon's last index as `!index`), normals by
/// polygon vertex, and the vertices of each joint's boxes.
struct Boxes {
    vertices: Vec<f64>,
    polygons: Vec<i32>,
    normals: Vec<f64>,
    per_joint: Vec<Vec<i32>>,
}

/// A box from every kept joint to each of its kept children (bones of no
/// length left out), as wide as a tenth of the bone within 1% and 5% of
/// the figure's size, in the rest pose.
fn bone_boxes(skeleton: &Skeleton, keep: &[bool], rest: &[DVec3], size: f64) -> Boxes {
    let mut b = Boxes {
        vertices: Vec::new(),
        polygons: Vec::new(),
        normals: Vec::new(),
        per_joint: vec![Vec::new(); skeleton.len()],
    };
    for (i, j) in skeleton.joints().iter().enumerate() {
        let Some(p) = j.parent().map(|p| p.index()) else { continue };
        if !keep[i] || !keep[p] {
            continue;
        }
        let (a, c) = (rest[p], rest[i]);
        let d = c - a;
        let len = d.length();
        if !len.is_finite() || len <= 1e-6 * size {
            continue;
        }
        let w = (0.1 * len).clamp(0.01 * size, 0.05 * size);
        let axis = d / len;
        let u = axis.any_orthonormal_vector();
        let v = axis.cross(u);
        let base = (b.vertices.len() / 3) as i32;
        // Corner (s, t, k): s along u, t along v (-1 or 1), k = 0 at the
        // joint, 1 at the child; index k·4 + (s > 0)·2 + (t > 0).
        for k in [0.0, 1.0] {
            for s in [-1.0, 1.0] {
                for t in [-1.0, 1.0] {
                    let q = a + axis * (len * k) + u * (w * s) + v * (w * t);
                    b.vertices.extend_from_slice(&q.to_array());
                }
            }
        }
        let at = |s: i32, t: i32, k: i32| base + k * 4 + i32::from(s > 0) * 2 + i32::from(t > 0);
        // Six faces, counter-clockwise seen from outside.
        let faces: [(DVec3, [i32; 4]); 6] = [
            (u, [at(1, -1, 0), at(1, 1, 0), at(1, 1, 1), at(1, -1, 1)]),
            (-u, [at(-1, -1, 0), at(-1, -1, 1), at(-1, 1, 1), at(-1, 1, 0)]),
            (v, [at(-1, 1, 0), at(-1, 1, 1), at(1, 1, 1), at(1, 1, 0)]),
            (-v, [at(-1, -1, 0), at(1, -1, 0), at(1, -1, 1), at(-1, -1, 1)]),
            (axis, [at(-1, -1, 1), at(1, -1, 1), at(1, 1, 1), at(-1, 1, 1)]),
            (-axis, [at(-1, -1, 0), at(-1, 1, 0), at(1, 1, 0), at(1, -1, 0)]),
        ];
        for (normal, quad) in faces {
            b.polygons.extend_from_slice(&[quad[0], quad[1], quad[2], !quad[3]]);
            for _ in 0..4 {
                b.normals.extend_from_slice(&normal.to_array());
            }
        }
        b.per_joint[p].extend(base..base + 8);
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotation_orders_are_the_reversed_listing() {
        use Axis::*;
        // BVH ZXY (R = Rz·Rx·Ry) applies Y first: FBX eEulerYXZ.
        assert_eq!(fbx_rotation_order(&[Z, X, Y]).0, 3);
        assert_eq!(fbx_rotation_order(&[Z, Y, X]).0, 0);
        assert_eq!(fbx_rotation_order(&[X, Y, Z]).0, 5);
        assert_eq!(fbx_rotation_order(&[Y, X, Z]).0, 4);
        assert_eq!(fbx_rotation_order(&[Y, Z, X]).0, 1);
        assert_eq!(fbx_rotation_order(&[X, Z, Y]).0, 2);
        assert_eq!(fbx_rotation_order(&[Z, X]).1, [Z, X, Y]);
        assert_eq!(fbx_rotation_order(&[]).1, [X, Y, Z]);
    }

    #[test]
    fn axis_systems_are_right_handed() {
        for up in SignedAxis::ALL {
            let v = |(a, s): (i32, i32)| {
                let mut v = DVec3::ZERO;
                v[a as usize] = f64::from(s);
                v
            };
            let [u, f, c] = axis_system(up);
            assert_eq!(v(u).cross(v(f)), v(c), "{up:?}");
            assert_eq!(v(u), up.vector());
        }
    }

    #[test]
    fn key_times_are_rounded_ticks() {
        assert_eq!(frame_ticks(30, 1.0 / 30.0), TICKS_PER_SECOND);
        assert_eq!(frame_ticks(1, 0.008333), (0.008333 * TICKS_PER_SECOND as f64).round() as i64);
    }
}

//! Configuration errors name the key at fault.

use std::path::Path;

use bvhkit_capture::{Config, Mount};

fn data() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data"))
}

fn fixture() -> String {
    std::fs::read_to_string(data().join("two_sensors.toml")).unwrap()
}

fn error(text: &str) -> String {
    Config::parse(text, data()).unwrap_err().to_string()
}

#[test]
fn fixture_config_is_valid() {
    let c = Config::parse(&fixture(), data()).unwrap();
    assert_eq!(c.frame_rate, 100.0);
    assert_eq!(c.bindings.len(), 2);
    assert_eq!(c.bindings[1].sensor, "s-child");
    assert_eq!(c.skeleton.joint(c.bindings[1].joint).name(), "Child");
    assert_eq!(c.bindings[0].mount, Mount::Identity);
    let loaded = Config::load(data().join("two_sensors.toml")).unwrap();
    assert_eq!(loaded.bindings, c.bindings);
}

#[test]
fn bad_configs_name_the_key() {
    let f = fixture();
    let cases = [
        (
            f.replace("joint = \"Child\"", "joint = \"Elbow\""),
            "`bind[1].joint`: unknown joint \"Elbow\"",
        ),
        (
            f.replace("joint = \"Child\"", "joint = \"Parent\""),
            "`bind[1].joint`: joint \"Parent\" is already bound by bind[0]",
        ),
        (
            f.replacen("mount = \"identity\"", "mount = [1, 1, 0, 0]", 1),
            "`bind[0].mount`: the quaternion",
        ),
        (f.replacen("mount = \"identity\"", "mount = [1, 0, 0]", 1), "`bind[0].mount`: expected"),
        (
            f.replacen("mount = \"identity\"", "mount = \"sideways\"", 1),
            "`bind[0].mount`: expected \"identity\", \"calibrate\" or [w, x, y, z], found \"sideways\"",
        ),
        (
            f.replace("sensor_frame = \"y-up\"", "sensor_frame = \"x-up\""),
            "`sensor_frame`: expected",
        ),
        (
            f.replace(
                "sensor_frame = \"y-up\"",
                "sensor_frame = [[1, 0, 0], [0, 1, 0], [0, 0, -1]]",
            ),
            "`sensor_frame`: the matrix is not a rotation",
        ),
        (
            f.replace("frame_rate = 100", "frame_rate = 0"),
            "`frame_rate`: expected a positive number",
        ),
        (
            f.replace("frame_rate = 100", "frame_rate = 1000.5"),
            "`frame_rate`: 1000.5 is above the maximum of 1000",
        ),
        (
            f.replace("frame_rate = 100", "frame_rate = 1e300"),
            "`frame_rate`: 1e300 is above the maximum of 1000",
        ),
        (f.replace("two_joints.bvh", "missing.bvh"), "`skeleton`:"),
        (format!("{f}\ncolour = 3\n"), "unknown field `colour`"),
        (f.replace("frame_rate = 100", ""), "missing field `frame_rate`"),
        (format!("{f}\n[root_position]\nsensor = \"hips\"\nscale = 0\n"), "`root_position.scale`"),
    ];
    for (text, want) in cases {
        let got = error(&text);
        assert!(got.contains(want), "got {got:?}, want {want:?}");
        assert!(!got.contains('\n'), "one line: {got:?}");
    }
    // A syntax error says where, on one line.
    let got = error(&format!("{f}\nbind = [\n"));
    let line = f.lines().count() + 2;
    assert!(got.starts_with(&format!("line {line}, column ")), "{got:?}");
    assert!(!got.contains('\n'), "{got:?}");
    let with_path = Config::load(data().join("nope.toml")).unwrap_err().to_string();
    assert!(with_path.contains("nope.toml"), "{with_path}");
}

#[test]
fn joints_without_three_rotation_axes_cannot_be_bound() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let bvh = std::fs::read_to_string(data().join("two_joints.bvh")).unwrap();
    std::fs::write(
        dir.join("two_joints.bvh"),
        bvh.replacen(
            "CHANNELS 3 Zrotation Xrotation Yrotation\n\t\tEnd",
            "CHANNELS 2 Zrotation Xrotation\n\t\tEnd",
            1,
        )
        .replace("0 0 0 0 0 0", "0 0 0 0 0"),
    )
    .unwrap();
    let err = Config::parse(&fixture(), dir).unwrap_err().to_string();
    assert!(err.contains("`bind[1].joint`: joint \"Child\" has rotation channels \"ZX\""), "{err}");
    // bind_all skips it: it keeps its rest pose.
    let all =
        Config::parse("skeleton = \"two_joints.bvh\"\nframe_rate = 30\nbind_all = true\n", dir)
            .unwrap();
    assert_eq!(all.bindings.len(), 1);
}

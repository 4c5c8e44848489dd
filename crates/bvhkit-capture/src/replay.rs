//! BVH in, sensor samples out: the samples that would have recorded a clip.

use std::io::{self, Write};

use bvhkit::glam::{DAffine3, DQuat};
use bvhkit::{Bvh, Kinematics, PositionChannels};

use crate::config::{Config, Mount};

/// Writes, as CSV with the header `t,sensor,w,x,y,z,px,py,pz`, one sample per
/// binding and frame of `bvh`: the joint's world orientation times its
/// mount, taken into the sensor's axes, and the joint's world position in the
/// sensor's axes and unit. A `calibrate` mount is replayed as `identity`
/// (the recorder then takes frame 0 as the rest pose). A `root_position`
/// sensor bound to no joint gets its own line with the identity orientation.
/// Frame `i` is at `t = i · frame time`.
///
/// Returns the number of samples written.
///
/// # Errors
/// On write errors, and when a sensor id holds a comma or line end.
pub fn replay_csv<W: Write + ?Sized>(bvh: &Bvh, config: &Config, out: &mut W) -> io::Result<u64> {
    let names = config.bindings.iter().map(|b| b.sensor.as_str());
    if let Some(bad) = names
        .chain(config.root_position.iter().map(|r| r.sensor.as_str()))
        .find(|s| s.contains([',', '\n', '\r']))
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("sensor id {bad:?} holds a comma or line end, which a CSV sample cannot carry"),
        ));
    }
    let fk = Kinematics::new(bvh.skeleton(), PositionChannels::Replace);
    let mut world = vec![DAffine3::IDENTITY; fk.len()];
    let root = bvh.skeleton().roots().next();
    let extra_root = config
        .root_position
        .as_ref()
        .filter(|r| !config.bindings.iter().any(|b| b.sensor == r.sensor));
    let mut line = String::with_capacity(256);
    let mut n = 0;
    writeln!(out, "t,sensor,w,x,y,z,px,py,pz")?;
    let frame_time = bvh.motion().frame_time();
    for (i, frame) in bvh.motion().frames().enumerate() {
        fk.world(frame, &mut world);
        let t = i as f64 * frame_time;
        for b in &config.bindings {
            let w = world[b.joint.index()];
            let rot = DQuat::from_mat3(&w.matrix3).normalize();
            let rot = match b.mount {
                Mount::Identity | Mount::Calibrate => rot,
                Mount::Fixed(m) => rot * m,
            };
            let q = config.to_sensor_axes(rot);
            let scale = match &config.root_position {
                Some(r) if r.sensor == b.sensor => r.scale,
                _ => config.position_scale,
            };
            let p = config.sensor_frame.transpose() * w.translation / scale;
            line.clear();
            use std::fmt::Write as _;
            let _ = writeln!(
                line,
                "{t},{},{},{},{},{},{},{},{}",
                b.sensor, q.w, q.x, q.y, q.z, p.x, p.y, p.z
            );
            out.write_all(line.as_bytes())?;
            n += 1;
        }
        if let (Some(r), Some(root)) = (extra_root, root) {
            let p = config.sensor_frame.transpose() * world[root.index()].translation / r.scale;
            writeln!(out, "{t},{},1,0,0,0,{},{},{}", r.sensor, p.x, p.y, p.z)?;
            n += 1;
        }
    }
    Ok(n)
}

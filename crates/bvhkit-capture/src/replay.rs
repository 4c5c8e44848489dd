//! BVH in, sensor samples out: the samples that would have recorded a clip.
//!
//! # Implementation notes
//!
//! `SensorReplay` (one frame's sample lines at a time, for `replay --to`) and
//! `replay_csv`, a clip as the samples that would have recorded it (world
//! rotations from `Kinematics::world`).

use std::fmt::Write as _;
use std::io::{self, Write};

use bvhkit::glam::{DAffine3, DQuat};
use bvhkit::{Bvh, JointId, Kinematics, PositionChannels};

use crate::config::{Config, Mount, RootPosition};

/// The CSV header of replayed samples.
pub const REPLAY_HEADER: &str = "t,sensor,w,x,y,z,px,py,pz\n";

/// A clip as sensor samples, one frame at a time: for each binding the
/// joint's world orientation times its mount, taken into the sensor's axes,
/// and the joint's world position in the sensor's axes and unit, as CSV
/// lines under [`REPLAY_HEADER`]. A `calibrate` mount is replayed as
/// `identity` (the recorder then takes frame 0 as the rest pose). A
/// `root_position` sensor bound to no joint gets its own line with the
/// identity orientation. Frame `i` is at `t = i · frame time`.
///
/// Values are written in Rust's shortest round-trip form, so a reader gets
/// the same bits back.
#[derive(Debug)]
pub struct SensorReplay<'a> {
    bvh: &'a Bvh,
    config: &'a Config,
    fk: Kinematics,
    world: Vec<DAffine3>,
    extra_root: Option<(&'a RootPosition, JointId)>,
}

impl<'a> SensorReplay<'a> {
    /// A replay of `bvh` through `config`'s bindings (its skeleton must have
    /// `bvh`'s layout).
    ///
    /// # Errors
    /// When a sensor id holds a comma or line end, which a CSV line cannot carry.
    pub fn new(bvh: &'a Bvh, config: &'a Config) -> io::Result<SensorReplay<'a>> {
        let names = config.bindings.iter().map(|b| b.sensor.as_str());
        if let Some(bad) = names
            .chain(config.root_position.iter().map(|r| r.sensor.as_str()))
            .find(|s| s.contains([',', '\n', '\r']))
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "sensor id {bad:?} holds a comma or line end, which a CSV sample cannot carry"
                ),
            ));
        }
        let fk = Kinematics::new(bvh.skeleton(), PositionChannels::Replace);
        let world = vec![DAffine3::IDENTITY; fk.len()];
        let root = bvh.skeleton().roots().next();
        let extra_root = config
            .root_position
            .as_ref()
            .filter(|r| !config.bindings.iter().any(|b| b.sensor == r.sensor))
            .zip(root);
        Ok(SensorReplay { bvh, config, fk, world, extra_root })
    }

    /// Frames of the clip.
    pub fn n_frames(&self) -> usize {
        self.bvh.motion().n_frames()
    }

    /// Appends frame `i`'s sample lines (each ending in `\n`) to `out` and
    /// returns how many.
    ///
    /// # Panics
    /// When `i` is not below [`SensorReplay::n_frames`].
    pub fn frame(&mut self, i: usize, out: &mut String) -> usize {
        let config = self.config;
        let frame = self.bvh.motion().frame(i);
        self.fk.world(frame, &mut self.world);
        let t = i as f64 * self.bvh.motion().frame_time();
        let mut n = 0;
        for b in &config.bindings {
            let w = self.world[b.joint.index()];
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
            let _ = writeln!(
                out,
                "{t},{},{},{},{},{},{},{},{}",
                b.sensor, q.w, q.x, q.y, q.z, p.x, p.y, p.z
            );
            n += 1;
        }
        if let Some((r, root)) = self.extra_root {
            let p =
                config.sensor_frame.transpose() * self.world[root.index()].translation / r.scale;
            let _ = writeln!(out, "{t},{},1,0,0,0,{},{},{}", r.sensor, p.x, p.y, p.z);
            n += 1;
        }
        n
    }
}

/// Writes every frame of [`SensorReplay`] as one CSV text, header first.
///
/// Returns the number of samples written.
///
/// # Errors
/// On write errors, and when a sensor id holds a comma or line end.
pub fn replay_csv<W: Write + ?Sized>(bvh: &Bvh, config: &Config, out: &mut W) -> io::Result<u64> {
    let mut replay = SensorReplay::new(bvh, config)?;
    out.write_all(REPLAY_HEADER.as_bytes())?;
    let mut text = String::with_capacity(4096);
    let mut n = 0;
    for i in 0..replay.n_frames() {
        text.clear();
        n += replay.frame(i, &mut text) as u64;
        out.write_all(text.as_bytes())?;
    }
    Ok(n)
}

//! Samples in, BVH frames out.
//!
//! # Implementation notes
//!
//! `Recorder`, samples in, frames out into a caller-owned `Vec<f64>`: frame
//! index from the time stamp, a frame emitted as soon as every sensor has
//! reported in it (else when a later frame's sample arrives), held sensors,
//! counted refusals (`Stats`), world orientation = sensor in BVH axes ·
//! mount⁻¹, local = parent world⁻¹ · world, Euler angles through
//! `bvhkit::rotation::quat_to_euler_near` (never re-derived here).

use std::collections::HashMap;

use bvhkit::glam::{DQuat, DVec3};
use bvhkit::rotation::{euler_to_quat, quat_to_euler, quat_to_euler_near};
use bvhkit::{Channel, JointId};

use crate::config::{Config, Mount, rotate_axes};

/// One sensor reading: an orientation (sensor axes) and optionally a
/// position, at time `t` in seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample<'a> {
    /// Time in seconds (any origin; the first sample's time is frame 0).
    pub t: f64,
    /// The sensor id.
    pub sensor: &'a str,
    /// Orientation `[w, x, y, z]`; need not be normalised.
    pub q: [f64; 4],
    /// Position `[x, y, z]` in the sensor's axes and unit, if the sample has one.
    pub p: Option<[f64; 3]>,
}

/// What happened to the samples so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Frames emitted.
    pub frames: u64,
    /// Samples used.
    pub samples: u64,
    /// Samples refused: zero, NaN or infinite quaternion, or a non-finite
    /// time or position.
    pub malformed: u64,
    /// Samples of sensors no binding names.
    pub unknown_sensor: u64,
    /// Samples whose frame was already emitted.
    pub out_of_order: u64,
    /// Samples more than [`Recorder::MAX_GAP_SECONDS`] (or
    /// [`Recorder::MAX_GAP_FRAMES`]) after the frame being filled (dropped rather than filling the gap with held frames).
    pub too_far: u64,
    /// Sensor-frames in which a bound sensor sent nothing and its last
    /// orientation was held (or the rest pose used, before its first sample).
    pub held: u64,
    /// Pauses cut out: times that jumped more than the largest gap ahead and
    /// stayed there (every bound sensor in a row), after which the recording
    /// went on at the next frame.
    pub resumed: u64,
    /// Gaps not filled with held frames because the frames with no sample
    /// at all would have passed their bound ([`Recorder::MAX_EMPTY_FRAMES`]):
    /// the recording went on at the next frame, as after a pause.
    pub gaps_cut: u64,
}

impl Stats {
    /// Samples not used, of every kind.
    pub fn dropped(&self) -> u64 {
        self.malformed + self.unknown_sensor + self.out_of_order + self.too_far
    }
}

#[derive(Clone, Debug, Default)]
struct Slot {
    orientation: Option<DQuat>,
    position: Option<DVec3>,
    calibration: Option<DQuat>,
    fresh: bool,
}

/// Samples from too far ahead that may be the start of a pause.
#[derive(Clone, Debug)]
struct Pause {
    /// The time of the first, the pause's frame 0.
    t: f64,
    /// The last sample of each sensor in that frame (orientation in BVH
    /// axes, position).
    samples: Vec<Option<(DQuat, Option<DVec3>)>>,
    /// The samples in that frame.
    n: u64,
    /// The samples on the pause's timeline so far, in that frame or later
    /// (those later and before the pause is confirmed are dropped).
    run: u64,
}

#[derive(Clone, Copy, Debug)]
struct Drive {
    slot: usize,
    mount: Mount,
}

/// Turns sensor samples into BVH frames of the configured skeleton.
///
/// A bound joint's world orientation is its sensor's orientation in BVH
/// axes times the inverse of its mount; an unbound joint keeps its rest
/// orientation relative to its parent; each joint's local rotation is its
/// parent's world rotation inverted times its own, written as Euler angles
/// in the joint's channel order, continuous from frame to frame
/// ([`bvhkit::rotation::quat_to_euler_near`]).
///
/// A sample belongs to frame `round((t - t0) · frame_rate)`, `t0` the time
/// of the first accepted sample (not malformed, of a known sensor). A frame
/// is emitted as soon as every sensor has a sample in it, or else when a
/// sample of a later frame arrives (frames in between are emitted with every
/// sensor held), or by [`Recorder::finish`]. A sample for a frame already
/// emitted is counted as out of order.
///
/// # Example
/// ```
/// use bvhkit_capture::{Config, Recorder, Sample};
/// # let tmp = tempfile::tempdir().unwrap();
/// # let dir = tmp.path();
/// # std::fs::write(dir.join("arm.bvh"), "HIERARCHY ROOT A { OFFSET 0 0 0 CHANNELS 3 Zrotation Xrotation Yrotation
/// #   End Site { OFFSET 0 1 0 } } MOTION Frames: 0 Frame Time: 0.1\n").unwrap();
/// let config = Config::parse(r#"
///     skeleton = "arm.bvh"
///     frame_rate = 10
///     [[bind]]
///     sensor = "s1"
///     joint = "A"
/// "#, dir)?;
/// let mut rec = Recorder::new(&config);
/// let mut frames = Vec::new();
/// let h = std::f64::consts::FRAC_1_SQRT_2;
/// // Turned 90 degrees about Z.
/// rec.push(&Sample { t: 0.0, sensor: "s1", q: [h, 0.0, 0.0, h], p: None }, &mut frames);
/// rec.finish(&mut frames);
/// assert!((frames[0] - 90.0).abs() < 1e-9 && frames[1].abs() < 1e-9 && frames[2].abs() < 1e-9);
/// # Ok::<(), bvhkit_capture::ConfigError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Recorder {
    config: Config,
    sensors: HashMap<String, usize>,
    slots: Vec<Slot>,
    drive: Vec<Option<Drive>>,
    root_slot: Option<usize>,
    t0: Option<f64>,
    current: u64,
    dirty: bool,
    /// Sensors with a sample in the frame being filled.
    fresh: usize,
    /// A pause not yet confirmed: samples from too far ahead, waiting for a
    /// sample of a later frame on their own timeline.
    pause: Option<Pause>,
    /// Frames emitted with no sample at all (every sensor held), and with
    /// at least one.
    empty_frames: u64,
    sample_frames: u64,
    previous: Vec<[f64; 3]>,
    started: Vec<bool>,
    world_rot: Vec<DQuat>,
    world_pos: Vec<DVec3>,
    stats: Stats,
    /// The sensor axes as a quaternion (`Config::to_bvh_axes`, computed once).
    axes: DQuat,
}

impl Recorder {
    /// Samples further than this after the frame being filled are dropped
    /// (counted in [`Stats::too_far`]), so a bad timestamp cannot make the
    /// recorder emit an unbounded number of held frames.
    pub const MAX_GAP_SECONDS: f64 = 10.0;

    /// And never more than this many frames ahead, whatever the frame rate.
    pub const MAX_GAP_FRAMES: u64 = 10_000;

    /// Frames with no sample at all (gaps filled with held sensors) may
    /// number at most [`Recorder::EMPTY_PER_SAMPLE_FRAME`] times the frames
    /// with a sample plus this many, over the whole recording; a gap past
    /// that is cut (counted in [`Stats::gaps_cut`]), so the output stays
    /// within 101 frames per sample plus this many however the time stamps
    /// are spread.
    pub const MAX_EMPTY_FRAMES: u64 = 10_000;

    /// See [`Recorder::MAX_EMPTY_FRAMES`]: a sensor sending 10 samples a
    /// second or more never has a gap cut, at any frame rate up to
    /// [`crate::MAX_FRAME_RATE`].
    pub const EMPTY_PER_SAMPLE_FRAME: u64 = 100;

    /// A recorder for `config`.
    pub fn new(config: &Config) -> Recorder {
        let n = config.skeleton.len();
        let mut sensors = HashMap::new();
        let slot_of = |id: &str, sensors: &mut HashMap<String, usize>| {
            let next = sensors.len();
            *sensors.entry(id.to_string()).or_insert(next)
        };
        let mut drive = vec![None; n];
        for b in &config.bindings {
            drive[b.joint.index()] =
                Some(Drive { slot: slot_of(&b.sensor, &mut sensors), mount: b.mount });
        }
        let root_slot = config.root_position.as_ref().map(|r| slot_of(&r.sensor, &mut sensors));
        Recorder {
            config: config.clone(),
            slots: vec![Slot::default(); sensors.len()],
            sensors,
            drive,
            root_slot,
            t0: None,
            current: 0,
            dirty: false,
            fresh: 0,
            pause: None,
            empty_frames: 0,
            sample_frames: 0,
            previous: vec![[0.0; 3]; n],
            started: vec![false; n],
            world_rot: vec![DQuat::IDENTITY; n],
            world_pos: vec![DVec3::ZERO; n],
            stats: Stats::default(),
            axes: DQuat::from_mat3(&config.sensor_frame),
        }
    }

    /// Values per frame (the skeleton's channel count).
    pub fn n_channels(&self) -> usize {
        self.config.skeleton.n_channels()
    }

    /// The counts so far.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Takes one sample; appends every frame it completes to `out`
    /// ([`Recorder::n_channels`] values each) and returns how many.
    pub fn push(&mut self, s: &Sample<'_>, out: &mut Vec<f64>) -> usize {
        let q = DQuat::from_xyzw(s.q[1], s.q[2], s.q[3], s.q[0]);
        let len = q.length();
        let pos_ok = s.p.is_none_or(|p| p.iter().all(|v| v.is_finite()));
        if !s.t.is_finite() || !len.is_finite() || len < 1e-9 || !pos_ok {
            self.stats.malformed += 1;
            return 0;
        }
        let Some(&slot) = self.sensors.get(s.sensor) else {
            self.stats.unknown_sensor += 1;
            return 0;
        };
        // `Config::to_bvh_axes`, with the axes' quaternion made once.
        let q = rotate_axes(self.axes, q / len);
        let p = s.p.map(DVec3::from_array);
        let rate = self.config.frame_rate;
        let max_gap = (Self::MAX_GAP_SECONDS * rate).min(Self::MAX_GAP_FRAMES as f64);
        let mut emitted = 0;
        if let Some(pause) = &mut self.pause {
            // Where this sample falls on the pause's own timeline.
            let kp = ((s.t - pause.t) * rate).round();
            if (0.0..=max_gap + 1.0).contains(&kp) {
                pause.run += 1;
                if kp == 0.0 {
                    // The pause's first frame: the last sample of each sensor wins.
                    pause.n += 1;
                    pause.samples[slot] = Some((q, p));
                    return 0;
                }
                if pause.run < self.slots.len().max(2) as u64 {
                    // A later frame, but fewer samples in a row from that
                    // far ahead than there are sensors (some may be off).
                    self.stats.too_far += 1;
                    return 0;
                }
                // A later frame, after as many samples in a row from that
                // far ahead as there are sensors: the source paused and
                // went on. The pause is cut; its first frame is the next.
                let pause = self.pause.take().expect("matched above");
                self.stats.too_far += pause.n - pause.samples.iter().flatten().count() as u64;
                self.stats.resumed += 1;
                if self.dirty {
                    self.emit(out);
                    emitted += 1;
                }
                self.t0 = Some(pause.t - self.current as f64 / rate);
                for (slot, sample) in pause.samples.into_iter().enumerate() {
                    if let Some((q, p)) = sample {
                        emitted += self.apply(slot, q, p, out);
                    }
                }
            } else if kp < 0.0 {
                // Before the pause: the far samples were bad time stamps if
                // this one goes on from the frame being filled (below).
                let k = ((s.t - self.t0.unwrap_or(s.t)) * rate).round();
                if k >= self.current as f64 && k - self.current as f64 <= max_gap + 1.0 {
                    let pause = self.pause.take().expect("matched above");
                    self.stats.too_far += pause.n;
                }
            }
        }
        let t0 = *self.t0.get_or_insert(s.t);
        let k = ((s.t - t0) * rate).round();
        if k < self.current as f64 {
            self.stats.out_of_order += 1;
            return emitted;
        }
        if k - self.current as f64 > max_gap + 1.0 {
            // Kept aside for now: one bad time stamp is dropped, but when
            // as many samples in a row as there are bound sensors come
            // from that far ahead on one timeline, reaching a later frame,
            // the source paused (a device put down, a network stall) and
            // the pause is cut (above). A later far sample off this one's
            // timeline starts a new pause; the old one's samples were bad.
            if let Some(old) = self.pause.take() {
                self.stats.too_far += old.n;
            }
            let mut samples = vec![None; self.slots.len()];
            samples[slot] = Some((q, p));
            self.pause = Some(Pause { t: s.t, samples, n: 1, run: 1 });
            return emitted;
        }
        let mut k = k as u64;
        let busy = u64::from(self.dirty);
        let empty = k.saturating_sub(self.current + busy);
        let budget = Self::EMPTY_PER_SAMPLE_FRAME * self.sample_frames + Self::MAX_EMPTY_FRAMES;
        if empty > 0 && self.empty_frames + empty > budget {
            // Held frames over gaps are bounded in total too: this gap is
            // cut, and the recording goes on at the next frame.
            self.stats.gaps_cut += 1;
            k = self.current + busy;
            self.t0 = Some(s.t - k as f64 / rate);
        }
        while self.current < k {
            self.emit(out);
            emitted += 1;
        }
        emitted + self.apply(slot, q, p, out)
    }

    /// Puts a sample (orientation in BVH axes, position) of sensor `slot`
    /// in the frame being filled; emits the frame when every sensor has
    /// reported. Returns the frames emitted (0 or 1).
    fn apply(&mut self, slot: usize, q: DQuat, p: Option<DVec3>, out: &mut Vec<f64>) -> usize {
        let slot = &mut self.slots[slot];
        slot.calibration.get_or_insert(q);
        slot.orientation = Some(q);
        if let Some(p) = p {
            slot.position = Some(p);
        }
        if !slot.fresh {
            slot.fresh = true;
            self.fresh += 1;
        }
        self.dirty = true;
        self.stats.samples += 1;
        if self.fresh == self.slots.len() {
            // Every sensor has reported: the frame is complete now, not when
            // the next frame's first sample arrives (one frame of latency less).
            self.emit(out);
            1
        } else {
            0
        }
    }

    /// Emits the frame being filled, if any sample reached it; call at the
    /// end of the recording. Returns the number of frames appended (0 or 1).
    /// Samples of a pause not confirmed by then are dropped as too far.
    pub fn finish(&mut self, out: &mut Vec<f64>) -> usize {
        if let Some(pause) = self.pause.take() {
            self.stats.too_far += pause.n;
        }
        if self.dirty {
            self.emit(out);
            1
        } else {
            0
        }
    }

    fn emit(&mut self, out: &mut Vec<f64>) {
        let skel = &self.config.skeleton;
        let start = out.len();
        out.resize(start + skel.n_channels(), 0.0);
        let frame = &mut out[start..];
        for slot in &mut self.slots {
            if !slot.fresh {
                self.stats.held += 1;
            }
        }
        for id in skel.ids() {
            let i = id.index();
            let j = skel.joint(id);
            let (parent_rot, parent_pos) = match j.parent() {
                Some(p) => (self.world_rot[p.index()], self.world_pos[p.index()]),
                None => (DQuat::IDENTITY, DVec3::ZERO),
            };
            let drive = self.drive[i];
            // Target world orientation.
            let target = drive.and_then(|d| {
                let slot = &self.slots[d.slot];
                let q = slot.orientation?;
                Some(match d.mount {
                    Mount::Identity => q,
                    Mount::Calibrate => q * slot.calibration.unwrap_or(DQuat::IDENTITY).conjugate(),
                    Mount::Fixed(m) => q * m.conjugate(),
                })
            });
            let channels = j.channels();
            let first = j.first_channel();
            let mut local = DQuat::IDENTITY;
            if let (Some(target), Some(order)) = (target, j.rotation_order()) {
                let wanted = (parent_rot.conjugate() * target).normalize();
                let angles = if self.started[i] {
                    quat_to_euler_near(wanted, order, self.previous[i])
                } else {
                    quat_to_euler(wanted, order)
                };
                self.started[i] = true;
                self.previous[i] = angles;
                let mut n = 0;
                for (k, c) in channels.iter().enumerate() {
                    if c.is_rotation() {
                        frame[first + k] = angles[n];
                        n += 1;
                    }
                }
                local = euler_to_quat(&order.axes(), &angles);
            }
            // Position channels (`PositionChannels::Replace`): the rest value is
            // the offset; a sensor position gives the local translation.
            let world_target = self.position_of(id);
            let mut t = j.offset();
            let t_wanted = world_target.map(|p| parent_rot.conjugate() * (p - parent_pos));
            for (k, c) in channels.iter().enumerate() {
                let a = match c {
                    Channel::Xposition => 0,
                    Channel::Yposition => 1,
                    Channel::Zposition => 2,
                    _ => continue,
                };
                if let Some(w) = t_wanted {
                    t[a] = w[a];
                }
                frame[first + k] = t[a];
            }
            self.world_rot[i] = (parent_rot * local).normalize();
            self.world_pos[i] = parent_pos + parent_rot * t;
        }
        for slot in &mut self.slots {
            slot.fresh = false;
        }
        if self.fresh == 0 {
            self.empty_frames += 1;
        } else {
            self.sample_frames += 1;
        }
        self.fresh = 0;
        self.current += 1;
        self.dirty = false;
        self.stats.frames += 1;
    }

    /// The world position a joint's sensors ask for, in BVH axes and unit.
    fn position_of(&self, id: JointId) -> Option<DVec3> {
        let skel = &self.config.skeleton;
        if !skel.joint(id).channels().iter().any(|c| c.is_position()) {
            return None;
        }
        if skel.joint(id).parent().is_none()
            && let (Some(slot), Some(r)) = (self.root_slot, &self.config.root_position)
        {
            return self.slots[slot].position.map(|p| self.config.position_to_bvh(p, r.scale));
        }
        let d = self.drive[id.index()]?;
        self.slots[d.slot]
            .position
            .map(|p| self.config.position_to_bvh(p, self.config.position_scale))
    }
}

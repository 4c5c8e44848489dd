//! Sensors to joints: record BVH from orientation sensors (a data glove, an
//! IMU suit) and replay BVH as the sensor samples that would have produced it.
//!
//! A [`Config`] (TOML, see `docs/capture.md`) names a skeleton and binds
//! sensors to its joints; a [`Recorder`] turns [`Sample`]s into BVH frames in
//! a caller-owned buffer; [`LineReader`] reads samples from CSV or JSON lines;
//! [`replay_csv`] and [`SensorReplay`] go the other way. [`NeuronReader`]
//! and [`write_neuron_frame`] read and write the Axis Neuron-style stream of
//! ready-made channel values. Rotation conventions are the core's
//! ([`bvhkit::rotation`]): nothing here re-derives them.
#![deny(missing_docs)]
#![deny(unsafe_code)]

mod config;
mod error;
mod neuron;
mod recorder;
mod replay;
mod samples;

pub use config::{Binding, Config, ConfigError, MAX_FRAME_RATE, Mount, RootPosition, Z_UP};
pub use error::InputError;
pub use neuron::{FrameError, MAX_TOKEN, NeuronReader, write_neuron_frame};
pub use recorder::{Recorder, Sample, Stats};
pub use replay::{REPLAY_HEADER, SensorReplay, replay_csv};
pub use samples::{LineError, LineReader, Reading};

//! `bvh record` (sensor samples to BVH, written as frames arrive) and
//! `bvh replay --as sensors` (BVH to the samples that would have recorded it).

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use bvhkit::{Bvh, Motion, WriteOptions};
use bvhkit_capture::{Config, LineReader, Reading, Recorder, Stats, replay_csv};
use clap::ValueEnum;

use crate::io::{self, Input};
use crate::text::escape;

pub(crate) const RECORD_ABOUT: &str = "\
Record BVH from orientation sensors (a data glove, an IMU suit).

The configuration (TOML, see docs/capture.md) names the skeleton and binds \
sensors to joints. Samples are CSV with the header t,sensor,w,x,y,z \
(optionally px,py,pz) or JSON lines with the same keys, from a file or \
standard input (`-`).

Frames are written as they complete, so an interrupted recording keeps \
every frame but the one being filled; its `Frames:` count is patched when \
the recording ends (after a crash it reads 0 and `bvh fmt` repairs it). At \
the end the command prints the frames written and the samples dropped \
(malformed, unknown sensor, out of order, too far ahead) and held.";

pub(crate) const REPLAY_ABOUT: &str = "\
Turn a BVH clip into the sensor samples that would have recorded it (CSV \
t,sensor,w,x,y,z,px,py,pz): each bound joint's world orientation with its \
mount applied, in the sensor's axes, and its world position. Without \
--config every joint is a sensor named after it, with identity mounts and \
Y-up axes; `bvh record` with `bind_all = true` then gives the clip back.";

/// Arguments of `bvh record`.
#[derive(Debug, clap::Args)]
pub(crate) struct RecordArgs {
    /// The configuration file (TOML).
    #[arg(long, value_name = "CFG")]
    config: PathBuf,
    /// The samples: a file, or `-` for standard input.
    #[arg(long, value_name = "SOURCE")]
    input: PathBuf,
    /// The BVH file to write (a regular file: its frame count is patched at the end).
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,
}

/// What `replay` turns a clip into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum ReplayAs {
    /// Sensor samples (CSV).
    Sensors,
}

/// Arguments of `bvh replay`.
#[derive(Debug, clap::Args)]
pub(crate) struct ReplayArgs {
    /// The BVH clip.
    #[arg(value_name = "IN")]
    input: PathBuf,
    /// What to produce.
    #[arg(long = "as", value_name = "KIND")]
    kind: ReplayAs,
    /// A recorder configuration whose bindings, mounts and sensor axes to use.
    #[arg(long, value_name = "CFG")]
    config: Option<PathBuf>,
    /// The CSV file to write (`-` for standard output).
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,
}

/// Longest sample line; longer ones are skipped as malformed.
const MAX_LINE: usize = 64 * 1024;
/// Width the `Frames:` count is padded to, so it can be patched in place.
const COUNT_WIDTH: usize = 20;
/// Line errors printed in full; the rest are only counted.
const SHOWN_ERRORS: u64 = 10;

/// The output BVH: header written at once, frames appended and flushed as
/// they complete, the count patched at the end.
struct Take {
    file: File,
    count_at: u64,
    buf: Vec<u8>,
}

impl Take {
    fn create(path: &Path, config: &Config) -> Result<Take> {
        let frame_time = 1.0 / config.frame_rate;
        let motion = Motion::new(frame_time, config.skeleton.n_channels(), Vec::new())?;
        let bvh = Bvh::new(config.skeleton.clone(), motion)?;
        let mut header = Vec::new();
        WriteOptions::new().write_hierarchy(&bvh, &mut header)?;
        let at = find_last(&header, b"\nFrames: 0\n")
            .context("internal: no frame count in the header")?
            + 1;
        let count_at = (at + b"Frames: ".len()) as u64;
        header.splice(
            count_at as usize..count_at as usize + 1,
            format!("{:<COUNT_WIDTH$}", 0).into_bytes(),
        );
        let mut file =
            File::create(path).with_context(|| format!("{}: cannot create", path.display()))?;
        file.write_all(&header)?;
        Ok(Take { file, count_at, buf: Vec::with_capacity(4096) })
    }

    fn frames(&mut self, values: &[f64], n_channels: usize) -> Result<()> {
        if values.is_empty() {
            return Ok(());
        }
        self.buf.clear();
        for frame in values.chunks(n_channels) {
            for (i, &v) in frame.iter().enumerate() {
                if i > 0 {
                    self.buf.push(b' ');
                }
                let mut b = ryu::Buffer::new();
                let s = b.format(v);
                self.buf.extend_from_slice(s.strip_suffix(".0").unwrap_or(s).as_bytes());
            }
            self.buf.push(b'\n');
        }
        self.file.write_all(&self.buf)?;
        Ok(())
    }

    fn finish(mut self, frames: u64) -> Result<()> {
        self.file.seek(SeekFrom::Start(self.count_at))?;
        self.file.write_all(format!("{frames:<COUNT_WIDTH$}").as_bytes())?;
        self.file.sync_all()?;
        Ok(())
    }
}

fn find_last(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).rposition(|w| w == needle)
}

/// Runs `bvh record`.
pub(crate) fn run_record(a: RecordArgs) -> Result<ExitCode> {
    let config = Config::load(&a.config)?;
    if a.output.as_os_str() == "-" {
        bail!("record writes a regular file whose frame count it patches at the end; give -o FILE");
    }
    let mut inputs = vec![Input::File(a.config.clone()), Input::File(config.skeleton_path.clone())];
    if a.input.as_os_str() != "-" {
        inputs.push(Input::File(a.input.clone()));
    }
    io::refuse_overwriting_input(&a.output, &inputs)?;
    let source = a.input.display().to_string();
    let reader: Box<dyn Read> = if a.input.as_os_str() == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(File::open(&a.input).with_context(|| format!("{source}: cannot open"))?)
    };
    let mut reader = BufReader::with_capacity(1 << 16, reader);

    let mut take = Take::create(&a.output, &config)?;
    let mut rec = Recorder::new(&config);
    let n_channels = rec.n_channels();
    let mut lines = LineReader::new();
    let mut reading = Reading::default();
    let mut frames = Vec::new();
    let mut line = Vec::with_capacity(256);
    let mut bad_lines = 0u64;
    let mut line_no = 0u64;
    let stderr = &mut std::io::stderr().lock();
    loop {
        line.clear();
        let n = (&mut reader).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut line)?;
        if n == 0 {
            break;
        }
        line_no += 1;
        if line.last() != Some(&b'\n') && line.len() > MAX_LINE {
            // Skip the rest of an overlong line without holding it.
            let mut sink = Vec::new();
            loop {
                sink.clear();
                let m = (&mut reader).take(MAX_LINE as u64).read_until(b'\n', &mut sink)?;
                if m == 0 || sink.last() == Some(&b'\n') {
                    break;
                }
            }
            bad_lines += 1;
            // Keep the reader's line numbers in step.
            let _ = lines.read("", &mut reading);
            if bad_lines <= SHOWN_ERRORS {
                writeln!(
                    stderr,
                    "bvh: warning: {}:{line_no}:1: line longer than {MAX_LINE} bytes skipped",
                    escape(&source)
                )?;
            }
            continue;
        }
        let text = match std::str::from_utf8(line.strip_suffix(b"\n").unwrap_or(&line)) {
            Ok(t) => t,
            Err(e) => {
                let _ = lines.read("", &mut reading);
                bad_lines += 1;
                if bad_lines <= SHOWN_ERRORS {
                    writeln!(
                        stderr,
                        "bvh: warning: {}:{line_no}:{}: invalid UTF-8",
                        escape(&source),
                        e.valid_up_to() + 1
                    )?;
                }
                continue;
            }
        };
        match lines.read(text, &mut reading) {
            Ok(true) => {
                frames.clear();
                if rec.push(&reading.sample(), &mut frames) > 0 {
                    take.frames(&frames, n_channels)?;
                }
            }
            Ok(false) => {}
            Err(e) if e.fatal => {
                drop(take);
                let _ = std::fs::remove_file(&a.output);
                bail!("{}:{}", source, e);
            }
            Err(e) => {
                bad_lines += 1;
                if bad_lines <= SHOWN_ERRORS {
                    writeln!(stderr, "bvh: warning: {}", escape(&format!("{source}:{e}")))?;
                }
            }
        }
    }
    frames.clear();
    rec.finish(&mut frames);
    take.frames(&frames, n_channels)?;
    let s = rec.stats();
    take.finish(s.frames)?;
    writeln!(stderr, "{}", summary(&a.output, &s, bad_lines))?;
    Ok(ExitCode::SUCCESS)
}

fn summary(out: &Path, s: &Stats, bad_lines: u64) -> String {
    let malformed = s.malformed + bad_lines;
    format!(
        "{}: {} frames; {} samples used, {} dropped (malformed {}, unknown sensor {}, out of order {}, too far ahead {}); {} sensor-frames held",
        escape(&out.display().to_string()),
        s.frames,
        s.samples,
        s.dropped() + bad_lines,
        malformed,
        s.unknown_sensor,
        s.out_of_order,
        s.too_far,
        s.held
    )
}

/// Runs `bvh replay`.
pub(crate) fn run_replay(a: ReplayArgs) -> Result<ExitCode> {
    let ReplayAs::Sensors = a.kind;
    let bvh = Bvh::from_path(&a.input)?;
    let config = match &a.config {
        Some(c) => {
            let config = Config::load(c)?;
            if config.skeleton.n_channels() != bvh.skeleton().n_channels()
                || config.skeleton.len() != bvh.skeleton().len()
            {
                bail!(
                    "{}: the skeleton of {} ({} joints, {} channels) is not that of {} ({} joints, {} channels)",
                    c.display(),
                    config.skeleton_path.display(),
                    config.skeleton.len(),
                    config.skeleton.n_channels(),
                    a.input.display(),
                    bvh.skeleton().len(),
                    bvh.skeleton().n_channels()
                );
            }
            config
        }
        None => Config::bind_all(bvh.skeleton().clone(), a.input.clone(), bvh.motion().fps()),
    };
    let mut inputs = vec![Input::File(a.input.clone())];
    if let Some(c) = &a.config {
        inputs.push(Input::File(c.clone()));
    }
    io::refuse_overwriting_input(&a.output, &inputs)?;
    io::write_atomic(&a.output, |w| {
        replay_csv(&bvh, &config, w)?;
        Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

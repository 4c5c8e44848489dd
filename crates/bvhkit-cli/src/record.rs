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
(optionally px,py,pz) or JSON lines with the same keys, from a file, \
standard input (`-`) or UDP datagrams of whole lines \
(`udp://127.0.0.1:PORT`; an empty datagram or --idle seconds of silence \
end the recording). With --live the frames are also shown in the browser \
player as they are recorded.

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
    /// The samples: a file, `-` for standard input, or `udp://127.0.0.1:PORT` (datagrams of whole lines).
    #[arg(long, value_name = "SOURCE")]
    input: PathBuf,
    /// With UDP input: end the recording after this many seconds without a datagram (an empty datagram ends it at once).
    #[arg(long, value_name = "SECS", default_value_t = 10.0, value_parser = parse_idle)]
    idle: f64,
    /// The BVH file to write (a regular file: its frame count is patched at the end).
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,
    /// Also show the frames live in a browser, served on loopback at this port (default 8124; 0 picks a free one).
    #[arg(long, value_name = "PORT", num_args = 0..=1, default_missing_value = "8124")]
    live: Option<u16>,
}

/// The live view: a loopback server whose feed gets every frame's world positions.
struct Live {
    feed: bvhkit_serve::LiveFeed,
    handle: bvhkit_serve::ShutdownHandle,
    thread: std::thread::JoinHandle<std::io::Result<()>>,
    fk: bvhkit::Kinematics,
    scratch: bvhkit::FkScratch,
    positions: Vec<bvhkit::glam::DVec3>,
}

impl Live {
    fn start(config: &Config, port: u16) -> Result<Live> {
        let mode = bvhkit::PositionChannels::Replace;
        let rest = Bvh::new(
            config.skeleton.clone(),
            Motion::new(1.0 / config.frame_rate, config.skeleton.n_channels(), Vec::new())?,
        )?;
        let clip = bvhkit_render::Clip::from_bvh(&rest, "live", mode);
        let server = bvhkit_serve::Server::bind(("127.0.0.1", port), &[])
            .with_context(|| format!("cannot serve the live view on port {port}"))?;
        let feed = server.live_feed();
        feed.set_skeleton(&clip);
        eprintln!("bvh: live view at {}?live=1", server.url()?);
        let handle = server.shutdown_handle();
        let thread = std::thread::spawn(move || server.run());
        let fk = bvhkit::Kinematics::new(&config.skeleton, mode);
        let scratch = fk.scratch();
        let positions = vec![bvhkit::glam::DVec3::ZERO; fk.len()];
        Ok(Live { feed, handle, thread, fk, scratch, positions })
    }

    fn push(&mut self, time: f64, frame: &[f64]) {
        self.fk.positions_with(frame, &mut self.scratch, &mut self.positions);
        // A page that is not there is no error: the feed keeps the latest frame.
        let _ = self.feed.push(time, &self.positions);
    }

    fn finish(self) -> Result<()> {
        self.feed.finish();
        // Give connected pages a moment to receive the end event.
        std::thread::sleep(std::time::Duration::from_millis(200));
        self.handle.shutdown();
        self.thread
            .join()
            .map_err(|_| anyhow::anyhow!("the live view's server thread panicked"))??;
        Ok(())
    }
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

fn parse_idle(s: &str) -> std::result::Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 86400.0 => Ok(v),
        _ => Err(format!("expected seconds between 0 and 86400, found {s:?}")),
    }
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

/// The state of one recording: parser, recorder, output and counts.
struct Session {
    source: String,
    lines: LineReader,
    reading: Reading,
    rec: Recorder,
    frames: Vec<f64>,
    take: Take,
    bad_lines: u64,
    line_no: u64,
    /// A bad CSV header ended the recording before any frame.
    bad_header: bool,
    live: Option<Live>,
}

impl Session {
    fn warn(&mut self, at: String, message: &str) -> Result<()> {
        self.bad_lines += 1;
        if self.bad_lines <= SHOWN_ERRORS {
            eprintln!("bvh: warning: {}", escape(&format!("{}:{at}: {message}", self.source)));
        }
        Ok(())
    }

    /// One input line, without its line end.
    fn line(&mut self, bytes: &[u8]) -> Result<()> {
        self.line_no += 1;
        let text = match std::str::from_utf8(bytes) {
            Ok(t) => t,
            Err(e) => {
                let _ = self.lines.read("", &mut self.reading); // keep line numbers in step
                return self
                    .warn(format!("{}:{}", self.line_no, e.valid_up_to() + 1), "invalid UTF-8");
            }
        };
        match self.lines.read(text, &mut self.reading) {
            Ok(true) => {
                self.frames.clear();
                if self.rec.push(&self.reading.sample(), &mut self.frames) > 0 {
                    self.take.frames(&self.frames, self.rec.n_channels())?;
                    self.show();
                }
                Ok(())
            }
            Ok(false) => Ok(()),
            Err(e) if e.fatal => {
                self.bad_header = true;
                bail!("{}:{}", self.source, e)
            }
            Err(e) => self.warn(format!("{}:{}", e.line, e.column), &e.message),
        }
    }

    /// A line longer than [`MAX_LINE`], skipped.
    fn overlong(&mut self) -> Result<()> {
        self.line_no += 1;
        let _ = self.lines.read("", &mut self.reading);
        self.warn(
            format!("{}:1", self.line_no),
            &format!("line longer than {MAX_LINE} bytes skipped"),
        )
    }

    /// Sends the frames just written to the live view, if any.
    fn show(&mut self) {
        let Some(live) = &mut self.live else { return };
        let n = self.rec.n_channels().max(1);
        let count = (self.frames.len() / n) as u64;
        let first = self.rec.stats().frames - count;
        for (k, frame) in self.frames.chunks(n).enumerate() {
            live.push((first + k as u64) as f64 / self.rec.config().frame_rate, frame);
        }
    }

    fn finish(mut self, output: &Path) -> Result<()> {
        self.frames.clear();
        self.rec.finish(&mut self.frames);
        self.take.frames(&self.frames, self.rec.n_channels())?;
        self.show();
        let s = self.rec.stats();
        self.take.finish(s.frames)?;
        if let Some(live) = self.live.take() {
            live.finish()?;
        }
        eprintln!("{}", summary(output, &s, self.bad_lines));
        Ok(())
    }
}

/// Runs `bvh record`.
pub(crate) fn run_record(a: RecordArgs) -> Result<ExitCode> {
    let config = Config::load(&a.config)?;
    if a.output.as_os_str() == "-" {
        bail!("record writes a regular file whose frame count it patches at the end; give -o FILE");
    }
    let input = a.input.to_string_lossy().into_owned();
    let udp = input.strip_prefix("udp://").map(str::to_string);
    let mut inputs = vec![Input::File(a.config.clone()), Input::File(config.skeleton_path.clone())];
    if input != "-" && udp.is_none() {
        inputs.push(Input::File(a.input.clone()));
    }
    io::refuse_overwriting_input(&a.output, &inputs)?;
    let source = if udp.is_some() { input.clone() } else { a.input.display().to_string() };
    let reader: Box<dyn Read> = if udp.is_some() {
        Box::new(std::io::empty())
    } else if input == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(File::open(&a.input).with_context(|| format!("{source}: cannot open"))?)
    };
    let socket = match &udp {
        Some(addr) => {
            let s = std::net::UdpSocket::bind(addr.as_str())
                .with_context(|| format!("{source}: cannot listen"))?;
            s.set_read_timeout(Some(std::time::Duration::from_secs_f64(a.idle)))?;
            eprintln!("bvh: listening on udp://{}", s.local_addr()?);
            Some(s)
        }
        None => None,
    };
    let live = a.live.map(|port| Live::start(&config, port)).transpose()?;
    let take = Take::create(&a.output, &config)?;
    let mut session = Session {
        source,
        lines: LineReader::new(),
        reading: Reading::default(),
        rec: Recorder::new(&config),
        frames: Vec::new(),
        take,
        bad_lines: 0,
        line_no: 0,
        bad_header: false,
        live,
    };
    let result = match socket {
        Some(s) => read_udp(&s, &mut session),
        None => read_lines(BufReader::with_capacity(1 << 16, reader), &mut session),
    };
    if let Err(e) = result {
        let remove = session.bad_header && session.rec.stats().frames == 0;
        drop(session);
        if remove {
            let _ = std::fs::remove_file(&a.output);
        }
        return Err(e);
    }
    session.finish(&a.output)?;
    Ok(ExitCode::SUCCESS)
}

fn read_lines(mut reader: impl BufRead, session: &mut Session) -> Result<()> {
    let mut line = Vec::with_capacity(256);
    loop {
        line.clear();
        let n = (&mut reader).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(());
        }
        if line.last() != Some(&b'\n') && line.len() > MAX_LINE {
            // Skip the rest of an overlong line without holding it.
            loop {
                line.clear();
                let m = (&mut reader).take(MAX_LINE as u64).read_until(b'\n', &mut line)?;
                if m == 0 || line.last() == Some(&b'\n') {
                    break;
                }
            }
            session.overlong()?;
            continue;
        }
        session.line(line.strip_suffix(b"\n").unwrap_or(&line))?;
    }
}

/// Datagrams of one or more whole lines, until an empty datagram or
/// `--idle` seconds without one.
fn read_udp(socket: &std::net::UdpSocket, session: &mut Session) -> Result<()> {
    let mut buf = vec![0u8; 65536];
    loop {
        let n = match socket.recv(&mut buf) {
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Ok(());
            }
            Err(e) => return Err(e.into()),
        };
        if n == 0 {
            return Ok(());
        }
        let data = &buf[..n];
        let data = data.strip_suffix(b"\n").unwrap_or(data);
        for line in data.split(|&b| b == b'\n') {
            session.line(line)?;
        }
    }
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

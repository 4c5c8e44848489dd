//! `bvh record` (sensor samples or an Axis Neuron-style stream to BVH,
//! written as frames arrive) and `bvh replay` (BVH to the samples that would
//! have recorded it, or to that stream; to a file, UDP or TCP).
//!
//! # Implementation notes
//!
//! `record` (reads sample lines bounded to 64 KiB from a file, standard input,
//! UDP datagrams or one TCP client, or the Axis Neuron-style stream from a TCP
//! server (`neuron+tcp://`, through `NeuronReader`), writes each completed
//! frame at once and patches the padded `Frames:` count at the end: the one
//! output that is progressive, not atomic; the session sits behind a mutex
//! shared with a `signal-hook` thread that, on SIGINT/SIGTERM, takes it,
//! finishes it as at the end of the input and exits 0; `--latency` keeps a
//! bounded histogram of read-to-written delays; `--live` pushes each frame's
//! world positions to a loopback `bvhkit_serve::LiveFeed`) and `replay` (`--as
//! sensors` through `SensorReplay`, `--as neuron` through `write_neuron_frame`;
//! to a file, UDP datagrams of whole frames or TCP, `--realtime` paced on
//! absolute due times), thin over `bvhkit-capture`.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use bvhkit::{Bvh, Motion, Skeleton, WriteOptions};
use bvhkit_capture::{
    Config, LineReader, NeuronReader, REPLAY_HEADER, Reading, Recorder, SensorReplay, Stats,
    replay_csv, write_neuron_frame,
};
use clap::ValueEnum;

use crate::io::{self, Input};
use crate::text::escape;

pub(crate) const RECORD_ABOUT: &str = "\
Record BVH from orientation sensors (a data glove, an IMU suit), or record \
the BVH data stream of Axis Neuron-style software as it is.

The configuration (TOML, see docs/capture.md) names the skeleton and binds \
sensors to joints. Samples are CSV with the header t,sensor,w,x,y,z \
(optionally px,py,pz) or JSON lines with the same keys, from a file, \
standard input (`-`), UDP datagrams of whole lines \
(`udp://127.0.0.1:PORT`; an empty datagram or --idle seconds of silence \
end the recording) or one TCP client (`tcp://127.0.0.1:PORT`: record \
listens and accepts one connection; its end ends the recording). \
`neuron+tcp://HOST:PORT` connects to an Axis Neuron-style server and \
records its frames of channel values (`[INDEX [AVATAR]] v1 .. vN ||`) as \
they are, with --skeleton X.bvh (its Frame Time is the recording's) or \
--config. With --live the frames are also shown in the browser player as \
they are recorded.

Frames are written as they complete, so an interrupted recording keeps \
every frame but the one being filled. Ctrl-C (SIGINT) or SIGTERM stops \
the recording as the end of the input does: the frame being filled is \
written, the `Frames:` count patched, the summary printed, exit 0. After \
`kill -9` the count reads 0 and `bvh fmt` repairs it. At the end the \
command prints the frames written and the samples dropped (malformed, \
unknown sensor, out of order, too far ahead) and held.";

pub(crate) const REPLAY_ABOUT: &str = "\
Turn a BVH clip into the sensor samples that would have recorded it (CSV \
t,sensor,w,x,y,z,px,py,pz): each bound joint's world orientation with its \
mount applied, in the sensor's axes, and its world position. Without \
--config every joint is a sensor named after it, with identity mounts and \
Y-up axes; `bvh record` with `bind_all = true` then gives the clip back.

--as sensors --to udp://HOST:PORT sends one frame's lines per datagram \
(the header first, an empty datagram at the end); --to tcp://HOST:PORT \
connects and streams the lines. --as neuron --to tcp://HOST:PORT listens, \
accepts one client and streams the frames as Axis Neuron does \
(`INDEX Avatar00 v1 .. vN ||`). --realtime sends frame i at i times the \
clip's frame time after the first (divided by --speed).";

/// Arguments of `bvh record`.
#[derive(Debug, clap::Args)]
pub(crate) struct RecordArgs {
    /// The configuration file (TOML).
    #[arg(long, value_name = "CFG", required_unless_present = "skeleton")]
    config: Option<PathBuf>,
    /// With neuron+tcp:// input and no --config: the skeleton whose channels the stream carries (its Frame Time is the recording's).
    #[arg(long, value_name = "BVH", conflicts_with = "config")]
    skeleton: Option<PathBuf>,
    /// The samples: a file, `-` for standard input, `udp://127.0.0.1:PORT` (datagrams of whole lines), `tcp://127.0.0.1:PORT` (listen for one client), or `neuron+tcp://HOST:PORT` (connect to an Axis Neuron-style stream).
    #[arg(long, value_name = "SOURCE")]
    input: PathBuf,
    /// With network input: end the recording after this many seconds without data (an empty UDP datagram ends it at once).
    #[arg(long, value_name = "SECS", default_value_t = 10.0, value_parser = parse_idle)]
    idle: f64,
    /// The BVH file to write (a regular file: its frame count is patched at the end).
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,
    /// Also show the frames live in a browser, served on loopback at this port (default 8124; 0 picks a free one).
    #[arg(long, value_name = "PORT", num_args = 0..=1, default_missing_value = "8124")]
    live: Option<u16>,
    /// Print the median, 99th percentile and largest delay from reading the data that completed a frame to that frame written.
    #[arg(long)]
    latency: bool,
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
    fn start(skeleton: &Skeleton, frame_rate: f64, port: u16) -> Result<Live> {
        let mode = bvhkit::PositionChannels::Replace;
        let rest = Bvh::new(
            skeleton.clone(),
            Motion::new(1.0 / frame_rate, skeleton.n_channels(), Vec::new())?,
        )?;
        let clip = bvhkit_render::Clip::from_bvh(&rest, "live", mode);
        let server = bvhkit_serve::Server::bind(("127.0.0.1", port), &[])
            .with_context(|| format!("cannot serve the live view on port {port}"))?;
        let feed = server.live_feed();
        feed.set_skeleton(&clip);
        eprintln!("bvh: live view at {}?live=1", server.url()?);
        let handle = server.shutdown_handle();
        let thread = std::thread::spawn(move || server.run());
        let fk = bvhkit::Kinematics::new(skeleton, mode);
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
        std::thread::sleep(Duration::from_millis(200));
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
    /// Sensor samples (CSV lines).
    Sensors,
    /// The Axis Neuron-style BVH data stream (`INDEX Avatar00 v1 .. vN ||` per frame).
    Neuron,
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
    /// A recorder configuration whose bindings, mounts and sensor axes to use (--as sensors).
    #[arg(long, value_name = "CFG")]
    config: Option<PathBuf>,
    /// The file to write (`-` for standard output).
    #[arg(short, long, value_name = "OUT", required_unless_present = "to", conflicts_with = "to")]
    output: Option<PathBuf>,
    /// Send instead: `udp://HOST:PORT` or `tcp://HOST:PORT` (sensors: connect; neuron: listen for one client).
    #[arg(long, value_name = "ADDR")]
    to: Option<String>,
    /// Pace the frames at the clip's frame rate.
    #[arg(long, requires = "to")]
    realtime: bool,
    /// With --realtime, play this many times faster than real time (2 = twice the clip's frame rate).
    #[arg(long, value_name = "FACTOR", requires = "realtime", default_value = "1", value_parser = parse_speed)]
    speed: f64,
}

fn parse_speed(s: &str) -> std::result::Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && (0.001..=1000.0).contains(&v) => Ok(v),
        _ => Err(format!("expected a factor between 0.001 and 1000, found {s:?}")),
    }
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
/// The avatar name `replay --as neuron` sends.
const AVATAR: &str = "Avatar00";

/// The output BVH: header written at once, frames appended and flushed as
/// they complete, the count patched at the end.
///
/// The take is written into an anonymous file in the output's folder
/// (`io::AtomicFile`) that replaces the output when its first
/// frame is written: until then an existing output is untouched, so a bad
/// header, a source that sends nothing or a `kill -9` before the first
/// frame loses no earlier take, and leaves no file behind. A recording
/// that ends with no frame writes a new output (the header and `Frames: 0`)
/// but leaves an existing one as it was.
struct Take {
    /// The take until its first frame, not yet in place of the output.
    pending: Option<io::AtomicFile>,
    /// The take once in place of the output.
    file: Option<File>,
    /// The regular file replaced (at the end of any symbolic links).
    target: PathBuf,
    count_at: u64,
    buf: Vec<u8>,
}

impl Take {
    fn create(path: &Path, skeleton: &Skeleton, frame_rate: f64) -> Result<Take> {
        let frame_time = 1.0 / frame_rate;
        let motion = Motion::new(frame_time, skeleton.n_channels(), Vec::new())?;
        let bvh = Bvh::new(skeleton.clone(), motion)?;
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
        // A regular file with other hard links is refused (unless
        // --break-links), as by every command that writes.
        let target = match io::destination(path)? {
            io::Dest::Replace(p) => p,
            _ => bail!(
                "{}: record writes a regular file whose frame count it patches at the end; \
                 give -o FILE",
                path.display()
            ),
        };
        let mut pending = io::AtomicFile::create(&target)?;
        pending.file().write_all(&header)?;
        Ok(Take {
            pending: Some(pending),
            file: None,
            target,
            count_at,
            buf: Vec::with_capacity(4096),
        })
    }

    /// The take's file, put in place of the output first if it is not yet.
    fn file(&mut self) -> Result<&mut File> {
        if let Some(a) = self.pending.take() {
            self.file = Some(a.commit_open()?);
        }
        self.file.as_mut().context("internal: the take has no file")
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
        // One write per batch of frames, no user-space buffer: a frame is
        // in the file (the kernel's page cache) when this returns. The
        // first batch goes into the anonymous file before it replaces the
        // output, so the output is never a take without frames.
        let buf = std::mem::take(&mut self.buf);
        let wrote = match (&mut self.pending, &mut self.file) {
            (Some(a), _) => a.file().write_all(&buf),
            (None, Some(f)) => f.write_all(&buf),
            (None, None) => Ok(()),
        };
        self.buf = buf;
        wrote.with_context(|| format!("writing {}", self.target.display()))?;
        self.file()?;
        Ok(())
    }

    /// Patches the count and syncs. A take without frames replaces no
    /// existing output (`false`: the output was left as it was).
    fn finish(mut self, frames: u64) -> Result<bool> {
        if self.pending.is_some() && std::fs::symlink_metadata(&self.target).is_ok() {
            return Ok(false);
        }
        let count_at = self.count_at;
        let file = self.file()?;
        file.seek(SeekFrom::Start(count_at))?;
        file.write_all(format!("{frames:<COUNT_WIDTH$}").as_bytes())?;
        file.sync_all()?;
        Ok(true)
    }
}

fn find_last(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).rposition(|w| w == needle)
}

/// Delays from reading the data that completed a frame to the frame
/// written, in a histogram of 1 µs buckets up to 100 ms (bounded memory).
struct Latency {
    buckets: Vec<u32>,
    over: u64,
    max: Duration,
    n: u64,
}

impl Latency {
    const BUCKETS: usize = 100_000;

    fn new() -> Latency {
        Latency { buckets: vec![0; Self::BUCKETS], over: 0, max: Duration::ZERO, n: 0 }
    }

    fn record(&mut self, d: Duration) {
        match self.buckets.get_mut(d.as_micros() as usize) {
            Some(b) => *b = b.saturating_add(1),
            None => self.over += 1,
        }
        self.max = self.max.max(d);
        self.n += 1;
    }

    /// The `q` quantile in µs (the bucket's upper edge), or `None` past 100 ms.
    fn quantile(&self, q: f64) -> Option<u64> {
        let rank = ((q * self.n as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (us, &c) in self.buckets.iter().enumerate() {
            seen += u64::from(c);
            if seen >= rank {
                return Some(us as u64 + 1);
            }
        }
        None
    }

    fn report(&self) -> String {
        let show = |q: Option<u64>| match q {
            Some(us) => format!("{:.3} ms", us as f64 / 1000.0),
            None => "over 100 ms".to_string(),
        };
        format!(
            "bvh: latency from reading to frame written, over {} frames: median {}, p99 {}, max {:.3} ms",
            self.n,
            show(self.quantile(0.5)),
            show(self.quantile(0.99)),
            self.max.as_secs_f64() * 1000.0
        )
    }
}

/// Turns input bytes into frames.
enum Decoder {
    /// Sensor sample lines through the recorder.
    Samples { lines: LineReader, reading: Reading, rec: Box<Recorder> },
    /// The Axis Neuron-style stream, recorded as is.
    Neuron(NeuronReader),
}

/// The state of one recording: decoder, output and counts.
struct Session {
    source: String,
    decoder: Decoder,
    n_channels: usize,
    frame_rate: f64,
    frames: Vec<f64>,
    written: u64,
    take: Take,
    bad_lines: u64,
    line_no: u64,
    live: Option<Live>,
    latency: Option<Latency>,
}

fn warn(source: &str, bad_lines: &mut u64, at: &str, message: &str) {
    *bad_lines += 1;
    if *bad_lines <= SHOWN_ERRORS {
        eprintln!("bvh: warning: {}", escape(&format!("{source}:{at}: {message}")));
    }
}

impl Session {
    fn warn(&mut self, at: String, message: &str) {
        warn(&self.source, &mut self.bad_lines, &at, message);
    }

    /// One input line, without its line end, read at `arrival`.
    fn line(&mut self, bytes: &[u8], arrival: Instant) -> Result<()> {
        self.line_no += 1;
        let Decoder::Samples { lines, reading, rec } = &mut self.decoder else {
            bail!("internal: a sample line for a neuron stream")
        };
        let text = match std::str::from_utf8(bytes) {
            Ok(t) => t,
            Err(e) => {
                let _ = lines.read("", reading); // keep line numbers in step
                let at = format!("{}:{}", self.line_no, e.valid_up_to() + 1);
                self.warn(at, "invalid UTF-8");
                return Ok(());
            }
        };
        match lines.read(text, reading) {
            Ok(true) => {
                self.frames.clear();
                if rec.push(&reading.sample(), &mut self.frames) > 0 {
                    self.emit(Some(arrival))?;
                }
                Ok(())
            }
            Ok(false) => Ok(()),
            Err(e) if e.fatal => bail!("{}:{}", self.source, e),
            Err(e) => {
                self.warn(format!("{}:{}", e.line, e.column), &e.message);
                Ok(())
            }
        }
    }

    /// A line that cannot be used whole: longer than [`MAX_LINE`], or cut
    /// off by the end of a connection.
    fn skip_line(&mut self, message: &str) {
        self.line_no += 1;
        if let Decoder::Samples { lines, reading, .. } = &mut self.decoder {
            let _ = lines.read("", reading);
        }
        self.warn(format!("{}:1", self.line_no), message);
    }

    /// Bytes of a neuron stream, read at `arrival`.
    fn neuron(&mut self, bytes: &[u8], arrival: Instant) -> Result<()> {
        let Decoder::Neuron(reader) = &mut self.decoder else {
            bail!("internal: neuron bytes for a sample stream")
        };
        self.frames.clear();
        let (source, bad) = (&self.source, &mut self.bad_lines);
        let n = reader.feed(bytes, &mut self.frames, &mut |e| {
            warn(source, bad, &format!("{}:{}", e.line, e.column), &e.message)
        });
        if n > 0 {
            self.emit(Some(arrival))?;
        }
        Ok(())
    }

    /// Writes the frames in `self.frames` and shows them.
    fn emit(&mut self, arrival: Option<Instant>) -> Result<()> {
        if self.frames.is_empty() {
            return Ok(());
        }
        self.take.frames(&self.frames, self.n_channels)?;
        let count = (self.frames.len() / self.n_channels.max(1)) as u64;
        if let (Some(latency), Some(arrival)) = (&mut self.latency, arrival) {
            let d = arrival.elapsed();
            for _ in 0..count {
                latency.record(d);
            }
        }
        if let Some(live) = &mut self.live {
            for (k, frame) in self.frames.chunks(self.n_channels.max(1)).enumerate() {
                live.push((self.written + k as u64) as f64 / self.frame_rate, frame);
            }
        }
        self.written += count;
        Ok(())
    }

    fn finish(mut self, output: &Path) -> Result<()> {
        self.frames.clear();
        let summary = match &mut self.decoder {
            Decoder::Samples { rec, .. } => {
                rec.finish(&mut self.frames);
                let s = rec.stats();
                summary(output, &s, self.bad_lines)
            }
            Decoder::Neuron(reader) => {
                let (source, bad) = (&self.source, &mut self.bad_lines);
                reader.finish(&mut |e| {
                    warn(source, bad, &format!("{}:{}", e.line, e.column), &e.message)
                });
                format!(
                    "{}: {} frames; {} malformed frames",
                    escape(&output.display().to_string()),
                    reader.frames(),
                    reader.malformed()
                )
            }
        };
        self.emit(None)?;
        let take = self.take;
        if !take.finish(self.written)? {
            eprintln!(
                "bvh: no frame recorded; {} left as it was",
                escape(&output.display().to_string())
            );
        }
        if let Some(live) = self.live.take() {
            live.finish()?;
        }
        eprintln!("{summary}");
        if let Some(latency) = &self.latency {
            eprintln!("{}", latency.report());
        }
        Ok(())
    }
}

/// The recording, shared with the signal thread, which takes it to finish
/// it on SIGINT or SIGTERM.
type Shared = Arc<Mutex<Option<Session>>>;

fn lock(shared: &Shared) -> MutexGuard<'_, Option<Session>> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs `f` on the session; `Ok(false)` when a signal has taken it.
fn with(shared: &Shared, f: impl FnOnce(&mut Session) -> Result<()>) -> Result<bool> {
    match lock(shared).as_mut() {
        Some(s) => f(s).map(|()| true),
        None => Ok(false),
    }
}

/// On SIGINT or SIGTERM: take the session (waiting for the line being
/// processed), finish it as at the end of the input, and exit 0.
fn watch_signals(shared: Shared, output: PathBuf) -> Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])
        .context("cannot watch for SIGINT and SIGTERM")?;
    std::thread::spawn(move || {
        for sig in signals.forever() {
            // The guard stays held until the process exits: the reading
            // thread, which wants it next, never sees a half-finished take.
            let mut guard = lock(&shared);
            let Some(session) = guard.take() else { continue };
            let name = if sig == SIGINT { "SIGINT" } else { "SIGTERM" };
            eprintln!("bvh: {name}: recording stopped");
            let code = match session.finish(&output) {
                Ok(()) => 0,
                Err(e) => {
                    eprintln!("bvh: error: {}", escape(&crate::text::error_chain(&e)));
                    2
                }
            };
            std::process::exit(code);
        }
    });
    Ok(())
}

/// Where `bvh record` reads from.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Source {
    Stdin,
    File(PathBuf),
    Udp(String),
    Tcp(String),
    NeuronTcp(String),
}

impl Source {
    fn parse(p: &Path) -> Result<Source> {
        let s = p.to_string_lossy();
        if s == "-" {
            return Ok(Source::Stdin);
        }
        if let Some(a) = s.strip_prefix("udp://") {
            return Ok(Source::Udp(a.to_string()));
        }
        if let Some(a) = s.strip_prefix("tcp://") {
            return Ok(Source::Tcp(a.to_string()));
        }
        if let Some(a) = s.strip_prefix("neuron+tcp://") {
            return Ok(Source::NeuronTcp(a.to_string()));
        }
        if let Some((scheme, _)) = s.split_once("://")
            && !scheme.is_empty()
            && scheme.chars().all(|c| c.is_ascii_alphanumeric() || c == '+')
        {
            bail!(
                "{}: unknown input scheme {scheme:?} (expected a file, -, udp://, tcp:// or neuron+tcp://)",
                escape(&s)
            );
        }
        Ok(Source::File(p.to_path_buf()))
    }
}

/// Whether a read error means the peer went away or fell silent: the end
/// of the recording, not a failure.
fn ends_input(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(
        e.kind(),
        WouldBlock | TimedOut | ConnectionReset | ConnectionAborted | BrokenPipe | UnexpectedEof
    )
}

/// Runs `bvh record`.
pub(crate) fn run_record(a: RecordArgs) -> Result<ExitCode> {
    let source = Source::parse(&a.input)?;
    let neuron = matches!(source, Source::NeuronTcp(_));
    if a.skeleton.is_some() && !neuron {
        bail!("--skeleton is for neuron+tcp:// input; sensor samples need --config");
    }
    if a.output.as_os_str() == "-" {
        bail!("record writes a regular file whose frame count it patches at the end; give -o FILE");
    }
    let (skeleton, frame_rate, config, mut inputs) = match (&a.config, &a.skeleton) {
        (Some(c), _) => {
            let config = Config::load(c)?;
            let inputs = vec![Input::File(c.clone()), Input::File(config.skeleton_path.clone())];
            (config.skeleton.clone(), config.frame_rate, Some(config), inputs)
        }
        (None, Some(path)) => {
            let bvh = Bvh::from_path(path)?;
            let rate = bvh.motion().fps();
            if !(rate.is_finite() && rate > 0.0) {
                bail!("{}: the Frame Time gives no usable frame rate", path.display());
            }
            (bvh.into_parts().0, rate, None, vec![Input::File(path.clone())])
        }
        (None, None) => bail!("give --config (or --skeleton with neuron+tcp:// input)"),
    };
    if let Source::File(p) = &source {
        inputs.push(Input::File(p.clone()));
    }
    io::refuse_overwriting_input(&a.output, &inputs)?;
    let mut source_name = match &source {
        Source::File(p) => p.display().to_string(),
        _ => a.input.to_string_lossy().into_owned(),
    };
    let idle = Duration::from_secs_f64(a.idle);
    // Sockets are opened before the output, so an address in use leaves no file.
    let udp = match &source {
        Source::Udp(addr) => {
            let s = std::net::UdpSocket::bind(addr.as_str())
                .with_context(|| format!("{source_name}: cannot listen"))?;
            s.set_read_timeout(Some(idle))?;
            // A deep receive buffer rides out bursts and scheduling hiccups
            // (the kernel caps it at net.core.rmem_max); failing to get it is
            // not an error, only less slack.
            let _ = socket2::SockRef::from(&s).set_recv_buffer_size(RECV_BUFFER);
            // Messages name the address bound (port 0 picks one).
            source_name = format!("udp://{}", s.local_addr()?);
            eprintln!("bvh: listening on {source_name}");
            Some(s)
        }
        _ => None,
    };
    let tcp = match &source {
        Source::Tcp(addr) => {
            let l = std::net::TcpListener::bind(addr.as_str())
                .with_context(|| format!("{source_name}: cannot listen"))?;
            source_name = format!("tcp://{}", l.local_addr()?);
            eprintln!("bvh: listening on {source_name}");
            Some(l)
        }
        _ => None,
    };
    // Connected before the output is made: a server that is not there leaves no file.
    let neuron_stream = match &source {
        Source::NeuronTcp(addr) => Some(connect(addr, idle, &source_name)?),
        _ => None,
    };
    let file = match &source {
        Source::File(p) => {
            Some(File::open(p).with_context(|| format!("{source_name}: cannot open"))?)
        }
        _ => None,
    };
    let live = a.live.map(|port| Live::start(&skeleton, frame_rate, port)).transpose()?;
    let take = Take::create(&a.output, &skeleton, frame_rate)?;
    let n_channels = skeleton.n_channels();
    let decoder = match &config {
        Some(config) if !neuron => Decoder::Samples {
            lines: LineReader::new(),
            reading: Reading::default(),
            rec: Box::new(Recorder::new(config)),
        },
        _ => Decoder::Neuron(NeuronReader::new(n_channels)),
    };
    let session = Session {
        source: source_name.clone(),
        decoder,
        n_channels,
        frame_rate,
        frames: Vec::new(),
        written: 0,
        take,
        bad_lines: 0,
        line_no: 0,
        live,
        latency: a.latency.then(Latency::new),
    };
    let shared: Shared = Arc::new(Mutex::new(Some(session)));
    watch_signals(shared.clone(), a.output.clone())?;
    let result = match source {
        Source::Stdin => {
            read_lines(BufReader::with_capacity(1 << 16, std::io::stdin()), &shared, false)
        }
        Source::File(_) => read_lines(
            BufReader::with_capacity(1 << 16, file.expect("opened above")),
            &shared,
            false,
        ),
        Source::Udp(_) => read_udp(&udp.expect("bound above"), &shared),
        Source::Tcp(_) => {
            let listener = tcp.expect("bound above");
            let (stream, peer) = listener.accept().context("cannot accept a connection")?;
            eprintln!("bvh: connection from {peer}");
            drop(listener);
            stream.set_read_timeout(Some(idle))?;
            read_lines(BufReader::with_capacity(1 << 16, stream), &shared, true)
        }
        Source::NeuronTcp(_) => read_neuron(neuron_stream.expect("connected above"), idle, &shared),
    };
    let taken = lock(&shared).take();
    let Some(session) = taken else {
        // A signal took the recording: its thread finishes it and exits.
        loop {
            std::thread::park();
        }
    };
    if let Err(e) = result {
        // A take without frames was never put in place: dropping it leaves
        // the output as it was (an earlier take) or absent.
        drop(session);
        return Err(e);
    }
    session.finish(&a.output)?;
    Ok(ExitCode::SUCCESS)
}

/// Connects to `addr`, retrying for up to `wait` while nothing listens yet.
fn connect(addr: &str, wait: Duration, name: &str) -> Result<TcpStream> {
    let deadline = Instant::now() + wait;
    loop {
        match TcpStream::connect(addr) {
            Ok(s) => {
                eprintln!("bvh: connected to {name}");
                return Ok(s);
            }
            Err(e)
                if e.kind() == std::io::ErrorKind::ConnectionRefused
                    && Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => return Err(anyhow::Error::new(e).context(format!("{name}: cannot connect"))),
        }
    }
}

/// Lines up to the end of the input; for a connection (`cut_is_malformed`),
/// a last line without its line end was cut off and is counted, not used.
fn read_lines(mut reader: impl BufRead, shared: &Shared, cut_is_malformed: bool) -> Result<()> {
    let mut line = Vec::with_capacity(256);
    loop {
        line.clear();
        let n = match (&mut reader).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut line) {
            Ok(n) => n,
            Err(e) if cut_is_malformed && ends_input(&e) => {
                if !line.is_empty() {
                    with(shared, |s| {
                        s.skip_line("the connection ended in the middle of a line");
                        Ok(())
                    })?;
                }
                return Ok(());
            }
            Err(e) => return Err(e.into()),
        };
        let arrival = Instant::now();
        if n == 0 {
            return Ok(());
        }
        if line.last() != Some(&b'\n') && line.len() > MAX_LINE {
            // Skip the rest of an overlong line without holding it.
            loop {
                line.clear();
                let m = match (&mut reader).take(MAX_LINE as u64).read_until(b'\n', &mut line) {
                    Ok(m) => m,
                    Err(e) if cut_is_malformed && ends_input(&e) => 0,
                    Err(e) => return Err(e.into()),
                };
                if m == 0 || line.last() == Some(&b'\n') {
                    break;
                }
            }
            let go = with(shared, |s| {
                s.skip_line(&format!("line longer than {MAX_LINE} bytes skipped"));
                Ok(())
            })?;
            if !go {
                return Ok(());
            }
            continue;
        }
        let go = match line.strip_suffix(b"\n") {
            Some(l) => with(shared, |s| s.line(l, arrival))?,
            None if cut_is_malformed => with(shared, |s| {
                s.skip_line("the connection ended in the middle of a line");
                Ok(())
            })?,
            None => with(shared, |s| s.line(&line, arrival))?,
        };
        if !go {
            return Ok(());
        }
    }
}

/// Datagrams of one or more whole lines, until an empty datagram or
/// `--idle` seconds without one.
fn read_udp(socket: &std::net::UdpSocket, shared: &Shared) -> Result<()> {
    let mut buf = vec![0u8; 65536];
    loop {
        let n = match socket.recv(&mut buf) {
            Ok(n) => n,
            // A signal (with a receive timeout set, recv is not restarted).
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
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
        let arrival = Instant::now();
        if n == 0 {
            return Ok(());
        }
        let data = &buf[..n];
        let data = data.strip_suffix(b"\n").unwrap_or(data);
        let go = with(shared, |s| {
            for line in data.split(|&b| b == b'\n') {
                s.line(line, arrival)?;
            }
            Ok(())
        })?;
        if !go {
            return Ok(());
        }
    }
}

/// The neuron stream until the server closes it or falls silent for `idle`.
fn read_neuron(mut stream: TcpStream, idle: Duration, shared: &Shared) -> Result<()> {
    stream.set_read_timeout(Some(idle))?;
    let mut buf = vec![0u8; 65536];
    loop {
        let n = match stream.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) if ends_input(&e) => return Ok(()),
            Err(e) => return Err(e.into()),
        };
        let arrival = Instant::now();
        if n == 0 {
            return Ok(());
        }
        if !with(shared, |s| s.neuron(&buf[..n], arrival))? {
            return Ok(());
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
    ) + &if s.resumed > 0 {
        format!("; {} pauses of over 10 s cut (the recording resumed at the next frame)", s.resumed)
    } else {
        String::new()
    } + &if s.gaps_cut > 0 {
        format!(
            "; {} gaps not filled with held frames (over {} held frames per frame with a \
             sample, plus {}; the recording went on at the next frame)",
            s.gaps_cut,
            Recorder::EMPTY_PER_SAMPLE_FRAME,
            Recorder::MAX_EMPTY_FRAMES
        )
    } else {
        String::new()
    }
}

/// Sends frame `i` no earlier than `i` frame times after the first.
struct Pacer {
    start: Option<Instant>,
    frame_time: Option<f64>,
}

impl Pacer {
    fn wait(&mut self, i: usize) {
        let Some(ft) = self.frame_time else { return };
        let start = *self.start.get_or_insert_with(Instant::now);
        // At most a day per frame and 2^64 frames: always a Duration, but
        // a wait too long to represent is no reason to panic.
        let Some(due) =
            Duration::try_from_secs_f64(i as f64 * ft).ok().and_then(|d| start.checked_add(d))
        else {
            return;
        };
        let now = Instant::now();
        if due > now {
            std::thread::sleep(due - now);
        }
    }
}

/// The longest wait between two frames `replay --realtime` paces (a day).
const MAX_PACED_FRAME_TIME: f64 = 86_400.0;

/// Receive buffer asked for on a UDP input socket (8 MiB).
const RECV_BUFFER: usize = 8 << 20;

/// Largest UDP payload `replay` sends (under the 65,507-byte IPv4 limit).
const MAX_DATAGRAM: usize = 65_000;

/// Runs `bvh replay`.
pub(crate) fn run_replay(a: ReplayArgs) -> Result<ExitCode> {
    let bvh = Bvh::from_path(&a.input)?;
    if a.kind == ReplayAs::Neuron && a.config.is_some() {
        bail!(
            "--config is for --as sensors; the neuron stream carries the clip's channels as they are"
        );
    }
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
    let frame_time = bvh.motion().frame_time();
    if a.realtime && !(frame_time.is_finite() && frame_time > 0.0) {
        bail!("{}: --realtime needs a positive Frame Time", a.input.display());
    }
    if a.realtime && frame_time / a.speed > MAX_PACED_FRAME_TIME {
        bail!(
            "{}: Frame Time {} s at --speed {} is {} s between frames; --realtime \
             paces frames at most {MAX_PACED_FRAME_TIME} s (a day) apart",
            a.input.display(),
            crate::text::num(frame_time),
            a.speed,
            crate::text::num(frame_time / a.speed)
        );
    }
    let mut pacer = Pacer { start: None, frame_time: a.realtime.then_some(frame_time / a.speed) };
    if let Some(output) = &a.output {
        let mut inputs = vec![Input::File(a.input.clone())];
        if let Some(c) = &a.config {
            inputs.push(Input::File(c.clone()));
        }
        io::refuse_overwriting_input(output, &inputs)?;
        io::write_atomic(output, |w| {
            match a.kind {
                ReplayAs::Sensors => {
                    replay_csv(&bvh, &config, w)?;
                }
                ReplayAs::Neuron => {
                    let mut buf = Vec::new();
                    for (i, frame) in bvh.motion().frames().enumerate() {
                        buf.clear();
                        write_neuron_frame(i as u64, AVATAR, frame, &mut buf);
                        w.write_all(&buf)?;
                    }
                }
            }
            Ok(())
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let to = a.to.as_deref().expect("clap: --to or -o");
    let (scheme, addr) = to.split_once("://").with_context(|| {
        format!("--to {}: expected udp://HOST:PORT or tcp://HOST:PORT", escape(to))
    })?;
    let frames = bvh.motion().n_frames();
    match (a.kind, scheme) {
        (ReplayAs::Sensors, "udp") => {
            let target = addr
                .to_socket_addrs()
                .with_context(|| format!("{}: not an address", escape(to)))?
                .next()
                .with_context(|| format!("{}: not an address", escape(to)))?;
            let local = if target.is_ipv4() { "0.0.0.0:0" } else { "[::]:0" };
            let socket = UdpSocket::bind(local)?;
            socket.connect(target)?;
            let samples = replay_sensors(&bvh, &config, &mut pacer, |_, text| {
                for datagram in datagrams(text) {
                    socket
                        .send(datagram)
                        .with_context(|| format!("{}: cannot send", escape(to)))?;
                }
                Ok(())
            })?;
            socket.send(b"")?;
            eprintln!("bvh: sent {frames} frames ({samples} samples) to {}", escape(to));
        }
        (ReplayAs::Sensors, "tcp") => {
            let mut stream = connect(addr, Duration::from_secs(10), to)?;
            let samples = replay_sensors(&bvh, &config, &mut pacer, |i, text| {
                stream.write_all(text).map_err(|e| match i {
                    Some(i) => anyhow::anyhow!(
                        "{}: the connection failed after {i} of {frames} frames: {e}",
                        escape(to)
                    ),
                    None => e.into(),
                })
            })?;
            stream.shutdown(std::net::Shutdown::Write)?;
            eprintln!("bvh: sent {frames} frames ({samples} samples) to {}", escape(to));
        }
        (ReplayAs::Neuron, "tcp") => {
            let listener = TcpListener::bind(addr)
                .with_context(|| format!("{}: cannot listen", escape(to)))?;
            eprintln!("bvh: listening on tcp://{}", listener.local_addr()?);
            let (mut stream, peer) = listener.accept().context("cannot accept a connection")?;
            eprintln!("bvh: connection from {peer}");
            let mut buf = Vec::new();
            for (i, frame) in bvh.motion().frames().enumerate() {
                buf.clear();
                write_neuron_frame(i as u64, AVATAR, frame, &mut buf);
                pacer.wait(i);
                // Not an io::Error: a client that leaves early is reported, not a quiet broken pipe.
                stream.write_all(&buf).map_err(|e| {
                    anyhow::anyhow!(
                        "{}: the client left after {i} of {frames} frames: {e}",
                        escape(to)
                    )
                })?;
            }
            stream.shutdown(std::net::Shutdown::Write)?;
            eprintln!("bvh: sent {frames} frames to {peer}");
        }
        (ReplayAs::Neuron, _) => {
            bail!("--as neuron is served over tcp://HOST:PORT, not {}", escape(to))
        }
        _ => bail!("--to {}: expected udp://HOST:PORT or tcp://HOST:PORT", escape(to)),
    }
    Ok(ExitCode::SUCCESS)
}

/// Replays `bvh` as sensor samples through `send`: the header (frame
/// `None`), then each frame's sample lines (`Some(i)`), paced. Returns the
/// number of samples sent.
fn replay_sensors(
    bvh: &Bvh,
    config: &Config,
    pacer: &mut Pacer,
    mut send: impl FnMut(Option<usize>, &[u8]) -> Result<()>,
) -> Result<usize> {
    let mut replay = SensorReplay::new(bvh, config)?;
    send(None, REPLAY_HEADER.as_bytes())?;
    let mut text = String::new();
    let mut samples = 0;
    for i in 0..bvh.motion().n_frames() {
        text.clear();
        samples += replay.frame(i, &mut text);
        pacer.wait(i);
        send(Some(i), text.as_bytes())?;
    }
    Ok(samples)
}

/// Cuts `text` (whole lines) into datagrams of at most [`MAX_DATAGRAM`]
/// bytes, at line ends. A single longer line is sent alone (and refused by
/// the kernel, an error).
fn datagrams(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut end = rest.len().min(MAX_DATAGRAM);
        if end < rest.len() {
            end = match rest[..end].iter().rposition(|&b| b == b'\n') {
                Some(p) => p + 1,
                None => rest.iter().position(|&b| b == b'\n').map_or(rest.len(), |p| p + 1),
            };
        }
        let (d, r) = rest.split_at(end);
        rest = r;
        Some(d)
    })
}

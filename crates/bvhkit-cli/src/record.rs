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

mod replay;
mod session;

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
pub(crate) use replay::{REPLAY_ABOUT, ReplayArgs, run_replay};
use session::{Decoder, Latency, Session, Shared, Take, lock, with};

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
unknown sensor, out of order, too far ahead) and held.

--one-euro MIN_CUTOFF,BETA[,D_CUTOFF] smooths every joint's rotation (as a \
continuous quaternion track) and position channels as frames arrive, with \
the causal one-euro filter of `bvh clean --one-euro`: the take equals \
`bvh clean --one-euro` of the same take recorded without it \
(docs/cleaning.md). The live view shows the smoothed frames.

Examples:
  bvh record --config glove.toml --input samples.csv -o take.bvh
  bvh record --config glove.toml --input udp://127.0.0.1:9000 -o take.bvh --live
  bvh record --skeleton avatar.bvh --input neuron+tcp://127.0.0.1:7001 -o take.bvh";

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
    /// Smooth each frame as it arrives with the one-euro filter, as `bvh clean --one-euro` would smooth the whole take: minimum cut-off (Hz), beta, speed cut-off (Hz, default 1).
    #[arg(long, value_name = "MIN_CUTOFF,BETA[,D_CUTOFF]", value_parser = crate::clean::parse_one_euro)]
    one_euro: Option<bvhkit::clean::OneEuro>,
    /// Write the take so that every reader reads its position channels alike (docs/format.md): the OFFSET component each position channel names set to 0. A take is written as it is recorded, so its position channels are all kept (`bvh fmt --portable` of the take drops those that stayed constant).
    #[arg(long)]
    portable: bool,
    /// With --one-euro: the joints it smooths, comma-separated (default all), as `bvh clean --joints`.
    #[arg(long, value_name = "LIST", value_delimiter = ',', requires = "one_euro")]
    joints: Option<Vec<String>>,
    /// With --one-euro: smoothing strength per joint, 0 (unchanged) to 1 (the full filter, the default),
    /// as `bvh clean --strength`: JOINT=F, JOINT/*=F (every joint below it), *=F; later entries win.
    #[arg(long, value_name = "SEL=FACTOR,...", value_delimiter = ',', action = clap::ArgAction::Append,
          value_parser = crate::clean::parse_strength, requires = "one_euro")]
    strength: Vec<(String, f64)>,
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
            // Only the skeleton and the Frame Time are used: a clip whose
            // `Frames:` count disagrees is read as `bvh edit` reads it, but a
            // Frame Time that lenient reading would invent is refused, since
            // the recording's frame rate is taken from it.
            let (bvh, warnings) = bvhkit::ReadOptions::new().lenient(true).read_path(path)?;
            if let Some(w) = warnings.iter().find(|w| w.kind == bvhkit::WarningKind::FrameTime) {
                let at =
                    w.position.map(|p| format!(":{}:{}", p.line, p.column)).unwrap_or_default();
                bail!(
                    "{}{at}: the Frame Time is missing, zero or not a positive number, and the recording takes its frame rate from it: give the skeleton file a positive Frame Time",
                    path.display()
                );
            }
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
            let f = File::open(p).with_context(|| format!("{source_name}: cannot open"))?;
            // A folder opens, and its first read said "Is a directory (os
            // error 21)" without its name.
            if f.metadata().is_ok_and(|m| m.is_dir()) {
                bail!("{source_name}: is a directory");
            }
            Some(f)
        }
        _ => None,
    };
    // The rate `bvh clean` reads back from the take's Frame Time.
    let smooth = a
        .one_euro
        .map(|p| {
            bvhkit::clean::OneEuroFrames::new(
                &skeleton,
                p,
                1.0 / (1.0 / frame_rate),
                a.joints.as_deref(),
                &a.strength,
            )
            .map_err(|e| anyhow::anyhow!("--one-euro: {e}"))
        })
        .transpose()?;
    let live = a.live.map(|port| Live::start(&skeleton, frame_rate, port)).transpose()?;
    // The frames' values are the same either way: only the written
    // skeleton's OFFSETs differ.
    let written = if a.portable {
        let mut notes = Vec::new();
        let out =
            crate::portable::streamed(&skeleton, &a.output.display().to_string(), &mut notes)?;
        for n in notes {
            eprintln!("bvh: note: {}", escape(&n));
        }
        out
    } else {
        skeleton.clone()
    };
    let take = Take::create(&a.output, &written, frame_rate)?;
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
        smooth,
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

/// Receive buffer asked for on a UDP input socket (8 MiB).
const RECV_BUFFER: usize = 8 << 20;

//! `bvh replay`: a BVH clip to the sensor samples that would have recorded
//! it (`--as sensors`, through `SensorReplay`) or to the Axis Neuron-style
//! stream (`--as neuron`, through `write_neuron_frame`); to a file, UDP
//! datagrams of whole frames or TCP, `--realtime` paced on absolute due
//! times.

#[allow(clippy::wildcard_imports)]
use super::*;

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
clip's frame time after the first (divided by --speed).

Examples:
  bvh replay walk.bvh --as sensors -o walk.csv
  bvh replay walk.bvh --as sensors --to udp://127.0.0.1:9000 --realtime
  bvh replay walk.bvh --as neuron --to tcp://127.0.0.1:7001";

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
// One destination: without either, clap named --output alone.
#[command(group(clap::ArgGroup::new("destination").required(true).args(["output", "to"])))]
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
    #[arg(short, long, value_name = "OUT")]
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
    /// Refuse a clip with any problem (a `Frames:` count that disagrees, a zero Frame Time)
    /// instead of repairing what lenient reading recovers, as `bvh edit` does.
    #[arg(long)]
    strict: bool,
}

pub(super) fn parse_speed(s: &str) -> std::result::Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && (0.001..=1000.0).contains(&v) => Ok(v),
        _ => Err(format!("expected a factor between 0.001 and 1000, found {s:?}")),
    }
}

/// Sends frame `i` no earlier than `i` frame times after the first.
pub(super) struct Pacer {
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
pub(super) const MAX_PACED_FRAME_TIME: f64 = 86_400.0;

/// Largest UDP payload `replay` sends (under the 65,507-byte IPv4 limit).
pub(super) const MAX_DATAGRAM: usize = 65_000;

/// Runs `bvh replay`.
pub(crate) fn run_replay(a: ReplayArgs) -> Result<ExitCode> {
    // `-` is standard input, as for every command that reads a clip.
    let input = if a.input.as_os_str() == "-" {
        crate::io::Input::Stdin
    } else {
        crate::io::Input::File(a.input.clone())
    };
    let (bvh, warnings) =
        crate::io::load(&input, a.strict).map_err(|e| anyhow::anyhow!(e.describe(&input)))?;
    crate::io::print_warnings(&input, &warnings);
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
pub(super) fn replay_sensors(
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
pub(super) fn datagrams(text: &[u8]) -> impl Iterator<Item = &[u8]> {
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

//! One recording of `bvh record`: the [`Session`] (the decoder of sample
//! lines or of the neuron stream, the output [`Take`] written frame by frame
//! with its `Frames:` count patched at the end, the counts and the latency
//! histogram), shared with the signal thread behind a mutex.

#[allow(clippy::wildcard_imports)]
use super::*;

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
pub(super) struct Take {
    /// The take until its first frame, not yet in place of the output.
    pub(super) pending: Option<io::AtomicFile>,
    /// The take once in place of the output.
    pub(super) file: Option<File>,
    /// The regular file replaced (at the end of any symbolic links).
    pub(super) target: PathBuf,
    pub(super) count_at: u64,
    pub(super) buf: Vec<u8>,
}

impl Take {
    pub(super) fn create(path: &Path, skeleton: &Skeleton, frame_rate: f64) -> Result<Take> {
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
        io::make_folders(path)?;
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
    pub(super) fn file(&mut self) -> Result<&mut File> {
        if let Some(a) = self.pending.take() {
            self.file = Some(a.commit_open()?);
        }
        self.file.as_mut().context("internal: the take has no file")
    }

    pub(super) fn frames(&mut self, values: &[f64], n_channels: usize) -> Result<()> {
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
    pub(super) fn finish(mut self, frames: u64) -> Result<bool> {
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

pub(super) fn find_last(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).rposition(|w| w == needle)
}

/// Delays from reading the data that completed a frame to the frame
/// written, in a histogram of 1 µs buckets up to 100 ms (bounded memory).
pub(super) struct Latency {
    pub(super) buckets: Vec<u32>,
    pub(super) over: u64,
    pub(super) max: Duration,
    pub(super) n: u64,
}

impl Latency {
    const BUCKETS: usize = 100_000;

    pub(super) fn new() -> Latency {
        Latency { buckets: vec![0; Self::BUCKETS], over: 0, max: Duration::ZERO, n: 0 }
    }

    pub(super) fn record(&mut self, d: Duration) {
        match self.buckets.get_mut(d.as_micros() as usize) {
            Some(b) => *b = b.saturating_add(1),
            None => self.over += 1,
        }
        self.max = self.max.max(d);
        self.n += 1;
    }

    /// The `q` quantile in µs (the bucket's upper edge), or `None` past 100 ms.
    pub(super) fn quantile(&self, q: f64) -> Option<u64> {
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

    pub(super) fn report(&self) -> String {
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
pub(super) enum Decoder {
    /// Sensor sample lines through the recorder.
    Samples { lines: LineReader, reading: Reading, rec: Box<Recorder> },
    /// The Axis Neuron-style stream, recorded as is.
    Neuron(NeuronReader),
}

/// The state of one recording: decoder, output and counts.
pub(super) struct Session {
    pub(super) source: String,
    pub(super) decoder: Decoder,
    pub(super) n_channels: usize,
    pub(super) frame_rate: f64,
    pub(super) frames: Vec<f64>,
    pub(super) written: u64,
    pub(super) take: Take,
    pub(super) bad_lines: u64,
    pub(super) line_no: u64,
    pub(super) live: Option<Live>,
    pub(super) latency: Option<Latency>,
    /// `--one-euro`: the filter every frame passes through before it is
    /// written and shown.
    pub(super) smooth: Option<bvhkit::clean::OneEuroFrames>,
}

pub(super) fn warn(source: &str, bad_lines: &mut u64, at: &str, message: &str) {
    *bad_lines += 1;
    if *bad_lines <= SHOWN_ERRORS {
        eprintln!("bvh: warning: {}", escape(&format!("{source}:{at}: {message}")));
    }
}

impl Session {
    pub(super) fn warn(&mut self, at: String, message: &str) {
        warn(&self.source, &mut self.bad_lines, &at, message);
    }

    /// One input line, without its line end, read at `arrival`.
    pub(super) fn line(&mut self, bytes: &[u8], arrival: Instant) -> Result<()> {
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
    pub(super) fn skip_line(&mut self, message: &str) {
        self.line_no += 1;
        if let Decoder::Samples { lines, reading, .. } = &mut self.decoder {
            let _ = lines.read("", reading);
        }
        self.warn(format!("{}:1", self.line_no), message);
    }

    /// Bytes of a neuron stream, read at `arrival`.
    pub(super) fn neuron(&mut self, bytes: &[u8], arrival: Instant) -> Result<()> {
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
    pub(super) fn emit(&mut self, arrival: Option<Instant>) -> Result<()> {
        if self.frames.is_empty() {
            return Ok(());
        }
        if let Some(smooth) = &mut self.smooth {
            for frame in self.frames.chunks_exact_mut(self.n_channels.max(1)) {
                smooth.filter(frame);
            }
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

    pub(super) fn finish(mut self, output: &Path) -> Result<()> {
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
pub(super) type Shared = Arc<Mutex<Option<Session>>>;

pub(super) fn lock(shared: &Shared) -> MutexGuard<'_, Option<Session>> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs `f` on the session; `Ok(false)` when a signal has taken it.
pub(super) fn with(shared: &Shared, f: impl FnOnce(&mut Session) -> Result<()>) -> Result<bool> {
    match lock(shared).as_mut() {
        Some(s) => f(s).map(|()| true),
        None => Ok(false),
    }
}

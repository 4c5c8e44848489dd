/// The motion section: `Frame Time` and a frames × channels table of values.
///
/// Values are `f64`, in file units for position channels and degrees for
/// rotation channels, frame-major: frame `f`, channel `c` is
/// `values()[f * n_channels() + c]`. The shape is fixed once built; values
/// are free to change.
#[derive(Clone, Debug, PartialEq)]
pub struct Motion {
    frame_time: f64,
    n_frames: usize,
    n_channels: usize,
    values: Vec<f64>,
}

impl Motion {
    /// A motion from frame-major `values`.
    ///
    /// # Errors
    /// When `values.len()` is not a multiple of `n_channels` (or is not empty
    /// when `n_channels` is 0), or when `frame_time` is not finite and positive.
    ///
    /// # Example
    /// ```
    /// let m = bvhkit::Motion::new(1.0 / 30.0, 3, vec![0.0; 6])?;
    /// assert_eq!(m.n_frames(), 2);
    /// # Ok::<(), bvhkit::Error>(())
    /// ```
    pub fn new(frame_time: f64, n_channels: usize, values: Vec<f64>) -> crate::Result<Motion> {
        if n_channels == 0 {
            if !values.is_empty() {
                return Err(crate::Error::invalid("values given for zero channels"));
            }
            return Motion::with_frames(frame_time, 0, 0, values);
        }
        if !values.len().is_multiple_of(n_channels) {
            return Err(crate::Error::invalid(format!(
                "{} values is not a whole number of frames of {n_channels} channels",
                values.len()
            )));
        }
        Motion::with_frames(frame_time, values.len() / n_channels, n_channels, values)
    }

    /// A motion with an explicit frame count, which is needed when there are
    /// no channels (every frame is then empty).
    ///
    /// # Errors
    /// When `values.len() != n_frames * n_channels` or the frame time is not
    /// finite and positive.
    pub fn with_frames(
        frame_time: f64,
        n_frames: usize,
        n_channels: usize,
        values: Vec<f64>,
    ) -> crate::Result<Motion> {
        if !(frame_time.is_finite() && frame_time > 0.0) {
            return Err(crate::Error::invalid(format!(
                "frame time must be positive, found {frame_time}"
            )));
        }
        if n_frames.checked_mul(n_channels) != Some(values.len()) {
            return Err(crate::Error::invalid(format!(
                "{} values do not make {n_frames} frames of {n_channels} channels",
                values.len()
            )));
        }
        Ok(Motion { frame_time, n_frames, n_channels, values })
    }

    pub(crate) fn from_parts(
        frame_time: f64,
        n_frames: usize,
        n_channels: usize,
        values: Vec<f64>,
    ) -> Motion {
        debug_assert_eq!(n_frames * n_channels, values.len());
        Motion { frame_time, n_frames, n_channels, values }
    }

    /// The values, frame-major (the buffer itself, taken out of the
    /// motion: [`crate::ParseBuffers::recycle`] keeps it for the next
    /// parse).
    pub fn into_values(self) -> Vec<f64> {
        self.values
    }

    /// Seconds per frame.
    pub fn frame_time(&self) -> f64 {
        self.frame_time
    }

    /// Frames per second, `1 / frame_time`.
    pub fn fps(&self) -> f64 {
        1.0 / self.frame_time
    }

    /// Sets seconds per frame.
    ///
    /// # Errors
    /// When `t` is not finite and positive.
    pub fn set_frame_time(&mut self, t: f64) -> crate::Result<()> {
        if !(t.is_finite() && t > 0.0) {
            return Err(crate::Error::invalid(format!("frame time must be positive, found {t}")));
        }
        self.frame_time = t;
        Ok(())
    }

    /// Number of frames.
    pub fn n_frames(&self) -> usize {
        self.n_frames
    }

    /// Channels per frame.
    pub fn n_channels(&self) -> usize {
        self.n_channels
    }

    /// Duration in seconds: `n_frames * frame_time`.
    pub fn duration(&self) -> f64 {
        self.n_frames as f64 * self.frame_time
    }

    /// All values, frame-major.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// All values, frame-major, for editing in place.
    pub fn values_mut(&mut self) -> &mut [f64] {
        &mut self.values
    }

    /// The values of frame `i`, one per channel.
    ///
    /// # Panics
    /// When `i >= n_frames()`.
    pub fn frame(&self, i: usize) -> &[f64] {
        assert!(i < self.n_frames, "frame {i} out of range (0..{})", self.n_frames);
        &self.values[i * self.n_channels..(i + 1) * self.n_channels]
    }

    /// The values of frame `i`, for editing.
    ///
    /// # Panics
    /// When `i >= n_frames()`.
    pub fn frame_mut(&mut self, i: usize) -> &mut [f64] {
        assert!(i < self.n_frames, "frame {i} out of range (0..{})", self.n_frames);
        &mut self.values[i * self.n_channels..(i + 1) * self.n_channels]
    }

    /// Iterates over frames.
    pub fn frames(&self) -> impl ExactSizeIterator<Item = &[f64]> + '_ {
        (0..self.n_frames)
            .map(move |i| &self.values[i * self.n_channels..(i + 1) * self.n_channels])
    }
}

//! The one way the batched kernels choose their SIMD build at run time.
//!
//! A kernel is written once, without branches or library calls, as an
//! `#[inline(always)]` loop over slices; [`simd_kernel!`] compiles it three
//! times (AVX-512F, AVX2 and the build's own target, SSE2 on x86-64) and
//! gives it a first argument, a [`Simd`], which says which of the three runs.
//! [`Simd::best`] is the widest the CPU has; [`Simd::PORTABLE`] is the
//! build's own; tests run every level the CPU can (`Simd::available`) and
//! compare each with the scalar reference, bit for bit.
//!
//! No build enables FMA, and Rust never fuses a multiply and an add on its
//! own, so every operation rounds as in the scalar code and the three builds
//! give the same bits: the choice changes the speed only.
//!
//! Why `unsafe`: calling a `#[target_feature]` function is unsafe where the
//! caller lacks the feature. The one such call is in [`simd_kernel!`], and it
//! is sound because a [`Simd`] of a level is only made once the CPU was
//! found to support it (its field is private to this module).

/// Which build of a kernel runs: see the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Simd(Level);

/// The builds of a kernel ([`Simd::level`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Level {
    /// The build's own target features (SSE2 on x86-64).
    Portable,
    /// AVX2: four `f64` lanes.
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// AVX-512F: eight `f64` lanes.
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

impl Simd {
    /// The build's own target features, whatever the CPU.
    pub(crate) const PORTABLE: Simd = Simd(Level::Portable);

    /// The widest build the CPU runs: AVX-512F, else AVX2, else portable.
    #[inline]
    pub(crate) fn best() -> Simd {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                return Simd(Level::Avx512);
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                return Simd(Level::Avx2);
            }
        }
        Simd::PORTABLE
    }

    /// Every build the CPU runs, the portable one first.
    #[cfg(test)]
    pub(crate) fn available() -> Vec<Simd> {
        let mut all = vec![Simd::PORTABLE];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                all.push(Simd(Level::Avx2));
            }
            if std::arch::is_x86_feature_detected!("avx512f") {
                all.push(Simd(Level::Avx512));
            }
        }
        all
    }

    /// Which build this is.
    #[inline(always)]
    pub(crate) fn level(self) -> Level {
        self.0
    }

    /// The lane count a padded lane pass rounds up to on this build: the
    /// `PAD` that [`simd_kernel!`] gives this level's body, for a caller
    /// that pads its slices before the kernel runs.
    #[inline]
    pub(crate) fn pad(self) -> usize {
        match self.0 {
            Level::Portable => PORTABLE_PAD,
            #[cfg(target_arch = "x86_64")]
            Level::Avx2 => AVX2_PAD,
            #[cfg(target_arch = "x86_64")]
            Level::Avx512 => AVX512_PAD,
        }
    }
}

/// [`Simd::pad`] of the portable build: 8, the widest, so that its padding
/// also fits the other builds.
pub(crate) const PORTABLE_PAD: usize = 8;
/// Whether the portable build rounds to an integer (`f64::round_ties_even`)
/// with one instruction (SSE4.1's `roundsd`, AArch64's `frintn`) rather
/// than a library call: a kernel's `ROUND` ([`simd_kernel!`]).
pub(crate) const PORTABLE_ROUND: bool =
    !cfg!(target_arch = "x86_64") || cfg!(target_feature = "sse4.1");
/// [`Simd::pad`] of the AVX2 build: its four `f64` lanes.
pub(crate) const AVX2_PAD: usize = 4;
/// [`Simd::pad`] of the AVX-512F build: its eight `f64` lanes.
pub(crate) const AVX512_PAD: usize = 8;

/// Defines a kernel compiled for every [`Simd`] level, with the level as
/// its first argument:
///
/// ```ignore
/// simd_kernel! {
///     /// Docs of the dispatching function.
///     pub(crate) fn name<const A: bool>(simd: Simd, x: &[f64], out: &mut [f64]) {
///         loop_inline_always::<A, PAD>(x, out)
///     }
/// }
/// ```
///
/// The body (usually one call of an `#[inline(always)]` loop) is compiled
/// once per level, with `PAD` the lane count a padded lane pass rounds up to
/// on that level ([`Simd::pad`]): 8 on AVX-512F, 4 on AVX2, 8 on the
/// portable build (the widest, so that its padding also fits the other
/// builds), and `ROUND` whether `f64::round_ties_even` is one instruction
/// there (AVX2 and AVX-512F: SSE4.1's; the portable build: see
/// [`PORTABLE_ROUND`]), and `LEVEL` the [`Level`] it is compiled
/// for (for a body that picks kernels of its own by level: the number
/// scan's, `parse::scan`). The parameters
/// are identifiers, the generics const parameters only.
macro_rules! simd_kernel {
    (
        $(#[$attr:meta])*
        $vis:vis fn $name:ident $(<$(const $g:ident : $gt:ty),+>)?
            ($simd:ident : Simd $(, $arg:ident : $ty:ty)* $(,)?) $(-> $ret:ty)? $body:block
    ) => {
        $(#[$attr])*
        $vis fn $name $(<$(const $g: $gt),+>)? ($simd: $crate::simd::Simd $(, $arg: $ty)*) $(-> $ret)? {
            #[inline(always)]
            fn portable $(<$(const $g: $gt),+>)? ($($arg: $ty),*) $(-> $ret)? {
                #[allow(dead_code)]
                const PAD: usize = $crate::simd::PORTABLE_PAD;
                #[allow(dead_code)]
                const LEVEL: $crate::simd::Level = $crate::simd::Level::Portable;
                #[allow(dead_code)]
                const ROUND: bool = $crate::simd::PORTABLE_ROUND;
                $body
            }
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2")]
            fn avx2 $(<$(const $g: $gt),+>)? ($($arg: $ty),*) $(-> $ret)? {
                #[allow(dead_code)]
                const PAD: usize = $crate::simd::AVX2_PAD;
                #[allow(dead_code)]
                const LEVEL: $crate::simd::Level = $crate::simd::Level::Avx2;
                #[allow(dead_code)]
                const ROUND: bool = true;
                $body
            }
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx512f")]
            fn avx512 $(<$(const $g: $gt),+>)? ($($arg: $ty),*) $(-> $ret)? {
                #[allow(dead_code)]
                const PAD: usize = $crate::simd::AVX512_PAD;
                #[allow(dead_code)]
                const LEVEL: $crate::simd::Level = $crate::simd::Level::Avx512;
                #[allow(dead_code)]
                const ROUND: bool = true;
                $body
            }
            match $simd.level() {
                $crate::simd::Level::Portable => portable $(::<$($g),+>)? ($($arg),*),
                #[cfg(target_arch = "x86_64")]
                #[allow(unsafe_code)]
                $crate::simd::Level::Avx2 => {
                    // SAFETY: a `Simd` of this level is only made once the
                    // CPU was found to support AVX2 (`crate::simd`).
                    unsafe { avx2 $(::<$($g),+>)? ($($arg),*) }
                }
                #[cfg(target_arch = "x86_64")]
                #[allow(unsafe_code)]
                $crate::simd::Level::Avx512 => {
                    // SAFETY: a `Simd` of this level is only made once the
                    // CPU was found to support AVX-512F (`crate::simd`).
                    unsafe { avx512 $(::<$($g),+>)? ($($arg),*) }
                }
            }
        }
    };
}
pub(crate) use simd_kernel;

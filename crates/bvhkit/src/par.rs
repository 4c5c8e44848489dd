//! The one shape of "each index on the pool, each thread with its own
//! scratch" that several passes share, serial without the `parallel`
//! feature.

/// `f(scratch, i)` for every `i` in `0..n`, in order, each thread (or the
/// one thread) reusing a scratch made by `init`: rayon's `map_init` on the
/// pool with the `parallel` feature, a plain loop without it.
pub(crate) fn map_with_scratch<S, T, I, F>(n: usize, init: I, f: F) -> Vec<T>
where
    T: Send,
    I: Fn() -> S + Sync + Send,
    F: Fn(&mut S, usize) -> T + Sync + Send,
{
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        (0..n).into_par_iter().map_init(init, f).collect()
    }
    #[cfg(not(feature = "parallel"))]
    {
        let mut scratch = init();
        (0..n).map(|i| f(&mut scratch, i)).collect()
    }
}

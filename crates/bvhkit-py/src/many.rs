//! `bvhkit.read_many`: many files on all cores, the GIL released.

use std::path::PathBuf;

use bvhkit::PositionChannels;
use numpy::IntoPyArray;
use numpy::ndarray::Array;
use pyo3::prelude::*;
use rayon::prelude::*;

use crate::bvh::{self, PyBvh};
use crate::errors;

/// Most threads a pool may be asked for: far beyond any machine's cores,
/// far below what takes the system seconds to create (a million threads
/// took 30 s before failing).
const MAX_THREADS: usize = 1024;

/// Reads every path (and computes positions when `positions` is given) in
/// parallel; results come back in input order. With `return_errors`, a file
/// that fails gives its exception object in its place; otherwise the first
/// failing file (in input order) raises.
pub(crate) fn read_many(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    threads: Option<usize>,
    positions: Option<PositionChannels>,
    strict: bool,
    return_errors: bool,
) -> PyResult<Vec<Py<PyAny>>> {
    type Item = bvhkit::Result<(PyBvh, Option<Vec<f64>>)>;
    let work = || -> Vec<Item> {
        paths
            .par_iter()
            .with_max_len(1)
            .map(|p| {
                let bvh = bvh::read_path(p, strict)?;
                let pos = positions.map(|mode| bvh.positions_of(mode, None));
                Ok((bvh, pos))
            })
            .collect()
    };
    let results: Vec<Item> = match threads {
        None => py.detach(work),
        Some(t) if !(1..=MAX_THREADS).contains(&t) => {
            return Err(errors::bad_arg(format!("threads must be 1 to {MAX_THREADS}, not {t}")));
        }
        Some(t) => {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(t)
                .build()
                .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
            py.detach(|| pool.install(work))
        }
    };
    let mut out = Vec::with_capacity(results.len());
    for r in results {
        match r {
            Ok((bvh, pos)) => {
                let joints = bvh.n_joints_rs();
                let obj = Bound::new(py, bvh)?.into_any();
                match pos {
                    None => out.push(obj.unbind()),
                    Some(values) => {
                        let frames = if joints == 0 { 0 } else { values.len() / (3 * joints) };
                        let a = Array::from_shape_vec((frames, joints, 3), values)
                            .map_err(|e| errors::bad_arg(format!("internal shape error: {e}")))?;
                        let pair = (obj, a.into_pyarray(py)).into_pyobject(py)?;
                        out.push(pair.into_any().unbind());
                    }
                }
            }
            Err(e) if return_errors => out.push(errors::into_value(py, errors::to_py(py, e))),
            Err(e) => return Err(errors::to_py(py, e)),
        }
    }
    Ok(out)
}

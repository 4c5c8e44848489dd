//! The dataset writers, read back with the `parquet` crate's own reader and
//! compared with references written here: the golden world positions of
//! the corpus (`../shared/golden`), local rotations as the product of
//! axis-angle quaternions of the rotation channels in listed order, and
//! the velocity and contact formulas.

use std::collections::HashMap;
use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type, Int32Type};
use arrow_array::{Array, RecordBatch};
use bvhkit::glam::{DQuat, DVec3};
use bvhkit::{Bvh, Channel, ReadOptions};
use bvhkit_dataset::{Clip, Contacts, Dtype, Layout, NpzWriter, Options, ParquetWriter, Rotations};
use bvhkit_testdata::{corpus_files, corpus_or_skip, golden_positions};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

fn read_back(bytes: Vec<u8>) -> (RecordBatch, HashMap<String, String>) {
    let b = ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(bytes)).unwrap();
    let kv = b
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .map(|v| v.iter().map(|k| (k.key.clone(), k.value.clone().unwrap_or_default())).collect())
        .unwrap_or_default();
    let schema = b.schema().clone();
    let batches: Vec<RecordBatch> = b.build().unwrap().map(Result::unwrap).collect();
    (arrow_select::concat::concat_batches(&schema, &batches).unwrap(), kv)
}

fn strings(b: &RecordBatch, name: &str) -> Vec<Option<String>> {
    let a = b.column_by_name(name).unwrap();
    if let Some(d) = a.as_dictionary_opt::<Int32Type>() {
        let values = d.values().as_string::<i32>();
        return (0..d.len())
            .map(|i| d.is_valid(i).then(|| values.value(d.keys().value(i) as usize).to_string()))
            .collect();
    }
    let s = a.as_string::<i32>();
    (0..s.len()).map(|i| s.is_valid(i).then(|| s.value(i).to_string())).collect()
}

fn f64s(b: &RecordBatch, name: &str) -> Vec<f64> {
    let a = b.column_by_name(name).unwrap_or_else(|| panic!("no column {name}"));
    match a.data_type() {
        arrow_schema::DataType::Float32 => {
            a.as_primitive::<Float32Type>().values().iter().map(|v| f64::from(*v)).collect()
        }
        _ => a.as_primitive::<Float64Type>().values().to_vec(),
    }
}

fn parse(path: &Path) -> Bvh {
    ReadOptions::new().lenient(true).parse(&std::fs::read(path).unwrap()).unwrap().0
}

/// A joint's local rotation from its channels: the product of one
/// axis-angle quaternion per rotation channel, in listed order.
fn reference_quat(bvh: &Bvh, joint: usize, frame: usize) -> DQuat {
    let j = &bvh.skeleton().joints()[joint];
    let values = bvh.motion().frame(frame);
    let mut q = DQuat::IDENTITY;
    for (k, ch) in j.channels().iter().enumerate() {
        let axis = match ch {
            Channel::Xrotation => DVec3::X,
            Channel::Yrotation => DVec3::Y,
            Channel::Zrotation => DVec3::Z,
            _ => continue,
        };
        q *= DQuat::from_axis_angle(axis, values[j.first_channel() + k].to_radians());
    }
    q
}

fn export(bvh: &Bvh, name: &str, o: &Options) -> (RecordBatch, HashMap<String, String>) {
    let mut w = ParquetWriter::new(Vec::new(), o).unwrap();
    w.write_clip(Clip::compute(name, bvh, o)).unwrap();
    read_back(w.finish().unwrap().0)
}

#[test]
fn long_table_matches_golden_positions_and_reference_rotations_on_the_corpus() {
    if corpus_or_skip("long_table_matches_golden_positions").is_none() {
        return;
    }
    let mut checked = 0;
    for path in corpus_files() {
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let Some(golden) = golden_positions(&stem, "replace") else { continue };
        let bvh = parse(&path);
        let (b, kv) = export(&bvh, &stem, &Options::default());
        let nj = bvh.skeleton().len();
        let nf = bvh.motion().n_frames();
        assert_eq!(b.num_rows(), nj * nf, "{stem}");
        assert!(kv["bvhkit"].contains("\"rotations\":\"quat\""), "{stem}: {kv:?}");
        let names = bvh.skeleton().display_names();
        let joint = strings(&b, "joint");
        let parent = strings(&b, "parent");
        let clip = strings(&b, "clip");
        let frame =
            b.column_by_name("frame").unwrap().as_primitive::<Int32Type>().values().to_vec();
        let (px, py, pz) = (f64s(&b, "px"), f64s(&b, "py"), f64s(&b, "pz"));
        let q: Vec<Vec<f64>> = ["qx", "qy", "qz", "qw"].iter().map(|c| f64s(&b, c)).collect();
        for r in 0..b.num_rows() {
            let (f, j) = (r / nj, r % nj);
            assert_eq!(frame[r] as usize, f);
            assert_eq!(joint[r].as_deref(), Some(names[j].as_str()));
            assert_eq!(clip[r].as_deref(), Some(stem.as_str()));
            let p = bvh.skeleton().joints()[j].parent().map(|p| names[p.index()].clone());
            assert_eq!(parent[r], p, "{stem} row {r}");
            let got = DQuat::from_xyzw(q[0][r], q[1][r], q[2][r], q[3][r]);
            let want = reference_quat(&bvh, j, f);
            assert!(got.w >= 0.0, "{stem} row {r}: qw < 0");
            assert!(
                got.dot(want).abs() > 1.0 - 1e-12,
                "{stem} frame {f} joint {}: {got} vs {want}",
                names[j]
            );
        }
        // Golden positions: every golden row is in the table.
        let (lo, hi) =
            golden.iter().fold((DVec3::MAX, DVec3::MIN), |(lo, hi), r| (lo.min(r.2), hi.max(r.2)));
        let tol = 1e-6 * (hi - lo).max_element().max(1e-9);
        for (k, (f, _, p)) in golden.iter().enumerate() {
            let r = f * nj + k % nj;
            let got = DVec3::new(px[r], py[r], pz[r]);
            assert!((got - *p).abs().max_element() <= tol, "{stem} frame {f}: {got} vs {p}");
        }
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} corpus files have golden positions");
}

#[test]
fn options_rotations_velocities_contacts_root_relative_and_f32() {
    let dir = corpus_or_skip("options").map(|_| ());
    if dir.is_none() {
        return;
    }
    let path = bvhkit_testdata::largest_corpus_files(1).remove(0);
    let bvh = parse(&path);
    let nj = bvh.skeleton().len();
    let nf = bvh.motion().n_frames();
    let base = export(&bvh, "c", &Options::default()).0;
    let dt = bvh.motion().frame_time();
    let contacts = Contacts::default();
    let o = Options {
        rotations: Rotations::SixD,
        velocities: true,
        contacts: Some(contacts),
        root_relative: true,
        ..Options::default()
    };
    let (b, _) = export(&bvh, "c", &o);
    let world: Vec<Vec<f64>> = ["px", "py", "pz"].iter().map(|c| f64s(&base, c)).collect();
    let rel: Vec<Vec<f64>> = ["px", "py", "pz"].iter().map(|c| f64s(&b, c)).collect();
    let v: Vec<Vec<f64>> = ["vx", "vy", "vz"].iter().map(|c| f64s(&b, c)).collect();
    let six: Vec<Vec<f64>> =
        ["c0x", "c0y", "c0z", "c1x", "c1y", "c1z"].iter().map(|c| f64s(&b, c)).collect();
    let contact = b.column_by_name("contact").unwrap().as_boolean().clone();
    let root = |mut j: usize| {
        while let Some(p) = bvh.skeleton().joints()[j].parent() {
            j = p.index();
        }
        j
    };
    let size = bvhkit::units::UnitGuess::of_positions(
        nj,
        &(0..nf * nj)
            .map(|r| DVec3::new(world[0][r], world[1][r], world[2][r]))
            .collect::<Vec<_>>(),
    )
    .size;
    let mut lows: Vec<f64> =
        world[1].chunks(nj).map(|f| f.iter().copied().fold(f64::INFINITY, f64::min)).collect();
    lows.sort_by(f64::total_cmp);
    let ground = lows[(lows.len() - 1) / 2];
    let mut in_contact = 0;
    for r in 0..nf * nj {
        let (f, j) = (r / nj, r % nj);
        let rt = root(j);
        for c in 0..3 {
            let want = if rt == j { world[c][r] } else { world[c][r] - world[c][f * nj + rt] };
            assert_eq!(rel[c][r].to_bits(), want.to_bits(), "root-relative row {r}");
            let (a, z) = if f == 0 {
                (0, 1)
            } else if f == nf - 1 {
                (nf - 2, nf - 1)
            } else {
                (f - 1, f + 1)
            };
            let want_v = (world[c][z * nj + j] - world[c][a * nj + j]) / ((z - a) as f64 * dt);
            assert!((v[c][r] - want_v).abs() <= 1e-9 * (1.0 + want_v.abs()), "velocity row {r}");
        }
        // 6D: the first two columns of the reference quaternion's matrix.
        let m = bvhkit::glam::DMat3::from_quat(reference_quat(&bvh, j, f));
        let want = [m.x_axis.x, m.x_axis.y, m.x_axis.z, m.y_axis.x, m.y_axis.y, m.y_axis.z];
        for k in 0..6 {
            assert!((six[k][r] - want[k]).abs() < 1e-12, "6d row {r}");
        }
        let speed = (v[0][r].powi(2) + v[1][r].powi(2) + v[2][r].powi(2)).sqrt();
        let want_c =
            world[1][r] - ground <= contacts.height * size && speed <= contacts.speed * size;
        assert_eq!(contact.value(r), want_c, "contact row {r}");
        in_contact += usize::from(want_c);
    }
    assert!(in_contact > 0 && in_contact < nf * nj, "contacts: {in_contact} of {}", nf * nj);
    // f32: the float64 values rounded.
    let (b32, _) = export(&bvh, "c", &Options { dtype: Dtype::F32, ..Options::default() });
    let a = b32.column_by_name("px").unwrap();
    assert_eq!(a.data_type(), &arrow_schema::DataType::Float32);
    for (r, v) in a.as_primitive::<Float32Type>().values().iter().enumerate() {
        assert_eq!(v.to_bits(), (world[0][r] as f32).to_bits());
    }
    // Matrix: 9 columns, row-major.
    let (bm, _) =
        export(&bvh, "c", &Options { rotations: Rotations::Matrix, ..Options::default() });
    let m01 = f64s(&bm, "m01");
    let r = nj + nj / 2;
    let m = bvhkit::glam::DMat3::from_quat(reference_quat(&bvh, r % nj, r / nj));
    assert!((m01[r] - m.y_axis.x).abs() < 1e-12);
}

#[test]
fn wide_table_holds_the_long_tables_values_and_clips_are_row_groups() {
    let files = bvhkit_testdata::largest_corpus_files(3);
    if files.is_empty() {
        bvhkit_testdata::skip("wide_table", "no corpus");
        return;
    }
    let o = Options { layout: Layout::Wide, velocities: true, ..Options::default() };
    let mut w = ParquetWriter::new(Vec::new(), &o).unwrap();
    let clips: Vec<Bvh> = files.iter().map(|p| parse(p)).collect();
    for (i, bvh) in clips.iter().enumerate() {
        w.write_clip(Clip::compute(&format!("clip{i}"), bvh, &o)).unwrap();
    }
    let (bytes, skeletons) = w.finish().unwrap();
    let total: usize = clips.iter().map(|b| b.skeleton().len()).sum();
    assert_eq!(skeletons.len(), total);
    let meta = ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(bytes.clone()))
        .unwrap()
        .metadata()
        .clone();
    assert_eq!(meta.num_row_groups(), 3, "one row group per clip");
    let (b, _) = read_back(bytes);
    let clip = strings(&b, "clip");
    let positions = b.column_by_name("positions").unwrap().as_list::<i32>().clone();
    let rotations = b.column_by_name("rotations").unwrap().as_list::<i32>().clone();
    let mut row = 0;
    for (i, bvh) in clips.iter().enumerate() {
        let (long, _) = export(bvh, "x", &Options { velocities: true, ..Options::default() });
        let nj = bvh.skeleton().len();
        let cols: Vec<Vec<f64>> =
            ["px", "py", "pz", "qx", "qy", "qz", "qw"].iter().map(|c| f64s(&long, c)).collect();
        for f in 0..bvh.motion().n_frames() {
            assert_eq!(clip[row].as_deref(), Some(format!("clip{i}").as_str()));
            let p = positions.value(row);
            let p = p.as_primitive::<Float64Type>().values();
            let q = rotations.value(row);
            let q = q.as_primitive::<Float64Type>().values();
            assert_eq!((p.len(), q.len()), (nj * 3, nj * 4));
            for j in 0..nj {
                for c in 0..3 {
                    assert_eq!(p[j * 3 + c].to_bits(), cols[c][f * nj + j].to_bits());
                }
                for c in 0..4 {
                    assert_eq!(q[j * 4 + c].to_bits(), cols[3 + c][f * nj + j].to_bits());
                }
            }
            row += 1;
        }
    }
    assert_eq!(row, b.num_rows());
    // The skeleton table reads back with the same joints and parents.
    let sk = read_back(skeletons.write(Vec::new()).unwrap()).0;
    assert_eq!(sk.num_rows(), total);
    let joints = strings(&sk, "joint");
    let parents = strings(&sk, "parent");
    let names = clips[0].skeleton().display_names();
    for (j, n) in names.iter().enumerate() {
        assert_eq!(joints[j].as_deref(), Some(n.as_str()));
        let p = clips[0].skeleton().joints()[j].parent().map(|p| names[p.index()].clone());
        assert_eq!(parents[j], p);
    }
    assert_eq!(f64s(&sk, "frame_time")[0], clips[0].motion().frame_time());
}

/// A `Cursor` that refuses every byte past `room` (a disk that fills up).
struct Filling {
    bytes: std::io::Cursor<Vec<u8>>,
    room: u64,
}

impl std::io::Write for Filling {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.bytes.position() + buf.len() as u64 > self.room {
            return Err(std::io::Error::from(std::io::ErrorKind::StorageFull));
        }
        self.bytes.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl std::io::Seek for Filling {
    fn seek(&mut self, pos: std::io::SeekFrom) -> std::io::Result<u64> {
        self.bytes.seek(pos)
    }
}

/// An archive whose disk fills up reports it, at the write that failed or
/// at `finish`, whichever comes first, whatever the room left; never a
/// complete archive.
#[test]
fn npz_on_a_full_disk_fails() {
    let bvh = Bvh::parse(bvhkit_testdata::synth_text(3, 5, 40)).unwrap();
    let clip = Clip::compute("walk.bvh", &bvh, &Options::default());
    // With room enough, the whole archive.
    let w = Filling { bytes: std::io::Cursor::new(Vec::new()), room: u64::MAX };
    let mut npz = NpzWriter::new(w, Dtype::F32);
    npz.write_clip(&clip).unwrap();
    let size = npz.finish().unwrap().bytes.into_inner().len() as u64;
    // Less room than that, down to none, at a few hundred points.
    for room in (0..size).step_by((size / 300).max(1) as usize).chain([size - 1]) {
        let w = Filling { bytes: std::io::Cursor::new(Vec::new()), room };
        let mut npz = NpzWriter::new(w, Dtype::F32);
        let failed = npz.write_clip(&clip).is_err() || npz.finish().is_err();
        assert!(failed, "{room} of {size} bytes of room");
    }
}

#[test]
fn npz_arrays_are_numpy_files_with_the_clip_values() {
    let bvh = Bvh::parse(bvhkit_testdata::synth_text(7, 5, 12)).unwrap();
    let o = Options { velocities: true, contacts: Some(Contacts::default()), ..Options::default() };
    let clip = Clip::compute("sub/walk.bvh", &bvh, &o);
    let mut w = NpzWriter::new(std::io::Cursor::new(Vec::new()), Dtype::F64);
    w.write_clip(&clip).unwrap();
    let bytes = w.finish().unwrap().into_inner();
    let mut z = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    let mut names: Vec<String> = z.file_names().map(|n| n.unwrap().into_owned()).collect();
    names.sort();
    let want = [
        "contacts",
        "frame_time",
        "joints",
        "offsets",
        "parents",
        "positions",
        "rotations",
        "units",
        "velocities",
    ];
    assert_eq!(names, want.map(|a| format!("sub/walk.bvh/{a}.npy")));
    let mut read = |n: &str| {
        let mut f = z.by_name(&format!("sub/walk.bvh/{n}.npy")).unwrap();
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut f, &mut v).unwrap();
        v
    };
    let pos = read("positions");
    let hl = u16::from_le_bytes([pos[8], pos[9]]) as usize + 10;
    let nj = clip.joints.len();
    assert!(std::str::from_utf8(&pos[10..hl]).unwrap().contains(&format!("(12, {nj}, 3)")));
    let vals: Vec<f64> =
        pos[hl..].chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(vals.len(), 12 * nj * 3);
    for r in 0..12 * nj {
        for c in 0..3 {
            assert_eq!(vals[r * 3 + c].to_bits(), clip.positions[c][r].to_bits());
        }
    }
    let joints = read("joints");
    let hl = u16::from_le_bytes([joints[8], joints[9]]) as usize + 10;
    let width = (joints.len() - hl) / 4 / nj;
    let first: String = joints[hl..hl + width * 4]
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .take_while(|&c| c != 0)
        .map(|c| char::from_u32(c).unwrap())
        .collect();
    assert_eq!(first, clip.joints[0]);
}

#[test]
fn compute_does_not_depend_on_the_thread_count() {
    let bvh = Bvh::parse(bvhkit_testdata::synth_text(3, 20, 2000)).unwrap();
    let o = Options { velocities: true, ..Options::default() };
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let a = one.install(|| Clip::compute("a", &bvh, &o));
    let b = Clip::compute("a", &bvh, &o);
    assert_eq!(a.positions, b.positions);
    assert_eq!(a.rotations, b.rotations);
    assert_eq!(a.velocities, b.velocities);
    assert_eq!(a.units.size.to_bits(), b.units.size.to_bits());
}

/// The rows read back from a Parquet file do not depend on the thread
/// count nor on how clips are split into row groups and pieces: one thread
/// and whole-clip row groups against two threads and row groups of a few
/// hundred rows (not a multiple of the joint count: a group ends at a frame)
/// or 40 frames, for the long and the wide layout, with every optional
/// column; the largest clip has more rows than one piece (65,536), so the
/// whole-clip row group is fed to the writers in several pieces.
#[test]
fn parquet_rows_do_not_depend_on_threads_or_row_group_size() {
    let clips: Vec<Bvh> = [(3, 20, 700), (5, 7, 1), (9, 33, 150), (11, 60, 1200)]
        .iter()
        .map(|&(seed, joints, frames)| {
            Bvh::parse(bvhkit_testdata::synth_text(seed, joints, frames)).unwrap()
        })
        .collect();
    let big = &clips[3];
    assert!(big.skeleton().len() * big.motion().n_frames() > 65_536, "more rows than a piece");
    for layout in [Layout::Long, Layout::Wide] {
        for dtype in [Dtype::F64, Dtype::F32] {
            let o = Options {
                layout,
                dtype,
                rotations: Rotations::SixD,
                velocities: true,
                contacts: Some(Contacts::default()),
                root_relative: true,
                ..Options::default()
            };
            let write = |threads: usize, group_rows: usize| -> Vec<u8> {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                pool.install(|| {
                    let mut w =
                        ParquetWriter::new(Vec::new(), &o).unwrap().with_row_group_rows(group_rows);
                    for (i, bvh) in clips.iter().enumerate() {
                        w.write_clip(Clip::compute(&format!("c{i}"), bvh, &o)).unwrap();
                    }
                    w.finish().unwrap().0
                })
            };
            let whole = write(1, usize::MAX);
            let group_rows = match layout {
                Layout::Long => 300,
                Layout::Wide => 40,
            };
            let split = write(2, group_rows);
            let groups = |b: &[u8]| {
                ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(b.to_vec()))
                    .unwrap()
                    .metadata()
                    .row_groups()
                    .iter()
                    .map(|g| g.num_rows())
                    .collect::<Vec<i64>>()
            };
            let (gw, gs) = (groups(&whole), groups(&split));
            assert_eq!(gw.len(), clips.len(), "{layout:?}: one row group per clip");
            // The split file: each clip in groups of as many whole frames as
            // fit in `group_rows` rows (at least one), in order.
            let mut want = Vec::new();
            for bvh in &clips {
                let per_frame = match layout {
                    Layout::Long => bvh.skeleton().len(),
                    Layout::Wide => 1,
                };
                let group = (group_rows / per_frame).max(1);
                let mut left = bvh.motion().n_frames();
                while left > 0 {
                    let n = left.min(group);
                    want.push((n * per_frame) as i64);
                    left -= n;
                }
            }
            assert_eq!(gs, want, "{layout:?}");
            assert!(gs.len() > 10, "{layout:?}: clips split into row groups: {gs:?}");
            assert_eq!(gw.iter().sum::<i64>(), gs.iter().sum::<i64>());
            let (a, _) = read_back(whole);
            let (b, _) = read_back(split);
            assert_eq!(a.schema(), b.schema());
            assert!(a.num_rows() > 2000);
            for (name, (x, y)) in a
                .schema()
                .fields()
                .iter()
                .map(|f| f.name())
                .zip(a.columns().iter().zip(b.columns()))
            {
                assert_eq!(x.to_data(), y.to_data(), "{layout:?} {dtype:?}: column {name}");
            }
        }
    }
}

/// The local rotations are `Kinematics::local`'s matrices through
/// `mat3_to_repr`, bit for bit (what `bvh rotations` and the Python package
/// give), on the corpus.
#[test]
fn rotations_are_kinematics_local_bit_for_bit_on_the_corpus() {
    use bvhkit::glam::DAffine3;
    use bvhkit::rotation::{RotationOrder, mat3_to_repr};
    use bvhkit::{Kinematics, PositionChannels};
    if corpus_or_skip("rotations_are_kinematics_local_bit_for_bit").is_none() {
        return;
    }
    let mut checked = 0;
    for path in corpus_files().iter().take(40) {
        let bvh = parse(path);
        let fk = Kinematics::new(bvh.skeleton(), PositionChannels::Replace);
        for rotations in [Rotations::Quat, Rotations::Matrix] {
            let o = Options { rotations, ..Options::default() };
            let clip = Clip::compute("x", &bvh, &o);
            let nj = clip.joints.len();
            let mut xf = vec![DAffine3::IDENTITY; nj];
            let mut v = [0.0; 9];
            let repr = rotations.repr();
            let nf = bvh.motion().n_frames();
            for f in (0..nf).step_by((nf / 50).max(1)) {
                fk.local(bvh.motion().frame(f), &mut xf);
                for (j, x) in xf.iter().enumerate() {
                    mat3_to_repr(x.matrix3, repr, RotationOrder::ZXY, None, None, &mut v);
                    for (c, want) in v[..repr.width()].iter().enumerate() {
                        assert_eq!(
                            clip.rotations[c][f * nj + j].to_bits(),
                            want.to_bits(),
                            "{} frame {f} joint {j}",
                            path.display()
                        );
                    }
                }
            }
        }
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} corpus files");
}

/// `ParquetWriter::write_bvh` (the long table's features computed a row
/// group at a time, each group while the one before is written) writes the
/// bytes of `write_clip(Clip::compute(..))`, the motion table and the
/// skeleton table: on synthetic clips of several row groups with every
/// option it streams (root-relative, f32, 6D and matrix rotations) and those
/// it computes whole (velocities, contacts, the wide layout), on one thread
/// and two; and on the whole corpus with the default options.
#[test]
fn write_bvh_writes_the_bytes_of_write_clip() {
    use bvhkit_dataset::ROW_GROUP_ROWS;
    let synth: Vec<(String, Bvh)> = [(3, 20, 700), (5, 7, 1), (9, 33, 0), (11, 60, 1200)]
        .iter()
        .map(|&(seed, joints, frames)| {
            let bvh = Bvh::parse(bvhkit_testdata::synth_text(seed, joints, frames)).unwrap();
            (format!("synth{seed}"), bvh)
        })
        .collect();
    let write = |clips: &[(String, Bvh)], o: &Options, group_rows, threads, streamed| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            let mut w = ParquetWriter::new(Vec::new(), o).unwrap().with_row_group_rows(group_rows);
            for (name, bvh) in clips {
                if streamed {
                    w.write_bvh(name, bvh).unwrap();
                } else {
                    w.write_clip(Clip::compute(name, bvh, o)).unwrap();
                }
            }
            let (bytes, skeletons) = w.finish().unwrap();
            (bytes, skeletons.write(Vec::new()).unwrap())
        })
    };
    let same = |clips: &[(String, Bvh)], o: &Options, group_rows: usize, threads: usize| {
        let (a, sa) = write(clips, o, group_rows, threads, false);
        let (b, sb) = write(clips, o, group_rows, threads, true);
        let what = format!("{o:?}, {group_rows} rows a group, {threads} threads");
        assert!(a == b, "{what}: motion table");
        assert!(sa == sb, "{what}: skeleton table");
    };
    let options = [
        Options::default(),
        Options {
            dtype: Dtype::F32,
            rotations: Rotations::SixD,
            root_relative: true,
            ..Options::default()
        },
        Options { rotations: Rotations::Matrix, root_relative: true, ..Options::default() },
        Options { velocities: true, contacts: Some(Contacts::default()), ..Options::default() },
        Options { layout: Layout::Wide, ..Options::default() },
    ];
    for o in &options {
        for (group_rows, threads) in [(ROW_GROUP_ROWS, 2), (5_000, 1), (5_000, 2)] {
            same(&synth, o, group_rows, threads);
        }
    }
    if corpus_or_skip("write_bvh_writes_the_bytes_of_write_clip (corpus)").is_none() {
        return;
    }
    let corpus: Vec<(String, Bvh)> = corpus_files()
        .iter()
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), parse(p)))
        .collect();
    assert!(corpus.len() >= 40, "{} corpus clips", corpus.len());
    same(&corpus, &Options::default(), ROW_GROUP_ROWS, 2);
}

/// A clip's name is its key: a second clip of one name is refused by both
/// writers with a message that names it (the NPZ archive printed the zip
/// crate's `EscapeAscii { .. }`; Parquet wrote both under one key), and the
/// clips before it are kept.
#[test]
fn a_second_clip_of_one_name_is_refused_by_name() {
    let bvh = Bvh::parse(bvhkit_testdata::synth_text(3, 5, 10)).unwrap();
    let o = Options::default();
    let (walk, other) = (Clip::compute("walk", &bvh, &o), Clip::compute("run", &bvh, &o));
    let mut npz = NpzWriter::new(std::io::Cursor::new(Vec::new()), Dtype::F32);
    npz.write_clip(&walk).unwrap();
    npz.write_clip(&other).unwrap();
    let err = npz.write_clip(&walk).unwrap_err().to_string();
    assert_eq!(err, "two clips are named \"walk\": a clip's name is its key, so names must differ");
    assert!(npz.finish().is_ok(), "the archive of the first two clips");
    let mut pq = ParquetWriter::new(Vec::new(), &o).unwrap();
    pq.write_clip(Clip::compute("walk", &bvh, &o)).unwrap();
    let err = pq.write_clip(Clip::compute("walk", &bvh, &o)).unwrap_err().to_string();
    assert!(err.starts_with("two clips are named \"walk\""), "{err}");
    let (batch, _) = read_back(pq.finish().unwrap().0);
    assert!(strings(&batch, "clip").iter().all(|c| c.as_deref() == Some("walk")));
    assert_eq!(batch.num_rows(), Clip::compute("walk", &bvh, &o).rows());
}

/// A motion table and its skeleton table carry one id (`bvhkit.pair`, a
/// hash of the skeleton table's rows): the same in both files of an
/// export and in every export of the same clips (the bytes do not change
/// from run to run), another one when the skeleton table differs, so a
/// reader that finds a table beside another export's skeleton table (a
/// `kill -9` between the two renames) can tell.
#[test]
fn a_table_and_its_skeleton_table_share_an_id_of_the_skeleton_rows() {
    let o = Options::default();
    let export = |text: String, name: &str| {
        let bvh = Bvh::parse(text).unwrap();
        let mut w = ParquetWriter::new(Vec::new(), &o).unwrap();
        w.write_clip(Clip::compute(name, &bvh, &o)).unwrap();
        let (table, skeletons) = w.finish().unwrap();
        let id = skeletons.pair();
        let (_, kv) = read_back(table.clone());
        assert_eq!(kv[bvhkit_dataset::PAIR_KEY], id);
        let sk = skeletons.write(Vec::new()).unwrap();
        let (batch, kv) = read_back(sk.clone());
        assert_eq!(kv[bvhkit_dataset::PAIR_KEY], id);
        assert_eq!(strings(&batch, "clip")[0].as_deref(), Some(name));
        assert!(id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()), "{id}");
        (id, table, sk)
    };
    let text = bvhkit_testdata::synth_text(5, 4, 6);
    let (a, table, sk) = export(text.clone(), "walk");
    let (again, table2, sk2) = export(text.clone(), "walk");
    assert_eq!(
        (a.as_str(), &table, &sk),
        (again.as_str(), &table2, &sk2),
        "same export, same bytes"
    );
    // Another name, another frame count, another offset: another id.
    let (b, ..) = export(text.clone(), "run");
    let (c, ..) = export(bvhkit_testdata::synth_text(5, 4, 7), "walk");
    let (d, ..) = export(bvhkit_testdata::synth_text(6, 4, 6), "walk");
    let mut ids = vec![a, b, c, d];
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 4, "{ids:?}");
}

/// Values that are not finite in the output's float type are refused,
/// naming the column, frame and joint, by every writer and path (they were
/// written as infinities): positions past 3.4e38 as `f32`, velocities of
/// extreme but finite positions past 1.8e308.
#[test]
fn values_not_finite_in_the_output_type_are_refused() {
    let text = "HIERARCHY\nROOT a\n{\n OFFSET 0 0 0\n CHANNELS 3 Xposition Yposition Zposition\n End Site\n {\n  OFFSET 0 1 0\n }\n}\nMOTION\nFrames: 3\nFrame Time: 0.01\n0 0 0\n0 1e300 0\n0 -1e300 0\n";
    let bvh = Bvh::parse(text).unwrap();
    let f32s = Options { dtype: Dtype::F32, ..Options::default() };
    let e = ParquetWriter::new(Vec::new(), &f32s).unwrap().write_bvh("x", &bvh).unwrap_err();
    assert_eq!(
        e.to_string(),
        "clip \"x\": py of joint \"a\" at frame 1 is 1e300, not finite as a 32-bit float; extreme values would be written as infinities (--dtype f64 holds values up to 1.8e308)"
    );
    let e = ParquetWriter::new(Vec::new(), &f32s)
        .unwrap()
        .write_clip(Clip::compute("x", &bvh, &f32s))
        .unwrap_err();
    assert!(
        e.to_string().starts_with(
            "clip \"x\": py of joint \"a\" at frame 1 is 1e300, not finite as a 32-bit"
        ),
        "{e}"
    );
    let mut npz = NpzWriter::new(std::io::Cursor::new(Vec::new()), Dtype::F32);
    let e = npz.write_clip(&Clip::compute("x", &bvh, &f32s)).unwrap_err();
    assert!(e.to_string().starts_with("clip \"x\": py of joint \"a\" at frame 1 is 1e300"), "{e}");
    // As f64 the positions are finite, but their velocity (1e307 / 0.01 s)
    // is not.
    let bvh = Bvh::parse(text.replace("1e300", "1e307")).unwrap();
    let f64s = Options::default();
    let mut w = ParquetWriter::new(Vec::new(), &f64s).unwrap();
    w.write_bvh("x", &bvh).unwrap();
    let vel = Options { velocities: true, ..Options::default() };
    let e = ParquetWriter::new(Vec::new(), &vel).unwrap().write_bvh("x", &bvh).unwrap_err();
    assert!(
        e.to_string().starts_with(
            "clip \"x\": vy of joint \"a\" at frame 0 is inf, not finite as a 64-bit float"
        ),
        "{e}"
    );
    let mut npz = NpzWriter::new(std::io::Cursor::new(Vec::new()), Dtype::F64);
    assert!(npz.write_clip(&Clip::compute("x", &bvh, &vel)).is_err());
    // Large values that fit are kept.
    let fits = Bvh::parse(text.replace("1e300", "1e30")).unwrap();
    ParquetWriter::new(Vec::new(), &f32s).unwrap().write_bvh("x", &fits).unwrap();
}

//! The key arrays of a binary FBX file's `AnimationCurve`s, read straight
//! from the file's bytes (the import's fast path).
//!
//! `ufbx` turns every key into a 48-byte `ufbx_keyframe` (time, value,
//! interpolation, tangents) and inflates every curve's key times. For a
//! file whose curves all have their keys on the frames the import writes
//! (every `bvh export`), only the values are needed, a 4-byte float each,
//! and identical `KeyTime` arrays (an export writes one deflated array in
//! every curve) need decoding once. So the import loads the scene with
//! `ignore_animation` (the stacks, layers, curve nodes and curves are all
//! there, without their keys) and `retain_dom` (each curve element's FBX
//! object id), and this module finds each curve's `KeyTime` and
//! `KeyValueFloat` arrays by that id: it walks the records of `Objects`
//! (their end offsets let it skip everything else) and keeps slices of the
//! file, decoding nothing until asked.
//!
//! Every read is bounds-checked; a record that does not parse is an
//! [`Error::Read`] naming its offset.

use std::collections::HashMap;

use crate::Error;

/// A typed array property, as stored (maybe deflated).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Array<'b> {
    /// The type code: `l` (i64), `f` (f32), `d` (f64), `i` (i32)...
    pub(crate) ty: u8,
    /// Element count.
    pub(crate) count: usize,
    /// Whether the bytes are a zlib stream (encoding 1).
    pub(crate) deflated: bool,
    /// The stored bytes.
    pub(crate) data: &'b [u8],
    /// Where the property starts in the file (for messages).
    pub(crate) at: usize,
}

impl PartialEq for Array<'_> {
    /// The same stored array (which is the same values).
    fn eq(&self, other: &Self) -> bool {
        self.ty == other.ty
            && self.count == other.count
            && self.deflated == other.deflated
            && self.data == other.data
    }
}

/// The bytes of the array's elements, inflated when stored deflated; `n`
/// bytes per element.
fn element_bytes<'b>(a: &Array<'b>, n: usize) -> Result<std::borrow::Cow<'b, [u8]>, Error> {
    // No array may hold more than a clip may (the core's 2^29 values): a
    // count from a damaged or hostile file must not size an allocation.
    let max = bvhkit::edit::resample::MAX_VALUES;
    if a.count > max {
        return Err(Error::Read(format!(
            "array at byte {}: {} elements, more than the limit of {max}",
            a.at, a.count
        )));
    }
    let len = a
        .count
        .checked_mul(n)
        .ok_or_else(|| Error::Read(format!("array at byte {}: too long", a.at)))?;
    let bytes: std::borrow::Cow<'b, [u8]> = if a.deflated {
        let v = miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(a.data, len)
            .map_err(|e| Error::Read(format!("array at byte {}: inflating: {e:?}", a.at)))?;
        v.into()
    } else {
        a.data.into()
    };
    if bytes.len() != len {
        return Err(Error::Read(format!(
            "array at byte {}: {} bytes for {} elements of {n} bytes",
            a.at,
            bytes.len(),
            a.count
        )));
    }
    Ok(bytes)
}

impl Array<'_> {
    /// The key times in seconds, as `ufbx` computes them (`ticks as f64 /
    /// ticks_per_second`).
    pub(crate) fn times(&self, ticks_per_second: f64) -> Result<Vec<f64>, Error> {
        if self.ty != b'l' {
            return Err(Error::Read(format!("KeyTime at byte {}: not an i64 array", self.at)));
        }
        let b = element_bytes(self, 8)?;
        Ok(b.chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")) as f64 / ticks_per_second)
            .collect())
    }

    /// The values as `f64`, through `f32` for `f` arrays (as `ufbx` reads them).
    pub(crate) fn values(&self) -> Result<Values<'_>, Error> {
        let (n, wide) = match self.ty {
            b'f' => (4, false),
            b'd' => (8, true),
            _ => {
                return Err(Error::Read(format!(
                    "KeyValueFloat at byte {}: not a float array",
                    self.at
                )));
            }
        };
        Ok(Values { bytes: element_bytes(self, n)?, wide })
    }
}

/// The elements of a value array, ready to read.
pub(crate) struct Values<'b> {
    bytes: std::borrow::Cow<'b, [u8]>,
    wide: bool,
}

impl Values<'_> {
    /// Value `i` (`i` below the count).
    #[inline]
    pub(crate) fn get(&self, i: usize) -> f64 {
        if self.wide {
            f64::from_le_bytes(self.bytes[8 * i..8 * i + 8].try_into().expect("8 bytes"))
        } else {
            f64::from(f32::from_le_bytes(self.bytes[4 * i..4 * i + 4].try_into().expect("4 bytes")))
        }
    }
}

/// A curve's key arrays.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Curve<'b> {
    pub(crate) times: Array<'b>,
    pub(crate) values: Array<'b>,
}

/// Every `AnimationCurve` of the file with both arrays, by object id.
pub(crate) struct Curves<'b> {
    pub(crate) by_id: HashMap<i64, Curve<'b>>,
}

/// A little-endian binary FBX file (the fast path reads no other).
pub(crate) fn is_binary(bytes: &[u8]) -> bool {
    bytes.len() >= 27 && bytes.starts_with(b"Kaydara FBX Binary  \0") && bytes[22] == 0
}

struct Reader<'b> {
    bytes: &'b [u8],
    /// 64-bit record headers (7.5 and later).
    wide: bool,
}

/// A record header: name, property list span, end.
struct Record<'b> {
    name: &'b [u8],
    n_props: usize,
    props: std::ops::Range<usize>,
    end: usize,
}

impl<'b> Reader<'b> {
    fn bad(at: usize, what: &str) -> Error {
        Error::Read(format!("record at byte {at}: {what}"))
    }

    fn u32_at(&self, at: usize) -> Option<u32> {
        Some(u32::from_le_bytes(self.bytes.get(at..at.checked_add(4)?)?.try_into().ok()?))
    }

    fn u64_at(&self, at: usize) -> Option<u64> {
        Some(u64::from_le_bytes(self.bytes.get(at..at.checked_add(8)?)?.try_into().ok()?))
    }

    fn word(&self, at: usize) -> Option<usize> {
        if self.wide {
            usize::try_from(self.u64_at(at)?).ok()
        } else {
            Some(self.u32_at(at)? as usize)
        }
    }

    /// The record at `at`, inside `limit`; `None` for the null record.
    fn record(&self, at: usize, limit: usize) -> Result<Option<Record<'b>>, Error> {
        let w = if self.wide { 8 } else { 4 };
        let head = || Self::bad(at, "truncated header");
        let end = self.word(at).ok_or_else(head)?;
        let n_props = self.word(at + w).ok_or_else(head)?;
        let props_len = self.word(at + 2 * w).ok_or_else(head)?;
        let name_len = usize::from(*self.bytes.get(at + 3 * w).ok_or_else(head)?);
        if end == 0 {
            return Ok(None);
        }
        let name_at = at + 3 * w + 1;
        let props_start = name_at + name_len;
        let props_end = props_start.checked_add(props_len).ok_or_else(head)?;
        if end <= at || end > limit || props_end > end {
            return Err(Self::bad(at, "its end offset is outside its parent"));
        }
        Ok(Some(Record {
            name: &self.bytes[name_at..props_start],
            n_props,
            props: props_start..props_end,
            end,
        }))
    }

    /// The children of a record whose properties end at `start`, up to `end`.
    fn children(&self, start: usize, end: usize) -> Result<Vec<(usize, Record<'b>)>, Error> {
        let mut out = Vec::new();
        let mut at = start;
        while at < end {
            match self.record(at, end)? {
                Some(r) => {
                    let next = r.end;
                    out.push((at, r));
                    at = next;
                }
                None => break,
            }
        }
        Ok(out)
    }

    /// The first property of `r` when it is an `L` (an object id).
    fn id(&self, at: usize, r: &Record<'b>) -> Result<i64, Error> {
        let p = r.props.start;
        match (r.n_props, self.bytes.get(p)) {
            (1.., Some(b'L')) => self
                .u64_at(p + 1)
                .filter(|_| p + 9 <= r.props.end)
                .map(|v| v as i64)
                .ok_or_else(|| Self::bad(at, "truncated id")),
            _ => Err(Self::bad(at, "its first property is not an id")),
        }
    }

    /// The first property of `r` when it is an array.
    fn array(&self, at: usize, r: &Record<'b>) -> Result<Array<'b>, Error> {
        let p = r.props.start;
        let ty = *self
            .bytes
            .get(p)
            .filter(|_| r.n_props >= 1)
            .ok_or_else(|| Self::bad(at, "no property"))?;
        if !matches!(ty, b'f' | b'd' | b'l' | b'i' | b'b') {
            return Err(Self::bad(at, "its first property is not an array"));
        }
        let bad = || Self::bad(at, "truncated array");
        let count = self.u32_at(p + 1).ok_or_else(bad)? as usize;
        let encoding = self.u32_at(p + 5).ok_or_else(bad)?;
        let len = self.u32_at(p + 9).ok_or_else(bad)? as usize;
        let data_end = (p + 13).checked_add(len).filter(|&e| e <= r.props.end).ok_or_else(bad)?;
        if encoding > 1 {
            return Err(Self::bad(at, &format!("array encoding {encoding}")));
        }
        Ok(Array { ty, count, deflated: encoding == 1, data: &self.bytes[p + 13..data_end], at })
    }
}

impl<'b> Curves<'b> {
    /// The curves of `bytes` (a binary FBX file of `version`).
    pub(crate) fn read(bytes: &'b [u8], version: u32) -> Result<Curves<'b>, Error> {
        let r = Reader { bytes, wide: version >= 7500 };
        let mut by_id = HashMap::new();
        for (_, top) in r.children(27, bytes.len())? {
            if top.name != b"Objects" {
                continue;
            }
            for (at, obj) in r.children(top.props.end, top.end)? {
                if obj.name != b"AnimationCurve" {
                    continue;
                }
                let id = r.id(at, &obj)?;
                let (mut times, mut values) = (None, None);
                for (at, c) in r.children(obj.props.end, obj.end)? {
                    match c.name {
                        b"KeyTime" => times = Some(r.array(at, &c)?),
                        b"KeyValueFloat" => values = Some(r.array(at, &c)?),
                        _ => {}
                    }
                }
                if let (Some(times), Some(values)) = (times, values) {
                    if times.count != values.count {
                        return Err(Reader::bad(at, "KeyTime and KeyValueFloat differ in length"));
                    }
                    // Two curves of one id: which one ufbx connects is
                    // its business; the fast path does not guess.
                    if by_id.insert(id, Curve { times, values }).is_some() {
                        return Err(Reader::bad(at, &format!("a second curve of id {id}")));
                    }
                }
            }
        }
        Ok(Curves { by_id })
    }

    /// The arrays of a curve element of the scene (found by the object id
    /// of its retained DOM node).
    pub(crate) fn of(&self, c: &ufbx::AnimCurve) -> Option<&Curve<'b>> {
        let dom = c.element.dom_node.as_ref()?;
        let id = dom.values.first()?.value_int;
        self.by_id.get(&id)
    }
}

//! The binary FBX record format (7.4: 32-bit offsets), written by hand.
//!
//! A file is the 27-byte header, a list of node records, a null record and
//! the footer. A node record is its absolute end offset, its property
//! count, the byte length of its property list (all `u32`), its name
//! (`u8` length, bytes), the properties (a type code and the value, arrays
//! as count, encoding 0 (uncompressed), byte length, values), its children
//! and, when it has children (or no properties, or is one of the nodes the
//! Autodesk SDK always closes so), a 13-byte null record.

/// The FBX version written: 7.4.
pub(crate) const VERSION: u32 = 7400;

/// One node record with its properties already encoded.
#[derive(Debug, Default)]
pub(crate) struct Node {
    name: &'static str,
    props: Vec<u8>,
    n_props: u32,
    children: Vec<Node>,
    /// A last property of this many bytes, made while the record is
    /// written ([`Node::write_with`]): (key, byte length).
    deferred: Option<(usize, usize)>,
}

impl Node {
    pub(crate) fn new(name: &'static str) -> Node {
        Node { name, ..Node::default() }
    }

    pub(crate) fn bool(mut self, v: bool) -> Node {
        self.tag(b'C').push(if v { b'T' } else { b'F' });
        self
    }

    pub(crate) fn i32(mut self, v: i32) -> Node {
        self.tag(b'I').extend_from_slice(&v.to_le_bytes());
        self
    }

    pub(crate) fn i64(mut self, v: i64) -> Node {
        self.tag(b'L').extend_from_slice(&v.to_le_bytes());
        self
    }

    pub(crate) fn f64(mut self, v: f64) -> Node {
        self.tag(b'D').extend_from_slice(&v.to_le_bytes());
        self
    }

    pub(crate) fn str(self, s: &str) -> Node {
        self.bytes_prop(b'S', s.as_bytes())
    }

    /// A string property of raw bytes (`Name\0\x01Class`).
    pub(crate) fn str_bytes(self, s: &[u8]) -> Node {
        self.bytes_prop(b'S', s)
    }

    pub(crate) fn raw(self, b: &[u8]) -> Node {
        self.bytes_prop(b'R', b)
    }

    fn bytes_prop(mut self, code: u8, b: &[u8]) -> Node {
        let len = u32::try_from(b.len()).expect("a property under 4 GiB");
        let p = self.tag(code);
        p.extend_from_slice(&len.to_le_bytes());
        p.extend_from_slice(b);
        self
    }

    pub(crate) fn f64s(self, v: &[f64]) -> Node {
        self.array(b'd', v.len(), 8, |out| {
            v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes()))
        })
    }

    pub(crate) fn f32s(self, v: &[f32]) -> Node {
        self.array(b'f', v.len(), 4, |out| {
            v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes()))
        })
    }

    pub(crate) fn i32s(self, v: &[i32]) -> Node {
        self.array(b'i', v.len(), 4, |out| {
            v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes()))
        })
    }

    /// A last property of `len` bytes (its type code included) that
    /// [`Node::write_with`]'s `fill` writes for `key` when the record is
    /// written, so that a large array is made straight into the file
    /// instead of into a buffer of its own first.
    pub(crate) fn deferred(mut self, key: usize, len: usize) -> Node {
        debug_assert!(self.deferred.is_none());
        self.n_props += 1;
        self.deferred = Some((key, len));
        self
    }

    fn array(mut self, code: u8, n: usize, size: usize, put: impl FnOnce(&mut Vec<u8>)) -> Node {
        let count = u32::try_from(n).expect("an array under 2^32 values");
        let bytes = u32::try_from(n * size).expect("an array under 4 GiB");
        let p = self.tag(code);
        p.extend_from_slice(&count.to_le_bytes());
        p.extend_from_slice(&0u32.to_le_bytes());
        p.extend_from_slice(&bytes.to_le_bytes());
        p.reserve(n * size);
        put(p);
        self
    }

    fn tag(&mut self, code: u8) -> &mut Vec<u8> {
        self.n_props += 1;
        self.props.push(code);
        &mut self.props
    }

    /// Adds a child node.
    pub(crate) fn child(mut self, c: Node) -> Node {
        self.children.push(c);
        self
    }

    /// Adds a child node in place.
    pub(crate) fn push(&mut self, c: Node) {
        self.children.push(c);
    }

    /// Appends the record to `out`, whose length is the file offset.
    ///
    /// # Panics
    /// Beyond 4 GiB (7.4's offsets are 32-bit).
    pub(crate) fn write(&self, out: &mut Vec<u8>) {
        self.write_with(out, &mut |_, _| unreachable!("a deferred property without its fill"));
    }

    /// [`Node::write`], `fill(key, out)` writing each [`Node::deferred`]
    /// property (exactly the length it announced).
    pub(crate) fn write_with(&self, out: &mut Vec<u8>, fill: &mut dyn FnMut(usize, &mut Vec<u8>)) {
        let start = out.len();
        out.extend_from_slice(&[0; 12]);
        out.push(u8::try_from(self.name.len()).expect("a short node name"));
        out.extend_from_slice(self.name.as_bytes());
        out.extend_from_slice(&self.props);
        let mut plen = self.props.len();
        if let Some((key, len)) = self.deferred {
            let at = out.len();
            fill(key, out);
            assert_eq!(out.len() - at, len, "deferred property {key} of the announced length");
            plen += len;
        }
        for c in &self.children {
            c.write_with(out, fill);
        }
        if self.closed() {
            out.extend_from_slice(&[0; 13]);
        }
        let end = u32::try_from(out.len()).expect("binary FBX 7.4 files stay under 4 GiB");
        out[start..start + 4].copy_from_slice(&end.to_le_bytes());
        out[start + 4..start + 8].copy_from_slice(&self.n_props.to_le_bytes());
        let plen = u32::try_from(plen).expect("properties under 4 GiB");
        out[start + 8..start + 12].copy_from_slice(&plen.to_le_bytes());
    }
}

/// Bytes on their way to a writer: the last ones in `buf`, flushed in
/// pieces of about 2 MiB, with the file offset they have reached.
pub(crate) struct Sink<'a> {
    pub(crate) buf: Vec<u8>,
    flushed: usize,
    w: &'a mut dyn std::io::Write,
    err: std::io::Result<()>,
}

impl<'a> Sink<'a> {
    /// A sink whose first bytes are `head`.
    pub(crate) fn new(head: Vec<u8>, w: &'a mut dyn std::io::Write) -> Sink<'a> {
        Sink { buf: head, flushed: 0, w, err: Ok(()) }
    }

    /// The file offset of the next byte.
    pub(crate) fn offset(&self) -> usize {
        self.flushed + self.buf.len()
    }

    fn flush_over(&mut self, at_least: usize) {
        if self.buf.len() >= at_least {
            if self.err.is_ok() {
                self.err = self.w.write_all(&self.buf);
            }
            self.flushed += self.buf.len();
            self.buf.clear();
        }
    }

    /// Writes what is left; the first error of any write.
    pub(crate) fn finish(mut self) -> std::io::Result<()> {
        self.flush_over(0);
        self.err
    }
}

impl Node {
    /// The record's length in bytes, children and null record included.
    fn size(&self) -> usize {
        13 + self.name.len()
            + self.props.len()
            + self.deferred.map_or(0, |d| d.1)
            + self.children.iter().map(Node::size).sum::<usize>()
            + if self.closed() { 13 } else { 0 }
    }

    fn closed(&self) -> bool {
        !self.children.is_empty()
            || self.n_props == 0
            || matches!(self.name, "AnimationStack" | "AnimationLayer")
    }

    /// [`Node::write_with`] into a [`Sink`]: the record's end offset is
    /// known before its children are written ([`Node::size`]), so its bytes
    /// go to the writer as they are made.
    ///
    /// # Panics
    /// Beyond 4 GiB.
    pub(crate) fn stream(&self, sink: &mut Sink<'_>, fill: &mut dyn FnMut(usize, &mut Vec<u8>)) {
        let end = u32::try_from(sink.offset() + self.size())
            .expect("binary FBX 7.4 files stay under 4 GiB");
        let plen = self.props.len() + self.deferred.map_or(0, |d| d.1);
        let out = &mut sink.buf;
        out.extend_from_slice(&end.to_le_bytes());
        out.extend_from_slice(&self.n_props.to_le_bytes());
        out.extend_from_slice(&u32::try_from(plen).expect("properties under 4 GiB").to_le_bytes());
        out.push(u8::try_from(self.name.len()).expect("a short node name"));
        out.extend_from_slice(self.name.as_bytes());
        out.extend_from_slice(&self.props);
        if let Some((key, len)) = self.deferred {
            let at = out.len();
            fill(key, out);
            assert_eq!(out.len() - at, len, "deferred property {key} of the announced length");
        }
        sink.flush_over(2 << 20);
        for c in &self.children {
            c.stream(sink, fill);
        }
        if self.closed() {
            sink.buf.extend_from_slice(&[0; 13]);
        }
        debug_assert_eq!(sink.offset(), end as usize);
    }
}

/// The zlib stream of `v`'s little-endian bytes (an array's encoding 1).
pub(crate) fn deflate_i64s(v: &[i64]) -> Vec<u8> {
    let raw: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    miniz_oxide::deflate::compress_to_vec_zlib(&raw, 6)
}

/// The head of an array property: type code, count, encoding (0 plain,
/// 1 deflated) and byte length.
pub(crate) fn array_head(out: &mut Vec<u8>, code: u8, count: usize, encoding: u32, bytes: usize) {
    out.push(code);
    out.extend_from_slice(&u32::try_from(count).expect("an array under 2^32 values").to_le_bytes());
    out.extend_from_slice(&encoding.to_le_bytes());
    out.extend_from_slice(&u32::try_from(bytes).expect("an array under 4 GiB").to_le_bytes());
}

/// The file's first bytes: magic, then the version.
pub(crate) fn header(out: &mut Vec<u8>) {
    out.extend_from_slice(b"Kaydara FBX Binary  \0\x1a\0");
    out.extend_from_slice(&VERSION.to_le_bytes());
}

/// The 16 bytes that follow the top-level null record; readers take any
/// value, the SDK writes one that goes with the `FileId` of the header
/// extension and `CreationTime` (`FILE_ID`, `CREATION_TIME`).
const FOOTER_ID: [u8; 16] = [
    0xfa, 0xbc, 0xab, 0x09, 0xd0, 0xc8, 0xd4, 0x66, 0xb1, 0x76, 0xfb, 0x83, 0x1c, 0xf7, 0x26, 0x7e,
];

/// The `FileId` of the header that goes with [`FOOTER_ID`].
pub(crate) const FILE_ID: [u8; 16] = [
    0x28, 0xb3, 0x2a, 0xeb, 0xb6, 0x24, 0xcc, 0xc2, 0xbf, 0xc8, 0xb0, 0x2a, 0xa9, 0x2b, 0xfc, 0xf1,
];

/// The `CreationTime` that goes with [`FOOTER_ID`].
pub(crate) const CREATION_TIME: &str = "1970-01-01 10:00:00:000";

/// The top-level null record and the footer; `out` starts at file offset
/// `at`.
pub(crate) fn footer(out: &mut Vec<u8>, at: usize) {
    out.extend_from_slice(&[0; 13]);
    out.extend_from_slice(&FOOTER_ID);
    out.extend_from_slice(&[0; 4]);
    // Padding to a multiple of 16 bytes (a whole 16 when already there).
    let pad = 16 - (at + out.len()) % 16;
    out.extend(std::iter::repeat_n(0u8, pad));
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&[0; 120]);
    out.extend_from_slice(&[
        0xf8, 0x5a, 0x8c, 0x6a, 0xde, 0xf5, 0xd9, 0x7e, 0xec, 0xe9, 0x0c, 0xe3, 0x75, 0x8f, 0x29,
        0x0b,
    ]);
}

/// A `P` record of a `Properties70` block: name, type, label, flags and values.
pub(crate) fn p(name: &str, type_: &str, label: &str, flags: &str) -> Node {
    Node::new("P").str(name).str(type_).str(label).str(flags)
}

/// `P` of one integer (`int`, `enum`, `bool`).
pub(crate) fn p_int(name: &str, type_: &str, label: &str, v: i32) -> Node {
    p(name, type_, label, "").i32(v)
}

/// `P` of one double.
pub(crate) fn p_f64(name: &str, type_: &str, label: &str, flags: &str, v: f64) -> Node {
    p(name, type_, label, flags).f64(v)
}

/// `P` of three doubles (vectors, colours).
pub(crate) fn p_vec3(name: &str, type_: &str, label: &str, flags: &str, v: [f64; 3]) -> Node {
    p(name, type_, label, flags).f64(v[0]).f64(v[1]).f64(v[2])
}

/// `P` of a time in ticks.
pub(crate) fn p_time(name: &str, v: i64) -> Node {
    p(name, "KTime", "Time", "").i64(v)
}

/// `P` of a string.
pub(crate) fn p_str(name: &str, v: &str) -> Node {
    p(name, "KString", "", "").str(v)
}

/// An object's name as FBX stores it: `name\0\x01Class`.
pub(crate) fn object_name(name: &str, class: &str) -> Vec<u8> {
    let mut v = Vec::with_capacity(name.len() + class.len() + 2);
    v.extend_from_slice(name.as_bytes());
    v.extend_from_slice(b"\0\x01");
    v.extend_from_slice(class.as_bytes());
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_knows_its_end_and_lengths() {
        let mut out = vec![0u8; 27];
        Node::new("Ab").i32(7).str("xy").write(&mut out);
        // end offset, 2 properties, 5 + 7 bytes of properties, name.
        assert_eq!(u32::from_le_bytes(out[27..31].try_into().unwrap()) as usize, out.len());
        assert_eq!(u32::from_le_bytes(out[31..35].try_into().unwrap()), 2);
        assert_eq!(u32::from_le_bytes(out[35..39].try_into().unwrap()), 5 + 7);
        assert_eq!(&out[39..42], b"\x02Ab");
        assert_eq!(&out[42..47], &[b'I', 7, 0, 0, 0]);
        assert_eq!(&out[47..], &[b'S', 2, 0, 0, 0, b'x', b'y']);
    }

    #[test]
    fn children_are_closed_by_a_null_record() {
        let mut out = Vec::new();
        Node::new("A").child(Node::new("B").bool(true)).write(&mut out);
        // A: 13 + 1; B: 13 + 1 + 2; null record 13.
        assert_eq!(out.len(), 14 + 16 + 13);
        assert_eq!(u32::from_le_bytes(out[14..18].try_into().unwrap()), 30);
        assert!(out[30..].iter().all(|&b| b == 0));
    }

    #[test]
    fn arrays_are_uncompressed_with_their_byte_length() {
        let mut out = Vec::new();
        Node::new("K").i32s(&[1, 2, 3, 4]).write(&mut out);
        let p = &out[14..];
        assert_eq!(p[0], b'i');
        assert_eq!(u32::from_le_bytes(p[1..5].try_into().unwrap()), 4);
        assert_eq!(u32::from_le_bytes(p[5..9].try_into().unwrap()), 0);
        assert_eq!(u32::from_le_bytes(p[9..13].try_into().unwrap()), 16);
        assert_eq!(p.len(), 13 + 16);
    }

    #[test]
    fn deferred_properties_are_filled_while_written() {
        let mut out = Vec::new();
        let times = [5i64, 10, 15];
        let z = deflate_i64s(&times);
        let n = Node::new("K").deferred(7, 13 + z.len());
        n.write_with(&mut out, &mut |key, out| {
            assert_eq!(key, 7);
            array_head(out, b'l', 3, 1, z.len());
            out.extend_from_slice(&z);
        });
        assert_eq!(u32::from_le_bytes(out[0..4].try_into().unwrap()) as usize, out.len());
        assert_eq!(u32::from_le_bytes(out[4..8].try_into().unwrap()), 1);
        assert_eq!(u32::from_le_bytes(out[8..12].try_into().unwrap()) as usize, 13 + z.len());
        let p = &out[14..];
        assert_eq!((p[0], u32::from_le_bytes(p[5..9].try_into().unwrap())), (b'l', 1));
        let raw = miniz_oxide::inflate::decompress_to_vec_zlib(&p[13..]).unwrap();
        assert_eq!(raw, times.iter().flat_map(|t| t.to_le_bytes()).collect::<Vec<u8>>());
    }

    #[test]
    fn the_footer_ends_aligned_with_the_magic() {
        let mut out = Vec::new();
        header(&mut out);
        footer(&mut out, 0);
        assert_eq!(&out[..23], b"Kaydara FBX Binary  \0\x1a\0");
        // 27 + 13 + 16 + 4 = 60 bytes, padded to 64, then 4 + 120 + 16.
        assert_eq!(out.len(), 64 + 140);
        assert_eq!(out[out.len() - 16], 0xf8);
    }
}

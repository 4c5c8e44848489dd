//! A deterministic 256-colour palette and a fast nearest-colour mapping for
//! GIF frames.
//!
//! The palette is built once per animation from a few sample frames: the
//! most common exact colours (flat fills: background, figure bodies) get
//! entries of their own and a weighted median cut shares the rest among
//! anti-aliased edges. Pixels are then mapped through a lazily filled lookup
//! table indexed by 5 bits per channel, so mapping a pixel is one table read.
//!
//! # Implementation notes
//!
//! GIFs use a deterministic median-cut palette plus exact entries for the most
//! common colours, mapped through a 5-bit-per-channel lookup table without
//! dithering.

/// Entries reserved for the most common colours.
const EXACT: usize = 24;
const BINS: usize = 1 << 15;
const UNSET: u16 = u16::MAX;

fn bin(r: u8, g: u8, b: u8) -> usize {
    (usize::from(r >> 3) << 10) | (usize::from(g >> 3) << 5) | usize::from(b >> 3)
}

/// Colour statistics of sample frames.
#[derive(Debug)]
pub(crate) struct Histogram {
    count: Vec<u32>,
    sum: Vec<[u64; 3]>,
}

impl Histogram {
    pub(crate) fn new() -> Histogram {
        Histogram { count: vec![0; BINS], sum: vec![[0; 3]; BINS] }
    }

    /// Adds the opaque RGBA pixels of one frame.
    pub(crate) fn add(&mut self, rgba: &[u8]) {
        for px in rgba.chunks_exact(4) {
            let i = bin(px[0], px[1], px[2]);
            self.count[i] += 1;
            let s = &mut self.sum[i];
            s[0] += u64::from(px[0]);
            s[1] += u64::from(px[1]);
            s[2] += u64::from(px[2]);
        }
    }

    fn mean(&self, i: usize) -> [f64; 3] {
        let c = f64::from(self.count[i].max(1));
        let s = self.sum[i];
        [s[0] as f64 / c, s[1] as f64 / c, s[2] as f64 / c]
    }

    /// Builds the palette (at most 256 colours, at least one).
    pub(crate) fn palette(&self) -> Palette {
        let mut used: Vec<usize> = (0..BINS).filter(|&i| self.count[i] > 0).collect();
        // Most common first; ties by bin index, so the order is total.
        used.sort_by(|&a, &b| self.count[b].cmp(&self.count[a]).then(a.cmp(&b)));
        let mut colors: Vec<[f64; 3]> = used.iter().take(EXACT).map(|&i| self.mean(i)).collect();
        let rest: Vec<usize> = used.iter().skip(EXACT).copied().collect();
        if !rest.is_empty() {
            let mut boxes = vec![rest];
            while boxes.len() + colors.len() < 256 {
                // Split the box with the largest weighted extent.
                let best = boxes
                    .iter()
                    .enumerate()
                    .filter(|(_, b)| b.len() > 1)
                    .map(|(k, b)| {
                        let (axis, range) = self.widest_axis(b);
                        let w: f64 = b.iter().map(|&i| f64::from(self.count[i]).sqrt()).sum();
                        (k, axis, w * range)
                    })
                    .max_by(|x, y| x.2.total_cmp(&y.2).then(y.0.cmp(&x.0)));
                let Some((k, axis, score)) = best else { break };
                if score <= 0.0 {
                    break;
                }
                let mut b = std::mem::take(&mut boxes[k]);
                b.sort_by(|&x, &y| {
                    self.mean(x)[axis].total_cmp(&self.mean(y)[axis]).then(x.cmp(&y))
                });
                let total: f64 = b.iter().map(|&i| f64::from(self.count[i]).sqrt()).sum();
                let mut acc = 0.0;
                let mut cut = 1;
                for (n, &i) in b.iter().enumerate() {
                    acc += f64::from(self.count[i]).sqrt();
                    if acc >= total * 0.5 {
                        cut = (n + 1).clamp(1, b.len() - 1);
                        break;
                    }
                }
                let tail = b.split_off(cut);
                boxes[k] = b;
                boxes.push(tail);
            }
            for b in &boxes {
                let (mut s, mut c) = ([0.0; 3], 0.0);
                for &i in b {
                    let n = f64::from(self.count[i]);
                    let m = self.mean(i);
                    for ch in 0..3 {
                        s[ch] += m[ch] * n;
                    }
                    c += n;
                }
                colors.push([s[0] / c, s[1] / c, s[2] / c]);
            }
        }
        if colors.is_empty() {
            colors.push([0.0; 3]);
        }
        let rgb: Vec<[u8; 3]> =
            colors.iter().map(|c| c.map(|v| v.round().clamp(0.0, 255.0) as u8)).collect();
        let mut lut = vec![UNSET; BINS];
        // Seen bins map from their mean colour, so flat fills are exact.
        for &i in &used {
            let m = self.mean(i).map(|v| v.round() as u8);
            lut[i] = nearest(&rgb, m) as u16;
        }
        Palette { rgb, lut }
    }

    fn widest_axis(&self, b: &[usize]) -> (usize, f64) {
        let mut lo = [f64::MAX; 3];
        let mut hi = [f64::MIN; 3];
        for &i in b {
            let m = self.mean(i);
            for ch in 0..3 {
                lo[ch] = lo[ch].min(m[ch]);
                hi[ch] = hi[ch].max(m[ch]);
            }
        }
        (0..3).map(|ch| (ch, hi[ch] - lo[ch])).fold((0, -1.0), |a, b| if b.1 > a.1 { b } else { a })
    }
}

fn nearest(rgb: &[[u8; 3]], c: [u8; 3]) -> usize {
    let d = |p: &[u8; 3]| (0..3).map(|k| (i32::from(p[k]) - i32::from(c[k])).pow(2)).sum::<i32>();
    let mut best = (0, i32::MAX);
    for (k, p) in rgb.iter().enumerate() {
        let dk = d(p);
        if dk < best.1 {
            best = (k, dk);
        }
    }
    best.0
}

/// A palette of at most 256 colours with its lookup table.
#[derive(Debug)]
pub(crate) struct Palette {
    rgb: Vec<[u8; 3]>,
    lut: Vec<u16>,
}

impl Palette {
    /// The palette as `[r, g, b, r, g, b, ...]`, padded to a power of two.
    pub(crate) fn bytes(&self) -> Vec<u8> {
        let n = self.rgb.len().next_power_of_two().max(2);
        let mut out: Vec<u8> = self.rgb.iter().flatten().copied().collect();
        out.resize(n * 3, 0);
        out
    }

    /// Maps opaque RGBA pixels to palette indices.
    pub(crate) fn map(&mut self, rgba: &[u8], out: &mut Vec<u8>) {
        out.clear();
        out.reserve(rgba.len() / 4);
        for px in rgba.chunks_exact(4) {
            let i = bin(px[0], px[1], px[2]);
            let mut idx = self.lut[i];
            if idx == UNSET {
                let c = [(px[0] & 0xf8) | 4, (px[1] & 0xf8) | 4, (px[2] & 0xf8) | 4];
                idx = nearest(&self.rgb, c) as u16;
                self.lut[i] = idx;
            }
            out.push(idx as u8);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_colours_are_exact_and_small_inputs_work() {
        let mut h = Histogram::new();
        let img = [10, 20, 30, 255, 200, 100, 0, 255, 10, 20, 30, 255];
        h.add(&img);
        let mut p = h.palette();
        let mut idx = Vec::new();
        p.map(&img, &mut idx);
        let bytes = p.bytes();
        assert_eq!(bytes.len(), 6);
        assert_eq!(&bytes[usize::from(idx[0]) * 3..][..3], &[10, 20, 30]);
        assert_eq!(&bytes[usize::from(idx[1]) * 3..][..3], &[200, 100, 0]);
        assert_eq!(idx[0], idx[2]);
        // Unseen colours map to the nearest entry.
        p.map(&[190, 110, 10, 255], &mut idx);
        assert_eq!(&bytes[usize::from(idx[0]) * 3..][..3], &[200, 100, 0]);
        assert_eq!(Histogram::new().palette().bytes().len(), 6);
    }

    #[test]
    fn gradient_uses_the_whole_palette() {
        let mut h = Histogram::new();
        let img: Vec<u8> = (0..8192u32)
            .flat_map(|i| [(i & 255) as u8, ((i >> 8) & 255) as u8, ((i * 7) & 255) as u8, 255])
            .collect();
        h.add(&img);
        let p = h.palette();
        assert_eq!(p.rgb.len(), 256);
    }
}

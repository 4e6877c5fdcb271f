//! Images a cell shows, checked and downscaled before they reach the model: a plot sent as
//! 100,000 characters of base64 text, or a 4000-pixel PNG, overflows clients. Every image
//! comes back as real PNG bytes no larger than [`MAX_SIDE`] pixels on either side.

/// The largest width or height an image is returned at.
pub const MAX_SIDE: u32 = 1024;

/// A decoded, size-bounded PNG.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundedPng {
    /// The PNG bytes (re-encoded when downscaled).
    pub png: Vec<u8>,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// The size before downscaling, when it was downscaled.
    pub original: Option<(u32, u32)>,
}

/// Checks that `bytes` is a PNG and downscales it to fit [`MAX_SIDE`]. The error says why the
/// image could not be used.
pub fn bound_png(bytes: Vec<u8>) -> Result<BoundedPng, String> {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(&bytes[..]));
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().map_err(|e| format!("not a PNG: {e}"))?;
    let (width, height) = {
        let info = reader.info();
        (info.width, info.height)
    };
    if width <= MAX_SIDE && height <= MAX_SIDE {
        return Ok(BoundedPng {
            png: bytes,
            width,
            height,
            original: None,
        });
    }
    let size = reader
        .output_buffer_size()
        .ok_or_else(|| "the image is too large to decode".to_string())?;
    let mut buf = vec![0u8; size];
    let frame = reader
        .next_frame(&mut buf)
        .map_err(|e| format!("cannot decode the PNG: {e}"))?;
    let rgba = to_rgba(&buf, &frame)?;
    let scale = f64::from(MAX_SIDE) / f64::from(width.max(height));
    let new_w = ((f64::from(width) * scale).round() as u32).clamp(1, MAX_SIDE);
    let new_h = ((f64::from(height) * scale).round() as u32).clamp(1, MAX_SIDE);
    let small = box_downscale(&rgba, width, height, new_w, new_h);
    let png = encode_rgba(&small, new_w, new_h)?;
    Ok(BoundedPng {
        png,
        width: new_w,
        height: new_h,
        original: Some((width, height)),
    })
}

fn to_rgba(buf: &[u8], frame: &png::OutputInfo) -> Result<Vec<u8>, String> {
    let (w, h) = (frame.width as usize, frame.height as usize);
    let channels = match frame.color_type {
        png::ColorType::Grayscale => 1,
        png::ColorType::GrayscaleAlpha => 2,
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        png::ColorType::Indexed => return Err("unexpected indexed colour after expansion".into()),
    };
    let mut out = Vec::with_capacity(w * h * 4);
    for y in 0..h {
        let row = &buf[y * frame.line_size..y * frame.line_size + w * channels];
        for px in row.chunks_exact(channels) {
            let rgba = match channels {
                1 => [px[0], px[0], px[0], 255],
                2 => [px[0], px[0], px[0], px[1]],
                3 => [px[0], px[1], px[2], 255],
                _ => [px[0], px[1], px[2], px[3]],
            };
            out.extend_from_slice(&rgba);
        }
    }
    Ok(out)
}

/// Area-average downscaling: each output pixel is the mean of the source pixels it covers.
fn box_downscale(src: &[u8], w: u32, h: u32, nw: u32, nh: u32) -> Vec<u8> {
    let (w, h, nw, nh) = (w as usize, h as usize, nw as usize, nh as usize);
    let mut out = vec![0u8; nw * nh * 4];
    for oy in 0..nh {
        let y0 = oy * h / nh;
        let y1 = ((oy + 1) * h / nh).max(y0 + 1).min(h);
        for ox in 0..nw {
            let x0 = ox * w / nw;
            let x1 = ((ox + 1) * w / nw).max(x0 + 1).min(w);
            let mut acc = [0u64; 4];
            for y in y0..y1 {
                for x in x0..x1 {
                    let i = (y * w + x) * 4;
                    for c in 0..4 {
                        acc[c] += u64::from(src[i + c]);
                    }
                }
            }
            let n = ((y1 - y0) * (x1 - x0)) as u64;
            let o = (oy * nw + ox) * 4;
            for c in 0..4 {
                out[o + c] = (acc[c] / n) as u8;
            }
        }
    }
    out
}

/// Encodes RGBA8 pixels as a PNG.
pub fn encode_rgba(pixels: &[u8], width: u32, height: u32) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, width, height);
        enc.set_color(png::ColorType::Rgba);
        enc.set_depth(png::BitDepth::Eight);
        let mut writer = enc
            .write_header()
            .map_err(|e| format!("cannot encode the PNG: {e}"))?;
        writer
            .write_image_data(pixels)
            .map_err(|e| format!("cannot encode the PNG: {e}"))?;
    }
    Ok(out)
}

/// The width and height of a PNG, if it is one.
pub fn png_size(bytes: &[u8]) -> Option<(u32, u32)> {
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let reader = decoder.read_info().ok()?;
    let info = reader.info();
    Some((info.width, info.height))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_images_pass_through_and_large_ones_shrink() {
        let small = encode_rgba(&[200u8; 10 * 5 * 4], 10, 5).unwrap();
        let b = bound_png(small.clone()).unwrap();
        assert_eq!((b.width, b.height, b.original), (10, 5, None));
        assert_eq!(b.png, small);

        let (w, h) = (3000u32, 1500u32);
        let mut px = vec![0u8; (w * h * 4) as usize];
        for (i, p) in px.chunks_exact_mut(4).enumerate() {
            let x = (i as u32) % w;
            p.copy_from_slice(&[if x < w / 2 { 255 } else { 0 }, 0, 0, 255]);
        }
        let big = encode_rgba(&px, w, h).unwrap();
        let b = bound_png(big).unwrap();
        assert_eq!((b.width, b.height), (1024, 512));
        assert_eq!(b.original, Some((3000, 1500)));
        assert_eq!(png_size(&b.png), Some((1024, 512)));
    }

    #[test]
    fn garbage_is_refused() {
        assert!(
            bound_png(b"not a png".to_vec())
                .unwrap_err()
                .contains("not a PNG")
        );
    }
}

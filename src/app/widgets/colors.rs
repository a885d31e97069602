//! Colors: stable per name (the same kernel is the same color in every report
//! and every session), fixed per memcpy direction, NVTX colors as recorded.

use eframe::egui::Color32;

/// FNV-1a: tiny, deterministic across runs and platforms (unlike `DefaultHasher`).
fn hash(name: &str) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in name.bytes() {
        h ^= b as u32;
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// A mid-saturation color picked by the name's hash, readable under white text.
pub fn for_name(name: &str) -> Color32 {
    let h = hash(name);
    let hue = (h % 360) as f32 / 360.0;
    let sat = 0.45 + ((h >> 9) % 20) as f32 / 100.0;
    let val = 0.55 + ((h >> 17) % 15) as f32 / 100.0;
    hsv(hue, sat, val)
}

/// The color of an NVTX range that has none of its own: its name's, turned
/// around the hue circle by its nesting level, so that a range and the ones
/// nested in it never look alike (two names can hash to near hues; a level
/// apart they are at least 0.3 turn apart whatever the names).
pub fn for_nvtx(name: &str, level: u8) -> Color32 {
    let h = hash(name);
    // 0.37 turn a level: levels 1, 2, 3 apart differ by 0.37, 0.26, 0.11 turn
    // plus the names' own difference; adjacent levels are what must differ.
    let hue = ((h % 360) as f32 / 360.0 + level as f32 * 0.37).fract();
    let sat = 0.45 + ((h >> 9) % 20) as f32 / 100.0;
    let val = 0.55 + ((h >> 17) % 15) as f32 / 100.0;
    hsv(hue, sat, val)
}

/// Nsight's convention, kept so users read directions at a glance.
pub fn for_copy_kind(kind: u8) -> Color32 {
    match kind {
        1 => Color32::from_rgb(64, 160, 64),   // HtoD: green
        2 => Color32::from_rgb(200, 80, 60),   // DtoH: red
        8 => Color32::from_rgb(60, 150, 170),  // DtoD: teal
        10 => Color32::from_rgb(150, 90, 180), // PtoP: purple
        _ => Color32::from_rgb(150, 150, 90),
    }
}

pub const MEMSET: Color32 = Color32::from_rgb(90, 110, 160);
pub const SYNC: Color32 = Color32::from_rgb(190, 60, 60);
pub const SELECTED: Color32 = Color32::from_rgb(255, 200, 0);
pub const RELATED: Color32 = Color32::from_rgb(0, 220, 255);
/// GPU metric charts: Nsight's green.
pub const METRIC: Color32 = Color32::from_rgb(118, 185, 0);
pub const HIGHLIGHT: Color32 = Color32::from_rgb(255, 255, 255);

/// An NVTX ARGB color, or `None` when the range has none (0).
pub fn from_argb(argb: u32) -> Option<Color32> {
    (argb != 0).then(|| Color32::from_rgb((argb >> 16) as u8, (argb >> 8) as u8, argb as u8))
}

/// The "something happens here" mark for events narrower than a pixel: the
/// row's color, darkened so it reads as a summary, not as one event.
pub fn busy(base: Color32) -> Color32 {
    Color32::from_rgb(base.r() / 2 + 40, base.g() / 2 + 40, base.b() / 2 + 40)
}

fn hsv(h: f32, s: f32, v: f32) -> Color32 {
    let i = (h * 6.0).floor();
    let f = h * 6.0 - i;
    let p = v * (1.0 - s);
    let q = v * (1.0 - f * s);
    let t = v * (1.0 - (1.0 - f) * s);
    let (r, g, b) = match i as i32 % 6 {
        0 => (v, t, p),
        1 => (q, v, p),
        2 => (p, v, t),
        3 => (p, q, v),
        4 => (t, p, v),
        _ => (v, p, q),
    };
    Color32::from_rgb((r * 255.0) as u8, (g * 255.0) as u8, (b * 255.0) as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_name_same_color_and_nvtx_colors_kept() {
        assert_eq!(for_name("gemm"), for_name("gemm"));
        assert_ne!(for_name("gemm"), for_name("relu"));
        assert_eq!(from_argb(0xFF00FF00), Some(Color32::from_rgb(0, 255, 0)));
        assert_eq!(from_argb(0), None);
    }
}

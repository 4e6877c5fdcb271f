//! Unpredictable names for the files agent-tools makes beside others (temp files, journals,
//! run marks), so no two runs ever pick the same one.

/// 24 hex digits from the kernel's random source (a hash of the clock and a process-wide
/// random key if that source is unavailable).
pub(crate) fn random_hex() -> String {
    let mut buf = [0u8; 12];
    if getrandom::fill(&mut buf).is_err() {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0),
        );
        buf[..8].copy_from_slice(&h.finish().to_le_bytes());
    }
    buf.iter().map(|b| format!("{b:02x}")).collect()
}

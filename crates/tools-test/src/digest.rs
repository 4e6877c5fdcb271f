//! The digest a recording keeps of each file's text, so a later change knows whether the
//! recorded lines still hold.

use sha2::{Digest, Sha256};

/// The hex sha256 of `text`, as every recorder computes it.
pub fn digest(text: &[u8]) -> String {
    Sha256::digest(text)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

//! The notebook-shaped record of a cell's rich outputs, for programs: each `display()` and
//! the value, in order, as a notebook's `display_data` / `execute_result` would hold them —
//! their MIME types, their plain text, and a SHA-256 of their HTML (a table's HTML is large;
//! its digest lets a program compare it with a notebook's without carrying it). The model
//! reads the plain text in the answer; this list goes in the structured result only.

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::protocol::MimeBundle;

/// Most outputs listed in the structured result.
pub(crate) const MAX_OUTPUTS_LISTED: usize = 50;
/// Most characters of one output's plain text kept in the list.
pub(crate) const MAX_OUTPUT_TEXT: usize = 2000;

/// One rich output of a cell.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RichOutput {
    /// `display_data` (a `display()` or a figure) or `execute_result` (the cell's value).
    pub output_type: &'static str,
    /// The MIME types the kernel produced, sorted.
    pub mime_types: Vec<String>,
    /// The `text/plain` form, cut to its first 2,000 characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Characters of `text/plain` left out by the cut.
    #[serde(skip_serializing_if = "is_zero")]
    pub text_cut: usize,
    /// SHA-256 (hex) of the `text/html` form.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub html_sha256: Option<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl RichOutput {
    /// The record of one MIME bundle.
    pub(crate) fn of(output_type: &'static str, data: &MimeBundle) -> RichOutput {
        let (text, text_cut) = match data.get("text/plain") {
            Some(plain) => {
                let count = plain.chars().count();
                let kept: String = plain.chars().take(MAX_OUTPUT_TEXT).collect();
                (Some(kept), count.saturating_sub(MAX_OUTPUT_TEXT))
            }
            None => (None, 0),
        };
        let html_sha256 = data.get("text/html").map(|html| {
            Sha256::digest(html.as_bytes())
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect()
        });
        RichOutput {
            output_type,
            // A BTreeMap's keys come sorted.
            mime_types: data.keys().cloned().collect(),
            text,
            text_cut,
            html_sha256,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bundle_becomes_its_types_text_and_html_digest() {
        let mut data = MimeBundle::new();
        data.insert("text/plain".into(), "x".repeat(MAX_OUTPUT_TEXT + 5));
        data.insert("text/html".into(), "abc".into());
        let r = RichOutput::of("execute_result", &data);
        assert_eq!(r.mime_types, ["text/html", "text/plain"]);
        assert_eq!(r.text.as_ref().map(String::len), Some(MAX_OUTPUT_TEXT));
        assert_eq!(r.text_cut, 5);
        // SHA-256 of "abc", the FIPS 180-2 example.
        assert_eq!(
            r.html_sha256.as_deref(),
            Some("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        );
    }
}

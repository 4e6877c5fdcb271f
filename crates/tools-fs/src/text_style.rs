//! A text file's own conventions, kept by `edit` and `apply_patch`: a UTF-8 byte-order
//! mark and CRLF line endings.
//!
//! Models write `\n` whatever the file uses. A file whose every line ends in `\r\n` is
//! edited as if it used `\n` (the model's `old_string` matches as written, `\r\n` in it is
//! accepted too) and written back with `\r\n` on every line, inserted ones included. A file
//! that mixes both is edited as it is, byte for byte. A leading BOM is set aside before
//! matching and put back on write.

/// The UTF-8 byte-order mark.
const BOM: &str = "\u{feff}";

/// How a text file's lines end and whether it starts with a BOM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TextStyle {
    /// The file starts with a UTF-8 BOM.
    pub bom: bool,
    /// Every line break of the file is `\r\n` (and it has at least one).
    pub crlf: bool,
}

impl TextStyle {
    /// The style of `text` and its body as the model sees it: BOM removed, `\r\n` turned
    /// into `\n` when the whole file uses `\r\n`.
    pub(crate) fn detect(text: &str) -> (TextStyle, String) {
        let (bom, rest) = match text.strip_prefix(BOM) {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let breaks = rest.matches('\n').count();
        let crlf = breaks > 0 && rest.matches("\r\n").count() == breaks;
        let body = if crlf {
            rest.replace("\r\n", "\n")
        } else {
            rest.to_string()
        };
        (TextStyle { bom, crlf }, body)
    }

    /// A string from the model (an `old_string`, a `new_string`) in the body's terms.
    pub(crate) fn model_text(&self, s: &str) -> String {
        if self.crlf {
            s.replace("\r\n", "\n")
        } else {
            s.to_string()
        }
    }

    /// The bytes to write for an edited `body`, in the file's own style.
    pub(crate) fn render(&self, body: &str) -> Vec<u8> {
        let mut out = String::with_capacity(body.len() + body.len() / 16 + 3);
        if self.bom {
            out.push_str(BOM);
        }
        if self.crlf {
            out.push_str(&body.replace('\n', "\r\n"));
        } else {
            out.push_str(body);
        }
        out.into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crlf_and_bom_round_trip_and_mixed_files_stay_as_they_are() {
        let (s, body) = TextStyle::detect("\u{feff}a\r\nb\r\n");
        assert_eq!(
            s,
            TextStyle {
                bom: true,
                crlf: true
            }
        );
        assert_eq!(body, "a\nb\n");
        assert_eq!(
            s.render("a\nx\ny\nb\n"),
            "\u{feff}a\r\nx\r\ny\r\nb\r\n".as_bytes()
        );
        assert_eq!(s.model_text("a\r\nb"), "a\nb");
        let (m, body) = TextStyle::detect("a\r\nb\n");
        assert!(!m.crlf && !m.bom);
        assert_eq!(m.render(&body), b"a\r\nb\n");
        let (plain, _) = TextStyle::detect("no newline");
        assert!(!plain.crlf);
    }
}

//! Positions by line and symbol, never by column: a model asked for a column guesses, and a
//! wrong guess lands on another symbol of the same line. This module finds the symbol on the
//! line (whole-identifier occurrences preferred), refuses to guess between several, and
//! converts between byte offsets and the server's position encoding (UTF-8 when negotiated,
//! else UTF-16 code units).

/// The position encoding agreed with a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// `character` counts UTF-8 bytes.
    Utf8,
    /// `character` counts UTF-16 code units (the protocol's default).
    Utf16,
    /// `character` counts Unicode scalar values.
    Utf32,
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// Why a symbol could not be placed on a line; the message is written for the model.
pub fn find_symbol(
    line_text: &str,
    line_no: u32,
    symbol: &str,
    occurrence: Option<u32>,
) -> Result<usize, String> {
    if symbol.is_empty() {
        return Err("`symbol` is empty; give a name that appears on the line".into());
    }
    let all: Vec<usize> = line_text.match_indices(symbol).map(|(i, _)| i).collect();
    if all.is_empty() {
        return Err(format!(
            "`{symbol}` does not occur on line {line_no}, which reads: {}",
            show_line(line_text)
        ));
    }
    let whole: Vec<usize> = tools_core::whole_words(line_text, symbol, is_ident).collect();
    let hits = if whole.is_empty() { all } else { whole };
    match occurrence {
        Some(n) if n >= 1 && (n as usize) <= hits.len() => Ok(hits[n as usize - 1]),
        Some(n) => Err(format!(
            "`occurrence` {n} is out of range: `{symbol}` occurs {} time(s) on line {line_no}",
            hits.len()
        )),
        None if hits.len() == 1 => Ok(hits[0]),
        None => {
            let list: Vec<String> = hits
                .iter()
                .enumerate()
                .map(|(k, &i)| {
                    let col = line_text[..i].chars().count() + 1;
                    format!(
                        "  occurrence {}: column {col}: {}",
                        k + 1,
                        context(line_text, i, symbol.len())
                    )
                })
                .collect();
            Err(format!(
                "`{symbol}` occurs {} times on line {line_no}; pass `occurrence` (1-based) to pick one:\n{}",
                hits.len(),
                list.join("\n")
            ))
        }
    }
}

fn show_line(line: &str) -> String {
    let t = line.trim_end();
    if t.trim().is_empty() {
        "(an empty line)".into()
    } else {
        format!("`{}`", tools_core::text::cut_text(t.trim(), 200))
    }
}

fn context(line: &str, at: usize, len: usize) -> String {
    let start = line[..at]
        .char_indices()
        .rev()
        .nth(15)
        .map(|(i, _)| i)
        .unwrap_or(0);
    let end_from = at + len;
    let end = line[end_from..]
        .char_indices()
        .nth(15)
        .map(|(i, _)| end_from + i)
        .unwrap_or(line.len());
    format!(
        "…{}[{}]{}…",
        &line[start..at],
        &line[at..end_from],
        &line[end_from..end]
    )
}

/// The server's `character` for byte offset `byte` of `line`.
pub fn to_lsp_character(line: &str, byte: usize, enc: Encoding) -> u32 {
    let byte = clamp_to_boundary(line, byte);
    let prefix = &line[..byte];
    let n = match enc {
        Encoding::Utf8 => prefix.len(),
        Encoding::Utf16 => prefix.chars().map(char::len_utf16).sum(),
        Encoding::Utf32 => prefix.chars().count(),
    };
    n as u32
}

/// The byte offset in `line` of the server's `character` (clamped to the line).
pub fn from_lsp_character(line: &str, character: u32, enc: Encoding) -> usize {
    let target = character as usize;
    match enc {
        Encoding::Utf8 => clamp_to_boundary(line, target.min(line.len())),
        Encoding::Utf16 => {
            let mut units = 0;
            for (i, c) in line.char_indices() {
                if units >= target {
                    return i;
                }
                units += c.len_utf16();
            }
            line.len()
        }
        Encoding::Utf32 => line
            .char_indices()
            .nth(target)
            .map(|(i, _)| i)
            .unwrap_or(line.len()),
    }
}

fn clamp_to_boundary(line: &str, mut byte: usize) -> usize {
    byte = byte.min(line.len());
    while byte > 0 && !line.is_char_boundary(byte) {
        byte -= 1;
    }
    byte
}

/// The 1-based column we print for byte offset `byte` (counted in characters).
pub fn display_column(line: &str, byte: usize) -> usize {
    line[..clamp_to_boundary(line, byte)].chars().count() + 1
}

/// The text of 0-based line `n` of `text` (without its line ending).
pub fn line_of(text: &str, n: usize) -> Option<&str> {
    text.split('\n')
        .nth(n)
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
}

/// The byte offset in `text` of an LSP position.
pub fn offset_of(text: &str, line: u32, character: u32, enc: Encoding) -> usize {
    let mut start = 0usize;
    for (i, l) in text.split('\n').enumerate() {
        if i == line as usize {
            let l = l.strip_suffix('\r').unwrap_or(l);
            return start + from_lsp_character(l, character, enc);
        }
        start += l.len() + 1;
    }
    text.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefers_whole_identifiers_and_refuses_to_guess() {
        let line = "    total = add(subtotal, tax)";
        assert_eq!(find_symbol(line, 3, "total", None), Ok(4));
        let err = find_symbol("x = x + 1", 1, "x", None).unwrap_err();
        assert!(err.contains("occurs 2 times"), "{err}");
        assert!(err.contains("occurrence 2: column 5"), "{err}");
        assert_eq!(find_symbol("x = x + 1", 1, "x", Some(2)), Ok(4));
        let err = find_symbol("x = x + 1", 1, "x", Some(3)).unwrap_err();
        assert!(err.contains("out of range"));
        let err = find_symbol("def foo():", 7, "bar", None).unwrap_err();
        assert!(err.contains("`def foo():`"), "{err}");
        // Only a substring occurrence: still found.
        assert_eq!(find_symbol("subtotal", 1, "total", None), Ok(3));
    }

    #[test]
    fn utf16_and_utf8_round_trip_past_non_ascii() {
        let line = "s = \"héllo😀\"; name = 1";
        let b = line.find("name").unwrap();
        let u16c = to_lsp_character(line, b, Encoding::Utf16);
        assert_eq!(u16c, 15); // 14 characters, 😀 counts 2 units
        assert_eq!(from_lsp_character(line, u16c, Encoding::Utf16), b);
        let u8c = to_lsp_character(line, b, Encoding::Utf8);
        assert_eq!(u8c as usize, b);
        assert_eq!(from_lsp_character(line, u8c, Encoding::Utf8), b);
        assert_eq!(display_column(line, b), 15);
        let text = "a\r\nb é x\n";
        assert_eq!(offset_of(text, 1, 4, Encoding::Utf16), 3 + 5);
    }
}

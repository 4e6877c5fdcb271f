//! JSON text whose strings are not valid Unicode.
//!
//! JSON allows `\ud800` (a lone surrogate escape) and nothing stops a peer from sending
//! bytes that are not UTF-8, but neither can become a Rust `String`, so serde_json refuses
//! the whole message. A server that then drops the message leaves its peer waiting for an
//! answer forever. [`repair`] makes such text decodable (every lone surrogate escape and
//! every invalid byte becomes U+FFFD) so the receiver can at least read the message's id
//! and answer it, and [`unicode_problem`] says what was wrong, for that answer.

/// What made a JSON text undecodable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnicodeProblem {
    /// Bytes that are not UTF-8.
    InvalidUtf8,
    /// A `\uXXXX` escape of a surrogate without its pair, e.g. `"\ud800"`.
    LoneSurrogate {
        /// The escaped code unit.
        unit: u16,
    },
}

impl std::fmt::Display for UnicodeProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UnicodeProblem::InvalidUtf8 => f.write_str("bytes that are not UTF-8"),
            UnicodeProblem::LoneSurrogate { unit } => {
                write!(f, "a lone surrogate escape (\\u{unit:04x})")
            }
        }
    }
}

/// The first Unicode problem of `text`, if any (invalid UTF-8 first, then lone surrogate
/// escapes inside strings).
pub fn unicode_problem(text: &[u8]) -> Option<UnicodeProblem> {
    let Ok(s) = std::str::from_utf8(text) else {
        return Some(UnicodeProblem::InvalidUtf8);
    };
    let mut found = None;
    scan_escapes(s, |unit, _| {
        if found.is_none() {
            found = Some(UnicodeProblem::LoneSurrogate { unit });
        }
    });
    found
}

/// `text` with invalid UTF-8 and lone surrogate escapes replaced by U+FFFD (as the escape
/// `\ufffd`), so it decodes. Text without either comes back unchanged.
pub fn repair(text: &[u8]) -> String {
    let s = String::from_utf8_lossy(text);
    let mut lone = Vec::new();
    scan_escapes(&s, |_, at| lone.push(at));
    if lone.is_empty() {
        return s.into_owned();
    }
    let mut out = String::with_capacity(s.len());
    let mut last = 0;
    for at in lone {
        out.push_str(&s[last..at]);
        out.push_str("\\ufffd");
        last = at + 6;
    }
    out.push_str(&s[last..]);
    out
}

/// Calls `lone(unit, byte_offset)` for every `\uXXXX` escape inside a JSON string that is a
/// surrogate without its pair. Escaped backslashes (`\\u…`) are not escapes of `u`.
fn scan_escapes(s: &str, mut lone: impl FnMut(u16, usize)) {
    let b = s.as_bytes();
    let hex = |at: usize| -> Option<u16> {
        let digits = s.get(at..at + 4)?;
        u16::from_str_radix(digits, 16).ok()
    };
    let is_high = |u: u16| (0xd800..0xdc00).contains(&u);
    let is_low = |u: u16| (0xdc00..0xe000).contains(&u);
    let mut in_string = false;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                in_string = !in_string;
                i += 1;
            }
            b'\\' if in_string => {
                if b.get(i + 1) == Some(&b'u')
                    && let Some(unit) = hex(i + 2)
                {
                    let paired_low = b.get(i + 6) == Some(&b'\\')
                        && b.get(i + 7) == Some(&b'u')
                        && hex(i + 8).is_some_and(is_low);
                    if is_high(unit) && paired_low {
                        i += 12;
                        continue;
                    }
                    if is_high(unit) || is_low(unit) {
                        lone(unit, i);
                    }
                    i += 6;
                } else {
                    i += 2;
                }
            }
            _ => i += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_and_repairs_lone_surrogates_only() {
        let bad = br#"{"a":"x\ud800y","b":"\udc01","ok":"\ud83d\ude00","esc":"\\ud800"}"#;
        assert_eq!(
            unicode_problem(bad),
            Some(UnicodeProblem::LoneSurrogate { unit: 0xd800 })
        );
        let fixed = repair(bad);
        let v: serde_json::Value = serde_json::from_str(&fixed).unwrap();
        assert_eq!(v["a"], "x\u{fffd}y");
        assert_eq!(v["b"], "\u{fffd}");
        assert_eq!(v["ok"], "😀");
        assert_eq!(v["esc"], "\\ud800");
        let good = br#"{"ok":"\ud83d\ude00","esc":"\\ud800"}"#;
        assert_eq!(unicode_problem(good), None);
        assert_eq!(repair(good).as_bytes(), good);
    }

    #[test]
    fn invalid_utf8_is_reported_and_replaced() {
        let bad = b"{\"a\":\"\xff\"}";
        assert_eq!(unicode_problem(bad), Some(UnicodeProblem::InvalidUtf8));
        let v: serde_json::Value = serde_json::from_str(&repair(bad)).unwrap();
        assert_eq!(v["a"], "\u{fffd}");
        // A truncated escape at the very end is left alone (the caller's parse fails).
        assert_eq!(repair(br#""\ud8"#), r#""\ud8"#);
    }
}

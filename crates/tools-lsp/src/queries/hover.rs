//! Hover text as a model should read it: the server's markdown with HTML entities decoded
//! (pyright writes docstring indentation as `&nbsp;`), the sections that are noise to a
//! reader dropped (rust-analyzer's "Implements notable traits" and text naming
//! `{unknown}` types), code fences kept as they are, and a long hover cut at a line
//! boundary — with a marker naming the `offset` of the rest only where the cut saves more
//! than the marker costs.

use lsp_types::{HoverContents, MarkedString};

/// A normalised hover: the text and what normalisation removed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NormalHover {
    /// The markdown to show.
    pub text: String,
    /// Sections or lines dropped as noise.
    pub dropped: usize,
    /// Entities decoded.
    pub decoded: usize,
}

/// The raw markdown of a hover answer.
pub fn markdown(c: &HoverContents) -> String {
    let marked = |m: &MarkedString| match m {
        MarkedString::String(s) => s.clone(),
        MarkedString::LanguageString(ls) => format!("```{}\n{}\n```", ls.language, ls.value),
    };
    match c {
        HoverContents::Scalar(m) => marked(m),
        HoverContents::Array(v) => v.iter().map(marked).collect::<Vec<_>>().join("\n\n"),
        HoverContents::Markup(m) => m.value.clone(),
    }
}

fn is_fence(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("```") || t.starts_with("~~~")
}

fn is_rule(line: &str) -> bool {
    let t = line.trim();
    t.len() >= 3
        && (t.chars().all(|c| c == '-')
            || t.chars().all(|c| c == '_')
            || t.chars().all(|c| c == '*'))
}

/// Whether a prose section is noise to a reader.
fn is_noise(section: &str) -> bool {
    let t = section.trim_start();
    t.starts_with("Implements notable traits") || section.contains("{unknown}")
}

/// Normalises hover markdown: entities decoded outside code, noise sections dropped, blank
/// runs collapsed, trailing spaces trimmed.
pub fn normalise(md: &str) -> NormalHover {
    // Sections are split at horizontal rules outside code fences; a fenced block is
    // never noise (it is the signature the reader asked for).
    let mut sections: Vec<(Vec<String>, bool)> = vec![(Vec::new(), false)];
    let mut in_fence = false;
    for line in md.lines() {
        if is_fence(line) {
            in_fence = !in_fence;
            if let Some(last) = sections.last_mut() {
                last.1 = true;
                last.0.push(line.trim_end().to_string());
            }
            continue;
        }
        if !in_fence && is_rule(line) {
            sections.push((Vec::new(), false));
            continue;
        }
        if let Some(last) = sections.last_mut() {
            last.0.push(line.trim_end().to_string());
        }
    }
    let mut out = NormalHover::default();
    let mut kept: Vec<String> = Vec::new();
    for (lines, has_code) in sections {
        let prose_noise = |l: &str| is_noise(l);
        let (mut text, mut in_fence) = (Vec::new(), false);
        for line in lines {
            if is_fence(&line) {
                in_fence = !in_fence;
                text.push(line);
                continue;
            }
            if in_fence {
                text.push(line);
            } else if prose_noise(&line) {
                out.dropped += 1;
            } else {
                let (decoded, n) = decode_entities(&line);
                out.decoded += n;
                text.push(decoded);
            }
        }
        let joined = text.join("\n").trim().to_string();
        if joined.is_empty() {
            continue;
        }
        if !has_code && is_noise(&joined) {
            out.dropped += 1;
            continue;
        }
        kept.push(joined);
    }
    let mut t = kept.join("\n\n---\n\n");
    while t.contains("\n\n\n") {
        t = t.replace("\n\n\n", "\n\n");
    }
    out.text = t;
    out
}

/// Decodes the HTML entities servers put in markdown (`&nbsp;`, `&lt;`, `&#39;`, `&#x2014;`,
/// …); unknown ones stay as written. Returns the text and how many were decoded.
pub fn decode_entities(s: &str) -> (String, usize) {
    if !s.contains('&') {
        return (s.to_string(), 0);
    }
    let mut out = String::with_capacity(s.len());
    let mut n = 0;
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let decoded = after
            .find(';')
            .filter(|&end| end <= 10)
            .and_then(|end| entity(&after[..end]).map(|c| (c, end)));
        match decoded {
            Some((c, end)) => {
                out.push(c);
                n += 1;
                rest = &after[end + 1..];
            }
            None => {
                out.push('&');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    (out, n)
}

fn entity(name: &str) -> Option<char> {
    Some(match name {
        // A no-break space is a plain space to a reader (pyright indents with it).
        "nbsp" | "ensp" | "emsp" | "thinsp" => ' ',
        "lt" => '<',
        "gt" => '>',
        "amp" => '&',
        "quot" => '"',
        "apos" => '\'',
        "ndash" => '–',
        "mdash" => '—',
        "hellip" => '…',
        "copy" => '©',
        "times" => '×',
        "rarr" => '→',
        "larr" => '←',
        _ => {
            let num = name.strip_prefix('#')?;
            let code = match num.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                None => num.parse().ok()?,
            };
            return char::from_u32(code).filter(|c| *c != '\0');
        }
    })
}

/// One page of a hover: lines from `offset` (0-based) while they fit `budget` bytes. The
/// marker naming the rest is written only when what it leaves out is longer than itself.
/// Returns the text and the offset of the next page, if any.
pub fn page(text: &str, offset: usize, budget: usize) -> (String, Option<usize>) {
    let lines: Vec<&str> = text.lines().collect();
    if offset >= lines.len() && offset > 0 {
        return (
            format!(
                "`offset` {offset} is past the end of this hover ({} lines)",
                lines.len()
            ),
            None,
        );
    }
    let rest = &lines[offset.min(lines.len())..];
    let whole = rest.join("\n");
    if whole.len() <= budget {
        return (whole, None);
    }
    // Leave room for the marker; keep whole lines, and do not stop inside a code fence
    // without closing it.
    let room = budget.saturating_sub(120);
    let mut kept = String::new();
    let mut used = 0;
    let mut in_fence = false;
    for line in rest {
        if kept.len() + line.len() + 1 > room && used > 0 {
            break;
        }
        if is_fence(line) {
            in_fence = !in_fence;
        }
        if !kept.is_empty() {
            kept.push('\n');
        }
        kept.push_str(line);
        used += 1;
    }
    let left: usize = rest[used..].iter().map(|l| l.len() + 1).sum();
    let next = offset + used;
    let marker = format!(
        "… {} more line(s) of this hover — pass `offset: {next}` for the rest",
        rest.len() - used
    );
    if left <= marker.len() + 8 {
        // The marker would cost about as much as what it hides.
        return (whole, None);
    }
    if in_fence {
        kept.push_str("\n```");
    }
    kept.push('\n');
    kept.push_str(&marker);
    (kept, Some(next))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entities_are_decoded_outside_code_only() {
        let md = "```python\nx = a &lt; b\n```\nArgs:  \n&nbsp;&nbsp;&nbsp;&nbsp;r: the rect &amp; more &#39;q&#x27; &bogus; & alone";
        let h = normalise(md);
        assert!(h.text.contains("x = a &lt; b"), "{}", h.text);
        assert!(
            h.text
                .contains("\n    r: the rect & more 'q' &bogus; & alone"),
            "{}",
            h.text
        );
        assert_eq!(h.decoded, 7);
    }

    #[test]
    fn noise_sections_are_dropped_and_code_kept() {
        let md = "```rust\ncore::future\n```\n\n```rust\nlet later: impl Future<Output = usize>\n```\n\n---\n\nImplements notable traits: Future<Output = <fn …{unknown}…>>\n\n---\n\nThe docs.";
        let h = normalise(md);
        assert!(!h.text.contains("notable"), "{}", h.text);
        assert!(!h.text.contains("{unknown}"), "{}", h.text);
        assert!(
            h.text
                .contains("```rust\nlet later: impl Future<Output = usize>\n```"),
            "{}",
            h.text
        );
        assert!(h.text.ends_with("The docs."), "{}", h.text);
        assert_eq!(h.dropped, 1);
        // A signature with an unknown type is still the signature.
        let h = normalise("```rust\nfn f() -> {unknown}\n```");
        assert!(h.text.contains("{unknown}"));
    }

    #[test]
    fn a_long_hover_pages_and_a_short_cut_is_not_made() {
        let doc: String = (0..400)
            .map(|i| format!("line {i} of the docs\n"))
            .collect();
        let (first, next) = page(&doc, 0, 4096);
        assert!(first.len() <= 4096, "{}", first.len());
        let next = next.unwrap();
        assert!(first.contains(&format!("`offset: {next}`")), "{first}");
        let (second, _) = page(&doc, next, 4096);
        assert!(second.starts_with(&format!("line {next} of")), "{second}");
        // Ten bytes over the budget: cutting them would cost a longer marker.
        let short = "x".repeat(4090) + "\nabcdefghi";
        assert_eq!(page(&short, 0, 4096), (short.clone(), None));
    }
}

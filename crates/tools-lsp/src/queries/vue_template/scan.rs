//! Reading a Vue component's template for the uses of one `<script setup>` binding, by
//! text alone: the attribute values that are expressions (`:prop`, `@event`, `v-…`, `#…`)
//! and the interpolations (`{{ … }}`). A use is the name as a whole identifier that is not
//! a member (`a.name`), an object key (`{ name: 1 }`) or inside a string.
//!
//! It promises no guess about scopes: when the template declares the name itself (a
//! `v-for` alias, slot props), it finds nothing and says so, since telling which uses are
//! the script's would take a parser.

/// Where a name is used, as byte offsets into the component's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Use {
    /// The identifier's first byte.
    pub start: usize,
    /// A shorthand property (`{ name }`): renaming it keeps the key (`name: new`).
    pub shorthand: bool,
}

/// What a template says about a name.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Found {
    /// Its uses, in order.
    Uses(Vec<Use>),
    /// The template declares the name too, at this byte offset: its uses cannot be told
    /// apart from the script's by text.
    Shadowed(usize),
}

/// The byte offset of the identifier that declares `name` at the top level of the
/// component's `<script setup>` (`const name`, `let`/`var`, `function name`, `class name`,
/// or an import of it), if there is one on a line that starts at column 0.
pub(crate) fn setup_declaration(text: &str, name: &str) -> Option<usize> {
    let (start, end) = block(text, "<script", |open| {
        open.split_whitespace()
            .any(|w| w.trim_end_matches('>') == "setup")
    })?;
    let mut at = start;
    for line in text[start..end].split_inclusive('\n') {
        let here = at;
        at += line.len();
        let declaring = if let Some(rest) = ["const ", "let ", "var "]
            .iter()
            .find_map(|k| line.strip_prefix(k))
        {
            rest.split('=').next().unwrap_or(rest)
        } else if let Some(rest) = ["function ", "async function ", "class "]
            .iter()
            .find_map(|k| line.strip_prefix(k))
        {
            let word = rest.split(|c: char| !is_ident(c)).next().unwrap_or("");
            &rest[..word.len()]
        } else if line.starts_with("import ") {
            line.split(" from ").next().unwrap_or(line)
        } else {
            continue;
        };
        let offset = declaring.as_ptr() as usize - line.as_ptr() as usize;
        for w in words(declaring, name) {
            // `import { a as name }`: the local is the word after `as`, never before it.
            if declaring[w + name.len()..].trim_start().starts_with("as ") {
                continue;
            }
            return Some(here + offset + w);
        }
    }
    None
}

/// The uses of `name` in the component's `<template>`.
pub(crate) fn template_uses(text: &str, name: &str) -> Option<Found> {
    let (start, end) = block(text, "<template", |_| true)?;
    let mut uses = Vec::new();
    let bytes = text.as_bytes();
    let mut i = start;
    while i < end {
        if text[i..].starts_with("<!--") {
            i = text[i..end].find("-->").map_or(end, |e| i + e + 3);
        } else if text[i..].starts_with("{{") {
            let close = text[i + 2..end].find("}}").map_or(end, |e| i + 2 + e);
            expression_uses(text, i + 2, close, name, &mut uses);
            i = close + 2;
        } else if bytes[i] == b'<' && bytes.get(i + 1).is_some_and(u8::is_ascii_alphabetic) {
            match tag(text, i, end, name, &mut uses) {
                Ok(next) => i = next,
                Err(shadow) => return Some(Found::Shadowed(shadow)),
            }
        } else {
            i += 1;
        }
    }
    Some(Found::Uses(uses))
}

/// One opening tag from `<` at `at`: its expression attributes read for uses. The offset
/// after it, or where a declaring attribute names `name`.
fn tag(text: &str, at: usize, end: usize, name: &str, uses: &mut Vec<Use>) -> Result<usize, usize> {
    let bytes = text.as_bytes();
    let mut i = at + 1;
    while i < end && !bytes[i].is_ascii_whitespace() && bytes[i] != b'>' {
        i += 1;
    }
    loop {
        while i < end && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= end || bytes[i] == b'>' {
            return Ok(i + 1);
        }
        let attr = i;
        while i < end && !bytes[i].is_ascii_whitespace() && !matches!(bytes[i], b'=' | b'>') {
            i += 1;
        }
        let attr_name = &text[attr..i];
        if attr_name == "/" {
            continue;
        }
        if bytes.get(i) != Some(&b'=') {
            continue;
        }
        i += 1;
        let Some(&quote) = bytes.get(i).filter(|q| matches!(q, b'"' | b'\'')) else {
            continue;
        };
        let from = i + 1;
        let to = text[from..end]
            .find(quote as char)
            .map_or(end, |e| from + e);
        i = to + 1;
        let is_slot = attr_name.starts_with('#')
            || attr_name.starts_with("v-slot")
            || attr_name == "slot-scope";
        if is_slot {
            if let Some(w) = words(&text[from..to], name).next() {
                return Err(from + w);
            }
            continue;
        }
        if attr_name == "v-for" {
            let value = &text[from..to];
            let split = [" in ", " of "]
                .iter()
                .filter_map(|k| value.find(k).map(|p| (p, k.len())))
                .min();
            let Some((p, k)) = split else { continue };
            if let Some(w) = words(&value[..p], name).next() {
                return Err(from + w);
            }
            expression_uses(text, from + p + k, to, name, uses);
            continue;
        }
        if attr_name.starts_with(':') || attr_name.starts_with('@') || attr_name.starts_with("v-") {
            expression_uses(text, from, to, name, uses);
        }
    }
}

/// The uses of `name` in the expression `text[start..end]`.
fn expression_uses(text: &str, start: usize, end: usize, name: &str, uses: &mut Vec<Use>) {
    let bytes = text.as_bytes();
    let mut brackets: Vec<u8> = Vec::new();
    let mut i = start;
    while i < end {
        let b = bytes[i];
        match b {
            b'\'' | b'"' | b'`' => {
                i += 1;
                while i < end && bytes[i] != b {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'{' | b'(' | b'[' => {
                brackets.push(b);
                i += 1;
            }
            b'}' | b')' | b']' => {
                brackets.pop();
                i += 1;
            }
            _ if b.is_ascii_alphabetic() || b == b'_' || b == b'$' => {
                let word_end = text[i..end]
                    .find(|c: char| !is_ident(c))
                    .map_or(end, |e| i + e);
                let glued = text[..i].chars().next_back().is_some_and(is_ident);
                if &text[i..word_end] == name && !glued {
                    let before = text[start..i].trim_end();
                    let after = text[word_end..end].trim_start();
                    let member = before.ends_with('.') && !before.ends_with("...");
                    let in_object = brackets.last() == Some(&b'{')
                        && (before.ends_with('{') || before.ends_with(','));
                    let key = in_object && after.starts_with(':');
                    if !member && !key {
                        uses.push(Use {
                            start: i,
                            shorthand: in_object
                                && (after.starts_with(',')
                                    || after.starts_with('}')
                                    || after.is_empty()),
                        });
                    }
                }
                i = word_end;
            }
            _ => i += 1,
        }
    }
}

/// The content of the first top-level block opened by a line starting with `open` whose
/// opening tag `accepts`: from after its `>` to its closing tag's line (the last one at
/// column 0, so that nested `<template>` tags stay inside).
fn block(text: &str, open: &str, accepts: impl Fn(&str) -> bool) -> Option<(usize, usize)> {
    let close = format!("</{}>", &open[1..]);
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let here = at;
        at += line.len();
        if !line.starts_with(open) {
            continue;
        }
        let gt = text[here..].find('>')? + here;
        if !accepts(&text[here..gt + 1]) {
            continue;
        }
        let start = gt + 1;
        let end = text[start..]
            .match_indices(&close)
            .filter(|(p, _)| text[..start + p].ends_with('\n'))
            .map(|(p, _)| start + p)
            .last()?;
        return Some((start, end));
    }
    None
}

/// The byte offsets in `s` where `name` stands as a whole identifier.
fn words<'a>(s: &'a str, name: &'a str) -> impl Iterator<Item = usize> + 'a {
    tools_core::whole_words(s, name, is_ident)
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

//! The pattern and rewrite template a model sends to `ast_grep` and `ast_edit`, and the file
//! they run over: any pattern compiles or is refused, any template is accepted or refused
//! against what the pattern binds, and searching and rewriting any source never panics and
//! never grows the text past the cap it is given.
//!
//! Input: a language chosen by the first byte, then the pattern, the template and the
//! source, separated by NUL bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tools_ast::{CompactTree, Lang, Rewrite, compile, find_matches};

/// The cap on a rewritten file, small so that a growing template is seen to stop at it.
const MAX_BYTES: usize = 64 * 1024;

fuzz_target!(|data: &[u8]| {
    let Some((&choice, rest)) = data.split_first() else {
        return;
    };
    let langs: Vec<Lang> = Lang::all().collect();
    let lang = langs[usize::from(choice) % langs.len()];
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let mut parts = text.splitn(3, '\0');
    let (pattern, template, source) = (
        parts.next().unwrap_or(""),
        parts.next().unwrap_or(""),
        parts.next().unwrap_or(""),
    );
    let Ok(compiled) = compile(pattern, lang) else {
        return;
    };
    let rewrite = Rewrite::new(template, &compiled).ok();
    let Ok(tree) = CompactTree::parse(source.to_string(), lang.grammar()) else {
        return;
    };
    for m in find_matches(&compiled, &tree) {
        assert!(
            m.line <= m.end_line && m.bytes.start <= m.bytes.end && m.bytes.end <= source.len(),
            "a match outside the source or ending before it starts: lines {}..{}, bytes {:?} of {}",
            m.line,
            m.end_line,
            m.bytes,
            source.len()
        );
    }
    if let Some(rewrite) = rewrite
        && let Ok(Some((new_text, count))) = rewrite.apply(&compiled, &tree, &|| false, MAX_BYTES)
    {
        assert!(count > 0, "a rewrite with no replacement changed the text");
        assert!(
            new_text.len() <= MAX_BYTES,
            "the rewrite grew to {} bytes past its cap",
            new_text.len()
        );
    }
});

//! The run's symbols as the bundled grammars read them, for the servers' side: finding
//! that source among the run's, and where a symbol's name is written in its range (the
//! grammars give a symbol's whole range; a server asks about a name).

use std::sync::Arc;

use tools_core::{SourceSymbol, SymbolSource, SymbolSourceKind, SymbolSources};

/// The run's grammar symbol source, when a family registered one.
pub fn grammar_source(sources: &SymbolSources) -> Option<Arc<dyn SymbolSource>> {
    sources
        .ordered()
        .into_iter()
        .find(|s| s.kind() == SymbolSourceKind::Grammar)
}

/// The byte offset in `text` where `s`'s name is written: the first whole-word occurrence
/// of it in the symbol's range on a line that is not a decorator, attribute or comment (the
/// range includes those); the range's start when there is none. `None` when the symbol has
/// no name or its range is not in `text`.
pub fn name_offset(text: &str, s: &SourceSymbol) -> Option<usize> {
    let name = s.path.last()?;
    let start = s.range.start.min(text.len());
    let end = s.range.end.min(text.len());
    let mut at = start;
    for line in text.get(start..end)?.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let skip = ["@", "#", "//", "/*", "*", "--"]
            .iter()
            .any(|p| trimmed.starts_with(p));
        if !skip && let Some(i) = word_in(line, name) {
            return Some(at + i);
        }
        at += line.len();
    }
    Some(start)
}

/// The byte offset of the first occurrence of `word` in `line` not inside a longer word.
fn word_in(line: &str, word: &str) -> Option<usize> {
    tools_core::first_whole_word(line, word, tools_core::is_ident_char)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_is_found_only_whole() {
        assert_eq!(word_in("def greeter_of(greet): greet", "greet"), Some(15));
        assert_eq!(word_in("greeting", "greet"), None);
    }
}

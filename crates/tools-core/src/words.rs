//! Whole words in text: where a name stands on its own, not inside a longer identifier.
//! Every tool that finds a symbol's name on a line (a query addressed by name, a scan of
//! declarations, a test that names what it exercises) asks the same question; the languages
//! differ only in what continues an identifier (JavaScript's `$`).

/// Whether `c` continues an identifier in most languages: a letter, a digit or `_`.
pub fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The byte offsets in `text` where `word` stands whole: the characters on either side, if
/// any, do not continue an identifier (`is_ident`). Occurrences do not overlap; an empty
/// `word` stands nowhere.
pub fn whole_words<'a>(
    text: &'a str,
    word: &'a str,
    is_ident: impl Fn(char) -> bool + 'a,
) -> impl Iterator<Item = usize> + 'a {
    text.match_indices(word)
        .filter(move |_| !word.is_empty())
        .filter_map(move |(i, _)| {
            let before = text[..i].chars().next_back();
            let after = text[i + word.len()..].chars().next();
            (!before.is_some_and(&is_ident) && !after.is_some_and(&is_ident)).then_some(i)
        })
}

/// The first offset where `word` stands whole in `text` (see [`whole_words`]).
pub fn first_whole_word(text: &str, word: &str, is_ident: impl Fn(char) -> bool) -> Option<usize> {
    whole_words(text, word, is_ident).next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_counts_only_where_no_identifier_goes_on_around_it() {
        let line = "total_sum = total(subtotal) + total";
        assert_eq!(
            whole_words(line, "total", is_ident_char).collect::<Vec<_>>(),
            [12, 30]
        );
        assert_eq!(first_whole_word(line, "sum", is_ident_char), None);
        // Byte offsets: `é` takes two.
        assert_eq!(first_whole_word("é_x x", "x", is_ident_char), Some(5));
    }

    #[test]
    fn what_continues_an_identifier_is_the_caller_s() {
        let js = |c: char| is_ident_char(c) || c == '$';
        assert_eq!(first_whole_word("$el el", "el", js), Some(4));
        assert_eq!(first_whole_word("$el el", "el", is_ident_char), Some(1));
    }

    #[test]
    fn an_empty_word_stands_nowhere() {
        assert_eq!(first_whole_word("abc", "", is_ident_char), None);
        assert_eq!(whole_words("", "", is_ident_char).count(), 0);
    }
}

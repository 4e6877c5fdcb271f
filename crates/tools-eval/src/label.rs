//! A cell's label in the transcript, made from the `description` the model gave. The spec
//! asks for 5–10 words; a description outside that range is still accepted (refusing the
//! cell would cost a whole turn over a label): a long one is trimmed to its first ten words,
//! a short or empty one is padded with the language and the cell's number, and the answer
//! says so in one line.

use crate::Language;

/// Fewest words a description should have.
pub(crate) const MIN_WORDS: usize = 5;
/// Most words a description should have.
pub(crate) const MAX_WORDS: usize = 10;

/// The label of one cell, and the note that tells the model its description was adjusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CellLabel {
    /// The label shown for the cell.
    pub text: String,
    /// One line for the answer when the description was trimmed or padded.
    pub note: Option<String>,
}

/// The label for a cell whose description is `description`.
pub(crate) fn cell_label(description: &str, lang: Language, cell_no: u64) -> CellLabel {
    let words: Vec<&str> = description.split_whitespace().collect();
    let count = words.len();
    let plural = if count == 1 { "word" } else { "words" };
    if count > MAX_WORDS {
        let text = format!("{} …", words[..MAX_WORDS].join(" "));
        let note = format!(
            "[note: the description has {count} {plural} ({MIN_WORDS}–{MAX_WORDS} are asked); the label keeps the first {MAX_WORDS}: \"{text}\"]"
        );
        return CellLabel {
            text,
            note: Some(note),
        };
    }
    if count < MIN_WORDS {
        let filler = format!("({} cell {cell_no})", lang.name());
        let text = if count == 0 {
            filler
        } else {
            format!("{} {filler}", words.join(" "))
        };
        let note = format!(
            "[note: the description has {count} {plural} ({MIN_WORDS}–{MAX_WORDS} are asked); the label is \"{text}\"]"
        );
        return CellLabel {
            text,
            note: Some(note),
        };
    }
    CellLabel {
        text: words.join(" "),
        note: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn five_to_ten_words_are_the_label_as_given() {
        let l = cell_label("load the data and  plot", Language::Python, 3);
        assert_eq!(
            l,
            CellLabel {
                text: "load the data and plot".into(),
                note: None
            }
        );
        let ten = "a b c d e f g h i j";
        assert_eq!(cell_label(ten, Language::Python, 1).text, ten);
    }

    #[test]
    fn a_short_description_is_padded_with_language_and_cell_number() {
        let l = cell_label("plot", Language::Python, 3);
        assert_eq!(l.text, "plot (python cell 3)");
        assert_eq!(
            l.note.as_deref(),
            Some(
                "[note: the description has 1 word (5–10 are asked); the label is \"plot (python cell 3)\"]"
            )
        );
        let l = cell_label("   ", Language::Javascript, 7);
        assert_eq!(l.text, "(javascript cell 7)");
        assert!(
            l.note
                .unwrap()
                .starts_with("[note: the description has 0 words")
        );
    }

    #[test]
    fn a_long_description_is_trimmed_to_ten_words() {
        let l = cell_label(&"word ".repeat(12), Language::Python, 1);
        assert_eq!(l.text, format!("{}…", "word ".repeat(10)));
        assert_eq!(
            l.note.as_deref(),
            Some(
                "[note: the description has 12 words (5–10 are asked); the label keeps the first 10: \"word word word word word word word word word word …\"]"
            )
        );
    }
}

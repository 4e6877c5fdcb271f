//! Where each line of a file went when its text changed: the map that lets breakpoints move
//! with the statements they were set on when a tool edits the file above or around them.
//!
//! A line diff (Myers, bounded in time) pairs the old and new texts: a line kept as it was
//! maps to its new number; a line changed in place (a replaced run of the same length) maps
//! to the line that took its place; a deleted line maps to nothing.

use std::time::{Duration, Instant};

use similar::{Algorithm, DiffOp, TextDiff};

/// How long one diff may take before it settles for a coarser answer.
const DIFF_BUDGET: Duration = Duration::from_millis(500);

/// For each 0-based line of `old`, its 0-based line in `new`, or `None` where it was deleted.
pub fn line_map(old: &str, new: &str) -> Vec<Option<usize>> {
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .deadline(Instant::now() + DIFF_BUDGET)
        .diff_lines(old, new);
    let mut map = vec![None; diff.old_slices().len()];
    for op in diff.ops() {
        let (old_index, new_index, len) = match *op {
            DiffOp::Equal {
                old_index,
                new_index,
                len,
            } => (old_index, new_index, len),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } if old_len == new_len => (old_index, new_index, old_len),
            _ => continue,
        };
        for i in 0..len {
            if let Some(slot) = map.get_mut(old_index + i) {
                *slot = Some(new_index + i);
            }
        }
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inserted_lines_shift_deleted_ones_vanish_and_edited_ones_stay() {
        let old = "a\nb\nc\nd\n";
        assert_eq!(
            line_map(old, "x\ny\na\nb\nc\nd\n"),
            vec![Some(2), Some(3), Some(4), Some(5)]
        );
        assert_eq!(
            line_map(old, "a\nc\nd\n"),
            vec![Some(0), None, Some(1), Some(2)]
        );
        assert_eq!(
            line_map(old, "a\nB\nc\nd\n"),
            vec![Some(0), Some(1), Some(2), Some(3)]
        );
        assert_eq!(
            line_map(old, "a\nB1\nB2\nc\nd\n"),
            vec![Some(0), None, Some(3), Some(4)]
        );
    }
}

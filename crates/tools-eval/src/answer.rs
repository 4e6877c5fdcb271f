//! What the model reads of a cell: its output, error, value and end, held to the answer
//! budget (`[eval] max_output_chars`, 4000 characters by default), and the structured
//! result with the same facts plus the figures a program may want.
//!
//! The kernel driver already keeps only the head and the tail of what a cell prints; the
//! value and the traceback are cut here to half the budget each, and the whole text to the
//! budget, the middle going first (both ends of output matter). Every cut says how to see
//! more: print a slice, or write the data to a file and read the part needed.

use serde_json::json;
use tools_core::{ToolError, ToolOutput};

use crate::Language;
use crate::cell::{CellEnd, CellRun, HOW_TO_SEE_MORE};
use crate::label::CellLabel;

/// What the answer needs to know about the call besides the cell's run.
pub(crate) struct CellFacts<'a> {
    /// The kernel's language.
    pub lang: Language,
    /// The cell's number in this run.
    pub cell_no: u64,
    /// The kernel's process id.
    pub pid: i32,
    /// The interpreter's version.
    pub version: &'a str,
    /// Whether the kernel formats values and runs magics through IPython.
    pub ipython: bool,
    /// The answer budget in characters.
    pub budget: usize,
    /// The cell's label, and the note when its description was adjusted.
    pub label: &'a CellLabel,
}

/// The marker of a cut, which says how much was cut and how to see it.
fn cut_marker(cut: usize, what: &str) -> String {
    format!("\n… [cut: {cut} characters of {what} not shown; {HOW_TO_SEE_MORE}] …\n")
}

/// `text` held to `max_chars` characters: its head and tail, with a marker in the middle
/// that says how much was cut and how to see it.
pub(crate) fn bound(text: &str, max_chars: usize, what: &str) -> String {
    let count = text.chars().count();
    if count <= max_chars {
        return text.to_string();
    }
    let head_len = count / 2;
    let head: String = text.chars().take(head_len).collect();
    let tail: String = text.chars().skip(head_len).collect();
    join_cut(&head, 0, &tail, max_chars, what)
}

/// `head`, a cut of `earlier` characters, and `tail`, held to `max_chars` characters with
/// one marker for everything cut: the end of `head` and the start of `tail` go first.
fn join_cut(head: &str, earlier: usize, tail: &str, max_chars: usize, what: &str) -> String {
    let (head_len, tail_len) = (head.chars().count(), tail.chars().count());
    let marker_len = cut_marker(usize::MAX, what).chars().count();
    let keep = max_chars.saturating_sub(marker_len);
    let keep_head = (keep / 2).min(head_len);
    let keep_tail = (keep - keep_head).min(tail_len);
    let keep_head = (keep - keep_tail).min(head_len);
    let cut = earlier + (head_len - keep_head) + (tail_len - keep_tail);
    let kept_head: String = head.chars().take(keep_head).collect();
    let kept_tail: String = tail.chars().skip(tail_len - keep_tail).collect();
    format!("{kept_head}{}{kept_tail}", cut_marker(cut, what))
}

/// What a cell printed (or its value), held to `max_chars`; a cut the driver made already
/// (its marker on a line of its own) is merged into this one, so one marker counts
/// everything left out.
fn fit(output: &str, max_chars: usize, what: &str) -> String {
    if output.chars().count() <= max_chars {
        return output.to_string();
    }
    const MARK: &str = "… [cut: ";
    let at_line = output
        .match_indices(MARK)
        .map(|(i, _)| i)
        .find(|&i| i == 0 || output[..i].ends_with('\n'));
    let Some(start) = at_line else {
        return bound(output, max_chars, what);
    };
    let line_end = output[start..]
        .find('\n')
        .map_or(output.len(), |n| start + n + 1);
    let earlier: usize = output[start + MARK.len()..]
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    join_cut(
        output[..start].trim_end_matches('\n'),
        earlier,
        &output[line_end..],
        max_chars,
        what,
    )
}

fn end_marker(end: &CellEnd, lang: Language) -> Option<String> {
    let secs = |d: &std::time::Duration| format!("{:.1} s", d.as_secs_f64());
    match end {
        CellEnd::Finished => None,
        CellEnd::Interrupted { idle } => Some(format!(
            "[interrupted: no output and no tool call for {} (the idle budget), so the cell was interrupted; \
             the output above is partial; the {} kernel's state survived]",
            secs(idle),
            lang.name()
        )),
        CellEnd::Killed { idle, grace } => Some(format!(
            "[killed: no output and no tool call for {} (the idle budget), and the cell did not stop within {} \
             of the interrupt (blocked in native code?), so the kernel was killed; the output above is partial; \
             the kernel's state is lost and the next cell starts a fresh one]",
            secs(idle),
            secs(grace)
        )),
        CellEnd::Cancelled { killed } => Some(if *killed {
            "[cancelled: the call was cancelled and the kernel had to be killed; its state is lost]"
                .into()
        } else {
            "[cancelled: the call was cancelled and the cell interrupted; the kernel's state survived]".into()
        }),
        CellEnd::Crashed { .. } => None,
    }
}

fn status_name(run: &CellRun) -> &'static str {
    match &run.end {
        CellEnd::Finished if run.error.is_some() => "error",
        CellEnd::Finished => "ok",
        CellEnd::Interrupted { .. } => "interrupted",
        CellEnd::Killed { .. } => "killed",
        CellEnd::Cancelled { .. } => "cancelled",
        CellEnd::Crashed { .. } => "crashed",
    }
}

/// The answer for a cell that ran; `Err` when its kernel died under it.
pub(crate) fn render(
    facts: &CellFacts<'_>,
    notes: Vec<String>,
    run: CellRun,
) -> Result<ToolOutput, ToolError> {
    let CellFacts {
        lang,
        cell_no,
        pid,
        version,
        ipython,
        budget,
        label,
    } = *facts;
    let half = budget / 2;
    let mut text = String::new();
    let mut add = |s: &str| {
        if s.is_empty() {
            return;
        }
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(s);
    };
    for n in &notes {
        add(n);
    }
    // The value and the traceback first get up to half the budget each; what the cell
    // printed gets the rest (a quarter at least).
    let traceback = run
        .error
        .as_ref()
        .filter(|_| {
            !matches!(
                run.end,
                CellEnd::Interrupted { .. } | CellEnd::Cancelled { .. }
            )
        })
        .map(|err| bound(err.traceback.trim_end(), half, "the traceback"));
    let result = run.result.as_deref().map(|r| fit(r, half, "the value"));
    let end = end_marker(&run.end, lang);
    let taken: usize = notes
        .iter()
        .chain(&traceback)
        .chain(&result)
        .chain(&end)
        .chain(&label.note)
        .map(|s| s.chars().count() + 1)
        .sum();
    let output = fit(
        &run.output_text(),
        budget.saturating_sub(taken).max(budget / 4),
        "output",
    );
    add(&output);
    if let Some(tb) = &traceback {
        add(tb);
    }
    if let Some(result) = &result {
        add(result);
    }
    if let CellEnd::Crashed { how, log } = &run.end {
        let mut msg = format!(
            "the {} kernel {how} while running cell {cell_no} (os._exit, a crash in native code, or a kill); \
             its variables are lost and the next cell starts a fresh kernel",
            lang.name()
        );
        let log = log.trim();
        if !log.is_empty() {
            msg.push_str(&format!(
                "\nits log ends with:\n{}",
                tools_core::text::cut_text(log, half)
            ));
        }
        if !text.trim().is_empty() {
            msg.push_str(&format!(
                "\noutput before it died:\n{}",
                bound(&text, half, "its output")
            ));
        }
        return Err(ToolError::internal(msg));
    }
    if let Some(marker) = &end {
        add(marker);
    }
    if text.trim().is_empty() {
        text = "(no output)".into();
    }
    // The label note comes last: what the cell did matters more than its label.
    let note = label.note.as_deref().unwrap_or("");
    let mut text = bound(
        &text,
        budget.saturating_sub(note.chars().count() + 1),
        "this answer",
    );
    if !note.is_empty() {
        text.push('\n');
        text.push_str(note);
    }
    let structured = json!({
        "language": lang.name(),
        "cell": cell_no,
        "label": label.text,
        "status": status_name(&run),
        "result": result,
        "error": run.error.as_ref().map(|e| json!({"ename": e.ename, "evalue": e.evalue})),
        "output_chars": run.output_chars,
        "cut_chars": run.cut_chars,
        "images": run.images.iter().map(|i| json!({"width": i.width, "height": i.height})).collect::<Vec<_>>(),
        "images_dropped": run.images_dropped,
        "outputs": run.rich_outputs,
        "outputs_total": run.rich_outputs_total,
        "bridge_calls": run.bridge.iter().map(|b| json!({"tool": b.name, "ok": b.ok})).collect::<Vec<_>>(),
        "bridge_calls_total": run.bridge_total,
        "elapsed_ms": run.elapsed.as_millis() as u64,
        "kernel": {"pid": pid, "version": version, "ipython": ipython, "state_kept": !run.end.kernel_lost()},
    });
    let mut out = ToolOutput::text(text).with_structured(structured);
    for img in run.images {
        out = out.with_image(img.png);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bound_keeps_both_ends_within_the_budget() {
        let text: String = (0..1000).map(|i| format!("line {i}\n")).collect();
        let cut = bound(&text, 1000, "output");
        assert!(cut.chars().count() <= 1000, "{}", cut.chars().count());
        assert!(cut.starts_with("line 0\n"));
        assert!(cut.ends_with("line 999\n"));
        assert!(cut.contains(HOW_TO_SEE_MORE));
        assert_eq!(bound("short", 10, "output"), "short");
    }

    #[test]
    fn an_earlier_cut_is_merged_into_one_marker() {
        let driver_cut = format!(
            "{}\n… [cut: 5000 characters of output not shown; {HOW_TO_SEE_MORE}] …\n{}",
            "h".repeat(900),
            "t".repeat(900)
        );
        let fitted = fit(&driver_cut, 800, "output");
        assert!(fitted.chars().count() <= 800, "{}", fitted.chars().count());
        assert_eq!(fitted.matches("[cut: ").count(), 1, "{fitted}");
        let kept = fitted.matches('h').count() + fitted.matches('t').count();
        // Everything not kept is counted (the marker's own letters aside).
        let marker_letters = cut_marker(0, "output").matches(['h', 't']).count();
        let cut: usize = fitted
            .split("[cut: ")
            .nth(1)
            .and_then(|s| s.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap();
        assert_eq!(cut + kept - marker_letters, 5000 + 1800, "{fitted}");
        assert!(fitted.starts_with('h') && fitted.ends_with('t'));
    }
}

//! The terminal card: drawn on the controlling terminal (`/dev/tty`), never on stdout —
//! in `mcp` mode stdout is the protocol, and under `agent-tools call` it is the result.
//!
//! The card shows the number, the question, the context, the numbered options with their
//! descriptions, and how to answer: a number (or several, `1,3` / `1 3`, when multi-select),
//! an option's label, typed text when allowed, and Enter on an empty line (or `skip`) to
//! skip. A line that fits none of these is explained and asked again, within the card's
//! timeout. Cards are drawn one at a time; a second question waits for the first.

use std::fs::File;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use tools_core::platform::Terminal;
use tools_core::text::cut_text;

use crate::card::{ALLOW, Card, CardKind, DENY, MAX_ANSWER_CHARS, Reply};
use crate::gate::{GateAbilities, GateError, QuestionGate};

/// The longest input line read from the terminal; the rest of a longer line is discarded.
const MAX_LINE_BYTES: usize = 16 * 1024;

/// Draws cards on a terminal device and reads the answer line.
pub struct TerminalGate {
    path: PathBuf,
    one_at_a_time: tokio::sync::Mutex<()>,
}

impl Default for TerminalGate {
    fn default() -> Self {
        TerminalGate::new()
    }
}

impl TerminalGate {
    /// The controlling terminal, `/dev/tty`.
    pub fn new() -> Self {
        TerminalGate::with_device("/dev/tty")
    }

    /// A specific terminal device (a pseudo-terminal's slave, say).
    pub fn with_device(path: impl Into<PathBuf>) -> Self {
        TerminalGate {
            path: path.into(),
            one_at_a_time: tokio::sync::Mutex::new(()),
        }
    }

    /// The device cards are drawn on.
    pub fn device(&self) -> &Path {
        &self.path
    }

    /// Whether the device can be opened now, and if not, why. Used by doctor and by the
    /// gate itself, so both agree.
    pub fn probe(&self) -> Result<(), GateError> {
        self.open().map(|_| ())
    }

    fn open(&self) -> Result<File, GateError> {
        Terminal::open_device(&self.path).map_err(|e| {
            if e.kind() == ErrorKind::Unsupported {
                return GateError::Unavailable(format!("no terminal to ask on: {e}"));
            }
            GateError::Unavailable(format!(
                "no terminal to ask on ({} cannot be opened: {e}); this process has no controlling terminal",
                self.path.display()
            ))
        })
    }
}

/// The instructions under the card, for the terminal.
pub fn terminal_instructions(card: &Card) -> String {
    let option_count = card.options.len();
    let mut instructions = String::new();
    if card.kind == CardKind::Permission {
        instructions.push_str("Allow it? Type y (yes) or n (no); Enter alone refuses.\n");
        return instructions;
    }
    if option_count > 0 {
        if card.multi_select {
            instructions.push_str(&format!(
                "Pick one or more: type their numbers separated by commas or spaces (e.g. 1,3), 1-{option_count}.\n"
            ));
        } else {
            instructions.push_str(&format!("Pick one: type its number, 1-{option_count}.\n"));
        }
    }
    if card.allow_free_text {
        instructions.push_str(if option_count > 0 {
            "Or type your own answer (any text that is not a list of numbers).\n"
        } else {
            "Type your answer.\n"
        });
    }
    instructions.push_str("Skip: press Enter on an empty line (or type `skip`).\n");
    instructions
}

/// The whole terminal card.
pub fn render_terminal_card(card: &Card) -> String {
    let rule = "─".repeat(60);
    format!(
        "\n{rule}\n{}\n{}{rule}\n",
        card.body_text(),
        terminal_instructions(card)
    )
}

/// Reads one typed line against `card`: `Ok(reply)` or `Err(why the line does not fit)`.
pub fn parse_line(card: &Card, line: &str) -> Result<Reply, String> {
    let typed = line.trim();
    if card.kind == CardKind::Permission {
        return match typed.to_ascii_lowercase().as_str() {
            "y" | "yes" | "allow" => Ok(Reply::Answered {
                selected: vec![ALLOW.into()],
                text: None,
            }),
            "n" | "no" | "deny" | "" => Ok(Reply::Answered {
                selected: vec![DENY.into()],
                text: None,
            }),
            _ => Err("type y or n".into()),
        };
    }
    if typed.is_empty() || typed.eq_ignore_ascii_case("skip") {
        return Ok(Reply::Skipped {
            how: "skipped on the terminal".into(),
        });
    }
    let option_count = card.options.len();
    let looks_numeric = option_count > 0
        && typed
            .chars()
            .all(|c| c.is_ascii_digit() || c == ',' || c.is_whitespace());
    if looks_numeric {
        let mut picked: Vec<usize> = Vec::new();
        for part in typed
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|p| !p.is_empty())
        {
            let number: usize = part
                .parse()
                .map_err(|_| format!("`{part}` is not a number"))?;
            if number == 0 || number > option_count {
                return Err(format!(
                    "{number} is not an option; the options are numbered 1-{option_count}"
                ));
            }
            if !picked.contains(&number) {
                picked.push(number);
            }
        }
        if picked.len() > 1 && !card.multi_select {
            return Err("pick only one number".into());
        }
        picked.sort_unstable();
        let selected = picked
            .into_iter()
            .map(|number| card.options[number - 1].label.clone())
            .collect();
        return Ok(Reply::Answered {
            selected,
            text: None,
        });
    }
    if let Some(label) = card.find_label(typed) {
        return Ok(Reply::Answered {
            selected: vec![label.to_string()],
            text: None,
        });
    }
    if card.allow_free_text {
        return Ok(Reply::answer(
            vec![],
            Some(cut_text(typed, MAX_ANSWER_CHARS)),
            "skipped on the terminal",
        ));
    }
    Err(format!(
        "type a number 1-{option_count}, or press Enter to skip"
    ))
}

/// One conversation's terminal: the card and prompts written, the answer line read.
struct Tty(Terminal);

impl Tty {
    async fn write_all(&self, bytes: &[u8]) -> std::io::Result<()> {
        self.0.write_all(bytes).await
    }

    /// One line (without its newline); `None` at end of input (the terminal hung up).
    async fn read_line(&self) -> std::io::Result<Option<String>> {
        let mut line: Vec<u8> = Vec::new();
        let mut buf = [0u8; 1024];
        loop {
            match self.0.read(&mut buf).await? {
                Some(0) => {
                    return Ok(
                        (!line.is_empty()).then(|| String::from_utf8_lossy(&line).into_owned())
                    );
                }
                Some(k) => {
                    let chunk = &buf[..k];
                    if let Some(pos) = chunk.iter().position(|b| *b == b'\n' || *b == b'\r') {
                        if line.len() < MAX_LINE_BYTES {
                            line.extend_from_slice(&chunk[..pos]);
                        }
                        line.truncate(MAX_LINE_BYTES);
                        return Ok(Some(String::from_utf8_lossy(&line).into_owned()));
                    }
                    if line.len() < MAX_LINE_BYTES {
                        line.extend_from_slice(chunk);
                    }
                }
                // A pseudo-terminal whose other side closed: a hang-up.
                None => return Ok(None),
            }
        }
    }

    fn discard_typeahead(&self) {
        self.0.discard_typeahead();
    }
}

impl TerminalGate {
    async fn converse(&self, card: &Card) -> Result<Reply, GateError> {
        let file = self.open()?;
        let tty = Tty(Terminal::watch(file)
            .map_err(|e| GateError::Unavailable(format!("cannot watch the terminal: {e}")))?);
        let lost =
            |e: std::io::Error| GateError::Unavailable(format!("the terminal went away: {e}"));
        // Keys pressed before the card appeared must not answer it.
        tty.discard_typeahead();
        tty.write_all(render_terminal_card(card).as_bytes())
            .await
            .map_err(lost)?;
        let prompt = format!("#{}> ", card.number);
        loop {
            tty.write_all(prompt.as_bytes()).await.map_err(lost)?;
            let Some(line) = tty.read_line().await.map_err(lost)? else {
                return Err(GateError::Unavailable(
                    "the terminal closed before an answer was typed".into(),
                ));
            };
            match parse_line(card, &line) {
                Ok(reply) => {
                    let note = match &reply {
                        Reply::Answered { .. } => format!("(#{} answered)\n", card.number),
                        Reply::Skipped { .. } => format!("(#{} skipped)\n", card.number),
                    };
                    let _ = tty.write_all(note.as_bytes()).await;
                    return Ok(reply);
                }
                Err(why) => tty
                    .write_all(format!("  {why}\n").as_bytes())
                    .await
                    .map_err(lost)?,
            }
        }
    }
}

#[tools_core::async_trait]
impl QuestionGate for TerminalGate {
    fn name(&self) -> &str {
        "terminal"
    }
    fn abilities(&self) -> GateAbilities {
        GateAbilities { multi_select: true }
    }
    fn status(&self) -> Result<String, String> {
        match self.probe() {
            Ok(()) => Ok(format!("cards are drawn on {}", self.path.display())),
            Err(e) => Err(format!("{e}; ask_user calls will fail at once")),
        }
    }
    async fn ask(&self, card: &Card, timeout: Duration) -> Result<Reply, GateError> {
        // Fail at once without a terminal, before queueing behind another card.
        self.probe()?;
        let run = async {
            let _turn = self.one_at_a_time.lock().await;
            self.converse(card).await
        };
        match tokio::time::timeout(timeout, run).await {
            Ok(r) => r,
            Err(_) => {
                if let Ok(mut f) = self.open() {
                    let _ = f.write_all(
                        format!(
                            "\n(#{} timed out: no answer within {} s)\n",
                            card.number,
                            timeout.as_secs()
                        )
                        .as_bytes(),
                    );
                }
                Err(GateError::TimedOut(timeout))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::card::CardOption;

    fn card(multi: bool, text: bool) -> Card {
        Card {
            number: 4,
            kind: CardKind::Question,
            question: "Which?".into(),
            context: None,
            options: vec![
                CardOption {
                    label: "Red".into(),
                    description: Some("warm".into()),
                },
                CardOption {
                    label: "Blue".into(),
                    description: None,
                },
                CardOption {
                    label: "Green".into(),
                    description: None,
                },
            ],
            allow_free_text: text,
            multi_select: multi,
        }
    }

    fn picked(r: Result<Reply, String>) -> Vec<String> {
        match r {
            Ok(Reply::Answered { selected, .. }) => selected,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn lines_parse_into_replies() {
        let single = card(false, false);
        assert_eq!(picked(parse_line(&single, " 2 ")), vec!["Blue"]);
        assert_eq!(picked(parse_line(&single, "green")), vec!["Green"]);
        assert!(parse_line(&single, "1,2").unwrap_err().contains("only one"));
        assert!(parse_line(&single, "7").unwrap_err().contains("1-3"));
        assert!(parse_line(&single, "purple").is_err());
        assert!(matches!(parse_line(&single, ""), Ok(Reply::Skipped { .. })));
        assert!(matches!(
            parse_line(&single, "SKIP"),
            Ok(Reply::Skipped { .. })
        ));
        let multi = card(true, true);
        assert_eq!(picked(parse_line(&multi, "3, 1 3")), vec!["Red", "Green"]);
        assert_eq!(
            parse_line(&multi, "something else"),
            Ok(Reply::Answered {
                selected: vec![],
                text: Some("something else".into())
            })
        );
        let text = render_terminal_card(&multi);
        assert!(text.contains("Question #4: Which?"));
        assert!(text.contains("  1. Red — warm"));
        assert!(text.contains("e.g. 1,3"));
        assert!(text.contains("your own answer"));
        assert!(text.contains("empty line"));
    }

    #[test]
    fn permission_lines_default_to_no() {
        let mut p = card(false, false);
        p.kind = CardKind::Permission;
        assert_eq!(picked(parse_line(&p, "y")), vec![ALLOW]);
        assert_eq!(picked(parse_line(&p, "")), vec![DENY]);
        assert!(parse_line(&p, "maybe").is_err());
    }

    #[tokio::test]
    async fn a_missing_terminal_fails_at_once() {
        let gate = TerminalGate::with_device("/nonexistent/tty");
        let r = gate
            .ask(&card(false, false), Duration::from_secs(600))
            .await;
        assert!(matches!(r, Err(GateError::Unavailable(m)) if m.contains("no terminal")));
    }
}

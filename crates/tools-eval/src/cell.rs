//! What one cell produced and how it ended: its output (streams and displays in order,
//! bounded), images, last value, exception, bridged calls. The kernel's cell loop feeds the
//! driver's messages in; the `eval` tool renders the result for the model.

use std::time::Duration;

use tools_core::text::BoundedBuffer;

use crate::image::{BoundedPng, bound_png};
use crate::outputs::{MAX_OUTPUTS_LISTED, RichOutput};
use crate::protocol::{FromKernel, MimeBundle};

/// Most images one cell returns.
pub const MAX_IMAGES: usize = 8;
/// Most bridge calls listed in the structured result.
pub(crate) const MAX_BRIDGE_LISTED: usize = 20;
/// How to see what a cut left out, in the marker of every cut (the driver's cut of what a
/// cell printed, recorded here, and the answer's own cuts).
pub(crate) const HOW_TO_SEE_MORE: &str =
    "print a slice of it, or write it to a file and read the part you need";

/// The limits one cell runs under.
#[derive(Debug, Clone)]
pub struct CellSettings {
    /// No output and no bridge call for this long → interrupt.
    pub idle: Duration,
    /// After the interrupt, this long to stop before the kernel is killed.
    pub grace: Duration,
    /// How often a running cell reports progress.
    pub progress_every: Duration,
    /// Output characters kept from the start of the cell.
    pub head: usize,
    /// Output characters kept from the end of the cell.
    pub tail: usize,
    /// The answer budget in characters: output, value, traceback and notes together.
    pub answer_chars: usize,
}

/// Why a cell stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CellEnd {
    /// It ran to the end (successfully or with an exception).
    Finished,
    /// The idle budget ran out and the interrupt stopped it; the kernel's state survived.
    Interrupted {
        /// How long it had been idle.
        idle: Duration,
    },
    /// The idle budget ran out and the interrupt did not stop it within the grace period;
    /// the kernel was killed and its state is lost.
    Killed {
        /// How long it had been idle.
        idle: Duration,
        /// How long it was given after the interrupt.
        grace: Duration,
    },
    /// The caller gave up (or the run closed).
    Cancelled {
        /// Whether the kernel had to be killed (state lost).
        killed: bool,
    },
    /// The kernel died on its own (os._exit, a segfault, an outside kill).
    Crashed {
        /// How it died.
        how: String,
        /// The last lines of its log (fault handler output and the like).
        log: String,
    },
}

impl CellEnd {
    /// Whether the kernel is gone after this cell.
    pub fn kernel_lost(&self) -> bool {
        matches!(
            self,
            CellEnd::Killed { .. } | CellEnd::Crashed { .. } | CellEnd::Cancelled { killed: true }
        )
    }
}

/// An exception raised by the cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellError {
    /// The exception's class.
    pub ename: String,
    /// Its message.
    pub evalue: String,
    /// The trimmed traceback.
    pub traceback: String,
}

/// One bridged call a cell made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BridgeCall {
    /// The tool.
    pub name: String,
    /// Whether it succeeded.
    pub ok: bool,
}

/// What a cell produced.
#[derive(Debug)]
pub struct CellRun {
    output: BoundedBuffer,
    at_line_start: bool,
    /// Images shown, bounded in size and number.
    pub images: Vec<BoundedPng>,
    /// Images left out past [`MAX_IMAGES`] or because they could not be decoded.
    pub images_dropped: usize,
    /// The last expression's value, rendered.
    pub result: Option<String>,
    /// The displays and the value, as a notebook holds them (capped).
    pub rich_outputs: Vec<RichOutput>,
    /// How many displays and values in all.
    pub rich_outputs_total: usize,
    /// The exception, if it raised.
    pub error: Option<CellError>,
    /// How it ended.
    pub end: CellEnd,
    /// Characters of output the cell produced (as the driver counted them).
    pub output_chars: u64,
    /// Characters of output cut from the middle.
    pub cut_chars: u64,
    /// Bridged calls, in order (capped).
    pub bridge: Vec<BridgeCall>,
    /// How many bridged calls in all.
    pub bridge_total: usize,
    /// Wall time.
    pub elapsed: Duration,
}

impl CellRun {
    pub(crate) fn new(s: &CellSettings) -> Self {
        CellRun {
            // The driver already keeps only head + tail characters; the host keeps a little
            // more (in bytes, for multi-byte text) so memory is bounded even if it did not.
            output: BoundedBuffer::new(s.head * 4 + 256, s.tail * 4 + 256),
            at_line_start: true,
            images: Vec::new(),
            images_dropped: 0,
            result: None,
            rich_outputs: Vec::new(),
            rich_outputs_total: 0,
            error: None,
            end: CellEnd::Finished,
            output_chars: 0,
            cut_chars: 0,
            bridge: Vec::new(),
            bridge_total: 0,
            elapsed: Duration::ZERO,
        }
    }

    /// The cell's output (streams and displays, in order), with a marker where the middle
    /// was cut.
    pub fn output_text(&self) -> String {
        self.output.to_text()
    }

    fn push(&mut self, text: &str) {
        if let Some(last) = text.chars().last() {
            self.at_line_start = last == '\n';
        }
        self.output.push(text.as_bytes());
    }

    fn ensure_newline(&mut self) {
        if !self.at_line_start {
            self.push("\n");
        }
    }

    fn add_bundle(&mut self, data: &MimeBundle) -> String {
        let mut text = String::new();
        if let Some(b64) = data.get("image/png") {
            use base64::Engine;
            match base64::engine::general_purpose::STANDARD.decode(b64.as_bytes()) {
                Ok(bytes) if self.images.len() < MAX_IMAGES => match bound_png(bytes) {
                    Ok(img) => {
                        let n = self.images.len() + 1;
                        text.push_str(&match img.original {
                            Some((w, h)) => format!(
                                "[image {n}: {}x{} PNG, downscaled from {w}x{h}]",
                                img.width, img.height
                            ),
                            None => format!("[image {n}: {}x{} PNG]", img.width, img.height),
                        });
                        self.images.push(img);
                    }
                    Err(e) => {
                        self.images_dropped += 1;
                        text.push_str(&format!("[image left out: {e}]"));
                    }
                },
                Ok(_) => {
                    self.images_dropped += 1;
                    text.push_str(&format!(
                        "[image left out: a cell returns at most {MAX_IMAGES} images]"
                    ));
                }
                Err(e) => {
                    self.images_dropped += 1;
                    text.push_str(&format!("[image left out: bad base64: {e}]"));
                }
            }
        }
        if let Some(md) = data.get("text/markdown") {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(md);
        } else if let Some(plain) = data.get("text/plain")
            && (text.is_empty() || !data.contains_key("image/png"))
        {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(plain);
        }
        text
    }

    fn record(&mut self, output: RichOutput) {
        self.rich_outputs_total += 1;
        if self.rich_outputs.len() < MAX_OUTPUTS_LISTED {
            self.rich_outputs.push(output);
        }
    }

    pub(crate) fn absorb(&mut self, msg: FromKernel) {
        match msg {
            FromKernel::Stream {
                text, cut_before, ..
            } => {
                if cut_before > 0 {
                    self.ensure_newline();
                    self.push(&format!(
                        "… [cut: {cut_before} characters of output not shown; {}] …\n",
                        HOW_TO_SEE_MORE
                    ));
                }
                self.push(&text);
            }
            FromKernel::Display { data } => {
                self.record(RichOutput::of("display_data", &data));
                let text = self.add_bundle(&data);
                self.ensure_newline();
                self.push(&text);
                self.push("\n");
            }
            FromKernel::Result { data } => {
                self.record(RichOutput::of("execute_result", &data));
                let text = self.add_bundle(&data);
                self.result = Some(text);
            }
            FromKernel::Error {
                ename,
                evalue,
                traceback,
            } => {
                self.error = Some(CellError {
                    ename,
                    evalue,
                    traceback,
                });
            }
            FromKernel::Ready { .. } | FromKernel::ToolCall { .. } | FromKernel::Done { .. } => {}
        }
    }
}

//! What a successful tool call returns.

use std::path::PathBuf;

/// A PNG image returned to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// The PNG bytes.
    pub png: Vec<u8>,
}

/// A titled block appended after a tool's own text (diagnostics on write is one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// A short heading, e.g. `diagnostics`.
    pub title: String,
    /// The body, already capped by whoever made it.
    pub body: String,
    /// The same facts for programs, merged into the structured result under `title`.
    pub structured: Option<serde_json::Value>,
}

impl Section {
    /// A section with a title and a body.
    pub fn new(title: impl Into<String>, body: impl Into<String>) -> Self {
        Section {
            title: title.into(),
            body: body.into(),
            structured: None,
        }
    }
    /// Attaches structured data.
    pub fn with_structured(mut self, value: serde_json::Value) -> Self {
        self.structured = Some(value);
        self
    }
}

/// The result of a tool call: text for the model, optional structured JSON with the same
/// facts, images, sections added by write observers, and the files this call wrote.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolOutput {
    /// Text for the model.
    pub text: String,
    /// The same facts as JSON, for programs.
    pub structured: Option<serde_json::Value>,
    /// PNG images.
    pub images: Vec<Image>,
    /// Files this call wrote (absolute paths); write observers look at these.
    pub touched: Vec<PathBuf>,
    /// Blocks appended by write observers, shown after `text`.
    pub sections: Vec<Section>,
    /// The call answers at once and checks its writes in the background (a rename's
    /// check reports with the next answer): write observers with optional work add no wait
    /// of their own ([`crate::WritePass::answers_at_once`]).
    pub checks_in_background: bool,
}

impl ToolOutput {
    /// A text-only result.
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            text: text.into(),
            ..Default::default()
        }
    }
    /// Attaches structured data.
    pub fn with_structured(mut self, value: serde_json::Value) -> Self {
        self.structured = Some(value);
        self
    }
    /// Attaches a PNG image.
    pub fn with_image(mut self, png: Vec<u8>) -> Self {
        self.images.push(Image { png });
        self
    }
    /// Records files this call wrote.
    pub fn with_touched(mut self, paths: impl IntoIterator<Item = PathBuf>) -> Self {
        self.touched.extend(paths);
        self
    }

    /// Marks the call as checking its writes in the background (see
    /// [`ToolOutput::checks_in_background`]).
    pub fn checking_in_background(mut self) -> Self {
        self.checks_in_background = true;
        self
    }

    /// Puts `line` (when there is one) at the head of the text: something the model must
    /// read before the answer itself.
    pub fn lead_with(&mut self, line: Option<String>) {
        if let Some(line) = line {
            self.text = if self.text.is_empty() {
                line
            } else {
                format!("{line}\n{}", self.text)
            };
        }
    }

    /// The text followed by every section, as a model should read it.
    pub fn full_text(&self) -> String {
        let mut out = self.text.clone();
        for s in &self.sections {
            if !out.is_empty() && !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(&format!("\n## {}\n{}", s.title, s.body));
        }
        out
    }

    /// The structured result with every section's structured data merged in under
    /// `sections.<title>`.
    pub fn full_structured(&self) -> Option<serde_json::Value> {
        let extra: Vec<_> = self
            .sections
            .iter()
            .filter_map(|s| s.structured.clone().map(|v| (s.title.clone(), v)))
            .collect();
        if extra.is_empty() {
            return self.structured.clone();
        }
        let mut base = match self.structured.clone() {
            Some(serde_json::Value::Object(m)) => m,
            Some(other) => {
                let mut m = serde_json::Map::new();
                m.insert("result".into(), other);
                m
            }
            None => serde_json::Map::new(),
        };
        let mut sections = serde_json::Map::new();
        for (t, v) in extra {
            sections.insert(t, v);
        }
        base.insert("sections".into(), serde_json::Value::Object(sections));
        Some(serde_json::Value::Object(base))
    }
}

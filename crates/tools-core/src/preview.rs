//! Previews: what a change *would* do, asked before it is written.
//!
//! A writing tool called with `preview: true` computes the new contents, writes nothing,
//! and hands them to the run's write observers as [`ProposedFile`]s
//! ([`crate::CallCtx::preview_diagnostics`]). Each observer answers with a [`PreviewReport`]:
//! the sections it would have appended after the write (diagnostics on write predicts the
//! diagnostics), and the parts of its machinery that cannot see unsaved contents (a checker
//! that runs only on saved files), so the answer can say what the prediction does not cover.
//! The change itself is then staged in the run's [`crate::StagedChanges`] for `resolve`.

use std::path::PathBuf;

use crate::Section;

/// The largest file content a preview sends to observers (a language server holds every
/// previewed document in memory, and a huge proposed text is almost surely a mistake).
pub const MAX_PREVIEW_FILE_BYTES: usize = 8 * 1024 * 1024;

/// One file as a change proposes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProposedFile {
    /// Absolute path, resolved by the workspace jail.
    pub path: PathBuf,
    /// The whole proposed text.
    pub text: String,
}

/// What one observer (or all of them, merged) predicts about a proposed change.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PreviewReport {
    /// Sections as the write would have had them, worded as a prediction.
    pub sections: Vec<Section>,
    /// What the prediction does not cover, one line each, naming the server or checker
    /// (e.g. a check that runs only when a file is saved).
    pub not_covered: Vec<String>,
}

impl PreviewReport {
    /// Appends `other` to this report.
    pub fn merge(&mut self, other: PreviewReport) {
        self.sections.extend(other.sections);
        for n in other.not_covered {
            if !self.not_covered.contains(&n) {
                self.not_covered.push(n);
            }
        }
    }

    /// The report as text for the model: every section's body, then what is not covered.
    /// `None` when there is nothing to say (no observer predicted anything).
    pub fn text(&self) -> Option<String> {
        let mut parts: Vec<String> = self
            .sections
            .iter()
            .filter(|s| !s.body.trim().is_empty())
            .map(|s| s.body.clone())
            .collect();
        if !self.not_covered.is_empty() {
            parts.push(format!(
                "not covered by this preview: {}",
                self.not_covered.join("; ")
            ));
        }
        (!parts.is_empty()).then(|| parts.join("\n"))
    }

    /// The same facts as JSON: each section's structured value under its title, and the
    /// list of what is not covered.
    pub fn structured(&self) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        for s in &self.sections {
            m.insert(
                s.title.clone(),
                s.structured
                    .clone()
                    .unwrap_or_else(|| serde_json::Value::String(s.body.clone())),
            );
        }
        m.insert("not_covered".into(), serde_json::json!(self.not_covered));
        serde_json::Value::Object(m)
    }
}

impl PreviewReport {
    /// `out` with this report in front: the prediction leads the text (it is what the
    /// caller asked for), and the structured result gets it under `predicted`.
    pub fn lead(&self, mut out: crate::ToolOutput) -> crate::ToolOutput {
        let text = self.text().unwrap_or_else(|| {
            "no diagnostics predicted (no language server covers these files)".into()
        });
        out.text = format!("{text}\n\n{}", out.text);
        let predicted = self.structured();
        out.structured = Some(match out.structured.take() {
            Some(serde_json::Value::Object(mut m)) => {
                m.insert("predicted".into(), predicted);
                serde_json::Value::Object(m)
            }
            Some(other) => serde_json::json!({"result": other, "predicted": predicted}),
            None => serde_json::json!({"predicted": predicted}),
        });
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        CallCtx, RegistryBuilder, Run, Surface, Tier, Tool, ToolError, ToolOutput, WriteObserver,
    };
    use serde_json::{Value, json};
    use std::sync::Arc;

    struct Quiet;
    #[async_trait::async_trait]
    impl WriteObserver for Quiet {
        async fn after_write(&self, _ctx: &CallCtx, _touched: &[PathBuf]) -> Vec<Section> {
            vec![Section::new("observed", "after a write")]
        }
    }

    struct Predicts;
    #[async_trait::async_trait]
    impl WriteObserver for Predicts {
        async fn after_write(&self, _ctx: &CallCtx, _touched: &[PathBuf]) -> Vec<Section> {
            Vec::new()
        }
        async fn preview(&self, _ctx: &CallCtx, proposed: &[ProposedFile]) -> PreviewReport {
            PreviewReport {
                sections: vec![Section::new(
                    "diagnostics",
                    format!("{} proposed", proposed.len()),
                )],
                not_covered: vec!["a save-only checker".into()],
            }
        }
    }

    struct Previews;
    #[async_trait::async_trait]
    impl Tool for Previews {
        fn name(&self) -> &str {
            "previews"
        }
        fn tier(&self) -> Tier {
            Tier::Write
        }
        fn description(&self) -> String {
            "previews".into()
        }
        fn input_schema(&self) -> Value {
            json!({"type":"object"})
        }
        async fn call(&self, ctx: &CallCtx, _args: Value) -> Result<ToolOutput, ToolError> {
            let proposed = [ProposedFile {
                path: ctx.run.root().join("f"),
                text: "x".into(),
            }];
            let report = ctx.preview_diagnostics(&proposed).await;
            Ok(ToolOutput::text(report.text().unwrap_or_default()))
        }
    }

    #[tokio::test]
    async fn a_tool_reaches_every_observers_preview_and_nothing_counts_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let run = Run::for_test(dir.path(), "c");
        let reg = RegistryBuilder::new(run)
            .tool(Arc::new(Previews))
            .observer(Arc::new(Predicts))
            .observer(Arc::new(Quiet))
            .build()
            .unwrap();
        let out = reg
            .call(Surface::FULL, "previews", json!({}))
            .await
            .unwrap();
        assert_eq!(
            out.text,
            "1 proposed\nnot covered by this preview: a save-only checker"
        );
        // Nothing was touched, so no observer ran after the call.
        assert!(out.sections.is_empty());
    }

    #[test]
    fn merged_reports_keep_every_section_and_name_each_gap_once() {
        let mut r = PreviewReport::default();
        assert_eq!(r.text(), None);
        r.merge(PreviewReport {
            sections: vec![Section::new("diagnostics", "1 new diagnostic(s) predicted")],
            not_covered: vec!["cargo check (runs on save)".into()],
        });
        r.merge(PreviewReport {
            sections: vec![],
            not_covered: vec!["cargo check (runs on save)".into()],
        });
        assert_eq!(
            r.text().unwrap(),
            "1 new diagnostic(s) predicted\nnot covered by this preview: cargo check (runs on save)"
        );
        assert_eq!(
            r.structured()["not_covered"],
            serde_json::json!(["cargo check (runs on save)"])
        );
    }
}

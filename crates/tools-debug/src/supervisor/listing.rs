//! `adapters` and `doctor`: each adapter of the table, usable here or not, and which half of
//! the conjunction (root marker, binary) is missing — from the same discovery `launch` and
//! `attach` use.

use serde_json::{Value, json};
use tools_core::{DoctorEntry, ToolError, ToolOutput};

use super::DebugSupervisor;
use crate::adapters::{Discovery, MarkerSearch, Resolution, discover};

impl DebugSupervisor {
    /// Each adapter: usable here or not, and which half of the conjunction is missing.
    pub async fn adapters(&self) -> Result<ToolOutput, ToolError> {
        let run = self.run()?;
        let mut lines = Vec::new();
        let mut entries = Vec::new();
        for spec in self.table.specs() {
            let Discovery {
                hit,
                resolution: res,
                ..
            } = discover(&run, &self.resolver, spec, MarkerSearch::InWorkspace).await;
            let marker_text = match &hit {
                Some(h) => format!(
                    "root marker {} found at {}",
                    h.marker,
                    run.workspace().display(&h.dir)
                ),
                None => format!(
                    "missing root marker (none of {} in the workspace)",
                    spec.markers.join(", ")
                ),
            };
            let (state, line, binary, notes) = match (&hit, &res) {
                (
                    Some(_),
                    Resolution::Found {
                        program,
                        args,
                        origin,
                        notes,
                        ..
                    },
                ) => (
                    "usable",
                    format!(
                        "{}: usable — {marker_text}; binary {} {} (from {origin})",
                        spec.id,
                        program.display(),
                        args.join(" ")
                    ),
                    Some(program.display().to_string()),
                    notes.clone(),
                ),
                (None, Resolution::Found { program, notes, .. }) => (
                    "missing_marker",
                    format!(
                        "{}: not usable — {marker_text}; the binary would be {}",
                        spec.id,
                        program.display()
                    ),
                    Some(program.display().to_string()),
                    notes.clone(),
                ),
                (Some(_), Resolution::Missing { looked }) => (
                    "missing_binary",
                    format!(
                        "{}: not usable — missing binary ({looked}); {marker_text}",
                        spec.id
                    ),
                    None,
                    Vec::new(),
                ),
                (None, Resolution::Missing { looked }) => (
                    "missing_both",
                    format!(
                        "{}: not usable — {marker_text}, and missing binary ({looked})",
                        spec.id
                    ),
                    None,
                    Vec::new(),
                ),
            };
            lines.push(line);
            for n in &notes {
                lines.push(format!("  note: {n}"));
            }
            entries.push(json!({
                "adapter": spec.id.as_str(),
                "state": state,
                "markers": spec.markers,
                "marker_found": hit.as_ref().map(|h| run.workspace().display(&h.dir.join(&h.marker))),
                "binary": binary,
                "notes": notes,
            }));
        }
        lines.push(
            "launch picks the adapter from the program: .py → debugpy, a Go package folder or .go file → delve, \
             an ELF executable → lldb, .dart → dart (or pass `adapter`)"
                .into(),
        );
        Ok(ToolOutput::text(lines.join("\n")).with_structured(json!({"adapters": entries})))
    }

    /// `doctor` lines, from the same discovery as `adapters`.
    pub async fn doctor(&self) -> Vec<DoctorEntry> {
        let Ok(out) = self.adapters().await else {
            return Vec::new();
        };
        let entries = out
            .structured
            .as_ref()
            .and_then(|v| v.get("adapters"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let lines: Vec<&str> = out
            .text
            .lines()
            .filter(|l| !l.starts_with("  note") && !l.starts_with("launch picks"))
            .collect();
        entries
            .iter()
            .zip(lines)
            .map(|(e, line)| DoctorEntry {
                family: "debug".into(),
                resource: format!(
                    "{}: {}",
                    e["adapter"].as_str().unwrap_or("?"),
                    e["binary"].as_str().unwrap_or("-")
                ),
                ok: e["state"] == "usable",
                detail: line
                    .split_once(" — ")
                    .map(|(_, d)| d.to_string())
                    .unwrap_or_else(|| line.to_string()),
            })
            .collect()
    }
}

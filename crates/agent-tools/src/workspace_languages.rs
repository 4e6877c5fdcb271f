//! Which languages a workspace holds, from its files' extensions, so `doctor` can lead with
//! the servers, grammars, adapters and kernels that concern it. The walk honours ignore
//! files, skips dependency and build folders and is capped, so it stays quick on a large
//! repository; a language seen only past the cap is simply not led with.

use std::collections::BTreeMap;
use std::path::Path;

/// Entries walked at most.
const MAX_WALKED: usize = 20_000;

/// Folders never entered: dependencies, virtual environments and build output hold other
/// people's files, not the workspace's languages.
const SKIPPED_DIRS: &[&str] = &[".git", "node_modules", ".venv", "venv", "target", "build"];

/// Language ids (the names doctor entries use: `python`, `cpp`, `typescript`, …) by how many
/// files of each the workspace holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkspaceLanguages {
    /// Language id → number of files.
    pub files: BTreeMap<String, usize>,
}

impl WorkspaceLanguages {
    /// Walks `root` and counts the files of each known language.
    pub fn scan(root: &Path) -> Self {
        let walker = ignore::WalkBuilder::new(root)
            .hidden(false)
            .filter_entry(|e| !SKIPPED_DIRS.contains(&e.file_name().to_string_lossy().as_ref()))
            .max_depth(Some(12))
            .build();
        let mut found = WorkspaceLanguages::default();
        for entry in walker.flatten().take(MAX_WALKED) {
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let ext = entry
                .path()
                .extension()
                .and_then(|e| e.to_str())
                .map(str::to_ascii_lowercase);
            if let Some(lang) = ext.as_deref().and_then(language_of_extension) {
                *found.files.entry(lang.to_string()).or_default() += 1;
            }
        }
        found
    }

    /// Whether the workspace holds a file of `language`.
    pub fn has(&self, language: &str) -> bool {
        self.files.contains_key(language)
    }

    /// How many files of `language` the workspace holds.
    pub fn count(&self, language: &str) -> usize {
        self.files.get(language).copied().unwrap_or(0)
    }

    /// `python (12 files), c (3 files)`, most files first; `None` when there are none.
    pub fn summary(&self) -> Option<String> {
        let mut by_count: Vec<(&String, &usize)> = self.files.iter().collect();
        by_count.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let parts: Vec<String> = by_count
            .iter()
            .map(|(lang, n)| {
                let s = if **n == 1 { "" } else { "s" };
                format!("{lang} ({n} file{s})")
            })
            .collect();
        (!parts.is_empty()).then(|| parts.join(", "))
    }
}

/// The language id of a lower-case file extension, as the tool families name languages.
pub fn language_of_extension(ext: &str) -> Option<&'static str> {
    Some(match ext {
        "py" | "pyi" | "pyw" => "python",
        "rs" => "rust",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "c++" | "hpp" | "hh" | "hxx" => "cpp",
        "go" => "go",
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "tsx",
        "js" | "mjs" | "cjs" | "jsx" => "javascript",
        "dart" => "dart",
        "sh" | "bash" => "bash",
        "cs" => "csharp",
        "css" | "less" => "css",
        // Sass has a server of its own (it follows `@use` modules).
        "scss" | "sass" => "sass",
        "html" | "htm" => "html",
        "java" => "java",
        "json" => "json",
        "kt" | "kts" => "kotlin",
        "lua" => "lua",
        "php" => "php",
        "rb" => "ruby",
        "swift" => "swift",
        "yaml" | "yml" => "yaml",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_the_workspaces_own_files_only() {
        let dir = tempfile::tempdir().unwrap();
        for rel in [
            "pkg/a.py",
            "pkg/b.py",
            "tests/test_a.py",
            "scripts/run.sh",
            "README.md",
            ".venv/lib/site.py",
            "node_modules/x/index.js",
        ] {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "").unwrap();
        }
        let langs = WorkspaceLanguages::scan(dir.path());
        assert_eq!(
            langs.files,
            BTreeMap::from([("python".to_string(), 3), ("bash".to_string(), 1)])
        );
        assert_eq!(
            langs.summary().as_deref(),
            Some("python (3 files), bash (1 file)")
        );
        assert!(langs.has("python") && !langs.has("javascript"));
        assert_eq!(WorkspaceLanguages::default().summary(), None);
    }
}

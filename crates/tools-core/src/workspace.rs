//! The path jail: every path a model gives is resolved against the workspace root and
//! refused when it escapes it, symlinks included.

use std::path::{Component, Path, PathBuf};

use crate::ToolError;

/// A workspace root. Paths are resolved against it and may not leave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    root: PathBuf,
}

impl Workspace {
    /// Opens a workspace at `root`, which must be an existing directory. The root is
    /// canonicalised so that symlink checks compare real paths.
    pub fn new(root: impl AsRef<Path>) -> Result<Self, ToolError> {
        let root = root.as_ref();
        let canon = root.canonicalize().map_err(|e| {
            ToolError::invalid(
                "root",
                format!("cannot open workspace root {}: {e}", root.display()),
            )
        })?;
        if !canon.is_dir() {
            return Err(ToolError::invalid(
                "root",
                format!("{} is not a directory", root.display()),
            ));
        }
        Ok(Workspace { root: canon })
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves a path given by the model (relative to the root, or absolute inside it).
    ///
    /// The result is absolute and inside the root. `..` is folded lexically, then every
    /// existing ancestor is canonicalised, so a symlink that points outside is refused even
    /// when the final file does not exist yet.
    pub fn resolve(&self, given: &str) -> Result<PathBuf, ToolError> {
        if given.is_empty() {
            return Err(ToolError::invalid("path", "the path is empty"));
        }
        if given.contains('\0') {
            return Err(ToolError::invalid("path", "the path contains a NUL byte"));
        }
        let p = Path::new(given);
        let joined = if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.root.join(p)
        };
        let lexical = normalize(&joined);
        if !lexical.starts_with(&self.root) {
            return Err(self.outside(given));
        }
        // Canonicalise the longest existing prefix; re-append the rest.
        let mut existing = lexical.clone();
        let mut rest = Vec::new();
        loop {
            match existing.canonicalize() {
                Ok(real) => {
                    let mut full = real;
                    for c in rest.iter().rev() {
                        full.push(c);
                    }
                    if !full.starts_with(&self.root) {
                        return Err(ToolError::invalid(
                            "path",
                            format!(
                                "`{given}` resolves through a symlink to {}, which is outside the workspace {}",
                                full.display(),
                                self.root.display()
                            ),
                        ));
                    }
                    return Ok(full);
                }
                Err(_) => {
                    let Some(name) = existing.file_name().map(|n| n.to_os_string()) else {
                        return Err(self.outside(given));
                    };
                    rest.push(name);
                    if !existing.pop() {
                        return Err(self.outside(given));
                    }
                }
            }
        }
    }

    /// The path as printed to the model: relative to the root when inside it.
    pub fn display(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
            Ok(rel) => rel.to_string_lossy().into_owned(),
            Err(_) => path.to_string_lossy().into_owned(),
        }
    }

    fn outside(&self, given: &str) -> ToolError {
        ToolError::invalid(
            "path",
            format!(
                "`{given}` is outside the workspace {}; use a path inside it",
                self.root.display()
            ),
        )
    }
}

fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_escapes_and_symlinks_out() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        std::fs::write(dir.path().join("a.txt"), "x").unwrap();
        assert_eq!(ws.resolve("a.txt").unwrap(), ws.root().join("a.txt"));
        assert_eq!(
            ws.resolve("sub/new.txt").unwrap(),
            ws.root().join("sub/new.txt")
        );
        assert!(ws.resolve("../x").is_err());
        assert!(ws.resolve("/etc/passwd").is_err());
        assert!(ws.resolve("").is_err());
        std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).unwrap();
        assert!(ws.resolve("link/file.txt").is_err());
        assert!(ws.resolve("link").is_err());
        std::os::unix::fs::symlink(dir.path().join("a.txt"), dir.path().join("inner")).unwrap();
        assert_eq!(ws.resolve("inner").unwrap(), ws.root().join("a.txt"));
        assert_eq!(ws.display(&ws.root().join("sub/x.rs")), "sub/x.rs");
    }
}

//! The path jail: every path a model gives is resolved against the workspace root and
//! refused when it escapes it, symlinks included.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use crate::ToolError;
use crate::platform::within_root;
use crate::pre_write::PreWriteImages;

/// A workspace root. Paths are resolved against it and may not leave it.
///
/// Clones share the pre-images the safe writer keeps of the files it replaces (see
/// [`Workspace::pre_write_images`]); two workspaces are equal when their roots are.
#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
    pre_write: Arc<PreWriteImages>,
}

impl PartialEq for Workspace {
    fn eq(&self, other: &Self) -> bool {
        self.root == other.root
    }
}

impl Eq for Workspace {}

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
        Ok(Workspace {
            root: canon,
            pre_write: Arc::default(),
        })
    }

    /// What the files written through [`crate::safe_write`] held just before, for a write
    /// observer that needs the old text (kept only once someone enabled it).
    pub fn pre_write_images(&self) -> &Arc<PreWriteImages> {
        &self.pre_write
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves a path given by the model (relative to the root, or absolute inside it).
    ///
    /// The result is absolute and inside the root. `..` is folded lexically, then every
    /// existing ancestor is canonicalised, so a symlink that points outside is refused even
    /// when the final file does not exist yet. A dangling symlink is followed through its
    /// text (to where a write would create the file), so one that points outside is refused
    /// too, and the result never names a symlink that a later open would follow.
    pub fn resolve(&self, given: &str) -> Result<PathBuf, ToolError> {
        if given.is_empty() {
            return Err(ToolError::invalid("path", "the path is empty"));
        }
        if given.contains('\0') {
            return Err(ToolError::invalid("path", "the path contains a NUL byte"));
        }
        let resolved = self.resolve_path(Path::new(given));
        // A Windows path given here names a file of that name in the root, which is never
        // what was meant: say so, unless such a file really exists.
        let missing = match &resolved {
            Ok(p) => p.symlink_metadata().is_err(),
            Err(_) => true,
        };
        if missing
            && let Some(why) =
                crate::platform::foreign_path_reason(crate::platform::PathStyle::HOST, given)
        {
            return Err(ToolError::invalid("path", why));
        }
        resolved
    }

    /// [`Workspace::resolve`] for a path that need not be UTF-8 (a file name found on disk
    /// is kept byte for byte).
    pub fn resolve_path(&self, given: &Path) -> Result<PathBuf, ToolError> {
        if given.as_os_str().is_empty() {
            return Err(ToolError::invalid("path", "the path is empty"));
        }
        let p = given;
        let shown = given.display();
        let joined = if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.root.join(p)
        };
        // Inside the root as the file system sees it: where case is ignored, a path given
        // in another case is taken, spelled as the root is.
        let Some(mut lexical) = within_root(&normalize_lexically(&joined), &self.root) else {
            return Err(self.outside(given));
        };
        for _ in 0..MAX_LINK_HOPS {
            match self.resolve_existing(&lexical, given)? {
                Step::Real(full) => return Ok(full),
                Step::DanglingLink { link, target, next } => {
                    let Some(next) = within_root(&next, &self.root) else {
                        return Err(ToolError::invalid(
                            "path",
                            format!(
                                "`{shown}` resolves through a symlink ({} -> {}) to {}, which is outside the workspace {}",
                                self.display(&link),
                                target.display(),
                                next.display(),
                                self.root.display()
                            ),
                        ));
                    };
                    lexical = next;
                }
            }
        }
        Err(ToolError::invalid(
            "path",
            format!("`{shown}` goes through more than {MAX_LINK_HOPS} symlinks (a symlink loop?)"),
        ))
    }

    /// Checks that `path`, resolved by [`Workspace::resolve`] earlier, still resolves to
    /// itself: no folder on its way was replaced by a symlink (to the outside or anywhere
    /// else) since. Staged changes call this just before they write.
    pub fn confirm_resolved(&self, path: &Path) -> Result<(), ToolError> {
        let shown = self.display(path);
        let now = self.resolve_path(path);
        match now {
            Ok(p) if p == path => Ok(()),
            Ok(p) => Err(ToolError::rejected(format!(
                "`{shown}` now resolves to `{}`: a folder on its way was replaced by a symlink since the change was \
                 planned; nothing was written",
                self.display(&p)
            ))),
            Err(e) => Err(ToolError::rejected(format!(
                "`{shown}` cannot be written any more ({e}); nothing was written"
            ))),
        }
    }

    /// One pass over `lexical`: canonicalise its longest existing prefix, or stop at a
    /// dangling symlink and say where its text points.
    fn resolve_existing(&self, lexical: &Path, given: &Path) -> Result<Step, ToolError> {
        let mut existing = lexical.to_path_buf();
        let mut rest = Vec::new();
        loop {
            match existing.canonicalize() {
                Ok(real) => {
                    let full = with_rest(real, &rest);
                    let Some(full) = within_root(&full, &self.root) else {
                        return Err(ToolError::invalid(
                            "path",
                            format!(
                                "`{}` resolves through a symlink to {}, which is outside the workspace {}",
                                given.display(),
                                full.display(),
                                self.root.display()
                            ),
                        ));
                    };
                    return Ok(Step::Real(full));
                }
                Err(_) => {
                    let is_link = existing
                        .symlink_metadata()
                        .map(|m| m.file_type().is_symlink())
                        .unwrap_or(false);
                    if is_link
                        && let Ok(target) = std::fs::read_link(&existing)
                        && let Some(parent) = existing.parent()
                        && let Ok(parent) = parent.canonicalize()
                    {
                        let next = with_rest(normalize_lexically(&parent.join(&target)), &rest);
                        return Ok(Step::DanglingLink {
                            link: existing,
                            target,
                            next,
                        });
                    }
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
        display_relative(&self.root, path)
    }

    fn outside(&self, given: &Path) -> ToolError {
        ToolError::invalid(
            "path",
            format!(
                "`{}` is outside the workspace {}; use a path inside it",
                given.display(),
                self.root.display()
            ),
        )
    }
}

/// The most symlinks one path may pass through, as the kernel's own limit (`ELOOP`).
const MAX_LINK_HOPS: usize = 40;

/// One pass of [`Workspace::resolve`].
enum Step {
    /// The path with every existing part canonical.
    Real(PathBuf),
    /// `link` is a symlink to `target`, which does not exist; `next` is the path with the
    /// link replaced by its target.
    DanglingLink {
        link: PathBuf,
        target: PathBuf,
        next: PathBuf,
    },
}

/// `base` with the names of `rest` (innermost first) appended.
fn with_rest(mut base: PathBuf, rest: &[std::ffi::OsString]) -> PathBuf {
    for c in rest.iter().rev() {
        base.push(c);
    }
    base
}

/// `path` as printed to the model: relative to `base` (`.` for `base` itself) when inside
/// it, whole otherwise.
pub fn display_relative(base: &Path, path: &Path) -> String {
    match path.strip_prefix(base) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
        // Shown with `/` on every OS, as the agent writes paths (and as the answers' tests
        // read them); Windows' own separator is `\`.
        Ok(rel) if std::path::MAIN_SEPARATOR == '\\' => rel.to_string_lossy().replace('\\', "/"),
        Ok(rel) => rel.to_string_lossy().into_owned(),
        Err(_) => path.to_string_lossy().into_owned(),
    }
}

/// `a/b/../c` → `a/c` and `./` dropped, by the text alone: the path need not exist and no
/// link is followed (callers that must not escape a folder check the result themselves).
pub fn normalize_lexically(p: &Path) -> PathBuf {
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
        // Links planted in the workspace (on Windows the junctions of the writer's tests).
        #[cfg(unix)]
        {
            let outside = tempfile::tempdir().unwrap();
            std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).unwrap();
            assert!(ws.resolve("link/file.txt").is_err());
            assert!(ws.resolve("link").is_err());
            std::os::unix::fs::symlink(dir.path().join("a.txt"), dir.path().join("inner")).unwrap();
            assert_eq!(ws.resolve("inner").unwrap(), ws.root().join("a.txt"));
        }
        assert_eq!(ws.display(&ws.root().join("sub/x.rs")), "sub/x.rs");
    }

    #[cfg(unix)]
    #[test]
    fn dangling_symlinks_are_followed_through_their_text() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        // Pointing outside, to a file that does not exist yet: refused.
        std::os::unix::fs::symlink(outside.path().join("new.txt"), dir.path().join("out")).unwrap();
        let e = ws.resolve("out").unwrap_err().to_string();
        assert!(e.contains("symlink") && e.contains("outside"), "{e}");
        // A relative dangling link that climbs out: refused.
        std::os::unix::fs::symlink("../../elsewhere/x", dir.path().join("up")).unwrap();
        assert!(ws.resolve("up").is_err());
        // Pointing inside, to a file not created yet: resolves to the target's path.
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::os::unix::fs::symlink("sub/later.txt", dir.path().join("inner")).unwrap();
        assert_eq!(
            ws.resolve("inner").unwrap(),
            ws.root().join("sub/later.txt")
        );
        // A loop is an error, not a hang.
        std::os::unix::fs::symlink("b", dir.path().join("a")).unwrap();
        std::os::unix::fs::symlink("a", dir.path().join("b")).unwrap();
        assert!(ws.resolve("a").unwrap_err().to_string().contains("symlink"));
        // A folder swapped for a link after resolution is noticed.
        let p = ws.resolve("sub/f.txt").unwrap();
        ws.confirm_resolved(&p).unwrap();
        std::fs::rename(dir.path().join("sub"), dir.path().join("sub.old")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("sub")).unwrap();
        assert!(matches!(
            ws.confirm_resolved(&p),
            Err(ToolError::Rejected(_))
        ));
    }
}

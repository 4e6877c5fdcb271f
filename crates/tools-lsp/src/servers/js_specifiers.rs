//! Whether a JavaScript/TypeScript file imports another, read from its text.
//!
//! Used where a cheap answer is enough and nothing from the repository may run (the
//! importers opened after a write, the sibling projects loaded before a question): every
//! quoted relative specifier (`"./lib"`, `'../src/lib.js'`) is resolved lexically against
//! the importing file's folder and compared with the target without its extension. It may
//! take a string that is not an import for one (a file opened for nothing costs little);
//! it never follows `paths` mappings or package names.

use std::path::{Path, PathBuf};

/// The extensions a relative specifier may name or leave out.
pub(crate) const JS_EXTS: [&str; 8] = ["ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs"];

/// Every quoted string in `text` that starts with `./` or `../`.
fn relative_specifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(['"', '\'', '`'])
        .skip(1)
        .step_by(2)
        .filter(|s| (s.starts_with("./") || s.starts_with("../")) && s.len() < 300)
}

/// Whether `text`, the content of a file in `dir`, names `target` by a relative specifier
/// (with or without its extension, or its folder when `target` is an `index` file).
pub(crate) fn imports(text: &str, dir: &Path, target: &Path) -> bool {
    let target_stem = strip_js_ext(target);
    let target_is_index = target.file_stem().is_some_and(|s| s == "index");
    relative_specifiers(text).any(|spec| {
        let cand = tools_core::normalize_lexically(&dir.join(spec));
        strip_js_ext(&cand) == target_stem
            || (target_is_index && target.parent() == Some(cand.as_path()))
    })
}

/// `a/b.ts` → `a/b`; a path without a JavaScript extension is kept.
fn strip_js_ext(p: &Path) -> PathBuf {
    match p.extension().and_then(|e| e.to_str()) {
        Some(e) if JS_EXTS.contains(&e) => p.with_extension(""),
        _ => p.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relative_specifier_names_the_file_with_or_without_its_extension() {
        let dir = Path::new("/w/checkout");
        let target = Path::new("/w/pricing/rates.ts");
        assert!(imports(
            "import { a } from \"../pricing/rates\";",
            dir,
            target
        ));
        assert!(imports(
            "const r = require('../pricing/rates.js');",
            dir,
            target
        ));
        assert!(!imports(
            "import { a } from \"../pricing/rates2\";",
            dir,
            target
        ));
        assert!(!imports(
            "import { a } from \"pricing/rates\";",
            dir,
            target
        ));
        let index = Path::new("/w/pricing/index.ts");
        assert!(imports("export * from '../pricing';", dir, index));
    }
}

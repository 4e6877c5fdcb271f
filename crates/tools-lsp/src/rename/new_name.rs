//! What `lsp_rename` accepts as a new name: one identifier, never text that a server would
//! splice into source as something else (`a b/../c`, `x; rm`, a newline). Servers differ in
//! what they check themselves (some rename to anything), so the tool checks before asking.

use tools_core::ToolError;

/// The longest new name accepted; longer is certainly a mistake.
const MAX_NAME_CHARS: usize = 256;

/// Accepts `name` when it is one identifier as the supported languages spell them: a letter,
/// `_` or `$` first, then letters, digits, `_` or `$`; Rust's raw `r#` prefix is allowed.
/// Anything else is an invalid-arguments error that says which character is wrong.
pub(crate) fn check_new_name(name: &str) -> Result<(), ToolError> {
    if name.trim().is_empty() {
        return Err(ToolError::invalid("new_name", "`new_name` is empty"));
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(ToolError::invalid(
            "new_name",
            format!("`new_name` is longer than {MAX_NAME_CHARS} characters"),
        ));
    }
    let body = name.strip_prefix("r#").unwrap_or(name);
    let mut chars = body.chars();
    let first = chars
        .next()
        .ok_or_else(|| ToolError::invalid("new_name", "`new_name` is only the raw prefix `r#`"))?;
    if !(first.is_alphabetic() || first == '_' || first == '$') {
        return Err(not_identifier(name, first));
    }
    match chars.find(|c| !(c.is_alphanumeric() || *c == '_' || *c == '$')) {
        Some(bad) => Err(not_identifier(name, bad)),
        None => Ok(()),
    }
}

fn not_identifier(name: &str, bad: char) -> ToolError {
    ToolError::invalid(
        "new_name",
        format!(
            "`new_name` {name:?} is not an identifier ({bad:?} cannot appear in one): give the \
             symbol's new name only, without spaces, paths or punctuation"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::check_new_name;

    #[test]
    fn identifiers_pass() {
        for ok in [
            "area",
            "_private",
            "$el",
            "Größe",
            "r#type",
            "x2",
            "CONSTANT_NAME",
        ] {
            assert!(check_new_name(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn anything_else_is_refused_with_the_reason() {
        for bad in [
            "a b/../c", "x;y", "a\nb", "1abc", "", "  ", "r#", "a.b", "a-b",
        ] {
            let err = check_new_name(bad).expect_err(bad).to_string();
            assert!(err.contains("new_name"), "{bad}: {err}");
        }
        let err = check_new_name("a b/../c").unwrap_err().to_string();
        assert!(err.contains("not an identifier"), "{err}");
        assert!(check_new_name(&"a".repeat(300)).is_err());
    }
}

//! Whether a new body given for a symbol opens with the symbol's own declaration: `def
//! total(…):` for the function `total`, `pub fn norm(&self)` for `impl Point.norm`, `func (s
//! *Server) Port()` for `Server.Port`. Agents used to a "body" that includes the signature
//! pass the whole definition; written inside the old one it would define the symbol inside
//! itself, so such a body is taken as the whole definition instead.
//!
//! The test reads the text's first line of code (decorators, attributes and comments above it
//! skipped) and asks whether it declares the symbol's own name: a declaration keyword
//! (`def`, `fn`, `func`, `function`, `class`, …) among the plain words before the name, or,
//! for languages that declare methods without one (`total(a, b) {`, `public int total(int
//! a) {`), the name followed by a closed parameter list and the opening brace. A line that
//! only uses the name — a recursive call, an assignment, a string — is not a declaration.

/// Words that declare a named definition in the languages the bundled grammars and servers
/// read.
const DECLARING: &[&str] = &[
    "def",
    "class",
    "fn",
    "func",
    "function",
    "struct",
    "enum",
    "trait",
    "interface",
    "impl",
    "mod",
    "module",
    "namespace",
    "union",
    "type",
    "fun",
    "record",
    "object",
];

/// Words that open a statement, never a declaration, in a line that ends with `{`.
const STATEMENT: &[&str] = &[
    "if", "while", "for", "match", "switch", "return", "await", "new", "throw", "yield", "else",
    "case", "do", "not", "and", "or", "in", "loop", "catch", "defer", "go", "let", "var", "const",
];

/// The bare name of a symbol shown as `name` (`Greeter.greet` → `greet`, `impl Point` →
/// `Point`, `Vec<T>` → `Vec`).
fn bare_name(name: &str) -> &str {
    let last = name.rsplit('.').next().unwrap_or(name);
    let last = last.split('<').next().unwrap_or(last).trim();
    last.rsplit(' ').next().unwrap_or(last)
}

/// Whether `line` holds nothing but decorators, attributes or comments (or nothing at all):
/// what may stand above a declaration.
pub(crate) fn is_preamble(line: &str) -> bool {
    let l = line.trim_start();
    l.is_empty() || ["@", "#", "//", "/*", "*"].iter().any(|p| l.starts_with(p))
}

/// The first line of `text` that is neither blank nor preamble, and whether any preamble
/// stood above it.
fn first_code_line(text: &str) -> Option<(&str, bool)> {
    let mut preamble = false;
    for line in text.lines() {
        if !is_preamble(line) {
            return Some((line, preamble));
        }
        preamble |= !line.trim().is_empty();
    }
    None
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// Where `name` occurs in `line` as a whole word, first.
fn word_at(line: &str, name: &str) -> Option<usize> {
    tools_core::first_whole_word(line, name, is_ident)
}

/// `text` without its balanced parenthesised groups (a Go receiver, `pub(crate)`); `None`
/// when a parenthesis is left open or closes unopened.
fn without_groups(text: &str) -> Option<String> {
    let mut depth = 0usize;
    let mut out = String::new();
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.checked_sub(1)?,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    (depth == 0).then_some(out)
}

/// The text after the parameter list that opens `rest`, when `rest` opens with one that
/// closes on this line.
fn after_parameters(rest: &str) -> Option<&str> {
    let rest = rest.trim_start();
    let rest = match rest.strip_prefix('<') {
        // Generic parameters before the list (`total<T>(…)`).
        Some(g) => &g[g.find('>')? + 1..],
        None => rest,
    };
    let mut depth = 0usize;
    for (i, c) in rest.char_indices() {
        match c {
            '(' => depth += 1,
            ')' if depth == 1 => return Some(&rest[i + 1..]),
            ')' => depth = depth.checked_sub(1)?,
            _ if depth == 0 => return None,
            _ => {}
        }
    }
    None
}

/// Whether `text` (a new body for the symbol named `name`) opens with that symbol's own
/// declaration. Returns whether decorators, attributes or comments stood above it, when
/// it does.
pub(crate) fn opens_with_declaration(text: &str, name: &str) -> Option<bool> {
    let name = bare_name(name);
    if name.is_empty() || !name.chars().all(is_ident) {
        return None;
    }
    let (line, preamble) = first_code_line(text)?;
    let at = word_at(line, name)?;
    let lead = without_groups(&line[..at])?;
    if !lead.chars().all(|c| is_ident(c) || c.is_whitespace()) {
        return None;
    }
    let words: Vec<&str> = lead.split_whitespace().collect();
    if words.iter().any(|w| STATEMENT.contains(w)) {
        return None;
    }
    if words.iter().any(|w| DECLARING.contains(w)) {
        return Some(preamble);
    }
    // A method declared without a keyword: its closed parameter list, then (after a
    // return type, `throws`, …) the opening brace, and no statement's `;`, `=` or `.`.
    let tail = after_parameters(&line[at + name.len()..])?.trim();
    let declares = tail.ends_with('{')
        && !tail.contains([';', '='])
        && !tail.starts_with(['.', '?', '[', '(']);
    declares.then_some(preamble)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_definition_of_the_same_name_is_recognised_in_each_language() {
        for (text, name) in [
            ("def total(items):\n    return sum(items)\n", "total"),
            ("async def total(items):\n    return 1\n", "Cart.total"),
            ("class Cart:\n    pass\n", "Cart"),
            (
                "pub fn norm(&self) -> i32 {\n    self.x\n}",
                "impl Point.norm",
            ),
            ("pub(crate) async fn norm() {}", "norm"),
            ("fn norm<T>(x: T) {}", "norm"),
            (
                "func (s *Server) Port() int {\n\treturn 1\n}",
                "Server.Port",
            ),
            ("func Port() int { return 1 }", "Port"),
            ("export function area(w: number) {\n  return w;\n}", "area"),
            ("export default function area() {}", "area"),
            (
                "  area(w: number): number {\n    return w;\n  }",
                "Shape.area",
            ),
            ("async area(w) {", "Shape.area"),
            ("public int area(int w) {", "Shape.area"),
            ("impl Point {\n}", "impl Point"),
        ] {
            assert_eq!(
                opens_with_declaration(text, name),
                Some(false),
                "{name}: {text}"
            );
        }
        assert_eq!(
            opens_with_declaration("@cache\n# note\ndef total(x):\n    pass", "total"),
            Some(true)
        );
        assert_eq!(
            opens_with_declaration("/// Doc.\n#[inline]\nfn norm() {}", "norm"),
            Some(true)
        );
    }

    #[test]
    fn a_body_that_only_uses_the_name_is_a_body() {
        for (text, name) in [
            ("return total(items[1:]) + items[0]\n", "total"),
            ("total(rest)\nreturn 1", "total"),
            ("x = total(items)\n", "total"),
            ("print(\"def total(x)\")\n", "total"),
            ("self.total(1)", "total"),
            ("if total(x) {\n    1\n}", "total"),
            ("total(a, function () {\n});", "total"),
            ("total(a).then(() => {\n});", "total"),
            ("let total = 1;\ntotal", "total"),
            (
                "def helper():\n    return total()\nreturn helper()",
                "total",
            ),
            ("self.x", "norm"),
            ("", "norm"),
            ("pass", "total"),
            ("def totals(x):\n    pass", "total"),
        ] {
            assert_eq!(opens_with_declaration(text, name), None, "{name}: {text}");
        }
    }

    #[test]
    fn the_bare_name_is_the_last_segment() {
        assert_eq!(bare_name("Greeter.greet"), "greet");
        assert_eq!(bare_name("impl Point"), "Point");
        assert_eq!(bare_name("impl Point.norm"), "norm");
        assert_eq!(bare_name("Wrapper<T>"), "Wrapper");
        assert_eq!(bare_name("total"), "total");
    }
}

//! A file's symbols read with the bundled tree-sitter grammars: the symbol source a run
//! uses when no language server serves a file, and the one that knows where each body is
//! (a language server's document symbols do not say).
//!
//! Each supported language has a short list of the nodes that declare something (a
//! function, a class, an `impl` block, a method with its receiver) and where their name and
//! body are. A symbol's range includes what belongs to it above its first line: Python
//! decorators, Rust attributes and doc comments, a TypeScript `export`. Languages without
//! such a list (JSON, YAML, CSS, …) are not served.

use std::ops::Range;
use std::path::Path;

use ast_grep_core::tree_sitter::LanguageExt;
use ast_grep_language::SupportLang;
use tools_core::ToolError;
use tools_core::{FileSymbols, SourceSymbol, SymbolSource, SymbolSourceKind};
use tree_sitter::Node;

use crate::lang::Lang;

/// The largest file whose symbols are read (a larger one is refused, not parsed).
const MAX_SYMBOL_FILE_BYTES: usize = 8 * 1024 * 1024;

/// The grammar-backed [`SymbolSource`].
#[derive(Debug, Default, Clone, Copy)]
pub struct GrammarSymbols;

#[tools_core::async_trait]
impl SymbolSource for GrammarSymbols {
    fn kind(&self) -> SymbolSourceKind {
        SymbolSourceKind::Grammar
    }

    async fn symbols(&self, path: &Path, text: &str) -> Result<Option<FileSymbols>, ToolError> {
        let Some(lang) = Lang::from_path(path) else {
            return Ok(None);
        };
        if rules_for(lang.grammar()).is_none() {
            return Ok(None);
        }
        if text.len() > MAX_SYMBOL_FILE_BYTES {
            return Err(ToolError::invalid(
                "path",
                format!(
                    "the file is {} bytes, over the {MAX_SYMBOL_FILE_BYTES}-byte limit for reading its symbols",
                    text.len()
                ),
            ));
        }
        let text = text.to_string();
        let symbols = tokio::task::spawn_blocking(move || file_symbols(lang, &text))
            .await
            .map_err(|e| ToolError::internal(format!("the symbol reader stopped: {e}")))??;
        Ok(Some(FileSymbols {
            source: format!("tree-sitter {}", lang.id()),
            kind: SymbolSourceKind::Grammar,
            symbols,
        }))
    }
}

/// The languages with declaration rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rules {
    Python,
    Rust,
    Go,
    Script,
    C,
}

fn rules_for(grammar: SupportLang) -> Option<Rules> {
    use SupportLang as S;
    Some(match grammar {
        S::Python => Rules::Python,
        S::Rust => Rules::Rust,
        S::Go => Rules::Go,
        S::TypeScript | S::Tsx | S::JavaScript => Rules::Script,
        S::C | S::Cpp => Rules::C,
        _ => return None,
    })
}

/// Parses `text` and lists its symbols in document order.
pub fn file_symbols(lang: Lang, text: &str) -> Result<Vec<SourceSymbol>, ToolError> {
    let Some(rules) = rules_for(lang.grammar()) else {
        return Ok(Vec::new());
    };
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&lang.grammar().get_ts_language())
        .map_err(|e| ToolError::internal(format!("the {} grammar did not load: {e}", lang.id())))?;
    let tree = parser
        .parse(text, None)
        .ok_or_else(|| ToolError::internal(format!("the {} parser gave no tree", lang.id())))?;
    let mut out = Vec::new();
    let reader = Reader { rules, text };
    reader.walk(tree.root_node(), &mut Vec::new(), Scope::Top, &mut out);
    Ok(out)
}

/// What one declaration node says.
struct Declared {
    /// Its path segments below the enclosing symbol (two for a Go method: receiver, name).
    names: Vec<String>,
    kind: &'static str,
    body: Option<Range<usize>>,
    /// Whether declarations sit in its body (a class's methods, an impl's functions, a
    /// function's nested helpers).
    members: bool,
}

/// Where a declaration sits, which decides what counts as one there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// A file or module: everything counts.
    Top,
    /// A class, trait or impl body: functions are methods, assignments fields.
    Type,
    /// A function body: only nested functions and types count, not its locals.
    Callable,
}

struct Reader<'t> {
    rules: Rules,
    text: &'t str,
}

impl<'t> Reader<'t> {
    fn text_of(&self, n: Node) -> &'t str {
        &self.text[n.byte_range()]
    }

    fn field_text(&self, n: Node, field: &str) -> Option<String> {
        n.child_by_field_name(field)
            .map(|c| self.text_of(c).to_string())
    }

    /// Walks `node`'s named children, recording declarations with `path` as their container.
    fn walk(&self, node: Node, path: &mut Vec<String>, scope: Scope, out: &mut Vec<SourceSymbol>) {
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children {
            self.visit(child, path, scope, out);
        }
    }

    fn visit(&self, node: Node, path: &mut Vec<String>, scope: Scope, out: &mut Vec<SourceSymbol>) {
        // Wrappers whose range belongs to the declaration inside.
        let inner = match (self.rules, node.kind()) {
            (Rules::Python, "decorated_definition") => node.child_by_field_name("definition"),
            (Rules::Script, "export_statement") => node.child_by_field_name("declaration"),
            _ => None,
        };
        let (decl_node, outer) = match inner {
            Some(i) => (i, node),
            None => (node, node),
        };
        let Some(d) = self.declared(decl_node, scope) else {
            // Not a declaration: declarations may still sit below (a block, a namespace body).
            if self.descends_into(node.kind()) {
                self.walk(node, path, scope, out);
            }
            return;
        };
        let start = self.leading_start(outer);
        let depth = path.len();
        path.extend(d.names.iter().cloned());
        out.push(SourceSymbol {
            path: path.clone(),
            kind: d.kind.to_string(),
            range: start..outer.end_byte(),
            body: d.body.clone(),
        });
        if d.members
            && let Some(container) = decl_node.child_by_field_name("body")
        {
            let inner = if matches!(d.kind, "function" | "method") {
                Scope::Callable
            } else {
                Scope::Type
            };
            self.walk(container, path, inner, out);
        }
        path.truncate(depth);
    }

    /// Nodes that are not declarations but may hold some.
    fn descends_into(&self, kind: &str) -> bool {
        matches!(
            kind,
            "module"
                | "source_file"
                | "program"
                | "translation_unit"
                | "declaration_list"
                | "if_statement"
                | "block"
                | "statement_block"
                | "export_statement"
                | "linkage_specification"
                | "preproc_if"
                | "preproc_ifdef"
                | "preproc_else"
        )
    }

    /// Where a declaration really starts: Rust attributes and doc comments directly above
    /// it count as its own.
    fn leading_start(&self, node: Node) -> usize {
        let mut start = node.start_byte();
        if self.rules != Rules::Rust {
            return start;
        }
        let mut prev = node.prev_sibling();
        while let Some(p) = prev {
            let is_doc = matches!(p.kind(), "line_comment" | "block_comment") && {
                let t = self.text_of(p);
                t.starts_with("///") || t.starts_with("/**")
            };
            if p.kind() != "attribute_item" && !is_doc {
                break;
            }
            start = p.start_byte();
            prev = p.prev_sibling();
        }
        start
    }

    fn declared(&self, n: Node, scope: Scope) -> Option<Declared> {
        let body = |field: &str| n.child_by_field_name(field).map(|b| b.byte_range());
        let named = |kind: &'static str, body_field: Option<&str>, members: bool| {
            let name = self.field_text(n, "name")?;
            let b = body_field.and_then(body);
            Some(Declared {
                names: vec![name],
                kind,
                members,
                body: b,
            })
        };
        let callable = if scope == Scope::Type {
            "method"
        } else {
            "function"
        };
        match (self.rules, n.kind()) {
            (Rules::Python, "function_definition") => named(callable, Some("body"), true),
            (Rules::Python, "class_definition") => named("class", Some("body"), true),
            (Rules::Python, "expression_statement") if scope != Scope::Callable => {
                let assign = n.named_child(0).filter(|c| c.kind() == "assignment")?;
                let left = assign.child_by_field_name("left")?;
                (left.kind() == "identifier").then(|| Declared {
                    names: vec![self.text_of(left).to_string()],
                    kind: if scope == Scope::Type {
                        "field"
                    } else {
                        "variable"
                    },
                    body: None,
                    members: false,
                })
            }
            (Rules::Rust, "function_item") => named(callable, Some("body"), true),
            (Rules::Rust, "function_signature_item") => named(callable, None, false),
            (Rules::Rust, "struct_item") => named("struct", Some("body"), false),
            (Rules::Rust, "enum_item") => named("enum", Some("body"), false),
            (Rules::Rust, "union_item") => named("union", Some("body"), false),
            (Rules::Rust, "trait_item") => named("trait", Some("body"), true),
            (Rules::Rust, "mod_item") => named("module", Some("body"), true),
            (Rules::Rust, "const_item") => named("constant", None, false),
            (Rules::Rust, "static_item") => named("static", None, false),
            (Rules::Rust, "type_item") => named("type", None, false),
            (Rules::Rust, "macro_definition") => named("macro", None, false),
            (Rules::Rust, "impl_item") => {
                let ty = self.field_text(n, "type")?;
                let name = match self.field_text(n, "trait") {
                    Some(tr) => format!("impl {tr} for {ty}"),
                    None => format!("impl {ty}"),
                };
                Some(Declared {
                    names: vec![name],
                    kind: "impl",
                    members: true,
                    body: body("body"),
                })
            }
            (Rules::Go, "function_declaration") => named("function", Some("body"), false),
            (Rules::Go, "method_declaration") => {
                let name = self.field_text(n, "name")?;
                let receiver = n.child_by_field_name("receiver")?;
                let ty = receiver
                    .named_child(0)
                    .and_then(|p| p.child_by_field_name("type"))
                    .map(|t| self.text_of(t))
                    .unwrap_or_default();
                let ty = ty.trim_start_matches('*');
                let ty = ty.split('[').next().unwrap_or(ty).trim().to_string();
                Some(Declared {
                    names: vec![ty, name],
                    kind: "method",
                    body: body("body"),
                    members: false,
                })
            }
            (Rules::Go, "type_declaration") => {
                let mut c = n.walk();
                let specs: Vec<Node> = n
                    .named_children(&mut c)
                    .filter(|s| s.kind() == "type_spec" || s.kind() == "type_alias")
                    .collect();
                let [spec] = specs.as_slice() else {
                    return None;
                };
                let ty = spec.child_by_field_name("type");
                let kind = match ty.map(|t| t.kind()) {
                    Some("struct_type") => "struct",
                    Some("interface_type") => "interface",
                    _ => "type",
                };
                Some(Declared {
                    names: vec![self.field_text(*spec, "name")?],
                    kind,
                    body: ty
                        .filter(|t| matches!(t.kind(), "struct_type" | "interface_type"))
                        .map(|t| t.byte_range()),
                    members: false,
                })
            }
            (Rules::Script, "function_declaration" | "generator_function_declaration") => {
                named("function", Some("body"), false)
            }
            (Rules::Script, "class_declaration" | "abstract_class_declaration" | "class") => {
                named("class", Some("body"), true)
            }
            (Rules::Script, "method_definition") => named("method", Some("body"), false),
            (Rules::Script, "interface_declaration") => named("interface", Some("body"), false),
            (Rules::Script, "enum_declaration") => named("enum", Some("body"), false),
            (Rules::Script, "type_alias_declaration") => named("type", None, false),
            (Rules::Script, "lexical_declaration" | "variable_declaration")
                if scope != Scope::Callable =>
            {
                let mut c = n.walk();
                let decls: Vec<Node> = n
                    .named_children(&mut c)
                    .filter(|d| d.kind() == "variable_declarator")
                    .collect();
                let [decl] = decls.as_slice() else {
                    return None;
                };
                let name = decl.child_by_field_name("name")?;
                if name.kind() != "identifier" {
                    return None;
                }
                let value = decl.child_by_field_name("value");
                let function = value.filter(|v| {
                    matches!(
                        v.kind(),
                        "arrow_function" | "function_expression" | "function"
                    )
                });
                Some(Declared {
                    names: vec![self.text_of(name).to_string()],
                    kind: if function.is_some() {
                        "function"
                    } else {
                        "variable"
                    },
                    body: function
                        .and_then(|f| f.child_by_field_name("body"))
                        .filter(|b| b.kind() == "statement_block")
                        .map(|b| b.byte_range()),
                    members: false,
                })
            }
            (Rules::C, "function_definition") => {
                let mut d = n.child_by_field_name("declarator")?;
                while d.kind() != "function_declarator" {
                    d = d.child_by_field_name("declarator")?;
                }
                let name = self.text_of(d.child_by_field_name("declarator")?);
                Some(Declared {
                    names: name.split("::").map(|s| s.trim().to_string()).collect(),
                    kind: callable,
                    body: body("body"),
                    members: false,
                })
            }
            (
                Rules::C,
                "struct_specifier" | "class_specifier" | "union_specifier" | "enum_specifier",
            ) if n.child_by_field_name("body").is_some() => {
                let kind = match n.kind() {
                    "class_specifier" => "class",
                    "union_specifier" => "union",
                    "enum_specifier" => "enum",
                    _ => "struct",
                };
                named(kind, Some("body"), true)
            }
            (Rules::C, "namespace_definition") => named("namespace", Some("body"), true),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(lang: &str, text: &str) -> Vec<String> {
        let lang = Lang::from_id(lang).unwrap();
        file_symbols(lang, text)
            .unwrap()
            .into_iter()
            .map(|s| {
                let body = s
                    .body
                    .map(|b| format!(" body {:?}", &text[b]))
                    .unwrap_or_default();
                format!("{} {} {:?}{body}", s.path.join("."), s.kind, &text[s.range])
            })
            .collect()
    }

    #[test]
    fn python_classes_methods_decorators_and_module_variables() {
        let src = "LIMIT = 3\n\nclass Greeter:\n    @staticmethod\n    def greet(n):\n        return n\n\ndef main():\n    x = 1\n";
        assert_eq!(
            listing("python", src),
            vec![
                "LIMIT variable \"LIMIT = 3\"",
                "Greeter class \"class Greeter:\\n    @staticmethod\\n    def greet(n):\\n        return n\" body \"@staticmethod\\n    def greet(n):\\n        return n\"",
                "Greeter.greet method \"@staticmethod\\n    def greet(n):\\n        return n\" body \"return n\"",
                "main function \"def main():\\n    x = 1\" body \"x = 1\"",
            ]
        );
    }

    #[test]
    fn rust_impls_take_their_attributes_and_doc_comments() {
        let src = "/// A point.\n#[derive(Debug)]\nstruct P { x: i32 }\n\nimpl P {\n    fn norm(&self) -> i32 { self.x }\n}\n\nimpl std::fmt::Display for P {\n    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result { Ok(()) }\n}\n";
        let got = listing("rust", src);
        assert_eq!(
            got[0],
            "P struct \"/// A point.\\n#[derive(Debug)]\\nstruct P { x: i32 }\" body \"{ x: i32 }\""
        );
        assert_eq!(
            got[2],
            "impl P.norm method \"fn norm(&self) -> i32 { self.x }\" body \"{ self.x }\""
        );
        assert!(
            got[3].starts_with("impl std::fmt::Display for P impl "),
            "{got:?}"
        );
        assert!(
            got[4].starts_with("impl std::fmt::Display for P.fmt method "),
            "{got:?}"
        );
        assert_eq!(got.len(), 5);
    }

    #[test]
    fn go_methods_are_named_by_their_receiver() {
        let src = "package m\n\ntype Server struct{ n int }\n\nfunc (s *Server) Start() int {\n\treturn s.n\n}\n\nfunc Run() {}\n";
        assert_eq!(
            listing("go", src),
            vec![
                "Server struct \"type Server struct{ n int }\" body \"struct{ n int }\"",
                "Server.Start method \"func (s *Server) Start() int {\\n\\treturn s.n\\n}\" body \"{\\n\\treturn s.n\\n}\"",
                "Run function \"func Run() {}\" body \"{}\"",
            ]
        );
    }

    #[test]
    fn typescript_exports_classes_and_arrow_functions() {
        let src = "export class A {\n  run(): number { return 1; }\n}\nconst f = (x: number) => { return x; };\n";
        assert_eq!(
            listing("typescript", src),
            vec![
                "A class \"export class A {\\n  run(): number { return 1; }\\n}\" body \"{\\n  run(): number { return 1; }\\n}\"",
                "A.run method \"run(): number { return 1; }\" body \"{ return 1; }\"",
                "f function \"const f = (x: number) => { return x; };\" body \"{ return x; }\"",
            ]
        );
    }
}

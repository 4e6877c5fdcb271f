//! Reading a compilation database (`compile_commands.json`, the format CMake, Meson, Bear and
//! others export) into syntax-only compile commands: each entry's own compiler and flags,
//! with the output, dependency-file and colour options taken out and `-fsyntax-only` put in,
//! so checking a project writes nothing and links nothing.
//!
//! The file comes from the repository: it is read with a size cap, every field is checked,
//! and a malformed entry is skipped with a reason rather than failing the whole check.

use std::path::{Path, PathBuf};

/// Largest `compile_commands.json` read, in bytes.
pub const MAX_DB_BYTES: u64 = 32 * 1024 * 1024;

/// One entry turned into a syntax-only compile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxCheck {
    /// The folder the compiler runs in (the entry's `directory`).
    pub directory: PathBuf,
    /// The source file, absolute.
    pub file: PathBuf,
    /// The compiler as the entry names it (a bare name or a path).
    pub compiler: String,
    /// The arguments after the compiler, with `-fsyntax-only` in.
    pub args: Vec<String>,
}

/// What reading a database gave: the checks in file order (one per source file) and why
/// any entries were left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompileDb {
    /// One syntax-only compile per distinct source file.
    pub checks: Vec<SyntaxCheck>,
    /// Entries that were left out, with the reason (`entry 3: no "command" or "arguments"`).
    pub skipped: Vec<String>,
}

/// Reads and converts the database at `path`.
pub fn read(path: &Path) -> Result<CompileDb, String> {
    let size = std::fs::metadata(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?
        .len();
    if size > MAX_DB_BYTES {
        return Err(format!(
            "{} is {size} bytes, over the {MAX_DB_BYTES}-byte limit",
            path.display()
        ));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let base = path.parent().unwrap_or(Path::new("."));
    parse(&text, base)
}

/// Converts the text of a database; relative `directory` fields are taken from `base` (the
/// database's folder).
pub fn parse(text: &str, base: &Path) -> Result<CompileDb, String> {
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| format!("compile_commands.json is not valid JSON: {e}"))?;
    let entries = value
        .as_array()
        .ok_or("compile_commands.json is not a JSON array of entries")?;
    let mut db = CompileDb::default();
    for (i, entry) in entries.iter().enumerate() {
        match convert(entry, base) {
            Ok(check) => {
                // A file compiled several ways (e.g. static and shared objects) is checked once.
                if !db.checks.iter().any(|c| c.file == check.file) {
                    db.checks.push(check);
                }
            }
            Err(why) => db.skipped.push(format!("entry {}: {why}", i + 1)),
        }
    }
    Ok(db)
}

fn convert(entry: &serde_json::Value, base: &Path) -> Result<SyntaxCheck, String> {
    let field = |name: &str| entry.get(name).and_then(|v| v.as_str());
    let dir = field("directory").ok_or("no \"directory\"")?;
    let directory = base.join(dir);
    let file = field("file").ok_or("no \"file\"")?;
    let file = directory.join(file);
    let argv: Vec<String> = if let Some(args) = entry.get("arguments").and_then(|a| a.as_array()) {
        args.iter()
            .map(|a| a.as_str().map(str::to_string))
            .collect::<Option<_>>()
            .ok_or("\"arguments\" holds something other than strings")?
    } else if let Some(command) = field("command") {
        split_command(command)?
    } else {
        return Err("no \"command\" or \"arguments\"".into());
    };
    let (compiler, rest) = strip_launchers(&argv).ok_or("the command is empty")?;
    Ok(SyntaxCheck {
        directory,
        file,
        compiler,
        args: syntax_only_args(rest),
    })
}

/// Compiler launchers that run the real compiler named after them.
const LAUNCHERS: &[&str] = &["ccache", "sccache", "distcc", "icecc"];

/// The compiler and its arguments, past any launcher such as `ccache`.
fn strip_launchers(argv: &[String]) -> Option<(String, &[String])> {
    let mut at = 0;
    while at + 1 < argv.len() {
        let name = argv[at].rsplit('/').next().unwrap_or("");
        if !LAUNCHERS.contains(&name) {
            break;
        }
        at += 1;
    }
    let compiler = argv.get(at)?.clone();
    Some((compiler, &argv[at + 1..]))
}

/// Options taken out together with the argument that follows them.
const DROPPED_WITH_VALUE: &[&str] = &["-o", "-MF", "-MT", "-MQ", "-MJ", "--serialize-diagnostics"];

/// Options taken out alone: compile-only, dependency files, colour, precompiled headers' output.
fn dropped_alone(arg: &str) -> bool {
    matches!(
        arg,
        "-c" | "-S" | "-E" | "-M" | "-MM" | "-MD" | "-MMD" | "-MG" | "-MP" | "-fsyntax-only"
    ) || arg.starts_with("-fdiagnostics-color")
        || arg.starts_with("-fcolor-diagnostics")
        || arg.starts_with("-fno-color-diagnostics")
        || (arg.starts_with("-o") && arg.len() > 2)
        || (arg.starts_with("-MF") && arg.len() > 3)
        || (arg.starts_with("-MT") && arg.len() > 3)
        || (arg.starts_with("-MQ") && arg.len() > 3)
        || (arg.starts_with("-Wp,-M"))
}

/// The entry's arguments with everything that writes a file or colours the output taken out,
/// and `-fsyntax-only` plus plain diagnostics put in.
pub fn syntax_only_args(args: &[String]) -> Vec<String> {
    let mut out = vec![
        "-fsyntax-only".to_string(),
        "-fdiagnostics-color=never".to_string(),
    ];
    let mut skip_next = false;
    for arg in args {
        if skip_next {
            skip_next = false;
            continue;
        }
        if DROPPED_WITH_VALUE.contains(&arg.as_str()) {
            skip_next = true;
            continue;
        }
        if dropped_alone(arg) {
            continue;
        }
        out.push(arg.clone());
    }
    out
}

/// Splits a `command` string as a POSIX shell would split words: blanks separate, single
/// quotes keep everything, double quotes keep everything but `\"` and `\\`, a backslash
/// outside quotes keeps the next character.
pub fn split_command(command: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(q) => word.push(q),
                        None => return Err("unterminated ' in \"command\"".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(e @ ('"' | '\\' | '$' | '`')) => word.push(e),
                            Some(e) => {
                                word.push('\\');
                                word.push(e);
                            }
                            None => return Err("unterminated \" in \"command\"".into()),
                        },
                        Some(q) => word.push(q),
                        None => return Err("unterminated \" in \"command\"".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(e) = chars.next() {
                    word.push(e);
                }
            }
            other => {
                in_word = true;
                word.push(other);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn commands_split_as_a_shell_splits_them() {
        assert_eq!(
            split_command(r#"cc -DNAME="\"a b\"" -I'inc dir' x\ y.c  -c"#).unwrap(),
            strings(&["cc", "-DNAME=\"a b\"", "-Iinc dir", "x y.c", "-c"])
        );
        assert!(split_command("cc 'open").is_err());
    }

    #[test]
    fn entries_become_syntax_only_compiles_that_write_nothing() {
        let db = parse(
            r#"[
              {"directory": "/p/build", "file": "../src/a.c",
               "command": "ccache /usr/bin/gcc -I../include -Wall -MD -MF a.d -o a.o -c ../src/a.c"},
              {"directory": "/p/build", "file": "../src/a.c",
               "arguments": ["gcc", "-fPIC", "-c", "../src/a.c", "-oa.pic.o"]},
              {"directory": "/p", "file": "b.c"},
              {"file": "c.c", "command": "cc c.c"},
              {"directory": "rel", "file": "d.c", "arguments": ["clang", "-fcolor-diagnostics", "d.c"]}
            ]"#,
            Path::new("/base"),
        )
        .unwrap();
        assert_eq!(db.checks.len(), 2, "{db:?}");
        let a = &db.checks[0];
        assert_eq!(a.compiler, "/usr/bin/gcc");
        assert_eq!(a.directory, PathBuf::from("/p/build"));
        assert_eq!(a.file, PathBuf::from("/p/build/../src/a.c"));
        assert_eq!(
            a.args,
            strings(&[
                "-fsyntax-only",
                "-fdiagnostics-color=never",
                "-I../include",
                "-Wall",
                "../src/a.c"
            ])
        );
        let d = &db.checks[1];
        assert_eq!(d.directory, PathBuf::from("/base/rel"));
        assert_eq!(
            d.args,
            strings(&["-fsyntax-only", "-fdiagnostics-color=never", "d.c"])
        );
        assert_eq!(
            db.skipped,
            strings(&[
                "entry 3: no \"command\" or \"arguments\"",
                "entry 4: no \"directory\""
            ])
        );
    }

    #[test]
    fn a_database_that_is_not_an_array_is_refused() {
        assert!(parse("{}", Path::new("/")).is_err());
        assert!(parse("[", Path::new("/")).is_err());
        assert_eq!(parse("[]", Path::new("/")).unwrap(), CompileDb::default());
    }
}

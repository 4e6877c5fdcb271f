//! The tests that reach a symbol: from its uses (the run's reference sources, i.e. the
//! language servers), a use inside a test is a reaching test, and a use inside another
//! function makes that function's uses the next step, up to a depth and a count. A static
//! walk: it does not see through dynamic dispatch, decorators or a command runner, and the
//! answer says when it was cut or could not ask.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use tokio_util::sync::CancellationToken;
use tools_core::{ReferenceSources, Run, SourceSymbol, SymbolSources, ToolError};

use crate::listing::{TestItem, is_test_file, mentioning, names_in_code, test_files, tests_in};
use crate::runner::Language;

/// How far the walk goes from the symbol.
pub const MAX_DEPTH: usize = 4;
/// Symbols whose uses are asked for at most.
pub const MAX_SYMBOLS: usize = 40;

/// What the walk found.
#[derive(Debug, Default)]
pub struct Reach {
    /// The reaching tests, by path then line.
    pub tests: Vec<TestItem>,
    /// Symbols followed (the start included).
    pub followed: usize,
    /// Why the search is not complete (a depth or count cut, a source that could not
    /// answer); empty when it is.
    pub gaps: Vec<String>,
    /// Who answered the uses.
    pub source: String,
    /// Tests found only because their text names a followed symbol (a use the server did
    /// not resolve, such as `module.attribute` through a package).
    pub by_name: usize,
    /// Tests found only because an earlier `test run` saw them run a changed function.
    pub by_run: usize,
    /// Whether the walk was stopped by its time bound before it ended.
    pub cut: bool,
    /// Tests first named by the server's own related-tests request.
    pub by_server: usize,
    /// The ids of the tests that use a changed symbol themselves (or are changed, or the
    /// server relates to it): listed first, before those reached through other functions.
    pub direct: HashSet<String>,
    /// The functions using a changed value directly: what each test ran, when recorded,
    /// leads from them to the tests (a recording sees functions, not the values they read).
    pub value_users: Vec<crate::changes::ChangedSymbol>,
    /// The functions using the walk's start directly (see `value_users`).
    pub users: Vec<crate::changes::ChangedSymbol>,
}

impl Reach {
    /// How the tests were found, for the answer's first line: ` (2 symbols followed
    /// through …; 1 found by name …; 1 known from …)`, or nothing when no source answered.
    pub fn how(&self) -> String {
        let mut how: Vec<String> = Vec::new();
        if !self.source.is_empty() {
            how.push(format!(
                "{} symbol{} followed through {}",
                self.followed,
                if self.followed == 1 { "" } else { "s" },
                self.source
            ));
        }
        if self.by_server > 0 {
            how.push(format!(
                "{} named by the server's own related tests",
                self.by_server
            ));
        }
        if self.by_name > 0 {
            how.push(format!("{} found by name in the tests' text", self.by_name));
        }
        if self.by_run > 0 {
            how.push(format!(
                "{} known from what each test ran in an earlier `test run`",
                self.by_run
            ));
        }
        if how.is_empty() {
            String::new()
        } else {
            format!(" ({})", how.join("; "))
        }
    }

    /// Adds the tests an earlier run recorded reaching the change (those not found
    /// already), keeping the order ([`Reach::sort`]).
    pub fn add_recorded(&mut self, recorded: Vec<TestItem>) {
        for t in recorded {
            if !self.tests.iter().any(|r| r.id == t.id && r.path == t.path) {
                self.by_run += 1;
                self.tests.push(t);
            }
        }
        self.sort();
    }

    /// Orders the tests: the direct ones first, then by path and line.
    pub fn sort(&mut self) {
        let direct = &self.direct;
        self.tests.sort_by(|a, b| {
            (!direct.contains(&a.id), &a.path, a.line).cmp(&(
                !direct.contains(&b.id),
                &b.path,
                b.line,
            ))
        });
    }
}

/// The function or method around line `line` (1-based) of `path`: `(name, line of the
/// name)`, from the run's symbol sources.
async fn enclosing(run: &Run, path: &Path, line: usize) -> Option<(String, usize)> {
    symbol_around(run, path, line, innermost_named).await
}

/// The names of the methods that make an object, called through their class's name.
const CONSTRUCTORS: [&str; 4] = ["__init__", "__new__", "__post_init__", "constructor"];

/// The class around line `line` (1-based) of `path`: `(name, line of the name)`.
async fn class_around(run: &Run, path: &Path, line: usize) -> Option<(String, usize)> {
    symbol_around(run, path, line, innermost_class).await
}

/// The symbol `pick` chooses among the symbols around byte `at` of `path`'s text, from the
/// first of the run's symbol sources that lists them: `(name, line of the name)`.
async fn symbol_around(
    run: &Run,
    path: &Path,
    line: usize,
    pick: impl Fn(&[SourceSymbol], usize) -> Option<(&SourceSymbol, String)>,
) -> Option<(String, usize)> {
    let text = std::fs::read_to_string(path).ok()?;
    let at: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    for source in SymbolSources::for_run(run).ordered() {
        let Ok(Some(found)) = source.symbols(path, &text).await else {
            continue;
        };
        let (symbol, name) = pick(&found.symbols, at)?;
        let own = crate::changes::name_line(&text, symbol.range.start, &name);
        return Some((name, own));
    }
    None
}

/// The innermost callable the code can name around `at` (an anonymous one is reached
/// through the named symbol around it).
fn innermost_named(symbols: &[SourceSymbol], at: usize) -> Option<(&SourceSymbol, String)> {
    crate::changes::named_around(symbols, at, at + 1)
}

/// The innermost class around `at`.
fn innermost_class(symbols: &[SourceSymbol], at: usize) -> Option<(&SourceSymbol, String)> {
    symbols
        .iter()
        .filter(|s| s.kind.contains("class") && s.range.start <= at && at < s.range.end)
        .filter_map(|s| Some((s, crate::changes::called_name(s.path.last()?)?)))
        .min_by_key(|(s, _)| s.range.len())
}

/// The test around `line` of the test file `path`, if any.
fn test_at(path: &Path, line: usize, workspace: &Path) -> Option<TestItem> {
    let (_, detected) = crate::runner::project_of(path, workspace).ok()?;
    let text = std::fs::read_to_string(path).ok()?;
    tests_in(path, &text, &detected)
        .into_iter()
        .find(|t| t.line <= line && line <= t.end)
}

/// The tests that reach `symbol` on `line` of `path`.
pub async fn reaching(
    run: &Run,
    path: &Path,
    line: usize,
    symbol: &str,
) -> Result<Reach, ToolError> {
    reaching_until(run, path, line, symbol, None).await
}

/// As [`reaching`], stopping the walk through the uses once `stop` is cancelled (the tests
/// named in the text of those followed so far still count); a stop sets [`Reach::cut`].
pub async fn reaching_until(
    run: &Run,
    path: &Path,
    line: usize,
    symbol: &str,
    stop: Option<&CancellationToken>,
) -> Result<Reach, ToolError> {
    let sources = ReferenceSources::for_run(run).all();
    let workspace = run.root().to_path_buf();
    let mut reach = Reach::default();
    let mut seen: HashSet<(PathBuf, usize)> = HashSet::new();
    let mut ids: HashSet<String> = HashSet::new();
    // The server's own related tests, where it has the request (rust-analyzer): what it
    // names counts even when the walk below is cut.
    if !stop.is_some_and(CancellationToken::is_cancelled) {
        for s in &sources {
            let asked = s.related_tests(path, line, symbol);
            let found = match stop {
                Some(stop) => tokio::select! {
                    found = asked => found,
                    () = stop.cancelled() => Ok(None),
                },
                None => asked.await,
            };
            // The walk through the uses still runs when this cannot answer.
            let Ok(Some(related)) = found else { continue };
            for t in related {
                if ids.insert(t.name.clone()) {
                    reach.by_server += 1;
                    reach.direct.insert(t.name.clone());
                    reach.tests.push(TestItem {
                        path: t.path,
                        line: t.line,
                        end: t.line,
                        id: t.name,
                    });
                }
            }
            break;
        }
    }
    let mut frontier = vec![(path.to_path_buf(), line, symbol.to_string(), 0usize)];
    let mut followed_names: Vec<String> = Vec::new();
    while let Some((p, l, name, depth)) = frontier.pop() {
        if !seen.insert((p.clone(), l)) {
            continue;
        }
        if reach.followed == MAX_SYMBOLS {
            reach.gaps.push(format!(
                "stopped after following {MAX_SYMBOLS} symbols (`{name}` at {}:{l} and others not followed)",
                tools_core::display_relative(&workspace, &p)
            ));
            break;
        }
        if stop.is_some_and(CancellationToken::is_cancelled) {
            reach.cut = true;
            break;
        }
        reach.followed += 1;
        if !followed_names.contains(&name) {
            followed_names.push(name.clone());
        }
        let mut answered = None;
        let mut late = false;
        let mut refused = None;
        for s in &sources {
            let asked = s.uses(&p, l, &name);
            let found = match stop {
                Some(stop) => tokio::select! {
                    found = asked => found,
                    () = stop.cancelled() => {
                        late = true;
                        break;
                    }
                },
                None => asked.await,
            };
            match found {
                Ok(Some(uses)) => {
                    if reach.source.is_empty() {
                        reach.source = s.name(&p);
                    }
                    answered = Some(uses);
                    break;
                }
                Ok(None) => {}
                // One symbol the server cannot place stops its own branch, not the walk.
                Err(e) => {
                    refused = Some(e);
                    break;
                }
            }
        }
        if late {
            reach.followed -= 1;
            reach.cut = true;
            break;
        }
        let at = tools_core::display_relative(&workspace, &p);
        if let Some(e) = refused {
            reach.gaps.push(format!(
                "the uses of `{name}` ({at}:{l}) could not be asked: {e}"
            ));
            continue;
        }
        let Some(uses) = answered else {
            reach.gaps.push(format!(
                "no language server answers for {at} (uses of `{name}` not searched)"
            ));
            continue;
        };
        // A use outside the workspace (a standard library's method that an interface
        // method of ours implements) leads to no test of the project.
        let inside = |p: &Path| {
            p.starts_with(&workspace) || p.canonicalize().is_ok_and(|c| c.starts_with(&workspace))
        };
        for u in uses.into_iter().filter(|u| inside(&u.path)) {
            let in_tests = is_test_file(&u.path) || u.path.extension().is_some_and(|e| e == "rs");
            if in_tests && let Some(t) = test_at(&u.path, u.line, &workspace) {
                if depth == 0 {
                    reach.direct.insert(t.id.clone());
                }
                if ids.insert(t.id.clone()) {
                    reach.tests.push(t);
                }
                continue;
            }
            let Some((caller, at)) = enclosing(run, &u.path, u.line).await else {
                // A use outside any function (module level): nothing calls it by name.
                continue;
            };
            if depth + 1 >= MAX_DEPTH {
                reach.gaps.push(format!(
                    "depth {MAX_DEPTH} reached at `{caller}` ({}:{at}): ask again from there",
                    tools_core::display_relative(&workspace, &u.path)
                ));
                continue;
            }
            if depth == 0 {
                reach.users.push(crate::changes::ChangedSymbol {
                    path: u.path.clone(),
                    line: at,
                    name: caller.clone(),
                    value: false,
                });
            }
            frontier.push((u.path.clone(), at, caller, depth + 1));
        }
        // A constructor is called through its class's name (`Session()`, `new Session`),
        // which its own references do not list: the class is followed too.
        if CONSTRUCTORS.contains(&name.as_str())
            && let Some((class, at)) = class_around(run, &p, l).await
        {
            frontier.push((p.clone(), at, class, depth));
        }
    }
    // A server does not resolve every use (an attribute of a module reached through its
    // package, a name built at run time): tests whose text names a followed symbol count
    // too.
    let lang = crate::runner::Language::of(path);
    let (files, _) = test_files(&workspace, lang);
    for f in files {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        // A special method's name (`__init__`) is in every class: it names no test.
        let named: Vec<&String> = followed_names
            .iter()
            .filter(|n| !(n.starts_with("__") && n.ends_with("__")))
            .filter(|n| names_in_code(&text, n, Language::of(&f)))
            .collect();
        if named.is_empty() {
            continue;
        }
        let Ok((_, detected)) = crate::runner::project_of(&f, &workspace) else {
            continue;
        };
        for n in named {
            for t in mentioning(tests_in(&f, &text, &detected), &text, n) {
                if ids.insert(t.id.clone()) {
                    reach.by_name += 1;
                    reach.tests.push(t);
                }
            }
        }
    }
    reach.sort();
    dedup_in_order(&mut reach.gaps);
    Ok(reach)
}

/// `lines` without repeats, the first of each kept in place (a depth cut met on two
/// branches is one gap).
fn dedup_in_order(lines: &mut Vec<String>) {
    let mut seen = HashSet::new();
    lines.retain(|l| seen.insert(l.clone()));
}

/// The gap of walks stopped by their time bound after `followed` symbols in all, from
/// `cut` (each symbol whose walk was stopped or never begun: path, line, name): the `test
/// list` that makes a whole walk, unbounded in time.
fn cut_line(workspace: &Path, followed: usize, cut: &[(PathBuf, usize, String)]) -> String {
    let plural = if followed == 1 { "" } else { "s" };
    match cut {
        [(path, line, symbol)] => {
            let file = tools_core::display_relative(workspace, path);
            format!(
                "time bound reached after following {followed} symbol{plural} from `{symbol}`; `test list` with `file: \"{file}\"`, `line: {line}`, `symbol: \"{symbol}\"` follows it all"
            )
        }
        _ => format!(
            "time bound reached after following {followed} symbol{plural}; not followed to the end: {}; `test list` with the `file`, `line` and `symbol` of one follows it all",
            named(workspace, cut)
        ),
    }
}

/// The gap of a walk not made because the answer waits for none (`cut`: the symbols).
fn not_waited_line(workspace: &Path, cut: &[(PathBuf, usize, String)]) -> String {
    format!(
        "the uses of {} were not followed: this answer waits for no walk (its check goes on in the background); `test list` with the `file`, `line` and `symbol` of one follows it",
        named(workspace, cut)
    )
}

/// `cut`'s symbols as the answer names them: `` `convert` (src/types.py:704), … ``.
fn named(workspace: &Path, cut: &[(PathBuf, usize, String)]) -> String {
    cut.iter()
        .map(|(path, line, symbol)| {
            format!(
                "`{symbol}` ({}:{line})",
                tools_core::display_relative(workspace, path)
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The tests that reach any of `changed`: each walked as [`reaching`], a changed test being
/// a reaching test itself.
pub async fn reaching_all(
    run: &Run,
    changed: &[crate::changes::ChangedSymbol],
) -> Result<Reach, ToolError> {
    reaching_all_until(run, changed, Bound::None).await
}

/// When a walk from the changed symbols stops.
#[derive(Clone, Copy)]
pub enum Bound<'a> {
    /// It goes to the end.
    None,
    /// It stops once the token is cancelled (its time bound).
    Until(&'a CancellationToken),
    /// It does not start: only the changed tests themselves are named (the answer waits
    /// for no walk).
    NotWaited,
}

/// As [`reaching_all`], within `bound` (see [`reaching_until`]): the symbols not followed
/// to the end are named in one gap.
pub async fn reaching_all_until(
    run: &Run,
    changed: &[crate::changes::ChangedSymbol],
    bound: Bound<'_>,
) -> Result<Reach, ToolError> {
    let stop = match bound {
        Bound::Until(token) => Some(token),
        _ => None,
    };
    let not_waited = matches!(bound, Bound::NotWaited);
    let workspace = run.root().to_path_buf();
    let mut all = Reach::default();
    let mut ids: HashSet<String> = HashSet::new();
    let mut cut: Vec<(PathBuf, usize, String)> = Vec::new();
    // Changed tests first: they need no walk, and count even when the walk is cut.
    let (tests, others): (Vec<_>, Vec<_>) = changed
        .iter()
        .partition(|c| is_test_file(&c.path) && test_at(&c.path, c.line, &workspace).is_some());
    for c in tests.into_iter().chain(others) {
        let mut one = Reach::default();
        if is_test_file(&c.path)
            && let Some(t) = test_at(&c.path, c.line, &workspace)
        {
            one.direct.insert(t.id.clone());
            one.tests.push(t);
        } else if not_waited || stop.is_some_and(CancellationToken::is_cancelled) {
            one.cut = true;
        } else {
            one = reaching_until(run, &c.path, c.line, &c.name, stop).await?;
        }
        if one.cut {
            cut.push((c.path.clone(), c.line, c.name.clone()));
        }
        all.followed += one.followed;
        all.by_name += one.by_name;
        all.by_server += one.by_server;
        if all.source.is_empty() {
            all.source = one.source;
        }
        all.gaps.extend(one.gaps);
        all.direct.extend(one.direct);
        if c.value {
            all.value_users.extend(one.users);
        }
        for t in one.tests {
            if ids.insert(t.id.clone()) {
                all.tests.push(t);
            }
        }
    }
    dedup_in_order(&mut all.gaps);
    if !cut.is_empty() {
        all.cut = true;
        all.gaps.push(if not_waited {
            not_waited_line(&workspace, &cut)
        } else {
            cut_line(&workspace, all.followed, &cut)
        });
    }
    all.sort();
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(path: &str, line: usize, id: &str) -> TestItem {
        TestItem {
            path: PathBuf::from(path),
            line,
            end: line,
            id: id.into(),
        }
    }

    #[test]
    fn the_tests_using_a_change_themselves_come_first_then_by_file_and_line() {
        let mut reach = Reach {
            tests: vec![
                item("/w/tests/test_a.py", 9, "a::far"),
                item("/w/tests/test_z.py", 3, "z::own"),
                item("/w/tests/test_a.py", 2, "a::near"),
            ],
            ..Reach::default()
        };
        reach.direct.insert("z::own".into());
        reach.sort();
        let ids: Vec<&str> = reach.tests.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["z::own", "a::near", "a::far"]);
    }
}

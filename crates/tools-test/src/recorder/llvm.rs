//! Which functions each Rust test runs, from LLVM's source-based coverage: a recorded
//! `test run` with cargo-nextest builds the project instrumented (`-C instrument-coverage`,
//! into a target folder of the run's own, so the project's own builds stay as they are) and
//! starts every test binary through our target runner (`agent_tools_reach.sh`), which names
//! each test's raw profiles by its process. nextest runs each test in a process of its own,
//! so a test's profiles are exactly what it ran, including the programs it started (an
//! integration test running the crate's binary). Afterwards the toolchain's own
//! `llvm-profdata` (rustup's `llvm-tools`, of the LLVM the compiler was built with) says
//! which functions each test's processes ran, and `llvm-cov` where each function is.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::Deserialize;
use serde::de::IgnoredAny;

use super::{Output, OutputTest};

/// The toolchain's LLVM programs and the host they build for.
#[derive(Debug, Clone)]
pub struct LlvmTools {
    profdata: PathBuf,
    cov: PathBuf,
    /// The host's target triple, e.g. `x86_64-unknown-linux-gnu`.
    host: String,
}

/// What a recording with LLVM's coverage needs beside the recorder's files.
#[derive(Debug, Clone)]
pub struct RustCoverage {
    tools: LlvmTools,
    /// cargo, as the runner starts it (for `cargo metadata`).
    cargo: PathBuf,
    /// The instrumented build's target folder, in the run's state folder.
    target_dir: PathBuf,
}

impl RustCoverage {
    /// Finds the LLVM programs of the toolchain `rustc` (the project's own, run in
    /// `project` so a `rust-toolchain.toml` there picks it); `Err` says what is missing
    /// and how to get it.
    pub fn find(rustc: &Path, cargo: &Path, project: &Path, state: &Path) -> Result<Self, String> {
        let rustc_says = |args: &[&str]| -> Result<String, String> {
            let out = Command::new(rustc)
                .args(args)
                .current_dir(project)
                .stdin(Stdio::null())
                .output()
                .map_err(|e| format!("cannot start rustc: {e}"))?;
            if !out.status.success() {
                return Err(format!(
                    "`rustc {}` failed: {}",
                    args.join(" "),
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
            }
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        };
        let version = rustc_says(&["-vV"])?;
        let host = version
            .lines()
            .find_map(|l| l.strip_prefix("host: "))
            .map(str::trim)
            .ok_or("`rustc -vV` names no host")?
            .to_string();
        let sysroot = PathBuf::from(rustc_says(&["--print", "sysroot"])?.trim());
        let bin = sysroot.join("lib").join("rustlib").join(&host).join("bin");
        let program = |name: &str| bin.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
        let (profdata, cov) = (program("llvm-profdata"), program("llvm-cov"));
        if !profdata.is_file() || !cov.is_file() {
            return Err(
                "the toolchain has no llvm-profdata and llvm-cov (`rustup component add llvm-tools` adds them)"
                    .into(),
            );
        }
        Ok(RustCoverage {
            tools: LlvmTools {
                profdata,
                cov,
                host,
            },
            cargo: cargo.to_path_buf(),
            target_dir: state.join("coverage-target"),
        })
    }

    /// cargo's arguments for an instrumented build: added to the project's own
    /// `build.rustflags` (cargo joins the lists; a `RUSTFLAGS` set in the environment
    /// replaces them, and [`RustCoverage::env`] then adds the flag to it).
    pub fn args(&self) -> Vec<OsString> {
        vec![
            "--config".into(),
            "build.rustflags=[\"-C\", \"instrument-coverage\"]".into(),
        ]
    }

    /// The environment of the run: the target folder, our target runner (`runner`), where
    /// the profiles of everything else go (build scripts and proc macros are instrumented
    /// too; their profiles are dropped) and `RUSTFLAGS` when `inherited_rustflags` is set.
    pub fn env(
        &self,
        runner: &Path,
        prefix: &Path,
        inherited_rustflags: Option<&std::ffi::OsStr>,
    ) -> Vec<(String, OsString)> {
        let runner_var = format!(
            "CARGO_TARGET_{}_RUNNER",
            self.tools.host.to_uppercase().replace(['-', '.'], "_")
        );
        let mut others = prefix.as_os_str().to_os_string();
        others.push("-build-%p.profraw");
        let mut env = vec![
            (
                "CARGO_TARGET_DIR".to_string(),
                self.target_dir.clone().into(),
            ),
            (runner_var, runner.into()),
            ("LLVM_PROFILE_FILE".to_string(), others),
        ];
        if let Some(flags) = inherited_rustflags.filter(|f| !f.is_empty()) {
            let mut flags = flags.to_os_string();
            flags.push(" -C instrument-coverage");
            env.push(("RUSTFLAGS".to_string(), flags));
        }
        env
    }

    /// What the run's tests ran: reads the runner's list of tests (`<prefix>-tests.tsv`)
    /// and each test's profiles, places the functions through `llvm-cov`, and removes every
    /// profile of the run. Paths are relative to `project` (the package the run started
    /// in; `..` for the workspace's other packages), within `workspace`.
    pub fn read(&self, prefix: &Path, project: &Path, workspace: &Path) -> Vec<Output> {
        let runs = RawProfiles::collect(prefix);
        let out = self.output(&runs, project, workspace);
        runs.remove();
        out.into_iter().collect()
    }

    fn output(&self, runs: &RawProfiles, project: &Path, workspace: &Path) -> Option<Output> {
        let index_profile = runs.tests.iter().find_map(|t| t.profiles.first())?;
        let targets = Targets::of(&self.cargo, project);
        let mut objects: Vec<PathBuf> = Vec::new();
        for t in &runs.tests {
            if !objects.contains(&t.binary) {
                objects.push(t.binary.clone());
            }
        }
        // The programs tests start: the workspace's binaries, built instrumented too.
        for name in &targets.bins {
            let bin = self
                .target_dir
                .join("debug")
                .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
            if bin.is_file() && !objects.contains(&bin) {
                objects.push(bin);
            }
        }
        let places = self.places(index_profile, &objects, runs.prefix())?;
        let covered = self.covered_per_test(&runs.tests);
        let mut out = Output::default();
        // Each function's index in `out.functions` once placed; `None` when it has no
        // place in the workspace (a dependency, the standard library).
        let mut index: HashMap<String, Option<usize>> = HashMap::new();
        for (test, names) in runs.tests.iter().zip(covered) {
            let mut functions = Vec::new();
            for name in names {
                let i = *index.entry(name).or_insert_with_key(|name| {
                    let place = places.get(name.as_str())?;
                    let path = relative_within(project, workspace, &place.file)?;
                    if !out.files.contains_key(&path)
                        && let Ok(text) = std::fs::read(&place.file)
                    {
                        out.files.insert(path.clone(), crate::digest::digest(&text));
                    }
                    out.functions
                        .push((path, place.first, place.last, short_name(name)));
                    Some(out.functions.len() - 1)
                });
                functions.extend(i);
            }
            let (file, line) = targets.place_of_test(test, project);
            out.tests.push(OutputTest {
                id: test.name.clone(),
                file,
                line,
                functions,
            });
        }
        Some(out)
    }

    /// Each function of `objects` by its profile name, with its file and lines: `llvm-cov
    /// export` lists every function of the objects' coverage maps (those `profile` does
    /// not know with no counts), so one profile serves for all.
    fn places(
        &self,
        profile: &Path,
        objects: &[PathBuf],
        prefix: &Path,
    ) -> Option<HashMap<String, Place>> {
        let indexed = with_suffix(prefix, "-index.profdata");
        let exported = with_suffix(prefix, "-export.json");
        let merged = Command::new(&self.tools.profdata)
            .args(["merge", "-sparse", "-o"])
            .arg(&indexed)
            .arg(profile)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .ok()?;
        if !merged.success() {
            return None;
        }
        let mut export = Command::new(&self.tools.cov);
        export
            .args(["export", "-format=text", "-skip-expansions"])
            .arg(format!("-instr-profile={}", indexed.display()));
        for (i, object) in objects.iter().enumerate() {
            if i > 0 {
                export.arg("-object");
            }
            export.arg(object);
        }
        let file = std::fs::File::create(&exported).ok()?;
        let status = export
            .stdin(Stdio::null())
            .stdout(file)
            .stderr(Stdio::null())
            .status();
        let parsed = std::fs::File::open(&exported)
            .ok()
            .and_then(|f| serde_json::from_reader::<_, Export>(std::io::BufReader::new(f)).ok());
        let _ = std::fs::remove_file(&indexed);
        let _ = std::fs::remove_file(&exported);
        if !status.ok()?.success() {
            return None;
        }
        let mut places = HashMap::new();
        for function in parsed?.data.into_iter().flat_map(|d| d.functions) {
            let Some(file) = function.filenames.first() else {
                continue;
            };
            // A region is [line, column, end line, end column, count, file, expanded
            // file, kind]; the function's own file is the first.
            let own = function
                .regions
                .iter()
                .filter(|r| r.len() >= 6 && r[5] == 0 && r[0] > 0);
            let first = own.clone().map(|r| r[0]).min();
            let last = own.map(|r| r[2]).max();
            if let (Some(first), Some(last)) = (first, last) {
                places.entry(function.name).or_insert(Place {
                    file: PathBuf::from(file),
                    first: first as usize,
                    last: last as usize,
                });
            }
        }
        Some(places)
    }

    /// The profile names of the functions each test's processes ran (any counter above
    /// zero), asked of `llvm-profdata` for each profile, a few at a time.
    fn covered_per_test(&self, tests: &[TestProfiles]) -> Vec<HashSet<String>> {
        let workers = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .min(tests.len().max(1));
        let next = std::sync::atomic::AtomicUsize::new(0);
        let mut covered: Vec<HashSet<String>> = vec![HashSet::new(); tests.len()];
        let results = std::sync::Mutex::new(&mut covered);
        std::thread::scope(|scope| {
            for _ in 0..workers {
                scope.spawn(|| {
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(test) = tests.get(i) else { break };
                        let mut names = HashSet::new();
                        for profile in &test.profiles {
                            names.extend(self.covered_in(profile));
                        }
                        if let Ok(mut r) = results.lock() {
                            r[i] = names;
                        }
                    }
                });
            }
        });
        covered
    }

    fn covered_in(&self, profile: &Path) -> Vec<String> {
        let Ok(out) = Command::new(&self.tools.profdata)
            .args(["show", "--covered"])
            .arg(profile)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
        else {
            return Vec::new();
        };
        if !out.status.success() {
            return Vec::new();
        }
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect()
    }
}

/// A function's place.
#[derive(Debug)]
struct Place {
    file: PathBuf,
    first: usize,
    last: usize,
}

/// The part of `llvm-cov export`'s JSON read here (its per-file segments are skipped).
#[derive(Deserialize)]
struct Export {
    data: Vec<ExportData>,
}

#[derive(Deserialize)]
struct ExportData {
    functions: Vec<ExportFunction>,
    #[serde(default, rename = "files")]
    _files: IgnoredAny,
}

#[derive(Deserialize)]
struct ExportFunction {
    name: String,
    filenames: Vec<String>,
    regions: Vec<Vec<i64>>,
}

/// One test's process and its profiles.
#[derive(Debug)]
struct TestProfiles {
    name: String,
    binary: PathBuf,
    /// The test's package folder (nextest's `CARGO_MANIFEST_DIR`; empty when unset).
    package: PathBuf,
    profiles: Vec<PathBuf>,
}

/// The raw profiles a recorded run left, by test.
#[derive(Debug)]
struct RawProfiles {
    prefix: PathBuf,
    tests: Vec<TestProfiles>,
    /// Every file of the run's (profiles of tests and of everything else, the list).
    files: Vec<PathBuf>,
}

impl RawProfiles {
    fn collect(prefix: &Path) -> RawProfiles {
        let list = with_suffix(prefix, "-tests.tsv");
        let mut by_process: BTreeMap<String, TestProfiles> = BTreeMap::new();
        for line in std::fs::read_to_string(&list).unwrap_or_default().lines() {
            let mut parts = line.splitn(4, '\t');
            if let (Some(pid), Some(binary), Some(package), Some(name)) =
                (parts.next(), parts.next(), parts.next(), parts.next())
            {
                by_process.insert(
                    pid.to_string(),
                    TestProfiles {
                        name: name.to_string(),
                        binary: PathBuf::from(binary),
                        package: PathBuf::from(package),
                        profiles: Vec::new(),
                    },
                );
            }
        }
        let mut files = vec![list];
        let stem = prefix
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let dir = prefix.parent().unwrap_or(Path::new("."));
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(rest) = name
                .strip_prefix(&stem)
                .and_then(|r| r.strip_prefix('-'))
                .and_then(|r| r.strip_suffix(".profraw"))
            else {
                continue;
            };
            let path = entry.path();
            if let Some(test) = rest
                .split_once('-')
                .and_then(|(pid, _)| by_process.get_mut(pid))
            {
                // The test's own process first: its binary's profile.
                let own = rest
                    .split_once('-')
                    .is_some_and(|(pid, process)| pid == process);
                if own {
                    test.profiles.insert(0, path.clone());
                } else {
                    test.profiles.push(path.clone());
                }
            }
            files.push(path);
        }
        RawProfiles {
            prefix: prefix.to_path_buf(),
            tests: by_process
                .into_values()
                .filter(|t| !t.profiles.is_empty())
                .collect(),
            files,
        }
    }

    fn prefix(&self) -> &Path {
        &self.prefix
    }

    fn remove(self) {
        for f in self.files {
            let _ = std::fs::remove_file(f);
        }
    }
}

/// The workspace's binaries and where each test binary's sources start, from `cargo
/// metadata` (the workspace's own packages only).
#[derive(Debug, Default)]
struct Targets {
    bins: Vec<String>,
    /// Each target's name as its test binary is named (`-` as `_`), its package's folder
    /// and its root file.
    roots: Vec<(String, PathBuf, PathBuf)>,
}

#[derive(Deserialize)]
struct Metadata {
    packages: Vec<MetadataPackage>,
}

#[derive(Deserialize)]
struct MetadataPackage {
    manifest_path: PathBuf,
    targets: Vec<MetadataTarget>,
}

#[derive(Deserialize)]
struct MetadataTarget {
    name: String,
    kind: Vec<String>,
    src_path: PathBuf,
}

impl Targets {
    fn of(cargo: &Path, project: &Path) -> Targets {
        let Ok(out) = Command::new(cargo)
            .args([
                "metadata",
                "--format-version",
                "1",
                "--no-deps",
                "--offline",
            ])
            .current_dir(project)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
        else {
            return Targets::default();
        };
        let Ok(metadata) = serde_json::from_slice::<Metadata>(&out.stdout) else {
            return Targets::default();
        };
        let mut targets = Targets::default();
        for package in metadata.packages {
            let folder = package
                .manifest_path
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default();
            for target in package.targets {
                if target.kind.iter().any(|k| k == "bin") {
                    targets.bins.push(target.name.clone());
                }
                targets.roots.push((
                    target.name.replace('-', "_"),
                    folder.clone(),
                    target.src_path,
                ));
            }
        }
        targets
    }

    /// The file (relative to `project`) and line of `test` (its name a module path): the
    /// module's file under its binary's target root (the target of that name in the test's
    /// package), found from the longest module path that names a file, and the first line
    /// naming the test there (a `fn`, or a macro's argument for tests a macro makes); the
    /// target's root and line 1 when nothing is found.
    fn place_of_test(&self, test: &TestProfiles, project: &Path) -> (String, usize) {
        let name = test.name.as_str();
        let stem = test
            .binary
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let target = stem.rsplit_once('-').map_or(stem.as_str(), |(t, _)| t);
        let named: Vec<&(String, PathBuf, PathBuf)> =
            self.roots.iter().filter(|(t, _, _)| t == target).collect();
        let Some((_, _, root)) = named
            .iter()
            .find(|(_, package, _)| *package == test.package)
            .or(named.first())
        else {
            return (String::new(), 1);
        };
        let segments: Vec<&str> = name.split("::").collect();
        let (modules, test) = segments.split_at(segments.len().saturating_sub(1));
        let dir = root.parent().unwrap_or(Path::new(""));
        let mut file = root.clone();
        for n in (1..=modules.len()).rev() {
            let path: PathBuf = modules[..n].iter().collect();
            let candidates = [
                dir.join(path.with_extension("rs")),
                dir.join(&path).join("mod.rs"),
            ];
            if let Some(found) = candidates.into_iter().find(|c| c.is_file()) {
                file = found;
                break;
            }
        }
        let test = test.first().copied().unwrap_or(name);
        let line = std::fs::read_to_string(&file)
            .ok()
            .and_then(|text| line_naming(&text, test))
            .unwrap_or(1);
        let rel = tools_core::display_relative(project, &file).replace('\\', "/");
        (rel, line)
    }
}

/// The first line (1-based) declaring `fn name`, else the first naming `name` as a whole
/// word.
fn line_naming(text: &str, name: &str) -> Option<usize> {
    let declared = format!("fn {name}");
    let whole = |line: &str, word: &str| {
        tools_core::first_whole_word(line, word, tools_core::is_ident_char).is_some()
    };
    let lines: Vec<&str> = text.lines().collect();
    lines
        .iter()
        .position(|l| whole(l, &declared))
        .or_else(|| lines.iter().position(|l| whole(l, name)))
        .map(|i| i + 1)
}

/// `file` relative to `project`, with `/`, through `..` for the workspace's other
/// packages; `None` outside `workspace` (dependencies, the standard library).
fn relative_within(project: &Path, workspace: &Path, file: &Path) -> Option<String> {
    let inside = file.strip_prefix(workspace).ok()?;
    let base = project.strip_prefix(workspace).ok()?;
    let up = base.components().count();
    let mut parts: Vec<String> = vec!["..".into(); up];
    // Where the project's path and the file's share a beginning, no need to go up to it.
    let shared = base
        .components()
        .zip(inside.components())
        .take_while(|(a, b)| a == b)
        .count();
    parts.truncate(up - shared);
    parts.extend(
        inside
            .components()
            .skip(shared)
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    Some(parts.join("/"))
}

/// The function's own name in a profile name (`ignore::walk::skip_filesize` of its v0
/// symbol gives `skip_filesize`; a closure, the function around it).
fn short_name(profile_name: &str) -> String {
    let demangled = format!("{:#}", rustc_demangle::demangle(profile_name));
    let mut segments: Vec<&str> = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    let bytes = demangled.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'<' => depth += 1,
            b'>' => depth = depth.saturating_sub(1),
            b':' if depth == 0 && bytes.get(i + 1) == Some(&b':') => {
                segments.push(&demangled[start..i]);
                start = i + 2;
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    segments.push(&demangled[start..]);
    segments
        .iter()
        .rev()
        .find(|s| !s.is_empty() && !s.starts_with('{') && !s.starts_with('<'))
        .map_or(demangled.clone(), |s| s.to_string())
}

fn with_suffix(prefix: &Path, suffix: &str) -> PathBuf {
    let mut name = prefix.as_os_str().to_os_string();
    name.push(suffix);
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_name_gives_the_functions_own_name() {
        assert_eq!(
            short_name("_RNvNtCs6TxlnQEIToR_6ignore8pathutil9is_hidden"),
            "is_hidden"
        );
        // A closure: the function around it.
        assert_eq!(
            short_name(
                "_RNCNvMs7_NtNtCsBYdMvARDZJ_2rg5flags7lowargsNtB7_18ContextModeLimited3get0Bb_"
            ),
            "get"
        );
        assert_eq!(short_name("not_mangled"), "not_mangled");
    }

    #[test]
    fn a_file_is_named_from_its_package_through_the_workspace() {
        let ws = Path::new("/w");
        assert_eq!(
            relative_within(Path::new("/w"), ws, Path::new("/w/crates/a/src/lib.rs")).as_deref(),
            Some("crates/a/src/lib.rs")
        );
        assert_eq!(
            relative_within(
                Path::new("/w/crates/b"),
                ws,
                Path::new("/w/crates/a/src/lib.rs")
            )
            .as_deref(),
            Some("../a/src/lib.rs")
        );
        assert_eq!(
            relative_within(
                Path::new("/w/crates/b"),
                ws,
                Path::new("/w/crates/b/src/lib.rs")
            )
            .as_deref(),
            Some("src/lib.rs")
        );
        assert_eq!(
            relative_within(Path::new("/w"), ws, Path::new("/home/u/.cargo/x.rs")),
            None
        );
    }

    #[test]
    fn a_test_is_placed_at_its_fn_or_the_macro_naming_it() {
        let text = "mod util;\n\nrgtest!(f1_sjis, |dir, cmd| {\n});\n\n#[test]\nfn fn_f1() {}\n";
        assert_eq!(line_naming(text, "f1_sjis"), Some(3));
        assert_eq!(line_naming(text, "fn_f1"), Some(7));
        assert_eq!(line_naming(text, "f1"), None);
    }
}

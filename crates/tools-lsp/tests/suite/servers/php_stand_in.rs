//! PHPantom standing in for intelephense: intelephense without a licence key offers no
//! rename, so a PHP rename goes to PHPantom, and the answer says so; references stay
//! intelephense's. Both servers are real; either missing fails the test (setup installs
//! them).

use serde_json::json;
use tools_core::testing::{exercised, missing, which};

use super::super::Project;

const GREETER: &str = "<?php\n\nnamespace App;\n\nclass Greeter\n{\n    public function greet(string $name): string\n    {\n        return \"Hello, \" . $name;\n    }\n}\n";

const INDEX: &str = "<?php\n\nrequire __DIR__ . '/src/Greeter.php';\n\nuse App\\Greeter;\n\n$g = new Greeter();\necho $g->greet(\"Ada\");\necho $g->greet(\"Alan\");\n";

#[tokio::test]
async fn a_php_rename_across_two_files_goes_to_phpantom_standing_in_for_intelephense() {
    for (component, program) in [
        ("intelephense", "intelephense"),
        ("phpantom_lsp", "phpantom_lsp"),
    ] {
        if which(program).is_none() {
            let why = format!(
                "`{program}` is not on PATH (run `cargo xtask setup` and source .tools/env.sh)"
            );
            missing(component, &why);
            panic!("{why}");
        }
    }
    let p = Project::new(
        &[
            (
                "composer.json",
                "{\"autoload\": {\"psr-4\": {\"App\\\\\": \"src/\"}}}\n",
            ),
            ("src/Greeter.php", GREETER),
            ("index.php", INDEX),
        ],
        "[lsp]\nstart_timeout_ms = 90000\nrequest_timeout_ms = 60000\n",
    );
    let out = p
        .rename_cleanly("src/Greeter.php", 7, "greet", "welcome")
        .await;
    assert_eq!(
        out.text.lines().next().unwrap(),
        "renamed `greet` at src/Greeter.php:7 to `welcome`: 3 edit(s) in 2 file(s), by \
         phpantom_lsp standing in for intelephense, which offers no rename without a licence key",
        "{}",
        out.text
    );
    let s = out.structured.clone().unwrap();
    assert_eq!(s["renamed_by"], "phpantom_lsp", "{s}");
    assert_eq!(s["stood_in_for"], "intelephense", "{s}");
    assert_eq!(
        s["files"],
        json!([
            {"change": "2 edit(s)", "lines": [8, 9], "path": "index.php"},
            {"change": "1 edit(s)", "lines": [7], "path": "src/Greeter.php"},
        ]),
        "{s}"
    );
    assert_eq!(
        p.read("src/Greeter.php"),
        GREETER.replace("function greet(", "function welcome(")
    );
    assert_eq!(p.read("index.php"), INDEX.replace("->greet(", "->welcome("));
    // References stay intelephense's, and it sees the renamed files.
    let refs = p
        .ok(json!({"action": "references", "file": "index.php", "line": 8, "symbol": "welcome"}))
        .await;
    assert_eq!(
        refs,
        "3 reference(s) of `welcome` at index.php:8:\n\
         index.php:8:10  echo $g->welcome(\"Ada\");\n\
         index.php:9:10  echo $g->welcome(\"Alan\");\n\
         src/Greeter.php:7:21  public function welcome(string $name): string"
    );
    // PHP itself agrees the renamed files are PHP, where it is installed.
    if which("php").is_some() {
        for file in ["src/Greeter.php", "index.php"] {
            let lint = std::process::Command::new("php")
                .arg("-l")
                .arg(p.root().join(file))
                .output()
                .unwrap();
            assert!(lint.status.success(), "{file}: {lint:?}");
        }
    }
    exercised("phpantom_lsp");
    p.close_and_check().await;
}

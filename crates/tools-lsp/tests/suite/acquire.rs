//! Server acquisition against the real registries (npm, PyPI) into a temporary cache: what
//! lands where, that discovery finds it, that a second install is a no-op, that a bad pin
//! fails with the package manager's own words and leaves nothing, that two installs of one
//! server at once end with one good install, and that a missing package manager or the time
//! bound fail at once.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tools_core::discovery::Origin;
use tools_core::{Config, Run, RunOptions};
use tools_lsp::LspConfig;
use tools_lsp::acquire::{InstallOutcome, ServerCache, Servers};
use tools_lsp::recipe::{InstallRecipe, PackageManager};

struct Setup {
    _ws: tempfile::TempDir,
    cache_dir: tempfile::TempDir,
    run: Arc<Run>,
    servers: Servers,
}

fn setup() -> Setup {
    let ws = tempfile::tempdir().unwrap();
    let cache_dir = tempfile::tempdir().unwrap();
    let run = Run::new(RunOptions {
        root: ws.path().into(),
        conversation_id: "acquire".into(),
        config: Config::empty(),
        trusted: false,
    })
    .unwrap();
    let servers = Servers::with_cache(
        &run,
        &LspConfig::default(),
        ServerCache::at(cache_dir.path().join("servers")),
    )
    .unwrap();
    Setup {
        _ws: ws,
        cache_dir,
        run,
        servers,
    }
}

fn quiet(_: &str) {}

/// The names in the cache folder (the lock folder aside).
fn cache_entries(cache: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(cache)
        .map(|it| {
            it.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n != ".locks")
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn runs_version(program: &Path) -> String {
    let out = std::process::Command::new(program)
        .arg("--version")
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap();
    assert!(out.status.success(), "{program:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test]
async fn an_npm_server_installs_into_the_cache_once_and_discovery_finds_it_there() {
    let s = setup();
    let chosen = s.servers.choose("bash-language-server").unwrap();
    assert_eq!(chosen.language, "bash");
    let recipe = chosen.recipe().unwrap().clone();
    let notes = std::sync::Mutex::new(Vec::new());
    let note = |l: &str| notes.lock().unwrap().push(l.to_string());
    let first = s.servers.install(&recipe, &note).await.unwrap();
    assert_eq!(first.outcome, InstallOutcome::Installed);
    assert!(first.programs.contains(&"bash-language-server".to_string()));
    assert_eq!(
        first.dir,
        s.servers
            .cache()
            .root()
            .join("npm-bash-language-server@5.8.1")
    );
    assert!(notes.lock().unwrap()[0].starts_with("installing bash-language-server 5.8.1 (npm)"));
    eprintln!("npm bash-language-server install: {:?}", first.elapsed);
    // Only the finished folder is left: no temporary folder, nothing in the workspace.
    assert_eq!(
        cache_entries(s.servers.cache().root()),
        ["npm-bash-language-server@5.8.1"]
    );
    assert_eq!(std::fs::read_dir(s.run.root()).unwrap().count(), 0);
    let program = first.dir.join("bin/bash-language-server");
    assert!(runs_version(&program).contains("5.8.1"));
    // Discovery finds it in the cache (after PATH: when the machine has one on PATH, that
    // one wins, and the cache's is still among the searched folders).
    let found = s
        .servers
        .search()
        .find("bash-language-server", s.run.root())
        .unwrap();
    if found.origin == Origin::Cache {
        assert_eq!(found.path, program);
    } else {
        assert!(
            s.servers
                .search()
                .cache_dirs()
                .contains(&first.dir.join("bin"))
        );
    }
    let states = s.servers.states();
    let bash = states.iter().find(|e| e.language == "bash").unwrap();
    assert!(bash.available());

    let again = s.servers.install(&recipe, &quiet).await.unwrap();
    assert_eq!(again.outcome, InstallOutcome::AlreadyInstalled);
    assert_eq!(again.programs, first.programs);
    s.run.close().await;
    drop(s.cache_dir);
}

#[tokio::test]
async fn a_pip_server_gets_a_private_venv_whose_scripts_point_at_the_final_folder() {
    let s = setup();
    let recipe = s
        .servers
        .choose("jedi-language-server")
        .unwrap()
        .recipe()
        .unwrap()
        .clone();
    assert_eq!(recipe.manager, PackageManager::Pip);
    let report = s.servers.install(&recipe, &quiet).await.unwrap();
    eprintln!("pip jedi-language-server install: {:?}", report.elapsed);
    assert_eq!(report.outcome, InstallOutcome::Installed);
    assert_eq!(report.programs, ["jedi-language-server"]);
    let script = report.dir.join("venv/bin/jedi-language-server");
    let header = std::fs::read_to_string(&script).unwrap();
    let first_line = header.lines().next().unwrap();
    assert_eq!(
        first_line,
        format!("#!{}/venv/bin/python", report.dir.display())
    );
    // The table's own pin, whatever it is today: the install must run exactly that release.
    assert!(runs_version(&report.dir.join("bin/jedi-language-server")).contains(&recipe.version));
    assert_eq!(
        cache_entries(s.servers.cache().root()),
        [format!("pip-jedi-language-server@{}", recipe.version)]
    );
    s.run.close().await;
}

#[tokio::test]
async fn a_version_the_registry_does_not_have_fails_with_its_own_words_and_leaves_nothing() {
    let s = setup();
    let npm = InstallRecipe::new(PackageManager::Npm, "bash-language-server", "999.0.0");
    let err = s
        .servers
        .install(&npm, &quiet)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("npm error") && err.contains("No matching version found"),
        "{err}"
    );
    let pip = InstallRecipe::new(PackageManager::Pip, "jedi-language-server", "999.0.0");
    let err = s
        .servers
        .install(&pip, &quiet)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("ERROR:") && err.contains("jedi-language-server==999.0.0"),
        "{err}"
    );
    assert!(cache_entries(s.servers.cache().root()).is_empty());
    s.run.close().await;
}

#[tokio::test]
async fn two_installs_of_one_server_at_once_end_with_one_good_install() {
    let s = setup();
    let recipe = InstallRecipe::new(PackageManager::Pip, "jedi-language-server", "0.47.0");
    let other = Servers::with_cache(
        &s.run,
        &LspConfig::default(),
        ServerCache::at(s.servers.cache().root()),
    )
    .unwrap();
    let (a, b) = tokio::join!(
        s.servers.install(&recipe, &quiet),
        other.install(&recipe, &quiet)
    );
    let mut outcomes = vec![a.unwrap().outcome, b.unwrap().outcome];
    outcomes.sort_by_key(|o| *o == InstallOutcome::AlreadyInstalled);
    assert_eq!(
        outcomes,
        [InstallOutcome::Installed, InstallOutcome::AlreadyInstalled]
    );
    assert_eq!(
        cache_entries(s.servers.cache().root()),
        ["pip-jedi-language-server@0.47.0"]
    );
    let dir = s.servers.cache().install_dir(&recipe);
    assert!(runs_version(&dir.join("bin/jedi-language-server")).contains("0.47.0"));
    s.run.close().await;
}

#[tokio::test]
async fn a_missing_package_manager_or_the_time_bound_fails_at_once_and_keeps_nothing() {
    let s = setup();
    let dotnet = InstallRecipe::new(PackageManager::Dotnet, "csharp-ls", "0.16.0");
    if tools_core::process::which("dotnet").is_none() {
        let err = s
            .servers
            .install(&dotnet, &quiet)
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("`dotnet` is not on PATH"), "{err}");
        assert!(!err.contains('\n'), "{err}");
    }
    let bounded = Servers::with_cache(
        &s.run,
        &LspConfig::default(),
        ServerCache::at(s.servers.cache().root()),
    )
    .unwrap()
    .with_timeout(Duration::from_millis(50));
    let recipe = InstallRecipe::new(PackageManager::Npm, "bash-language-server", "5.8.1");
    let err = bounded.install(&recipe, &quiet).await.unwrap_err();
    assert_eq!(err.kind(), "timed_out", "{err}");
    assert!(err.to_string().contains("nothing was kept"), "{err}");
    assert!(cache_entries(s.servers.cache().root()).is_empty());
    s.run.close().await;
}

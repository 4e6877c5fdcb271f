//! A workspace per session on a pod started ahead: the server starts on an empty root, and
//! the first session's `initialize` names the repository and ref to check out
//! (`X-Agent-Tools-Repository`, `X-Agent-Tools-Ref`); the server fetches it into the root
//! before that session is served. Pods of a warm pool start before anyone knows which
//! repository they will serve, so a checkout at pod start (an init container) would give
//! every session the same tree; here it waits for the session that owns the pod.
//!
//! What it guards: only repositories under the operator's allowed prefixes are fetched;
//! refs and URLs that git could read as options or that climb out of a prefix are refused;
//! the fetch credential (a file, re-read at each checkout so a rotated Secret is used)
//! reaches git through its environment, never its arguments or `.git/config`. A root that
//! already holds a checkout of the same repository (a persistent volume after a restart)
//! is served as it is, uncommitted edits included; any other content is refused.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode};
use base64::Engine;
use tokio::sync::Mutex;
use tools_core::ToolError;

/// The header naming the repository to check out (a URL under an allowed prefix).
pub const REPOSITORY_HEADER: &str = "x-agent-tools-repository";
/// The header naming the branch, tag or commit to check out (default: the remote's HEAD).
pub const REF_HEADER: &str = "x-agent-tools-ref";
/// How long one git command may take.
const GIT_TIMEOUT: Duration = Duration::from_secs(300);
/// The most of git's error output quoted in a refusal.
const QUOTED_ERROR: usize = 1500;

/// Settings of the checkout on first session (`--checkout-allow`).
#[derive(Debug, Clone, Default)]
pub struct CheckoutSettings {
    /// URL prefixes a repository must start with, each ending in `/`
    /// (`https://github.com/your-org/`).
    pub allowed_prefixes: Vec<String>,
    /// A file whose first line is the fetch credential: `USER:TOKEN` (sent as HTTP basic
    /// authentication) or a bare token (sent as a bearer token).
    pub credential_file: Option<PathBuf>,
}

/// What the workspace holds, once checked out.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CheckedOut {
    repository: String,
    git_ref: String,
}

/// Why a session was not opened, as an HTTP status and a message for the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CheckoutRefusal {
    pub(crate) status: StatusCode,
    pub(crate) message: String,
}

impl CheckoutRefusal {
    fn new(status: StatusCode, message: impl Into<String>) -> Self {
        CheckoutRefusal {
            status,
            message: message.into(),
        }
    }
}

/// The checkout of one served root, done once, by the first session that names it.
pub(crate) struct WorkspaceCheckout {
    settings: CheckoutSettings,
    root: PathBuf,
    done: Mutex<Option<CheckedOut>>,
}

impl WorkspaceCheckout {
    /// A checkout into `root`; refuses prefixes that do not end in `/` (a prefix
    /// `https://git.example.com` would also allow `https://git.example.com.evil.test/`).
    pub(crate) fn new(settings: CheckoutSettings, root: &Path) -> Result<Self, ToolError> {
        if settings.allowed_prefixes.is_empty() {
            return Err(ToolError::invalid(
                "--checkout-allow",
                "name at least one repository URL prefix",
            ));
        }
        for prefix in &settings.allowed_prefixes {
            if !prefix.ends_with('/') || !prefix.contains("://") {
                return Err(ToolError::invalid(
                    "--checkout-allow",
                    format!(
                        "`{prefix}` must be a URL prefix ending in `/`, e.g. https://github.com/your-org/"
                    ),
                ));
            }
        }
        Ok(WorkspaceCheckout {
            settings,
            root: root.to_path_buf(),
            done: Mutex::new(None),
        })
    }

    /// Makes sure the root holds what an `initialize` with these headers asks for:
    /// checks it out the first time, accepts the same repository (or no headers) later,
    /// refuses another.
    pub(crate) async fn prepare(&self, headers: &HeaderMap) -> Result<(), CheckoutRefusal> {
        let text = |name: &str| -> Result<Option<String>, CheckoutRefusal> {
            match headers.get(name) {
                None => Ok(None),
                Some(v) => v.to_str().map(|s| Some(s.trim().to_string())).map_err(|_| {
                    CheckoutRefusal::new(
                        StatusCode::BAD_REQUEST,
                        format!("the {name} header is not text"),
                    )
                }),
            }
        };
        let repository = text(REPOSITORY_HEADER)?;
        let git_ref = text(REF_HEADER)?;
        let mut done = self.done.lock().await;
        if let Some(held) = done.as_ref() {
            return match repository {
                None => Ok(()),
                Some(r)
                    if r == held.repository
                        && git_ref.as_ref().is_none_or(|g| *g == held.git_ref) =>
                {
                    Ok(())
                }
                Some(r) => Err(CheckoutRefusal::new(
                    StatusCode::CONFLICT,
                    format!(
                        "this server's workspace is a checkout of {} at {}; a session for {r} needs a server of its own",
                        held.repository, held.git_ref
                    ),
                )),
            };
        }
        let Some(repository) = repository else {
            return Err(CheckoutRefusal::new(
                StatusCode::BAD_REQUEST,
                "this server checks out the session's repository before serving it: send \
                 `X-Agent-Tools-Repository: URL` and `X-Agent-Tools-Ref: BRANCH, TAG or COMMIT` \
                 with the initialize request",
            ));
        };
        let git_ref = git_ref.unwrap_or_else(|| "HEAD".into());
        self.check_repository(&repository)?;
        check_ref(&git_ref)?;
        let wanted = CheckedOut {
            repository,
            git_ref,
        };
        self.check_out(&wanted).await?;
        *done = Some(wanted);
        Ok(())
    }

    fn check_repository(&self, url: &str) -> Result<(), CheckoutRefusal> {
        let refuse = |why: &str| {
            Err(CheckoutRefusal::new(
                StatusCode::BAD_REQUEST,
                format!("X-Agent-Tools-Repository `{url}` {why}"),
            ))
        };
        if url.len() > 2048
            || url
                .chars()
                .any(|c| c.is_whitespace() || c.is_control() || c == '\\')
        {
            return refuse("is not a repository URL");
        }
        if url.contains(['?', '#']) || url.split('/').any(|s| s == ".." || s == ".") {
            return refuse("has a query, a fragment or a `.`/`..` segment");
        }
        if !self
            .settings
            .allowed_prefixes
            .iter()
            .any(|p| url.starts_with(p.as_str()) && url.len() > p.len())
        {
            return refuse(&format!(
                "is not under a prefix this server may fetch from ({})",
                self.settings.allowed_prefixes.join(", ")
            ));
        }
        Ok(())
    }

    /// Adopts a checkout of the same repository already in the root, or fetches one into
    /// an empty root.
    async fn check_out(&self, wanted: &CheckedOut) -> Result<(), CheckoutRefusal> {
        let conflict = |m: String| CheckoutRefusal::new(StatusCode::CONFLICT, m);
        if self.root.join(".git").exists() {
            let origin = self
                .git(&["config", "--get", "remote.origin.url"], None)
                .await
                .unwrap_or_default();
            if origin.trim() == wanted.repository {
                tracing::info!(
                    repository = wanted.repository,
                    "the workspace already holds this repository; serving it as it is"
                );
                return Ok(());
            }
            return Err(conflict(format!(
                "the workspace already holds a checkout of {}, not of {}",
                origin.trim(),
                wanted.repository
            )));
        }
        let entries = std::fs::read_dir(&self.root).map_err(|e| {
            CheckoutRefusal::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("cannot read the workspace: {e}"),
            )
        })?;
        // A fresh filesystem's lost+found is not content.
        if entries.flatten().any(|e| e.file_name() != "lost+found") {
            return Err(conflict(
                "the workspace is not empty and holds no git checkout; it cannot receive one"
                    .into(),
            ));
        }
        let credential = self.credential_header()?;
        let started = std::time::Instant::now();
        let result = self.fetch_and_switch(wanted, credential.as_deref()).await;
        if let Err(message) = result {
            // Leave an empty root behind, so a later session can try again.
            let _ = std::fs::remove_dir_all(self.root.join(".git"));
            return Err(CheckoutRefusal::new(StatusCode::BAD_GATEWAY, message));
        }
        tracing::info!(
            repository = wanted.repository,
            git_ref = wanted.git_ref,
            took_ms = started.elapsed().as_millis() as u64,
            "workspace checked out"
        );
        Ok(())
    }

    async fn fetch_and_switch(
        &self,
        wanted: &CheckedOut,
        credential: Option<&str>,
    ) -> Result<(), String> {
        self.git(&["init", "--quiet"], None).await?;
        self.git(&["remote", "add", "origin", &wanted.repository], None)
            .await?;
        self.git(
            &["fetch", "--quiet", "--depth=1", "origin", &wanted.git_ref],
            credential,
        )
        .await
        .map_err(|e| {
            format!(
                "could not fetch {} from {}: {e}",
                wanted.git_ref, wanted.repository
            )
        })?;
        match branch_name(&wanted.git_ref) {
            Some(branch) => {
                self.git(&["checkout", "--quiet", "-B", branch, "FETCH_HEAD"], None)
                    .await?
            }
            None => {
                self.git(&["checkout", "--quiet", "--detach", "FETCH_HEAD"], None)
                    .await?
            }
        };
        Ok(())
    }

    /// The `Authorization` value git sends, from the credential file (read now).
    fn credential_header(&self) -> Result<Option<String>, CheckoutRefusal> {
        let Some(path) = &self.settings.credential_file else {
            return Ok(None);
        };
        let text = std::fs::read_to_string(path).map_err(|e| {
            CheckoutRefusal::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!(
                    "the fetch credential {} cannot be read: {e}",
                    path.display()
                ),
            )
        })?;
        let secret = text.lines().next().unwrap_or("").trim();
        if secret.is_empty() {
            return Err(CheckoutRefusal::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("the fetch credential {} is empty", path.display()),
            ));
        }
        Ok(Some(if secret.contains(':') {
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(secret)
            )
        } else {
            format!("Bearer {secret}")
        }))
    }

    /// Runs git in the root with a minimal environment and a deadline; answers its stdout,
    /// or its error output cut to a readable length.
    async fn git(&self, args: &[&str], credential: Option<&str>) -> Result<String, String> {
        let mut command = tokio::process::Command::new("git");
        command
            .args(args)
            .current_dir(&self.root)
            .env_clear()
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("LC_ALL", "C")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        for name in [
            "PATH",
            "HOME",
            "SSL_CERT_FILE",
            "SSL_CERT_DIR",
            "HTTPS_PROXY",
            "https_proxy",
            "NO_PROXY",
            "no_proxy",
        ] {
            if let Some(value) = std::env::var_os(name) {
                command.env(name, value);
            }
        }
        if let Some(value) = credential {
            // Config from the environment (git 2.31+): neither the process list nor
            // .git/config ever holds the credential.
            command
                .env("GIT_CONFIG_COUNT", "1")
                .env("GIT_CONFIG_KEY_0", "http.extraHeader")
                .env("GIT_CONFIG_VALUE_0", format!("Authorization: {value}"));
        }
        let output = tokio::time::timeout(GIT_TIMEOUT, command.output())
            .await
            .map_err(|_| {
                format!(
                    "git {} took longer than {} s",
                    args[0],
                    GIT_TIMEOUT.as_secs()
                )
            })?
            .map_err(|e| format!("git could not be started: {e}"))?;
        if output.status.success() {
            return Ok(String::from_utf8_lossy(&output.stdout).into_owned());
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        let stderr = stderr.trim();
        let quoted = match stderr.char_indices().nth(QUOTED_ERROR) {
            Some((cut, _)) => format!("{}… (cut)", &stderr[..cut]),
            None => stderr.to_string(),
        };
        Err(format!(
            "git {} failed ({}): {quoted}",
            args[0], output.status
        ))
    }
}

/// Refuses refs git could read as an option or that are not ref names.
fn check_ref(git_ref: &str) -> Result<(), CheckoutRefusal> {
    let valid = !git_ref.is_empty()
        && git_ref.len() <= 255
        && !git_ref.starts_with(['-', '/', '.'])
        && !git_ref.ends_with(['/', '.'])
        && !git_ref.ends_with(".lock")
        && !git_ref.contains("..")
        && !git_ref.contains("//")
        && git_ref
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/'));
    if valid {
        Ok(())
    } else {
        Err(CheckoutRefusal::new(
            StatusCode::BAD_REQUEST,
            format!("X-Agent-Tools-Ref `{git_ref}` is not a branch, tag or commit name"),
        ))
    }
}

/// The local branch a ref is checked out as: a branch keeps its name, so the agent commits
/// on it; a commit id, `HEAD` or another kind of ref is checked out detached.
fn branch_name(git_ref: &str) -> Option<&str> {
    let is_commit =
        (7..=40).contains(&git_ref.len()) && git_ref.chars().all(|c| c.is_ascii_hexdigit());
    if is_commit || git_ref == "HEAD" {
        return None;
    }
    match git_ref.strip_prefix("refs/") {
        Some(rest) => rest.strip_prefix("heads/"),
        None => Some(git_ref),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refs_that_git_could_misread_are_refused() {
        for bad in [
            "-upload-pack=x",
            "a..b",
            "/abs",
            "x.lock",
            "a b",
            "",
            "x//y",
            "tag\n",
        ] {
            assert!(check_ref(bad).is_err(), "{bad:?}");
        }
        for good in [
            "main",
            "feature/x-1",
            "v1.2.3",
            "0123abc",
            "refs/pull/1/head",
        ] {
            assert!(check_ref(good).is_ok(), "{good:?}");
        }
    }

    #[test]
    fn branches_keep_their_name_and_commits_are_detached() {
        assert_eq!(branch_name("main"), Some("main"));
        assert_eq!(branch_name("refs/heads/fix"), Some("fix"));
        assert_eq!(branch_name("refs/pull/1/head"), None);
        assert_eq!(branch_name("0123abcd"), None);
        assert_eq!(branch_name("HEAD"), None);
    }

    #[test]
    fn the_fetch_credential_is_basic_for_user_and_token_and_bearer_for_a_bare_token() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("credential");
        let checkout = |credential_file| {
            let settings = CheckoutSettings {
                allowed_prefixes: vec!["https://git.example.com/team/".into()],
                credential_file,
            };
            WorkspaceCheckout::new(settings, dir.path()).unwrap()
        };
        std::fs::write(&file, "x-access-token:ghs_abc\n").unwrap();
        assert_eq!(
            checkout(Some(file.clone())).credential_header().unwrap(),
            Some("Basic eC1hY2Nlc3MtdG9rZW46Z2hzX2FiYw==".into())
        );
        std::fs::write(&file, "  glpat-xyz  \nignored\n").unwrap();
        assert_eq!(
            checkout(Some(file.clone())).credential_header().unwrap(),
            Some("Bearer glpat-xyz".into())
        );
        std::fs::write(&file, "\n").unwrap();
        let refusal = checkout(Some(file.clone()))
            .credential_header()
            .err()
            .unwrap();
        assert_eq!(
            refusal.message,
            format!("the fetch credential {} is empty", file.display())
        );
        let gone = dir.path().join("gone");
        let refusal = checkout(Some(gone)).credential_header().err().unwrap();
        assert!(
            refusal.message.contains("cannot be read"),
            "{}",
            refusal.message
        );
        assert_eq!(checkout(None).credential_header().unwrap(), None);
    }

    #[test]
    fn repositories_outside_the_prefixes_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let settings = CheckoutSettings {
            allowed_prefixes: vec!["https://git.example.com/team/".into()],
            credential_file: None,
        };
        let checkout = WorkspaceCheckout::new(settings, dir.path()).unwrap();
        assert!(
            checkout
                .check_repository("https://git.example.com/team/app.git")
                .is_ok()
        );
        for bad in [
            "https://git.example.com/team/../other/app.git",
            "https://git.example.com/other/app.git",
            "https://git.example.com/team/",
            "https://git.example.com/team/app.git?x=1",
        ] {
            let refusal = checkout.check_repository(bad).err().unwrap();
            assert_eq!(refusal.status, StatusCode::BAD_REQUEST, "{bad}");
        }
        let no_slash = CheckoutSettings {
            allowed_prefixes: vec!["https://git.example.com".into()],
            credential_file: None,
        };
        assert!(WorkspaceCheckout::new(no_slash, dir.path()).is_err());
    }
}

//! Who is calling, and which surface they get.
//!
//! Two ways to present a credential, both as `Authorization: Bearer …`:
//! - a static token read from a file (`--token-file`), which grants the server's own surface;
//! - an OAuth 2.1 access token: a JWT signed by a key of the configured JWKS, whose issuer,
//!   audience (this server's resource URI) and expiry are checked, and whose scopes
//!   (`agent-tools:read-only`, `agent-tools:plan`, `agent-tools:full`) pick the surface.
//!
//! Every refusal carries a reason written for the person operating the client; the HTTP layer
//! turns it into a 401 (or 403 for a missing scope) with an RFC 6750 `WWW-Authenticate`
//! header that names the protected-resource metadata (RFC 9728).

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation, decode, decode_header};
use serde::Deserialize;
use tools_core::{Surface, ToolError};

use crate::jwks_url::RemoteJwks;

/// The scope that grants each surface, strongest first.
pub const SCOPES: [(&str, Surface); 3] = [
    ("agent-tools:full", Surface::FULL),
    ("agent-tools:plan", Surface::PLAN),
    ("agent-tools:read-only", Surface::READ_ONLY),
];

/// How strong a surface is, for "the weaker of two surfaces".
pub fn surface_rank(surface: Surface) -> u8 {
    match surface.name {
        "full" => 2,
        "plan" => 1,
        _ => 0,
    }
}

/// The weaker of two surfaces.
pub fn weaker(a: Surface, b: Surface) -> Surface {
    if surface_rank(a) <= surface_rank(b) {
        a
    } else {
        b
    }
}

/// Where the authorization server's signing keys come from.
#[derive(Debug, Clone)]
pub enum JwksSource {
    /// A JSON Web Key Set file, re-read when it changes (keys rotate without a restart).
    File(PathBuf),
    /// A JSON Web Key Set at an https URL, cached as its headers allow and fetched again
    /// when a token names an unknown key, at most every `min_refresh`.
    Url {
        /// The https URL.
        url: String,
        /// PEM certificates trusted besides the public roots (a private CA).
        ca_file: Option<PathBuf>,
        /// The shortest time between two fetches.
        min_refresh: std::time::Duration,
    },
}

/// Settings of the OAuth 2.1 resource server.
#[derive(Debug, Clone)]
pub struct OAuthSettings {
    /// The JSON Web Key Set the authorization server signs with.
    pub jwks: JwksSource,
    /// The `iss` every token must carry; also announced as the authorization server.
    pub issuer: String,
    /// This server's resource URI: the `aud` every token must carry.
    pub resource: String,
}

/// The credentials the server accepts; `None` of both means no authorization (loopback only).
#[derive(Debug, Default)]
pub struct AuthSettings {
    /// The static bearer token (already read from its file, trimmed).
    pub static_token: Option<String>,
    /// OAuth 2.1 access tokens.
    pub oauth: Option<OAuthSettings>,
}

impl AuthSettings {
    /// Whether any credential is required.
    pub fn required(&self) -> bool {
        self.static_token.is_some() || self.oauth.is_some()
    }
}

/// Reads a static token file: the first line, trimmed; an empty file is an error.
pub fn read_token_file(path: &Path) -> Result<String, ToolError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        ToolError::invalid(
            "--token-file",
            format!("cannot read {}: {e}", path.display()),
        )
    })?;
    let token = text.lines().next().unwrap_or("").trim().to_string();
    if token.len() < 16 {
        return Err(ToolError::invalid(
            "--token-file",
            format!(
                "{} holds no usable token (need at least 16 characters on its first line)",
                path.display()
            ),
        ));
    }
    Ok(token)
}

/// A caller whose credential was accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// Who: `anonymous`, `static-token`, or the token's `iss` + `sub`.
    pub id: String,
    /// The strongest surface the credential grants.
    pub surface: Surface,
}

/// Why a request was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// 401 for a missing or unusable credential, 403 for a valid one lacking the scope.
    pub status: u16,
    /// The RFC 6750 error code (`invalid_request`, `invalid_token`, `insufficient_scope`).
    pub code: &'static str,
    /// The reason, for a person.
    pub reason: String,
}

impl Refusal {
    fn unauthorized(code: &'static str, reason: impl Into<String>) -> Self {
        Refusal {
            status: 401,
            code,
            reason: reason.into(),
        }
    }
}

#[derive(Deserialize)]
struct Claims {
    #[serde(default)]
    sub: Option<String>,
    #[serde(default)]
    iss: Option<String>,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    scp: Option<Vec<String>>,
}

/// The JWKS as last read, with the file's modification time to notice rotation.
struct CachedKeys {
    modified: Option<SystemTime>,
    keys: JwkSet,
}

/// Checks bearer credentials against the configured settings.
pub struct Authenticator {
    settings: AuthSettings,
    keys: Mutex<Option<CachedKeys>>,
    remote: Option<RemoteJwks>,
}

impl Authenticator {
    /// An authenticator; reads a JWKS file once now so a bad file fails at start-up (a
    /// JWKS URL is fetched by [`Authenticator::fetch_keys_now`]).
    pub fn new(settings: AuthSettings) -> Result<Self, ToolError> {
        let remote = match settings.oauth.as_ref().map(|o| &o.jwks) {
            Some(JwksSource::Url {
                url,
                ca_file,
                min_refresh,
            }) => Some(RemoteJwks::new(url, ca_file.as_deref(), *min_refresh)?),
            _ => None,
        };
        let auth = Authenticator {
            settings,
            keys: Mutex::new(None),
            remote,
        };
        if matches!(
            auth.settings.oauth.as_ref().map(|o| &o.jwks),
            Some(JwksSource::File(_))
        ) {
            auth.file_keys()?;
        }
        Ok(auth)
    }

    /// Fetches a JWKS URL once, so an unreachable or wrong URL fails at start-up.
    pub async fn fetch_keys_now(&self) -> Result<(), ToolError> {
        if let Some(remote) = &self.remote {
            remote
                .keys(None)
                .await
                .map_err(|e| ToolError::not_available(format!("--jwks-url: {e}")))?;
        }
        Ok(())
    }

    /// The settings.
    pub fn settings(&self) -> &AuthSettings {
        &self.settings
    }

    /// Decides a request from its `Authorization` header value, for a server whose own
    /// surface is `server_surface`.
    pub async fn authenticate(
        &self,
        authorization: Option<&str>,
        server_surface: Surface,
    ) -> Result<Principal, Refusal> {
        if !self.settings.required() {
            return Ok(Principal {
                id: "anonymous".into(),
                surface: server_surface,
            });
        }
        let Some(header) = authorization else {
            return Err(Refusal::unauthorized(
                "invalid_request",
                "no access token: send `Authorization: Bearer <token>`",
            ));
        };
        let Some(token) = header
            .strip_prefix("Bearer ")
            .or_else(|| header.strip_prefix("bearer "))
            .map(str::trim)
            .filter(|t| !t.is_empty())
        else {
            return Err(Refusal::unauthorized(
                "invalid_request",
                "the Authorization header is not a bearer token",
            ));
        };
        if let Some(expected) = &self.settings.static_token
            && constant_time_eq(expected.as_bytes(), token.as_bytes())
        {
            return Ok(Principal {
                id: "static-token".into(),
                surface: server_surface,
            });
        }
        match &self.settings.oauth {
            Some(oauth) => self.check_jwt(oauth, token, server_surface).await,
            None => Err(Refusal::unauthorized(
                "invalid_token",
                "the bearer token does not match this server's token",
            )),
        }
    }

    async fn check_jwt(
        &self,
        oauth: &OAuthSettings,
        token: &str,
        server_surface: Surface,
    ) -> Result<Principal, Refusal> {
        let header = decode_header(token).map_err(|e| {
            Refusal::unauthorized(
                "invalid_token",
                format!("the bearer token is neither this server's token nor a JWT: {e}"),
            )
        })?;
        if !matches!(
            header.alg,
            Algorithm::RS256
                | Algorithm::RS384
                | Algorithm::RS512
                | Algorithm::PS256
                | Algorithm::PS384
                | Algorithm::PS512
                | Algorithm::ES256
                | Algorithm::ES384
                | Algorithm::EdDSA
        ) {
            return Err(Refusal::unauthorized(
                "invalid_token",
                format!(
                    "the token is signed with {:?}; only asymmetric algorithms are accepted",
                    header.alg
                ),
            ));
        }
        let key = self
            .decoding_key(header.kid.as_deref())
            .await
            .map_err(|reason| Refusal::unauthorized("invalid_token", reason))?;
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[oauth.issuer.as_str()]);
        validation.set_audience(&[oauth.resource.as_str()]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.leeway = 30;
        let data = decode::<Claims>(token, &key, &validation).map_err(|e| {
            use jsonwebtoken::errors::ErrorKind as K;
            let reason = match e.kind() {
                K::ExpiredSignature => "the access token has expired".to_string(),
                K::InvalidAudience => format!(
                    "the access token is for another resource; its audience must be {}",
                    oauth.resource
                ),
                K::InvalidIssuer => format!(
                    "the access token was issued by another authorization server; expected {}",
                    oauth.issuer
                ),
                K::InvalidSignature => "the access token's signature does not verify".to_string(),
                K::ImmatureSignature => "the access token is not valid yet (nbf)".to_string(),
                K::MissingRequiredClaim(c) => format!("the access token has no `{c}` claim"),
                other => format!("the access token is not valid: {other:?}"),
            };
            Refusal::unauthorized("invalid_token", reason)
        })?;
        let claims = data.claims;
        let scopes: Vec<String> = match (&claims.scope, &claims.scp) {
            (Some(s), _) => s.split_whitespace().map(str::to_string).collect(),
            (None, Some(list)) => list.clone(),
            (None, None) => Vec::new(),
        };
        let granted = SCOPES
            .iter()
            .find(|(name, _)| scopes.iter().any(|s| s == name))
            .map(|(_, surface)| *surface);
        let Some(granted) = granted else {
            return Err(Refusal {
                status: 403,
                code: "insufficient_scope",
                reason: format!(
                    "the access token grants none of the scopes {}, {} or {}",
                    SCOPES[0].0, SCOPES[1].0, SCOPES[2].0
                ),
            });
        };
        Ok(Principal {
            id: format!(
                "{}#{}",
                claims.iss.unwrap_or_default(),
                claims.sub.unwrap_or_default()
            ),
            surface: weaker(granted, server_surface),
        })
    }

    fn file_keys(&self) -> Result<JwkSet, ToolError> {
        let Some(JwksSource::File(path)) = self.settings.oauth.as_ref().map(|o| &o.jwks) else {
            return Err(ToolError::internal("no JWKS file is configured"));
        };
        let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok();
        let mut cache = self
            .keys
            .lock()
            .map_err(|_| ToolError::internal("the JWKS cache is poisoned"))?;
        if let Some(c) = cache.as_ref()
            && c.modified == modified
            && modified.is_some()
        {
            return Ok(c.keys.clone());
        }
        let text = std::fs::read_to_string(path).map_err(|e| {
            ToolError::invalid(
                "--jwks-file",
                format!("cannot read {}: {e}", path.display()),
            )
        })?;
        let keys: JwkSet = serde_json::from_str(&text).map_err(|e| {
            ToolError::invalid(
                "--jwks-file",
                format!("{} is not a JSON Web Key Set: {e}", path.display()),
            )
        })?;
        *cache = Some(CachedKeys {
            modified,
            keys: keys.clone(),
        });
        Ok(keys)
    }

    async fn decoding_key(&self, kid: Option<&str>) -> Result<DecodingKey, String> {
        let keys = match &self.remote {
            Some(remote) => remote.keys(kid).await?,
            None => self
                .file_keys()
                .map_err(|e| format!("the server cannot read its signing keys: {e}"))?,
        };
        let jwk = match kid {
            Some(kid) => keys.find(kid).ok_or_else(|| {
                format!("the access token names key `{kid}`, which the server's JWKS does not hold")
            })?,
            None if keys.keys.len() == 1 => &keys.keys[0],
            None => {
                return Err(
                    "the access token names no key (`kid`) and the JWKS holds several".into(),
                );
            }
        };
        DecodingKey::from_jwk(jwk).map_err(|e| format!("the JWKS key is unusable: {e}"))
    }
}

/// Compares without an early exit, so the time taken does not tell how much matched.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn no_settings_means_anonymous_with_the_server_surface() {
        let a = Authenticator::new(AuthSettings::default()).unwrap();
        let p = a.authenticate(None, Surface::PLAN).await.unwrap();
        assert_eq!(p.surface, Surface::PLAN);
    }

    #[tokio::test]
    async fn static_token_must_match_exactly() {
        let a = Authenticator::new(AuthSettings {
            static_token: Some("0123456789abcdef-secret".into()),
            oauth: None,
        })
        .unwrap();
        assert!(
            a.authenticate(Some("Bearer 0123456789abcdef-secret"), Surface::FULL)
                .await
                .is_ok()
        );
        let r = a
            .authenticate(Some("Bearer 0123456789abcdef-secreT"), Surface::FULL)
            .await
            .unwrap_err();
        assert_eq!((r.status, r.code), (401, "invalid_token"));
        let r = a.authenticate(None, Surface::FULL).await.unwrap_err();
        assert!(r.reason.contains("no access token"), "{r:?}");
        let r = a
            .authenticate(Some("Basic dXNlcjpwYXNz"), Surface::FULL)
            .await
            .unwrap_err();
        assert!(r.reason.contains("not a bearer token"), "{r:?}");
    }

    #[test]
    fn short_token_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t");
        std::fs::write(&path, "short\n").unwrap();
        assert!(read_token_file(&path).is_err());
        std::fs::write(&path, "  a-long-enough-token-value \nignored").unwrap();
        assert_eq!(read_token_file(&path).unwrap(), "a-long-enough-token-value");
    }

    #[test]
    fn the_weaker_surface_wins() {
        assert_eq!(weaker(Surface::FULL, Surface::PLAN), Surface::PLAN);
        assert_eq!(
            weaker(Surface::READ_ONLY, Surface::FULL),
            Surface::READ_ONLY
        );
    }
}

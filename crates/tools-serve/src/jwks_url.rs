//! A JSON Web Key Set fetched over HTTPS (`--jwks-url`), cached as the authorization server's
//! cache headers allow, and fetched again early when a token names a key the cached set does
//! not hold (the server rotated its keys) — but never more often than the minimum refresh
//! interval, so a stream of tokens with made-up key ids cannot turn this server into a
//! client hammering the authorization server.
//!
//! Freshness: `Cache-Control: max-age=N` keeps the set N seconds (at least the minimum
//! interval, at most a day); `no-store`/`no-cache` or no header keeps it for the minimum
//! interval or five minutes, whichever is longer. When a fetch fails, the last good set keeps
//! being used and the failure is logged; `Expires` is not read (servers that send it send
//! `max-age` too).
//!
//! The client is hyper's HTTP/1.1 connection over rustls: the public web's roots, plus the
//! certificates of `--jwks-ca-file` for an authorization server with a private CA.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::http::{Request, Uri, header};
use http_body_util::{BodyExt, Empty, Limited};
use hyper::body::Bytes;
use jsonwebtoken::jwk::JwkSet;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName};
use tokio::sync::Mutex;
use tools_core::ToolError;

/// The largest key set read.
const MAX_JWKS_BYTES: usize = 1024 * 1024;
/// How long one fetch may take, connection included.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a set without cache headers is kept.
const DEFAULT_FRESHNESS: Duration = Duration::from_secs(300);
/// The longest a set is kept, whatever the headers say.
const MAX_FRESHNESS: Duration = Duration::from_secs(24 * 3600);

/// The key set as last fetched.
struct Fetched {
    keys: JwkSet,
    fresh_until: Instant,
}

#[derive(Default)]
struct Cache {
    fetched: Option<Fetched>,
    /// When the last fetch was tried, good or bad.
    last_attempt: Option<Instant>,
}

/// A key set served at an HTTPS URL.
pub(crate) struct RemoteJwks {
    uri: Uri,
    host: String,
    port: u16,
    tls: tokio_rustls::TlsConnector,
    min_refresh: Duration,
    cache: Mutex<Cache>,
}

impl RemoteJwks {
    /// A source for `url` (https only), trusting the public roots and the PEM certificates
    /// in `ca_file`; fetched at most every `min_refresh`.
    pub(crate) fn new(
        url: &str,
        ca_file: Option<&Path>,
        min_refresh: Duration,
    ) -> Result<Self, ToolError> {
        let bad = |why: String| ToolError::invalid("--jwks-url", why);
        let uri: Uri = url
            .parse()
            .map_err(|e| bad(format!("`{url}` is not a URL: {e}")))?;
        if uri.scheme_str() != Some("https") {
            return Err(bad(format!(
                "`{url}` is not an https URL; keys are only fetched over TLS"
            )));
        }
        let host = uri
            .host()
            .ok_or_else(|| bad(format!("`{url}` names no host")))?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let port = uri.port_u16().unwrap_or(443);
        let mut roots = rustls::RootCertStore::empty();
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        if let Some(path) = ca_file {
            let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
                .and_then(|certs| certs.collect())
                .map_err(|e| {
                    ToolError::invalid(
                        "--jwks-ca-file",
                        format!("cannot read PEM certificates from {}: {e}", path.display()),
                    )
                })?;
            if certs.is_empty() {
                return Err(ToolError::invalid(
                    "--jwks-ca-file",
                    format!("{} holds no PEM certificate", path.display()),
                ));
            }
            for cert in certs {
                roots.add(cert).map_err(|e| {
                    ToolError::invalid(
                        "--jwks-ca-file",
                        format!("{} holds an unusable certificate: {e}", path.display()),
                    )
                })?;
            }
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| ToolError::internal(format!("no TLS configuration: {e}")))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(RemoteJwks {
            uri,
            host,
            port,
            tls: tokio_rustls::TlsConnector::from(Arc::new(config)),
            min_refresh,
            cache: Mutex::new(Cache::default()),
        })
    }

    /// The key set to check a token whose header names `kid`: the cached set while it is
    /// fresh and holds that key, else a new fetch when the minimum interval allows one.
    pub(crate) async fn keys(&self, kid: Option<&str>) -> Result<JwkSet, String> {
        let mut cache = self.cache.lock().await;
        let now = Instant::now();
        if let Some(f) = &cache.fetched {
            let holds = kid.is_none_or(|k| f.keys.find(k).is_some());
            if now < f.fresh_until && holds {
                return Ok(f.keys.clone());
            }
        }
        let may_fetch = cache
            .last_attempt
            .is_none_or(|at| now.duration_since(at) >= self.min_refresh);
        if !may_fetch {
            return match &cache.fetched {
                Some(f) => Ok(f.keys.clone()),
                None => Err(format!(
                    "the signing keys at {} could not be fetched; the next try is at most every {} s",
                    self.uri,
                    self.min_refresh.as_secs()
                )),
            };
        }
        cache.last_attempt = Some(now);
        match self.fetch().await {
            Ok((keys, freshness)) => {
                tracing::info!(url = %self.uri, keys = keys.keys.len(), "fetched the JWKS");
                cache.fetched = Some(Fetched {
                    keys: keys.clone(),
                    fresh_until: now + freshness.max(self.min_refresh),
                });
                Ok(keys)
            }
            Err(e) => {
                tracing::warn!(url = %self.uri, "the JWKS could not be fetched: {e}");
                match &cache.fetched {
                    Some(f) => Ok(f.keys.clone()),
                    None => Err(format!(
                        "the signing keys at {} could not be fetched: {e}",
                        self.uri
                    )),
                }
            }
        }
    }

    /// One GET of the set, with the freshness its headers grant.
    async fn fetch(&self) -> Result<(JwkSet, Duration), String> {
        tokio::time::timeout(FETCH_TIMEOUT, self.fetch_unbounded())
            .await
            .map_err(|_| format!("no answer within {} s", FETCH_TIMEOUT.as_secs()))?
    }

    async fn fetch_unbounded(&self) -> Result<(JwkSet, Duration), String> {
        let tcp = tokio::net::TcpStream::connect((self.host.as_str(), self.port))
            .await
            .map_err(|e| format!("cannot connect: {e}"))?;
        let name = ServerName::try_from(self.host.clone())
            .map_err(|e| format!("`{}` is not a usable server name: {e}", self.host))?;
        let tls = self
            .tls
            .connect(name, tcp)
            .await
            .map_err(|e| format!("TLS failed: {e}"))?;
        let (mut sender, connection) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tls))
                .await
                .map_err(|e| format!("HTTP failed: {e}"))?;
        let driver = tokio::spawn(connection);
        let path = self
            .uri
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .to_string();
        let authority = self
            .uri
            .authority()
            .map_or(self.host.clone(), |a| a.to_string());
        let request = Request::get(path)
            .header(header::HOST, authority)
            .header(header::ACCEPT, "application/json")
            .header(
                header::USER_AGENT,
                concat!("agent-tools/", env!("CARGO_PKG_VERSION")),
            )
            .body(Empty::<Bytes>::new())
            .map_err(|e| format!("bad request: {e}"))?;
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| format!("HTTP failed: {e}"))?;
        let status = response.status();
        let freshness = freshness(
            response
                .headers()
                .get(header::CACHE_CONTROL)
                .and_then(|v| v.to_str().ok()),
        );
        let body = Limited::new(response.into_body(), MAX_JWKS_BYTES)
            .collect()
            .await
            .map_err(|e| {
                format!("the answer could not be read (at most {MAX_JWKS_BYTES} bytes): {e}")
            })?
            .to_bytes();
        driver.abort();
        if !status.is_success() {
            return Err(format!("the server answered {status}"));
        }
        let keys: JwkSet = serde_json::from_slice(&body)
            .map_err(|e| format!("the answer is not a JSON Web Key Set: {e}"))?;
        Ok((keys, freshness))
    }
}

/// How long a `Cache-Control` value lets the set be kept.
fn freshness(cache_control: Option<&str>) -> Duration {
    let Some(value) = cache_control else {
        return DEFAULT_FRESHNESS;
    };
    let mut max_age = None;
    for directive in value.split(',').map(str::trim) {
        let lower = directive.to_ascii_lowercase();
        if lower == "no-store" || lower == "no-cache" {
            return Duration::ZERO;
        }
        if let Some(n) = lower.strip_prefix("max-age=") {
            max_age = n.trim_matches('"').parse::<u64>().ok();
        }
    }
    max_age.map_or(DEFAULT_FRESHNESS, |n| {
        Duration::from_secs(n).min(MAX_FRESHNESS)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_headers_decide_freshness() {
        assert_eq!(freshness(None), DEFAULT_FRESHNESS);
        assert_eq!(
            freshness(Some("public, max-age=120")),
            Duration::from_secs(120)
        );
        assert_eq!(freshness(Some("max-age=99999999")), MAX_FRESHNESS);
        assert_eq!(freshness(Some("no-store")), Duration::ZERO);
        assert_eq!(freshness(Some("private")), DEFAULT_FRESHNESS);
    }

    #[test]
    fn only_https_urls_are_fetched() {
        let err = RemoteJwks::new("http://auth.example/jwks", None, Duration::from_secs(1))
            .err()
            .unwrap();
        assert!(err.to_string().contains("not an https URL"), "{err}");
        assert!(RemoteJwks::new("https://auth.example/jwks", None, Duration::from_secs(1)).is_ok());
    }
}

//! The `Origin` check every HTTP request passes first (streamable HTTP transport: a server
//! validates `Origin` and answers an invalid one with 403), so a web page the user happens
//! to open cannot drive the tools through the browser.
//!
//! A request without `Origin` comes from a program, not a browser, and is served. One with
//! an `Origin` is served only when that origin is the server's own — `http`, the port it
//! listens on, and the address it listens on (for a loopback address `localhost`,
//! `127.0.0.1` and `[::1]` alike) — or is listed with `--allow-origin`. Anything else gets
//! HTTP 403 with a JSON-RPC error naming the origin, before any other check, so it changes
//! no state. A server listening on every interface (`0.0.0.0`) knows no name of its own
//! beyond loopback: a page served under another name must be listed.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use tools_core::ToolError;

/// One origin, compared by scheme, host and port (the default port filled in).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Origin {
    scheme: String,
    host: String,
    port: u16,
}

impl Origin {
    /// Parses `scheme://host[:port]`; anything else (a path, `null`, no host) is `None`.
    fn parse(text: &str) -> Option<Origin> {
        let url = url::Url::parse(text).ok()?;
        if !matches!(url.scheme(), "http" | "https")
            || !matches!(url.path(), "" | "/")
            || url.query().is_some()
            || url.fragment().is_some()
            || !url.username().is_empty()
        {
            return None;
        }
        let host = match url.host()? {
            url::Host::Domain(d) => d.to_ascii_lowercase(),
            url::Host::Ipv4(ip) => ip.to_string(),
            url::Host::Ipv6(ip) => ip.to_string(),
        };
        Some(Origin {
            scheme: url.scheme().to_string(),
            host,
            port: url.port_or_known_default()?,
        })
    }
}

/// Which origins are served.
#[derive(Debug, Clone)]
pub(crate) struct OriginPolicy {
    /// The address the server listens on.
    own: SocketAddr,
    /// `--allow-origin` entries.
    allowed: Vec<Origin>,
}

impl OriginPolicy {
    /// The policy of a server bound to `own`; every `allowed` entry must be an origin
    /// (`http://host:port`), else the operator is told which is not.
    pub(crate) fn new(own: SocketAddr, allowed: &[String]) -> Result<Self, ToolError> {
        let allowed = allowed
            .iter()
            .map(|text| {
                Origin::parse(text.trim_end_matches('/')).ok_or_else(|| {
                    ToolError::invalid(
                        "--allow-origin",
                        format!(
                            "`{text}` is not an origin; write the scheme, host and port a \
                             browser sends, e.g. http://localhost:5173"
                        ),
                    )
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(OriginPolicy { own, allowed })
    }

    /// The server's own origin, as a browser on this machine would name it.
    fn own_text(&self) -> String {
        let host = match self.own.ip() {
            ip if ip.is_loopback() || ip.is_unspecified() => "localhost".to_string(),
            IpAddr::V6(ip) => format!("[{ip}]"),
            ip => ip.to_string(),
        };
        format!("http://{host}:{}", self.own.port())
    }

    /// Whether a request whose `Origin` header is `text` is served.
    fn allows(&self, text: &str) -> bool {
        let Some(origin) = Origin::parse(text) else {
            return false;
        };
        self.is_own(&origin) || self.allowed.contains(&origin)
    }

    fn is_own(&self, origin: &Origin) -> bool {
        if origin.scheme != "http" || origin.port != self.own.port() {
            return false;
        }
        let loopback_name = matches!(origin.host.as_str(), "localhost" | "127.0.0.1" | "::1");
        let ip = self.own.ip();
        (loopback_name && (ip.is_loopback() || ip.is_unspecified()))
            || (!ip.is_unspecified() && origin.host == ip.to_string())
    }
}

/// The middleware: refuses a request whose `Origin` the policy does not serve.
pub(crate) async fn check(
    State(policy): State<Arc<OriginPolicy>>,
    request: Request,
    next: Next,
) -> Response {
    let Some(value) = request.headers().get(header::ORIGIN) else {
        return next.run(request).await;
    };
    let text = String::from_utf8_lossy(value.as_bytes()).into_owned();
    if policy.allows(&text) {
        return next.run(request).await;
    }
    let shown: String = text.chars().take(200).collect();
    tracing::info!(origin = shown, "request refused: foreign origin");
    (
        StatusCode::FORBIDDEN,
        axum::Json(json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": {
                "code": -32000,
                "message": format!(
                    "Forbidden: origin {shown:?} is not this server's own ({}) and is not \
                     allowed with --allow-origin",
                    policy.own_text()
                ),
            },
        })),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(own: &str, allowed: &[&str]) -> OriginPolicy {
        let allowed: Vec<String> = allowed.iter().map(|s| s.to_string()).collect();
        OriginPolicy::new(own.parse().unwrap(), &allowed).unwrap()
    }

    #[test]
    fn the_own_origin_is_the_listening_port_under_any_loopback_name() {
        let p = policy("127.0.0.1:8080", &[]);
        for ok in [
            "http://127.0.0.1:8080",
            "http://localhost:8080",
            "http://LOCALHOST:8080",
            "http://[::1]:8080",
        ] {
            assert!(p.allows(ok), "{ok}");
        }
        for refused in [
            "http://evil.example",
            "http://localhost:8081",
            "https://localhost:8080",
            "http://127.0.0.1:8080/page",
            "null",
            "",
            "localhost:8080",
        ] {
            assert!(!p.allows(refused), "{refused}");
        }
        assert_eq!(p.own_text(), "http://localhost:8080");
    }

    #[test]
    fn a_specific_address_is_its_own_origin_and_listed_origins_are_served() {
        let p = policy(
            "10.0.0.5:9000",
            &["https://app.example.com", "http://localhost:5173/"],
        );
        assert!(p.allows("http://10.0.0.5:9000"));
        assert!(
            !p.allows("http://localhost:9000"),
            "not listening on loopback"
        );
        assert!(p.allows("https://app.example.com"));
        assert!(p.allows("https://app.example.com:443"));
        assert!(!p.allows("http://app.example.com"));
        assert!(p.allows("http://localhost:5173"));
        assert!(!p.allows("http://localhost:5174"));
        let any = policy("0.0.0.0:9000", &[]);
        assert!(any.allows("http://127.0.0.1:9000"));
        assert!(!any.allows("http://0.0.0.0:9000"));
    }

    #[test]
    fn an_allowed_entry_that_is_not_an_origin_is_refused_by_name() {
        let err = OriginPolicy::new("127.0.0.1:1".parse().unwrap(), &["example.com".into()])
            .err()
            .unwrap();
        assert!(
            err.to_string().contains("`example.com` is not an origin"),
            "{err}"
        );
        assert!(OriginPolicy::new("127.0.0.1:1".parse().unwrap(), &["http://h/x".into()]).is_err());
    }
}

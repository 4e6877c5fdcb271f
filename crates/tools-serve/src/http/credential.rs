//! Where a request's credential is found. `Authorization` by default; with a credential
//! header configured (`--auth-header`), that header first. A router that consumes
//! `Authorization` itself and drops it before forwarding (agent-sandbox's sandbox-router
//! does) passes other headers through, so a client behind it presents its token there.

use std::borrow::Cow;

use axum::http::{HeaderMap, HeaderName, header};

use super::AppState;
use crate::auth::Refusal;

/// Checks a credential header name given by the operator: a valid header name that is not
/// one a proxy rewrites or consumes on the way.
pub(crate) fn parse_header_name(name: &str) -> Result<HeaderName, String> {
    let parsed = HeaderName::from_bytes(name.trim().as_bytes())
        .map_err(|_| format!("`{name}` is not a valid HTTP header name"))?;
    if [header::AUTHORIZATION, header::HOST, header::COOKIE].contains(&parsed) {
        return Err(format!(
            "`{name}` is read anyway or rewritten by proxies; name the header your router \
             passes through, e.g. X-Agent-Tools-Authorization"
        ));
    }
    Ok(parsed)
}

/// The credential the request presents, as an `Authorization` value (`Bearer TOKEN`):
/// from the configured header when it is there (a bare token is taken as a bearer token),
/// else from `Authorization`. A request with neither, to a server that requires a
/// credential and reads a header of its own, is refused naming both.
pub(super) fn presented<'a>(
    state: &AppState,
    headers: &'a HeaderMap,
) -> Result<Option<Cow<'a, str>>, Refusal> {
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(Cow::Borrowed);
    let Some(name) = &state.credential_header else {
        return Ok(authorization);
    };
    match headers.get(name) {
        Some(value) => {
            let value = value.to_str().map_err(|_| Refusal {
                status: 401,
                code: "invalid_request",
                reason: format!("the {name} header is not text"),
            })?;
            let value = value.trim();
            if value.starts_with("Bearer ") || value.starts_with("bearer ") {
                Ok(Some(Cow::Borrowed(value)))
            } else {
                Ok(Some(Cow::Owned(format!("Bearer {value}"))))
            }
        }
        None if authorization.is_none() && state.auth.settings().required() => Err(Refusal {
            status: 401,
            code: "invalid_request",
            reason: format!(
                "no access token: send `{name}: Bearer <token>` (or `Authorization: Bearer <token>` \
                 where nothing in between drops it)"
            ),
        }),
        None => Ok(authorization),
    }
}

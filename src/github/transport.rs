//! One HTTP exchange with the GitHub API over octocrab's raw calls, and the mapping of every
//! failure to a [`GithubError`].
//!
//! octocrab's typed calls hide headers (rate-limit reset, pagination `Link`) and its retry layer
//! re-sends POSTs, so only its transport (TLS, auth header, base URI, redirects) is used. GETs are
//! retried here on transient failures; POST and PATCH never are, so a comment is never posted twice.

use std::error::Error as StdError;
use std::time::Duration;

use bytes::Bytes;
use chrono::{DateTime, Utc};
use http::{HeaderMap, Method, StatusCode};
use http_body_util::{BodyExt, Limited};
use octocrab::Octocrab;

use super::errors::GithubError;

/// GitHub's JSON media type, asked for unless a call wants another.
const JSON_MEDIA_TYPE: &str = "application/vnd.github+json";

/// Larger API answers are refused rather than buffered.
const MAX_BODY: usize = 32 * 1024 * 1024;

/// Waits before the 2nd and 3rd attempt of a GET.
const GET_BACKOFF: [Duration; 2] = [Duration::from_millis(200), Duration::from_millis(800)];

/// A rate limit that resets sooner than this is waited out (GETs only).
const SHORT_RESET: Duration = Duration::from_secs(3);

/// What a request is for, for error messages.
pub(crate) struct Call<'a> {
    /// `reading pull request acme/widget#7`
    pub action: &'a str,
    /// What a 403/404 is about: `acme/widget`.
    pub resource: &'a str,
}

/// A successful answer (or, for a conditional GET, a `304 Not Modified`).
pub(crate) struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Reply {
    pub(crate) fn json<T: serde::de::DeserializeOwned>(&self, call: &Call<'_>) -> Result<T, GithubError> {
        serde_json::from_slice(&self.body).map_err(|e| GithubError::InvalidResponse {
            action: call.action.to_owned(),
            detail: format!("the JSON does not have the expected shape: {e}"),
        })
    }

    /// The `rel="next"` URL of the pagination `Link` header.
    pub(crate) fn next_link(&self) -> Option<String> {
        let header = self.headers.get(http::header::LINK)?.to_str().ok()?;
        header.split(',').find_map(|part| {
            let (url, params) = part.trim().strip_prefix('<')?.split_once('>')?;
            params.split(';').any(|p| p.trim().eq_ignore_ascii_case("rel=\"next\"")).then(|| url.to_owned())
        })
    }
}

pub(crate) struct Transport {
    octo: Octocrab,
    /// The API base without a trailing slash: `https://api.github.com`, `https://h/api/v3`.
    base: String,
    /// `scheme://authority` of the base, lowercase: pagination links must stay on it.
    origin: String,
    timeout: Duration,
    token: Option<String>,
}

impl Transport {
    pub(crate) fn new(octo: Octocrab, base: String, origin: String, timeout: Duration, token: Option<String>) -> Self {
        Transport { octo, base, origin, timeout, token }
    }

    pub(crate) fn base(&self) -> &str {
        &self.base
    }

    /// The absolute URL of an API path (`/repos/...`) or of a pagination link, refusing links
    /// to any other origin: the token must never be sent elsewhere.
    pub(crate) fn url(&self, target: &str, call: &Call<'_>) -> Result<String, GithubError> {
        if target.starts_with('/') {
            return Ok(format!("{}{target}", self.base));
        }
        let on_origin = target.get(..self.origin.len()).is_some_and(|p| p.eq_ignore_ascii_case(&self.origin))
            && target[self.origin.len()..].starts_with('/');
        if on_origin {
            Ok(target.to_owned())
        } else {
            Err(GithubError::InvalidResponse {
                action: call.action.to_owned(),
                detail: format!("pagination link {:?} leaves the API at {}", self.scrub(target), self.origin),
            })
        }
    }

    /// GET with up to three attempts on transport errors, 5xx and soon-resetting rate limits.
    pub(crate) async fn get(&self, target: &str, call: &Call<'_>) -> Result<Reply, GithubError> {
        self.get_with(target, None, call).await
    }

    /// A GET of another media type than JSON (`application/vnd.github.diff`).
    pub(crate) async fn get_as(&self, target: &str, media_type: &str, call: &Call<'_>) -> Result<Reply, GithubError> {
        let url = self.url(target, call)?;
        let mut headers = HeaderMap::new();
        let value = http::HeaderValue::from_str(media_type)
            .map_err(|_| GithubError::InvalidInput { what: "media type", detail: media_type.to_owned() })?;
        headers.insert(http::header::ACCEPT, value);
        self.get_retrying(&url, &headers, call).await
    }

    /// A conditional GET: `None` when GitHub answers `304 Not Modified` to `etag` (such an
    /// answer does not count against the rate limit), else the fresh reply.
    pub(crate) async fn get_if_changed(
        &self,
        target: &str,
        etag: Option<&str>,
        call: &Call<'_>,
    ) -> Result<Option<Reply>, GithubError> {
        let reply = self.get_with(target, etag, call).await?;
        Ok((reply.status != StatusCode::NOT_MODIFIED).then_some(reply))
    }

    async fn get_with(&self, target: &str, etag: Option<&str>, call: &Call<'_>) -> Result<Reply, GithubError> {
        let url = self.url(target, call)?;
        let mut headers = HeaderMap::new();
        if let Some(value) = etag.and_then(|e| http::HeaderValue::from_str(e).ok()) {
            headers.insert(http::header::IF_NONE_MATCH, value);
        }
        self.get_retrying(&url, &headers, call).await
    }

    async fn get_retrying(&self, url: &str, headers: &HeaderMap, call: &Call<'_>) -> Result<Reply, GithubError> {
        let mut attempt = 0;
        loop {
            let err = match self.attempt(Method::GET, url, None, Some(headers), call).await {
                Ok(reply) => return Ok(reply),
                Err(err) => err,
            };
            let Some(wait) = GET_BACKOFF.get(attempt).and_then(|backoff| retry_wait(&err, *backoff)) else {
                return Err(err);
            };
            tracing::debug!(target: "forgeloop::github", "retrying GET after {wait:?}: {err}");
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }

    /// POST or PATCH exactly once.
    pub(crate) async fn send(
        &self,
        method: Method,
        target: &str,
        body: &serde_json::Value,
        call: &Call<'_>,
    ) -> Result<Reply, GithubError> {
        let url = self.url(target, call)?;
        self.attempt(method, &url, Some(body), None, call).await
    }

    async fn attempt(
        &self,
        method: Method,
        url: &str,
        body: Option<&serde_json::Value>,
        extra: Option<&HeaderMap>,
        call: &Call<'_>,
    ) -> Result<Reply, GithubError> {
        let conditional = extra.is_some_and(|h| h.contains_key(http::header::IF_NONE_MATCH));
        let exchange = async {
            // One `Accept` per request: GitHub's JSON unless the caller asks for another media
            // type (a diff). octocrab follows redirects (tower-http's default policy drops
            // `Authorization` on a redirect to another origin, as a job log's signed URL is:
            // design §5.7).
            let mut builder = http::Request::builder().method(method.clone()).uri(url);
            if extra.is_none_or(|h| !h.contains_key(http::header::ACCEPT)) {
                builder = builder.header(http::header::ACCEPT, JSON_MEDIA_TYPE);
            }
            for (name, value) in extra.into_iter().flatten() {
                builder = builder.header(name, value);
            }
            let request = self.octo.build_request(builder, body).map_err(|e| self.transport_error(&e, call))?;
            let response = self.octo.execute(request).await.map_err(|e| self.transport_error(&e, call))?;
            let (parts, body) = response.into_parts();
            let bytes = Limited::new(body, MAX_BODY)
                .collect()
                .await
                .map_err(|e| self.transport_error(e.as_ref(), call))?
                .to_bytes();
            Ok::<_, GithubError>((parts.status, parts.headers, bytes))
        };
        let (status, headers, body) = match tokio::time::timeout(self.timeout, exchange).await {
            Ok(result) => result?,
            Err(_) => {
                return Err(GithubError::Timeout {
                    action: call.action.to_owned(),
                    api: self.base.clone(),
                    after: self.timeout,
                });
            }
        };
        if status.is_success() || (status == StatusCode::NOT_MODIFIED && conditional) {
            Ok(Reply { status, headers, body })
        } else {
            Err(self.status_error(status, &headers, &body, call))
        }
    }

    fn transport_error(&self, err: &(dyn StdError + 'static), call: &Call<'_>) -> GithubError {
        let mut parts: Vec<String> = Vec::new();
        let mut timed_out = false;
        let mut current = Some(err);
        while let Some(e) = current {
            if let Some(io) = e.downcast_ref::<std::io::Error>() {
                timed_out |= io.kind() == std::io::ErrorKind::TimedOut;
            }
            let text = e.to_string();
            if !text.is_empty() && !parts.last().is_some_and(|prev| prev.contains(&text)) {
                parts.push(text);
            }
            current = e.source();
        }
        let action = call.action.to_owned();
        if timed_out {
            return GithubError::Timeout { action, api: self.base.clone(), after: self.timeout };
        }
        GithubError::Unreachable { action, api: self.base.clone(), detail: self.scrub(&parts.join(": ")) }
    }

    fn status_error(&self, status: StatusCode, headers: &HeaderMap, body: &[u8], call: &Call<'_>) -> GithubError {
        let message = self.scrub(&github_message(status, body));
        let action = call.action.to_owned();
        let resource = call.resource.to_owned();
        let code = status.as_u16();
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
        let rate_limited = code == 429
            || (code == 403
                && (header("x-ratelimit-remaining") == Some("0")
                    || header("retry-after").is_some()
                    || message.to_ascii_lowercase().contains("rate limit")));
        if rate_limited {
            return GithubError::RateLimited { action, status: code, reset_at: reset_at(headers) };
        }
        match code {
            401 => GithubError::Unauthorized { action, message },
            403 => GithubError::Forbidden { action, resource, message },
            404 => GithubError::NotFound { action, resource },
            422 => GithubError::Unprocessable { action, message },
            500..=599 => GithubError::Server { action, status: code, message },
            _ => GithubError::Http { action, status: code, message },
        }
    }

    /// Removes the token from text that came from elsewhere.
    pub(crate) fn scrub(&self, text: &str) -> String {
        match &self.token {
            Some(token) if !token.is_empty() => text.replace(token.as_str(), "[REDACTED]"),
            _ => text.to_owned(),
        }
    }
}

/// How long to wait before retrying a failed GET, or `None` when it must not be retried.
fn retry_wait(err: &GithubError, backoff: Duration) -> Option<Duration> {
    match err {
        GithubError::Unreachable { .. } | GithubError::Server { .. } => Some(backoff),
        GithubError::RateLimited { reset_at: Some(at), .. } => {
            let until = (*at - Utc::now()).to_std().unwrap_or(Duration::ZERO);
            (until <= SHORT_RESET).then(|| until.max(backoff))
        }
        _ => None,
    }
}

/// GitHub's `message` plus the `errors[].message|code` details, or the start of a non-JSON body.
fn github_message(status: StatusCode, body: &[u8]) -> String {
    let fallback = || status.canonical_reason().unwrap_or("no message").to_owned();
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(body) else {
        let text = String::from_utf8_lossy(body);
        let text: String = text.trim().chars().take(200).collect();
        return if text.is_empty() { fallback() } else { text };
    };
    let mut message = value.get("message").and_then(|m| m.as_str()).map(str::to_owned).unwrap_or_else(fallback);
    let details: Vec<String> = value
        .get("errors")
        .and_then(|e| e.as_array())
        .into_iter()
        .flatten()
        .filter_map(|e| match e {
            serde_json::Value::String(s) => Some(s.clone()),
            other => other.get("message").or_else(|| other.get("code")).and_then(|m| m.as_str()).map(str::to_owned),
        })
        .collect();
    if !details.is_empty() {
        message = format!("{message} ({})", details.join("; "));
    }
    message
}

/// When a rate limit resets: `x-ratelimit-reset` (epoch seconds) or `retry-after` (seconds).
fn reset_at(headers: &HeaderMap) -> Option<DateTime<Utc>> {
    let number = |name: &str| headers.get(name)?.to_str().ok()?.trim().parse::<i64>().ok();
    if let Some(after) = number("retry-after") {
        return Utc::now().checked_add_signed(chrono::TimeDelta::try_seconds(after)?);
    }
    DateTime::from_timestamp(number("x-ratelimit-reset")?, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_message_includes_validation_details() {
        let body = br#"{"message":"Repository creation failed.","errors":[{"resource":"Repository","code":"custom","field":"name","message":"name already exists on this account"}]}"#;
        assert_eq!(
            github_message(StatusCode::UNPROCESSABLE_ENTITY, body),
            "Repository creation failed. (name already exists on this account)"
        );
        assert_eq!(github_message(StatusCode::BAD_GATEWAY, b""), "Bad Gateway");
        assert_eq!(github_message(StatusCode::BAD_GATEWAY, b"<html>oops</html>"), "<html>oops</html>");
    }

    #[test]
    fn only_transient_failures_are_retried() {
        let backoff = Duration::from_millis(200);
        let server = GithubError::Server { action: "a".into(), status: 502, message: "m".into() };
        assert_eq!(retry_wait(&server, backoff), Some(backoff));
        let far = Utc::now() + chrono::TimeDelta::try_hours(1).unwrap();
        let limited = GithubError::RateLimited { action: "a".into(), status: 403, reset_at: Some(far) };
        assert_eq!(retry_wait(&limited, backoff), None);
        let timeout = GithubError::Timeout { action: "a".into(), api: "x".into(), after: backoff };
        assert_eq!(retry_wait(&timeout, backoff), None);
        let missing = GithubError::NotFound { action: "a".into(), resource: "r".into() };
        assert_eq!(retry_wait(&missing, backoff), None);
    }
}

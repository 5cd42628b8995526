//! HTTP plumbing every part of the server shares: the response type, JSON and plain-text
//! answers, GitHub's error JSON, and reading a request body up to a limit. Leaf module: the
//! server and its handlers use it, it uses nothing of theirs.

use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use serde_json::{Value, json};

/// Every answer the emulator gives.
pub(crate) type Resp = Response<Full<Bytes>>;

/// The `documentation_url` of GitHub's error JSON.
pub(crate) const DOCS: &str = "https://docs.github.com/rest";

pub(crate) fn json_response(status: StatusCode, value: &Value) -> Resp {
    let body = serde_json::to_vec_pretty(value).unwrap_or_default();
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(http::header::CONTENT_TYPE, HeaderValue::from_static("application/json; charset=utf-8"));
    response
}

/// A list answer with GitHub's `ETag` (a hash of the body): `304 Not Modified`, without a body,
/// when the request's `If-None-Match` names it (or is `*`).
pub(crate) fn json_response_etag(value: &Value, request: &http::HeaderMap) -> Resp {
    use std::hash::{Hash, Hasher};
    let body = serde_json::to_vec_pretty(value).unwrap_or_default();
    let mut hasher = std::hash::DefaultHasher::new();
    body.hash(&mut hasher);
    let etag = format!("W/\"{:016x}\"", hasher.finish());
    let matches = request
        .get_all(http::header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .any(|tag| tag == "*" || tag.trim_start_matches("W/") == etag.trim_start_matches("W/"));
    let mut response = if matches {
        let mut response = Response::new(Full::new(Bytes::new()));
        *response.status_mut() = StatusCode::NOT_MODIFIED;
        response
    } else {
        let mut response = Response::new(Full::new(Bytes::from(body)));
        response
            .headers_mut()
            .insert(http::header::CONTENT_TYPE, HeaderValue::from_static("application/json; charset=utf-8"));
        response
    };
    if let Ok(value) = HeaderValue::from_str(&etag) {
        response.headers_mut().insert(http::header::ETAG, value);
    }
    response
}

/// GitHub's error JSON.
pub(crate) fn error_json(status: StatusCode, message: &str) -> Resp {
    json_response(status, &json!({ "message": message, "documentation_url": DOCS, "status": status.as_str() }))
}

pub(crate) fn plain(status: StatusCode, text: &str) -> Resp {
    let mut response = Response::new(Full::new(Bytes::from(text.to_owned())));
    *response.status_mut() = status;
    response.headers_mut().insert(http::header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    response
}

/// A body of any bytes (a diff need not be UTF-8) with its media type.
pub(crate) fn bytes_response(status: StatusCode, content_type: &'static str, body: Vec<u8>) -> Resp {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(http::header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// `%XX` decoded (and `+` as a space in a query), leaving a malformed escape as it is: a client
/// may encode a `/` in a branch name or a space in a check name, or not.
pub(crate) fn percent_decode(raw: &str, plus_is_space: bool) -> String {
    // `+` first, so an encoded plus (`%2B`) stays a plus.
    let raw = if plus_is_space { raw.replace('+', " ") } else { raw.to_owned() };
    percent_encoding::percent_decode_str(&raw).decode_utf8_lossy().into_owned()
}

/// The whole body, or the 413 to answer when it is larger than `limit` (or unreadable).
pub(crate) async fn read_body(body: Incoming, limit: usize) -> Result<Bytes, Resp> {
    match Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(_) => Err(error_json(StatusCode::PAYLOAD_TOO_LARGE, "Request body too large or unreadable")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_githubs_json() {
        let response = error_json(StatusCode::NOT_FOUND, "Not Found");
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
        assert_eq!(response.headers()["content-type"], "application/json; charset=utf-8");
        let plain = plain(StatusCode::UNAUTHORIZED, "no\n");
        assert_eq!(plain.headers()["content-type"], "text/plain; charset=utf-8");
    }

    #[test]
    fn escapes_are_decoded_and_bad_ones_kept() {
        assert_eq!(percent_decode("feature%2Fx", false), "feature/x");
        assert_eq!(percent_decode("a+b%20c", false), "a+b c");
        assert_eq!(percent_decode("a+b", true), "a b");
        assert_eq!(percent_decode("%zz%4%", false), "%zz%4%");
        assert_eq!(percent_decode("%ff%", false), "\u{fffd}%");
    }
}

//! The emulator's HTTP server: accept loop, request log, fault injection, and dispatch to the
//! REST API, smart-HTTP git or the admin API. Top of the request path: it uses the handlers
//! (`admin`, `api`, `git_http`) and `http_util`; none of them uses it.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use http::{HeaderValue, Method, Request, StatusCode};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::json;
use tokio::net::TcpListener;
use tokio::task::JoinSet;

use crate::http_util::{DOCS, Resp, error_json, json_response, percent_decode, plain, read_body};
use crate::model::{Fault, LogHostRequest};
use crate::ops::Core;
use crate::{admin, api, git_http};

/// Request bodies beyond these sizes get 413.
const API_BODY_LIMIT: usize = 8 * 1024 * 1024;
const GIT_BODY_LIMIT: usize = 512 * 1024 * 1024;
/// The log host keeps at most this many requests.
const MAX_LOG_HOST_LOGGED: usize = 10_000;

/// Serves the API until the task is aborted; aborting drops every open connection with it.
pub(crate) async fn serve(listener: TcpListener, core: Arc<Core>) {
    accept_loop(listener, core, handle).await;
}

/// The log host (the second listener): `GET /logs/{job_id}?sig=...` answers the job's log text
/// to anyone holding the signed URL, with no other auth, as GitHub's log storage does. Every
/// request is recorded (header names only) first.
pub(crate) async fn serve_logs(listener: TcpListener, core: Arc<Core>) {
    accept_loop(listener, core, |core, request| async move { handle_log(&core, &request) }).await;
}

/// Accepts connections and answers each request with `answer`, until the task is aborted.
async fn accept_loop<F, Fut>(listener: TcpListener, core: Arc<Core>, answer: F)
where
    F: Fn(Arc<Core>, Request<Incoming>) -> Fut + Copy + Send + 'static,
    Fut: std::future::Future<Output = Resp> + Send + 'static,
{
    let mut connections = JoinSet::new();
    loop {
        while connections.try_join_next().is_some() {}
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(_) => {
                // Out of file descriptors or similar: back off instead of spinning.
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let core = core.clone();
        connections.spawn(async move {
            let service = service_fn(move |request| {
                let core = core.clone();
                async move { Ok::<_, Infallible>(answer(core, request).await) }
            });
            let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
        });
    }
}

fn handle_log(core: &Core, request: &Request<Incoming>) -> Resp {
    let path = request.uri().path().to_owned();
    let query = request.uri().query().unwrap_or("");
    let job = path.strip_prefix("/logs/").and_then(|id| id.parse::<u64>().ok());
    let signed = job.is_some_and(|id| query.split('&').any(|pair| pair == format!("sig={}", core.log_signature(id))));
    let mut state = core.state();
    let response = match job.and_then(|id| state.job_logs.get(&id)) {
        Some(_) if request.method() != Method::GET => plain(StatusCode::METHOD_NOT_ALLOWED, "GET only\n"),
        Some(_) if !signed => {
            plain(StatusCode::FORBIDDEN, "AuthenticationFailed: the URL's signature does not match\n")
        }
        Some(text) => plain(StatusCode::OK, text),
        None => plain(StatusCode::NOT_FOUND, "BlobNotFound\n"),
    };
    if state.log_requests.len() >= MAX_LOG_HOST_LOGGED {
        state.log_requests.remove(0);
    }
    state.log_requests.push(LogHostRequest {
        method: request.method().as_str().to_owned(),
        path,
        header_names: request.headers().keys().map(|name| name.as_str().to_owned()).collect(),
        status: response.status().as_u16(),
    });
    response
}

async fn handle(core: Arc<Core>, request: Request<Incoming>) -> Resp {
    let method = request.method().clone();
    let raw_path = request.uri().path().to_owned();
    let query = request.uri().query().unwrap_or("").to_owned();
    if raw_path == "/_emulator" || raw_path.starts_with("/_emulator/") {
        if let Some(refused) = admin::refusal(&core, &method, request.headers()) {
            return refused;
        }
        return match read_body(request.into_body(), API_BODY_LIMIT).await {
            Ok(body) => admin::handle(&core, &method, &raw_path, &query, body).await,
            Err(response) => response,
        };
    }
    let credentials = request.headers().contains_key(http::header::AUTHORIZATION);
    let seq = core.log_request(method.as_str(), &raw_path, &query, credentials);
    let response = respond(&core, request, &method, &raw_path, &query).await;
    let bytes = hyper::body::Body::size_hint(response.body()).exact().unwrap_or(0);
    core.finish_request(seq, response.status().as_u16(), bytes);
    response
}

async fn respond(core: &Arc<Core>, request: Request<Incoming>, method: &Method, raw_path: &str, query: &str) -> Resp {
    let (prefix, path) = match raw_path.strip_prefix("/api/v3") {
        Some(rest) if rest.starts_with('/') => ("/api/v3", rest),
        _ => ("", raw_path),
    };
    let (delay, injected) = take_faults(core, method, path);
    if let Some(delay) = delay {
        tokio::time::sleep(delay).await;
    }
    if let Some(response) = injected {
        return response;
    }
    let (parts, body) = request.into_parts();
    let git = git_http::is_git_path(path);
    let body = match read_body(body, if git { GIT_BODY_LIMIT } else { API_BODY_LIMIT }).await {
        Ok(body) => body,
        Err(response) => return response,
    };
    if git {
        git_http::handle(core, method, path, query, &parts.headers, body).await
    } else {
        api::handle(core, method, prefix, path, query, &parts.headers, body).await
    }
}

/// Whether a fault applies to a request. The path matches as received or percent-decoded, so
/// a fault on `/repos/o/r/rules/branches/feature/x` also catches `feature%2Fx`.
fn fault_matches(method: &Option<String>, pattern: &str, request_method: &Method, path: &str) -> bool {
    let method_ok = method.as_ref().is_none_or(|m| m.eq_ignore_ascii_case(request_method.as_str()));
    let path_ok = |path: &str| match pattern.strip_suffix('*') {
        Some(prefix) => path.starts_with(prefix),
        None => path == pattern,
    };
    method_ok && (path_ok(path) || (path.contains('%') && path_ok(&percent_decode(path, false))))
}

/// Consumes the faults matching this request: the longest delay, and the first injected answer.
fn take_faults(core: &Core, method: &Method, path: &str) -> (Option<Duration>, Option<Resp>) {
    let mut state = core.state();
    let mut delay: Option<Duration> = None;
    let mut answer: Option<Resp> = None;
    let used = state.rate_used;
    for active in state.faults.iter_mut().filter(|f| f.remaining > 0) {
        match &active.fault {
            Fault::Delay { method: m, path: p, delay_ms, .. } if fault_matches(m, p, method, path) => {
                active.remaining -= 1;
                let this = Duration::from_millis(*delay_ms);
                delay = Some(delay.map_or(this, |d| d.max(this)));
            }
            Fault::Status { method: m, path: p, status, .. }
                if answer.is_none() && fault_matches(m, p, method, path) =>
            {
                active.remaining -= 1;
                let status = StatusCode::from_u16(*status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
                let message = match status {
                    StatusCode::UNAUTHORIZED => "Bad credentials",
                    other => other.canonical_reason().unwrap_or("Error"),
                };
                answer = Some(error_json(status, message));
            }
            Fault::RateLimit { method: m, path: p, reset_after_secs, status, .. }
                if answer.is_none() && fault_matches(m, p, method, path) =>
            {
                active.remaining -= 1;
                answer = Some(rate_limited(*status, *reset_after_secs));
            }
            Fault::SecondaryRateLimit { method: m, path: p, retry_after_secs, .. }
                if answer.is_none() && fault_matches(m, p, method, path) =>
            {
                active.remaining -= 1;
                answer = Some(secondary_rate_limited(*retry_after_secs, used));
            }
            _ => {}
        }
    }
    state.faults.retain(|f| f.remaining > 0);
    (delay, answer)
}

/// GitHub's secondary (abuse) limit: 403 with `retry-after`, while the primary count still has
/// room (`x-ratelimit-remaining` above 0), which is how a client tells the two apart.
fn secondary_rate_limited(retry_after_secs: u64, used: u64) -> Resp {
    let mut response = json_response(
        StatusCode::FORBIDDEN,
        &json!({
            "message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
            "documentation_url": format!("{DOCS}/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"),
            "status": "403",
        }),
    );
    response.headers_mut().insert(http::header::RETRY_AFTER, HeaderValue::from(retry_after_secs));
    api::add_rate_headers(&mut response, used);
    response
}

fn rate_limited(status: u16, reset_after_secs: u64) -> Resp {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::FORBIDDEN);
    let reset = chrono::Utc::now().timestamp().saturating_add(i64::try_from(reset_after_secs).unwrap_or(i64::MAX / 2));
    let mut response = json_response(
        status,
        &json!({
            "message": "API rate limit exceeded for user ID 1. If you reach out to GitHub Support for help, please include the request ID.",
            "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
            "status": status.as_str(),
        }),
    );
    let headers = response.headers_mut();
    for (name, value) in [
        ("x-ratelimit-limit", "5000".to_owned()),
        ("x-ratelimit-remaining", "0".to_owned()),
        ("x-ratelimit-used", "5000".to_owned()),
        ("x-ratelimit-reset", reset.to_string()),
        ("x-ratelimit-resource", "core".to_owned()),
    ] {
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(name, value);
        }
    }
    response
}

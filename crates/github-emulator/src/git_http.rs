//! Smart-HTTP git at `/{owner}/{repo}.git/...`, served by running `git http-backend` as a CGI
//! program (the recipe of docs/design.md §13.4, in Rust).
//!
//! Access as on GitHub: public repositories are readable anonymously; private ones, and every
//! push, need HTTP Basic auth whose password is the token (any username, e.g.
//! `x-access-token`); otherwise 401 with `WWW-Authenticate: Basic realm="git"`.
//!
//! A handler: the server calls it; it uses `ops`, `git` (the environment) and `http_util`.

use std::sync::Arc;

use base64::Engine;
use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method, Response, StatusCode};
use http_body_util::Full;
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

use crate::git;
use crate::http_util::{Resp, plain};
use crate::names::RepoName;
use crate::ops::Core;

/// True for `/{owner}/{name}.git` and below.
pub(crate) fn is_git_path(path: &str) -> bool {
    let mut segments = path.trim_start_matches('/').split('/');
    segments.next().is_some_and(|owner| !owner.is_empty()) && segments.next().is_some_and(|name| name.ends_with(".git"))
}

pub(crate) async fn handle(
    core: &Arc<Core>,
    method: &Method,
    path: &str,
    query: &str,
    headers: &HeaderMap,
    body: Bytes,
) -> Resp {
    let mut segments = path.trim_start_matches('/').splitn(3, '/');
    let (owner, name_git, rest) = (segments.next().unwrap_or(""), segments.next().unwrap_or(""), segments.next());
    let name = name_git.strip_suffix(".git").unwrap_or(name_git);
    let Ok(repo) = RepoName::new(owner, name) else { return plain(StatusCode::NOT_FOUND, "Repository not found.\n") };
    let Some((full_name, private)) = core.state().repos.get(&repo.key()).map(|r| (r.full_name(), r.private)) else {
        return plain(StatusCode::NOT_FOUND, "Repository not found.\n");
    };
    let rest = rest.unwrap_or("");
    let push = rest == "git-receive-pack" || query.split('&').any(|p| p == "service=git-receive-pack");

    let credentials = basic_credentials(headers);
    let token_ok = match (&core.token, &credentials) {
        (None, _) => true,
        (Some(token), Some((_, password))) => password == token,
        (Some(_), None) => false,
    };
    let needs_auth = private || push;
    if needs_auth && (!token_ok || (core.token.is_some() && credentials.is_none())) {
        let mut response = plain(StatusCode::UNAUTHORIZED, "Authentication required\n");
        response.headers_mut().insert(http::header::WWW_AUTHENTICATE, HeaderValue::from_static("Basic realm=\"git\""));
        return response;
    }
    // http-backend allows receive-pack only for an authenticated REMOTE_USER.
    let remote_user = match &credentials {
        Some((user, _)) if token_ok && !user.is_empty() => user.clone(),
        _ if push => "anonymous".to_owned(),
        _ => String::new(),
    };

    let response = match run_backend(
        core,
        method,
        &format!("/{full_name}.git/{rest}"),
        query,
        headers,
        &remote_user,
        body,
    )
    .await
    {
        Ok(response) => response,
        Err(message) => {
            return plain(StatusCode::INTERNAL_SERVER_ERROR, &format!("git http-backend failed: {message}\n"));
        }
    };
    if push && method == Method::POST && response.status().is_success() {
        // GitHub moves open PRs whose head branch was pushed.
        if let Err(e) = core.sync_heads(&repo).await {
            return plain(StatusCode::INTERNAL_SERVER_ERROR, &format!("updating pull requests after the push: {e}\n"));
        }
    }
    response
}

/// `(user, password)` of an `Authorization: Basic` header.
fn basic_credentials(headers: &HeaderMap) -> Option<(String, String)> {
    let value = headers.get(http::header::AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, encoded) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD.decode(encoded.trim()).ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (user, password) = text.split_once(':')?;
    Some((user.to_owned(), password.to_owned()))
}

async fn run_backend(
    core: &Core,
    method: &Method,
    path_info: &str,
    query: &str,
    headers: &HeaderMap,
    remote_user: &str,
    body: Bytes,
) -> Result<Resp, String> {
    let header = |name: HeaderName| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    let mut command = Command::new("git");
    command.arg("http-backend").env_clear().envs(git::base_env()).kill_on_drop(true);
    command
        .env("GIT_PROJECT_ROOT", &core.root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("REQUEST_METHOD", method.as_str())
        .env("PATH_INFO", path_info)
        .env("QUERY_STRING", query)
        .env("CONTENT_TYPE", header(http::header::CONTENT_TYPE))
        .env("CONTENT_LENGTH", body.len().to_string())
        .env("REMOTE_ADDR", "127.0.0.1")
        .env("REMOTE_USER", remote_user)
        .env("SERVER_PROTOCOL", "HTTP/1.1")
        .env("GATEWAY_INTERFACE", "CGI/1.1");
    if let Some(protocol) = headers.get("git-protocol").and_then(|v| v.to_str().ok()) {
        command.env("GIT_PROTOCOL", protocol);
    }
    if let Some(encoding) = headers.get(http::header::CONTENT_ENCODING).and_then(|v| v.to_str().ok()) {
        command.env("HTTP_CONTENT_ENCODING", encoding);
    }
    command
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = command.spawn().map_err(|e| format!("cannot run git: {e}"))?;
    let stdin = child.stdin.take();
    // Write the request body while the backend's output is read, so neither pipe can fill up.
    let writer = tokio::spawn(async move {
        if let Some(mut stdin) = stdin {
            let _ = stdin.write_all(&body).await;
        }
    });
    let output = child.wait_with_output().await.map_err(|e| e.to_string())?;
    let _ = writer.await;
    if output.stdout.is_empty() && !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).trim().to_owned());
    }
    Ok(parse_cgi(&output.stdout))
}

/// Splits CGI output into status, headers and body.
fn parse_cgi(out: &[u8]) -> Resp {
    let (head, body) = match find(out, b"\r\n\r\n") {
        Some(i) => (&out[..i], &out[i + 4..]),
        None => match find(out, b"\n\n") {
            Some(i) => (&out[..i], &out[i + 2..]),
            None => (&out[..0], out),
        },
    };
    let mut response = Response::new(Full::new(Bytes::copy_from_slice(body)));
    for line in String::from_utf8_lossy(head).lines() {
        let Some((name, value)) = line.split_once(':') else { continue };
        let value = value.trim();
        if name.eq_ignore_ascii_case("status") {
            let code = value.split_whitespace().next().and_then(|c| c.parse::<u16>().ok());
            *response.status_mut() = code.and_then(|c| StatusCode::from_u16(c).ok()).unwrap_or(StatusCode::BAD_GATEWAY);
        } else if let (Ok(name), Ok(value)) =
            (HeaderName::from_bytes(name.trim().as_bytes()), HeaderValue::from_str(value))
        {
            response.headers_mut().append(name, value);
        }
    }
    response
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_paths() {
        assert!(is_git_path("/acme/widget.git/info/refs"));
        assert!(is_git_path("/acme/widget.git"));
        assert!(!is_git_path("/repos/acme/widget"));
        assert!(!is_git_path("/user"));
        assert!(!is_git_path("//x.git"));
    }

    #[test]
    fn cgi_output_is_split() {
        let response = parse_cgi(b"Status: 403 Forbidden\r\nContent-Type: text/plain\r\n\r\nno");
        assert_eq!(response.status(), StatusCode::FORBIDDEN);
        assert_eq!(response.headers()["content-type"], "text/plain");
        let response = parse_cgi(b"Content-Type: application/x-git-upload-pack-advertisement\n\n001e# service");
        assert_eq!(response.status(), StatusCode::OK);
    }

    #[test]
    fn basic_auth_is_decoded() {
        let mut headers = HeaderMap::new();
        let encoded = base64::engine::general_purpose::STANDARD.encode("x-access-token:abc:def");
        headers.insert(http::header::AUTHORIZATION, HeaderValue::from_str(&format!("Basic {encoded}")).unwrap());
        assert_eq!(basic_credentials(&headers), Some(("x-access-token".into(), "abc:def".into())));
    }
}

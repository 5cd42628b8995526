//! [`GithubClient`]: the few GitHub REST calls forgeloop makes, with typed, validated results.

use std::fmt;
use std::sync::Mutex;
use std::time::Duration;

use http::{Method, Uri};
use octocrab::Octocrab;
use serde_json::json;

use super::errors::GithubError;
use super::model::{
    Access, CheckSummary, Comment, Published, PullInfo, RepoInfo, User, WireCheckRuns, WireComment, WirePull, WireRepo,
    WireUser,
};
use super::transport::{Call, Reply, Transport};
use crate::domain::pr_ref::{self, GITHUB_WEB_HOST, RepoName};
use crate::domain::report::normalize_sha;
use crate::domain::text::Marker;

/// Public GitHub's API.
pub const DEFAULT_API_BASE: &str = "https://api.github.com";

/// Per request, not per call: a paginated listing may take several of these.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// GitHub's largest page size.
pub(super) const PER_PAGE: u32 = 100;

/// Listing more pages than this is refused instead of silently truncated: a truncated comment
/// list could make `publish_comment` miss its own comment and post a duplicate.
pub(super) const MAX_PAGES: usize = 100;

/// How to reach GitHub: the API base, the token and the request timeout.
#[derive(Clone)]
pub struct GithubConfig {
    /// `https://api.github.com`, `https://HOST/api/v3` (Enterprise) or an emulator's base.
    pub api_base: String,
    /// The token sent with every request; `None` reads public data only.
    pub token: Option<String>,
    /// Bound on each HTTP request (connect, answer and body).
    pub timeout: Duration,
}

impl Default for GithubConfig {
    fn default() -> Self {
        GithubConfig { api_base: DEFAULT_API_BASE.to_owned(), token: None, timeout: DEFAULT_TIMEOUT }
    }
}

impl fmt::Debug for GithubConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GithubConfig")
            .field("api_base", &self.api_base)
            .field("token", &self.token.as_ref().map(|_| "[REDACTED]"))
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// The web host for an API base (see [`GithubClient::web_host`]) without building a client,
/// e.g. to ask `token::discover` for the right host's token first.
pub fn web_host_for(api_base: &str) -> Result<String, GithubError> {
    ApiBase::parse(api_base).map(|api| api.web_host)
}

/// `scheme://web_host` of the web pages (PRs, repositories) that go with an API base.
pub fn web_base_for(api_base: &str) -> Result<String, GithubError> {
    let scheme = if api_base.trim_start().to_ascii_lowercase().starts_with("http://") { "http" } else { "https" };
    Ok(format!("{scheme}://{}", web_host_for(api_base)?))
}

/// A GitHub REST client. Cheap to share by reference; it caches the authenticated login.
pub struct GithubClient {
    pub(super) transport: Transport,
    web_host: String,
    loopback: bool,
    login: Mutex<Option<String>>,
}

impl fmt::Debug for GithubClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GithubClient").field("api_base", &self.transport.base()).finish_non_exhaustive()
    }
}

impl GithubClient {
    /// Builds the client. Must be called inside a tokio runtime (octocrab spawns a task);
    /// outside one it returns `GithubError::Setup` instead of panicking.
    pub fn new(config: GithubConfig) -> Result<Self, GithubError> {
        let api = ApiBase::parse(&config.api_base)?;
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(GithubError::Setup("the GitHub client must be created inside a tokio runtime".to_owned()));
        }
        let setup = |e: octocrab::Error| GithubError::Setup(format!("{e:?}"));
        let mut builder = Octocrab::builder()
            .base_uri(api.base.as_str())
            .map_err(setup)?
            .set_connect_timeout(Some(config.timeout))
            .add_header(http::header::USER_AGENT, concat!("forgeloop/", env!("CARGO_PKG_VERSION")).to_owned());
        let token = config.token.filter(|t| !t.is_empty());
        if let Some(token) = &token {
            builder = builder.personal_token(token.clone());
        }
        let octo = builder.build().map_err(setup)?;
        Ok(GithubClient {
            transport: Transport::new(octo, api.base, api.origin, config.timeout, token),
            web_host: api.web_host,
            loopback: api.loopback,
            login: Mutex::new(None),
        })
    }

    /// The REST API base in use, as normalised.
    pub fn api_base(&self) -> &str {
        self.transport.base()
    }

    /// The `host[:port]` of web and clone URLs for this API: `github.com` for api.github.com,
    /// `HOST` for `https://HOST/api/v3`, else the API's own `host[:port]`. Feed it to
    /// `domain::pr_ref::WebHosts::with`.
    pub fn web_host(&self) -> String {
        self.web_host.clone()
    }

    /// True for 127.0.0.0/8, ::1 and localhost (an emulator or a tunnel).
    pub fn is_loopback(&self) -> bool {
        self.loopback
    }

    /// The account the token belongs to (cached after the first call).
    pub async fn authenticated_user(&self) -> Result<User, GithubError> {
        if let Some(login) = self.cached_login() {
            return Ok(User { login });
        }
        let call = Call { action: "reading the authenticated user", resource: "the authenticated user" };
        let user: WireUser = self.transport.get("/user", &call).await?.json(&call)?;
        pr_ref::validate_owner(&user.login).map_err(|e| invalid(&call, format!("login: {e}")))?;
        *self.login.lock().unwrap_or_else(|e| e.into_inner()) = Some(user.login.clone());
        Ok(User { login: user.login })
    }

    /// Who the token is, what it may do and how much rate limit is left (`forgeloop doctor`).
    /// One `GET /user`, never retried into a loop.
    pub async fn access(&self) -> Result<Access, GithubError> {
        let call = Call { action: "checking GitHub access", resource: "the authenticated user" };
        let reply = self.transport.get("/user", &call).await?;
        let header = |name: &str| reply.headers.get(name).and_then(|v| v.to_str().ok()).map(|v| v.trim().to_owned());
        let user: WireUser = reply.json(&call)?;
        let number = |name: &str| header(name).and_then(|v| v.parse::<u64>().ok());
        Ok(Access {
            login: user.login,
            scopes: header("x-oauth-scopes")
                .map(|s| s.split(',').map(|x| x.trim().to_owned()).filter(|x| !x.is_empty()).collect()),
            rate_limit: number("x-ratelimit-limit"),
            rate_remaining: number("x-ratelimit-remaining"),
            rate_reset: number("x-ratelimit-reset"),
        })
    }

    /// The repository's metadata, its URLs checked to be on the API's web host.
    pub async fn repository(&self, repo: &RepoName) -> Result<RepoInfo, GithubError> {
        let action = format!("reading repository {repo}");
        let resource = repo.full_name();
        let call = Call { action: &action, resource: &resource };
        self.get_repo(&call, repo).await
    }

    /// The pull request's metadata, validated (its head SHA is what a run may test).
    pub async fn pull_request(&self, repo: &RepoName, number: u64) -> Result<PullInfo, GithubError> {
        let action = format!("reading pull request {repo}#{number}");
        let resource = repo.full_name();
        let call = Call { action: &action, resource: &resource };
        let path = format!("/repos/{}/{}/pulls/{number}", repo.owner(), repo.name());
        let pull: WirePull = self.transport.get(&path, &call).await?.json(&call)?;
        let info = pull.validate(&self.web_host).map_err(|detail| invalid(&call, detail))?;
        if info.number != number {
            return Err(invalid(&call, format!("asked for #{number}, got #{}", info.number)));
        }
        Ok(info)
    }

    /// Check runs of commit `sha` (40 hex digits, any case).
    pub async fn check_runs(&self, repo: &RepoName, sha: &str) -> Result<CheckSummary, GithubError> {
        let sha = normalize_sha(sha).ok_or_else(|| GithubError::InvalidInput {
            what: "commit SHA",
            detail: format!("{sha:?} is not 40 hex digits"),
        })?;
        let action = format!("reading check runs of {repo}@{}", &sha[..12]);
        let resource = repo.full_name();
        let call = Call { action: &action, resource: &resource };
        let mut next = format!("/repos/{}/{}/commits/{sha}/check-runs?per_page={PER_PAGE}", repo.owner(), repo.name());
        let mut summary = CheckSummary::default();
        for _ in 0..MAX_PAGES {
            let reply = self.transport.get(&next, &call).await?;
            let page: WireCheckRuns = reply.json(&call)?;
            summary.total = page.total_count;
            page.add_to(&mut summary);
            match reply.next_link() {
                Some(link) if !page.check_runs.is_empty() => next = link,
                _ => return Ok(summary),
            }
        }
        Err(too_many_pages(&call))
    }

    /// Every conversation comment of issue or PR `number`, oldest first.
    pub async fn issue_comments(&self, repo: &RepoName, number: u64) -> Result<Vec<Comment>, GithubError> {
        let action = format!("listing comments of {repo}#{number}");
        let resource = repo.full_name();
        let call = Call { action: &action, resource: &resource };
        let mut next = format!("/repos/{}/{}/issues/{number}/comments?per_page={PER_PAGE}", repo.owner(), repo.name());
        let mut comments = Vec::new();
        for _ in 0..MAX_PAGES {
            let reply = self.transport.get(&next, &call).await?;
            let page: Vec<WireComment> = reply.json(&call)?;
            let empty = page.is_empty();
            comments.extend(page.into_iter().map(WireComment::validate));
            match reply.next_link() {
                Some(link) if !empty => next = link,
                _ => return Ok(comments),
            }
        }
        Err(too_many_pages(&call))
    }

    /// Posts a new comment. Sent once, never retried.
    pub async fn create_comment(&self, repo: &RepoName, number: u64, body: &str) -> Result<Comment, GithubError> {
        let action = format!("posting a comment on {repo}#{number}");
        let resource = repo.full_name();
        let call = Call { action: &action, resource: &resource };
        let path = format!("/repos/{}/{}/issues/{number}/comments", repo.owner(), repo.name());
        let reply = self.transport.send(Method::POST, &path, &json!({ "body": body }), &call).await?;
        Ok(reply.json::<WireComment>(&call)?.validate())
    }

    /// Replaces the body of comment `id`. Sent once, never retried.
    pub async fn update_comment(&self, repo: &RepoName, id: u64, body: &str) -> Result<Comment, GithubError> {
        let action = format!("updating comment {id} in {repo}");
        let resource = repo.full_name();
        let call = Call { action: &action, resource: &resource };
        let path = format!("/repos/{}/{}/issues/comments/{id}", repo.owner(), repo.name());
        let reply = self.transport.send(Method::PATCH, &path, &json!({ "body": body }), &call).await?;
        Ok(reply.json::<WireComment>(&call)?.validate())
    }

    /// Idempotent upsert of forgeloop's comment (design §5.2.8). `body` must start with
    /// `marker.render()`. An existing comment is reused only when its first line is the same
    /// marker AND the authenticated user wrote it (anyone can paste a marker); it is PATCHed
    /// if its body differs and left alone otherwise. Only when none exists is one POST sent.
    /// With several matches, the oldest is reused.
    pub async fn publish_comment(
        &self,
        repo: &RepoName,
        number: u64,
        marker: &Marker,
        body: &str,
    ) -> Result<Published, GithubError> {
        if Marker::find(body).as_ref() != Some(marker) {
            return Err(GithubError::InvalidInput {
                what: "comment body",
                detail:
                    "its first line must be the comment's marker, or a retry could not find it and would post twice"
                        .to_owned(),
            });
        }
        let login = self.authenticated_user().await?.login;
        let existing =
            self.issue_comments(repo, number).await?.into_iter().find(|c| {
                c.author_login.eq_ignore_ascii_case(&login) && Marker::find(&c.body).as_ref() == Some(marker)
            });
        match existing {
            Some(comment) if comment.body == body => Ok(Published { comment, created: false }),
            Some(comment) => {
                Ok(Published { comment: self.update_comment(repo, comment.id, body).await?, created: false })
            }
            None => Ok(Published { comment: self.create_comment(repo, number, body).await?, created: true }),
        }
    }

    /// Creates `owner/name` (the authenticated user's when `owner` is `None` or the user's own
    /// login, else organization `owner`) with an initial commit, so a base branch exists.
    ///
    /// Idempotent on rerun: when GitHub answers 422 "already exists", the existing repository is
    /// returned, provided GitHub reports it under exactly that name and the token may push to
    /// it. Either way the visibility is then read back, and a repository that is not `private`
    /// as requested is an error (`GithubError::Visibility`), never silently accepted.
    pub async fn create_repository(
        &self,
        owner: Option<&str>,
        name: &str,
        private: bool,
    ) -> Result<RepoInfo, GithubError> {
        let input = |what, e: pr_ref::RepoNameError| GithubError::InvalidInput { what, detail: e.to_string() };
        pr_ref::validate_repo(name).map_err(|e| input("repository name", e))?;
        if let Some(owner) = owner {
            pr_ref::validate_owner(owner).map_err(|e| input("repository owner", e))?;
        }
        let login = self.authenticated_user().await?.login;
        let (path, owner) = match owner {
            Some(org) if !org.eq_ignore_ascii_case(&login) => (format!("/orgs/{org}/repos"), org.to_owned()),
            _ => ("/user/repos".to_owned(), login),
        };
        let repo = RepoName::new(&owner, name).map_err(|e| input("repository", e))?;
        let action = format!("creating repository {repo}");
        let resource = repo.full_name();
        let call = Call { action: &action, resource: &resource };
        let body = json!({ "name": name, "private": private, "auto_init": true });
        let existed = match self.transport.send(Method::POST, &path, &body, &call).await {
            Ok(_) => false,
            Err(GithubError::Unprocessable { message, .. }) if message.contains("already exists") => true,
            Err(err) => return Err(err),
        };
        let verify_action = format!("verifying repository {repo}");
        let verify = Call { action: &verify_action, resource: &resource };
        let reply = self.transport.get(&format!("/repos/{}/{}", repo.owner(), repo.name()), &verify).await?;
        let wire: WireRepo = reply.json(&verify)?;
        let can_push = wire.permissions.as_ref().and_then(|p| p.push);
        let info = wire.validate(&self.web_host).map_err(|detail| invalid(&verify, detail))?;
        if !info.full_name.same_as(&repo) {
            return Err(GithubError::RepoConflict {
                repo: repo.full_name(),
                reason: format!("GitHub answers with {} (renamed or transferred)", info.full_name),
            });
        }
        if existed && can_push == Some(false) {
            return Err(GithubError::RepoConflict {
                repo: repo.full_name(),
                reason: "the token cannot push to it".into(),
            });
        }
        if info.private != private {
            let word = |p: bool| if p { "private" } else { "public" };
            return Err(GithubError::Visibility {
                repo: repo.full_name(),
                wanted: word(private),
                actual: word(info.private),
            });
        }
        Ok(info)
    }

    async fn get_repo(&self, call: &Call<'_>, repo: &RepoName) -> Result<RepoInfo, GithubError> {
        let reply: Reply = self.transport.get(&format!("/repos/{}/{}", repo.owner(), repo.name()), call).await?;
        reply.json::<WireRepo>(call)?.validate(&self.web_host).map_err(|detail| invalid(call, detail))
    }

    fn cached_login(&self) -> Option<String> {
        self.login.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

fn invalid(call: &Call<'_>, detail: String) -> GithubError {
    GithubError::InvalidResponse { action: call.action.to_owned(), detail }
}

pub(super) fn too_many_pages(call: &Call<'_>) -> GithubError {
    invalid(call, format!("more than {MAX_PAGES} pages of {PER_PAGE}; refusing to go on"))
}

/// The parts of an API base URL the client needs.
struct ApiBase {
    base: String,
    origin: String,
    web_host: String,
    loopback: bool,
}

impl ApiBase {
    fn parse(text: &str) -> Result<ApiBase, GithubError> {
        let bad = |reason: &str| GithubError::InvalidApiBase { url: text.to_owned(), reason: reason.to_owned() };
        let trimmed = text.trim().trim_end_matches('/');
        let uri: Uri = trimmed.parse().map_err(|_| bad("not a URL"))?;
        let scheme = uri.scheme_str().map(str::to_ascii_lowercase).ok_or_else(|| bad("no scheme"))?;
        if scheme != "https" && scheme != "http" {
            return Err(bad("the scheme must be http or https"));
        }
        let authority = uri.authority().ok_or_else(|| bad("no host"))?.as_str().to_ascii_lowercase();
        if authority.contains('@') {
            return Err(bad("credentials do not belong in the URL; use GH_TOKEN"));
        }
        if uri.query().is_some() {
            return Err(bad("a query string is not allowed"));
        }
        let host = uri.host().unwrap_or_default().to_ascii_lowercase();
        let path = uri.path().trim_end_matches('/');
        let default_port = if scheme == "https" { 443 } else { 80 };
        let host_port = match uri.port_u16() {
            Some(port) if port != default_port => format!("{host}:{port}"),
            _ => host.clone(),
        };
        let web_host = if host == "api.github.com" { GITHUB_WEB_HOST.to_owned() } else { host_port };
        let bare_host = host.trim_start_matches('[').trim_end_matches(']');
        let loopback =
            bare_host == "localhost" || bare_host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
        if scheme == "http" && !loopback {
            return Err(GithubError::CleartextApiBase { url: text.to_owned() });
        }
        Ok(ApiBase {
            base: format!("{scheme}://{authority}{path}"),
            origin: format!("{scheme}://{authority}"),
            web_host,
            loopback,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn web_hosts_of_api_bases() {
        let web = |base: &str| ApiBase::parse(base).unwrap().web_host;
        assert_eq!(web("https://api.github.com"), "github.com");
        assert_eq!(web("https://API.GitHub.com/"), "github.com");
        assert_eq!(web("https://ghe.example.com/api/v3"), "ghe.example.com");
        assert_eq!(web("https://ghe.example.com:8443/api/v3/"), "ghe.example.com:8443");
        assert_eq!(web("https://ghe.example.com:443/api/v3"), "ghe.example.com");
        assert_eq!(web("http://127.0.0.1:4567"), "127.0.0.1:4567");
    }

    #[test]
    fn api_base_keeps_the_enterprise_path_and_spots_loopback() {
        let api = ApiBase::parse("https://ghe.example.com/api/v3/").unwrap();
        assert_eq!(api.base, "https://ghe.example.com/api/v3");
        assert_eq!(api.origin, "https://ghe.example.com");
        assert!(!api.loopback);
        assert!(ApiBase::parse("http://127.0.0.1:9").unwrap().loopback);
        assert!(ApiBase::parse("http://localhost:9").unwrap().loopback);
        assert!(ApiBase::parse("http://[::1]:9").unwrap().loopback);
        assert!(!ApiBase::parse("https://api.github.com").unwrap().loopback);
    }

    #[test]
    fn plain_http_is_refused_unless_the_host_is_loopback() {
        for base in [
            "http://ghe.example.com/api/v3",
            "HTTP://api.github.com",
            "http://10.0.0.1:8080",
            "http://[::ffff:127.0.0.1]:9",
        ] {
            let err = ApiBase::parse(base).err();
            assert!(matches!(err, Some(GithubError::CleartextApiBase { .. })), "{base}: {err:?}");
        }
        for base in ["http://127.0.0.1:9", "http://127.1.2.3", "http://localhost:9/api/v3", "http://[::1]:9"] {
            assert!(ApiBase::parse(base).unwrap().loopback, "{base}");
        }
    }

    #[test]
    fn bad_api_bases_are_refused() {
        for bad in
            ["", "api.github.com", "ftp://x", "https://user:pw@ghe.example.com/api/v3", "https://x/?a=1", "http://"]
        {
            assert!(ApiBase::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn new_outside_a_runtime_is_an_error_not_a_panic() {
        let err = GithubClient::new(GithubConfig::default()).unwrap_err();
        assert!(matches!(err, GithubError::Setup(_)), "{err}");
    }

    /// The use cases spawn these calls on tokio tasks.
    #[allow(dead_code)]
    fn futures_are_send(client: &GithubClient, repo: &RepoName, marker: &Marker) {
        fn send<T: Send>(_: T) {}
        send(client.pull_request(repo, 1));
        send(client.publish_comment(repo, 1, marker, ""));
        send(client.create_repository(None, "x", true));
        send(client.check_runs(repo, ""));
        fn sync<T: Send + Sync>(_: &T) {}
        sync(client);
    }

    #[test]
    fn web_host_for_needs_no_client() {
        assert_eq!(web_host_for("https://api.github.com").unwrap(), "github.com");
        assert!(web_host_for("nonsense").is_err());
    }

    #[test]
    fn config_debug_hides_the_token() {
        let config = GithubConfig { token: Some("abc-secret-xyz".into()), ..GithubConfig::default() };
        assert!(!format!("{config:?}").contains("abc-secret-xyz"));
    }
}

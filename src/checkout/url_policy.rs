//! Which clone URLs may reach libgit2.
//!
//! Checked before any git call: a URL from the API (or a `.gitmodules` in an untrusted PR) could
//! otherwise pick a transport (ssh, `ext::`, local files) or smuggle credentials. Only `https`
//! is accepted, except that `http` to a loopback host, `file://` and absolute paths are allowed
//! when the caller says the API itself is local (tests, the emulator, the demo).

use std::net::{Ipv4Addr, Ipv6Addr};

use super::error::CheckoutError;

const MAX_URL_LEN: usize = 2048;

/// Where an accepted URL points; the host scopes where the token may be sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AllowedUrl {
    /// `https://host[:port]/…`; `host` is lowercase, without brackets or port.
    Https {
        /// The host, lowercase.
        host: String,
    },
    /// `http://loopback[:port]/…` (only with `allow_insecure_local`).
    HttpLoopback {
        /// The loopback host, lowercase.
        host: String,
    },
    /// `file://…` or an absolute path (only with `allow_insecure_local`).
    Local,
}

impl AllowedUrl {
    /// The host the URL points at; `None` for a local path.
    pub fn host(&self) -> Option<&str> {
        match self {
            AllowedUrl::Https { host } | AllowedUrl::HttpLoopback { host } => Some(host),
            AllowedUrl::Local => None,
        }
    }
}

/// Accepts or refuses `url` as a fetch source. A URL is read by the `url` crate and every check
/// is on what it read; it must also be written as it is read (only the case of its scheme and
/// host may differ), so that libgit2, which reads it with its own parser, has no other reading
/// to find: no empty port, no dot segments, no backslashes, no percent-encoded host.
pub fn check_clone_url(url: &str, allow_insecure_local: bool) -> Result<AllowedUrl, CheckoutError> {
    let refuse = |reason: &str| CheckoutError::UrlRefused { url: display_url(url), reason: reason.to_owned() };

    if url.is_empty() {
        return Err(refuse("it is empty"));
    }
    if url.len() > MAX_URL_LEN {
        return Err(refuse("it is longer than 2048 bytes"));
    }
    if !url.is_ascii() || url.bytes().any(|b| b.is_ascii_control() || b == b' ') {
        return Err(refuse("it contains spaces, control characters or non-ASCII characters"));
    }
    if url.starts_with('-') {
        return Err(refuse("it starts with '-' and would look like an option"));
    }
    if !url.contains("://") {
        if url.starts_with('/') {
            return if allow_insecure_local {
                Ok(AllowedUrl::Local)
            } else {
                Err(refuse("local paths are only allowed when the GitHub API is a loopback address"))
            };
        }
        if url.contains("::") {
            return Err(refuse("git transport helpers (such as ext::) are never allowed; use an https:// URL"));
        }
        return Err(refuse("scp-style (user@host:path) and relative URLs are not allowed; use an https:// URL"));
    }
    let parsed =
        url::Url::parse(url).map_err(|e| refuse(&format!("it is not a URL git would read as written ({e})")))?;
    match parsed.scheme() {
        "https" => Ok(AllowedUrl::Https { host: web_host(&parsed, url).map_err(|r| refuse(&r))? }),
        "http" => {
            if !allow_insecure_local {
                return Err(refuse("plain http is only allowed to a loopback host in tests and the demo; use https"));
            }
            let host = web_host(&parsed, url).map_err(|r| refuse(&r))?;
            if is_loopback(&host) {
                Ok(AllowedUrl::HttpLoopback { host })
            } else {
                Err(refuse("plain http is only allowed to a loopback host (127.0.0.0/8, ::1, localhost)"))
            }
        }
        "file" => {
            if !allow_insecure_local {
                return Err(refuse("file:// URLs are only allowed when the GitHub API is a loopback address"));
            }
            if parsed.host_str().is_none_or(str::is_empty) {
                Ok(AllowedUrl::Local)
            } else {
                Err(refuse("file URLs must be file:///absolute/path"))
            }
        }
        "ssh" | "git+ssh" | "ssh+git" => Err(refuse("ssh is not supported; use the https:// clone URL and a token")),
        "git" => Err(refuse("the unauthenticated git:// protocol is not allowed; use https://")),
        _ => Err(refuse("only https:// URLs are allowed")),
    }
}

/// The host of an http(s) URL as read, lowercase, without brackets; refuses credentials, a
/// host of other characters than letters, digits, '.' and '-', and a URL not written as read.
fn web_host(parsed: &url::Url, written: &str) -> Result<String, String> {
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err("it carries credentials (user@ or user:password@); pass the token separately".to_owned());
    }
    let host = host_of(parsed).ok_or("it has no host")?;
    if !parsed.as_str().eq_ignore_ascii_case(written) {
        return Err(format!("it is not written as it is read ({parsed}): write it that way"));
    }
    Ok(host)
}

/// The host `url` names, lowercase and without brackets, when it is a name of letters,
/// digits, '.' and '-' or an IP address.
fn host_of(url: &url::Url) -> Option<String> {
    match url.host()? {
        url::Host::Domain(name) => (!name.is_empty()
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-'))
        .then(|| name.to_ascii_lowercase()),
        url::Host::Ipv4(ip) => Some(ip.to_string()),
        url::Host::Ipv6(ip) => Some(ip.to_string()),
    }
}

fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host.parse::<Ipv4Addr>().is_ok_and(|ip| ip.is_loopback())
        || host.parse::<Ipv6Addr>().is_ok_and(|ip| ip.is_loopback())
}

/// Where a URL points, as far as the token's scope is concerned: scheme, host and port
/// (the scheme's default when none is written), all lowercase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Origin {
    pub scheme: String,
    pub host: String,
    pub port: u16,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.host.contains(':') {
            true => write!(f, "{}://[{}]:{}", self.scheme, self.host, self.port),
            false => write!(f, "{}://{}:{}", self.scheme, self.host, self.port),
        }
    }
}

/// The origin of an `http(s)://` URL libgit2 hands to the credentials callback, as `url` reads
/// it; `None` for other schemes, local paths, credentials in the URL and anything unparsable
/// (the token is then never offered).
pub(crate) fn origin_of(url: &str) -> Option<Origin> {
    let parsed = url::Url::parse(url).ok()?;
    if !matches!(parsed.scheme(), "https" | "http") || !parsed.username().is_empty() || parsed.password().is_some() {
        return None;
    }
    let host = host_of(&parsed)?;
    Some(Origin { scheme: parsed.scheme().to_owned(), host, port: parsed.port_or_known_default()? })
}

/// An http(s) URL written as `url` reads it (only the case of its scheme and host may differ):
/// its path then has no dot segment, backslash or percent-encoded dot a server could resolve
/// to another owner than the one read. `None` otherwise.
fn as_read(url: &str) -> Option<url::Url> {
    let parsed = url::Url::parse(url).ok()?;
    let plain = matches!(parsed.scheme(), "https" | "http")
        && parsed.as_str().eq_ignore_ascii_case(url)
        && !parsed.path().contains(['%', '\\']);
    plain.then_some(parsed)
}

/// The first path segment of an `http(s)://` URL — the owner of `https://HOST/OWNER/REPO.git` —
/// lowercase (GitHub owners are case-insensitive). `None` when the path has none, or when the
/// URL is not written as it is read (see [`as_read`]).
pub(crate) fn owner_of(url: &str) -> Option<String> {
    let parsed = as_read(url)?;
    let owner = parsed.path_segments()?.find(|s| !s.is_empty())?;
    Some(owner.to_ascii_lowercase())
}

/// A repository URL as compared for the submodule token scope: origin, then the path without
/// case, trailing slashes or `.git`. `None` for anything [`origin_of`] or [`owner_of`] refuses.
pub(crate) fn repository_key(url: &str) -> Option<String> {
    let origin = origin_of(url)?;
    owner_of(url)?;
    let parsed = as_read(url)?;
    let path = parsed.path().trim_end_matches('/').to_ascii_lowercase();
    let path = path.strip_suffix(".git").unwrap_or(&path).trim_end_matches('/');
    Some(format!("{origin}{path}"))
}

/// A submodule URL as git resolves it: `./x` and `../x` are relative to the superproject's
/// remote URL (each `../` drops one path component of it), anything else is taken as it is.
pub(crate) fn resolve_submodule_url(remote: &str, url: &str) -> String {
    if !(url.starts_with("./") || url.starts_with("../")) {
        return url.to_owned();
    }
    let mut base = remote.trim_end_matches('/').to_owned();
    let mut rest = url;
    loop {
        if let Some(next) = rest.strip_prefix("./") {
            rest = next;
        } else if let Some(next) = rest.strip_prefix("../") {
            rest = next;
            match base.rfind('/') {
                // Never past the authority of `scheme://host`.
                Some(i) if !base[..i].ends_with(':') && !base[..i].ends_with("/") => base.truncate(i),
                _ => {}
            }
        } else {
            break;
        }
    }
    format!("{base}/{rest}")
}

/// A URL safe to show: credentials in the authority are masked (as `url` reads them; a URL it
/// cannot read that has an '@' is not shown at all), long input is cut.
fn display_url(url: &str) -> String {
    let masked = match url::Url::parse(url) {
        Ok(mut parsed) if !parsed.username().is_empty() || parsed.password().is_some() => {
            let _ = parsed.set_password(None);
            let _ = parsed.set_username("***");
            parsed.to_string()
        }
        Err(_) if url.contains('@') => "(a URL with an '@' that cannot be read; not shown)".to_owned(),
        _ => url.to_owned(),
    };
    let cut: String = masked.chars().take(200).collect();
    let cut = if cut.len() < masked.len() { format!("{cut}…") } else { cut };
    format!("{cut:?}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(url: &str, allow: bool) -> String {
        match check_clone_url(url, allow) {
            Err(e @ CheckoutError::UrlRefused { .. }) => e.to_string(),
            other => panic!("{url}: expected refusal, got {other:?}"),
        }
    }

    #[test]
    fn https_is_accepted_with_its_host() {
        assert_eq!(
            check_clone_url("https://GitHub.com/acme/widget.git", false).unwrap(),
            AllowedUrl::Https { host: "github.com".into() }
        );
        assert_eq!(
            check_clone_url("https://127.0.0.1:8443/r.git", false).unwrap(),
            AllowedUrl::Https { host: "127.0.0.1".into() }
        );
        assert_eq!(check_clone_url("https://[::1]:1/r.git", false).unwrap(), AllowedUrl::Https { host: "::1".into() });
    }

    #[test]
    fn other_transports_are_refused_even_when_local_is_allowed() {
        for url in [
            "ssh://git@github.com/acme/widget.git",
            "git@github.com:acme/widget.git",
            "ext::sh -c touch% /tmp/pwned",
            "ext::sh",
            "fd::17",
            "git://github.com/acme/widget.git",
            "ftp://example.com/r.git",
            "-uhelp",
            "--upload-pack=touch /tmp/x",
            "relative/path",
            "",
            "https://",
            "https://exa mple.com/r",
            "https://example.com:99999/r",
            "https://example.com:/r",
            "https://ex_ample.com/r",
            "https://[::1/r",
            "http://example.com/r.git",
        ] {
            refused(url, true);
        }
    }

    #[test]
    fn local_and_plain_http_need_the_flag() {
        for url in ["file:///tmp/base.git", "/tmp/base.git", "http://127.0.0.1:8080/r.git", "http://localhost/r"] {
            refused(url, false);
            assert!(check_clone_url(url, true).is_ok(), "{url}");
        }
        assert_eq!(check_clone_url("file:///tmp/x", true).unwrap(), AllowedUrl::Local);
        refused("file://host/tmp/x", true);
    }

    #[test]
    fn credentials_in_the_url_are_refused_and_not_echoed() {
        let msg = refused("https://x-access-token:ghp_secretvalue123@github.com/acme/widget.git", false);
        assert!(!msg.contains("ghp_secretvalue123"), "{msg}");
        assert!(msg.contains("***@github.com"), "{msg}");
        let msg = refused("http://user:pw@127.0.0.1/r", true);
        assert!(!msg.contains("pw"), "{msg}");
    }

    /// What `url` reads otherwise than it is written is refused: libgit2 might read it as
    /// written, and the check would have judged another URL.
    #[test]
    fn a_url_must_be_written_as_it_is_read() {
        for url in [
            "https://github.com/acme/../mallory/w.git",
            "https://github.com/./acme/w.git",
            "https://github.com\\acme/w.git",
            "https:///github.com/acme/w.git",
            "https://github.com:/acme/w.git",
        ] {
            assert!(refused(url, false).contains("written") || refused(url, false).contains("host"), "{url}");
        }
        assert!(check_clone_url("HTTPS://GitHub.com/acme/w.git", false).is_ok(), "scheme and host case only");
    }

    #[test]
    fn messages_say_what_to_use_instead() {
        assert!(refused("git@github.com:a/b.git", false).contains("use an https:// URL"));
        assert!(refused("ssh://github.com/a/b", false).contains("ssh is not supported"));
        assert!(refused("ext::sh", false).contains("never allowed"));
    }

    #[test]
    fn origin_and_owner_read_callback_urls() {
        let origin = |url: &str| origin_of(url).map(|o| o.to_string());
        assert_eq!(origin("https://GitHub.com/a/b.git").as_deref(), Some("https://github.com:443"));
        assert_eq!(origin("https://github.com:443/a/b.git").as_deref(), Some("https://github.com:443"));
        assert_eq!(origin("http://127.0.0.1:8080/a/b.git").as_deref(), Some("http://127.0.0.1:8080"));
        assert_eq!(origin("http://[::1]:9/a").as_deref(), Some("http://[::1]:9"));
        assert_eq!(origin("http://localhost/a").as_deref(), Some("http://localhost:80"));
        for none in ["/local/path", "file:///tmp/a.git", "ssh://github.com/a/b", "https://x:99999/a", "https://u@x/a"] {
            assert_eq!(origin(none), None, "{none}");
        }
        assert_eq!(owner_of("https://github.com/Acme/widget.git").as_deref(), Some("acme"));
        assert_eq!(owner_of("http://127.0.0.1:9//acme/w").as_deref(), Some("acme"));
        assert_eq!(owner_of("https://github.com"), None);
        assert_eq!(owner_of("https://github.com/?x=1"), None);
        for tricky in
            ["https://h/acme/../mallory/x.git", "https://h/acme/%2e%2e/m/x", "https://h/./acme/x", "https://h/a\\b/x"]
        {
            assert_eq!(owner_of(tricky), None, "{tricky}");
        }
    }
}

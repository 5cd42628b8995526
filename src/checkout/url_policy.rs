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

/// Accepts or refuses `url` as a fetch source.
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

    let Some((scheme, rest)) = url.split_once("://") else {
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
    };

    match scheme.to_ascii_lowercase().as_str() {
        "https" => Ok(AllowedUrl::Https { host: parse_host(rest).map_err(|r| refuse(&r))? }),
        "http" => {
            if !allow_insecure_local {
                return Err(refuse("plain http is only allowed to a loopback host in tests and the demo; use https"));
            }
            let host = parse_host(rest).map_err(|r| refuse(&r))?;
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
            if rest.starts_with('/') {
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

/// The host of the authority after `scheme://`, lowercase; refuses credentials in the URL.
fn parse_host(rest: &str) -> Result<String, String> {
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    if authority.contains('@') {
        return Err("it carries credentials (user@ or user:password@); pass the token separately".to_owned());
    }
    let (host, port) = if let Some(inner) = authority.strip_prefix('[') {
        let Some((v6, after)) = inner.split_once(']') else {
            return Err("its IPv6 host has no closing ']'".to_owned());
        };
        if v6.parse::<Ipv6Addr>().is_err() {
            return Err("its IPv6 host is not a valid address".to_owned());
        }
        (v6, after.strip_prefix(':'))
    } else {
        match authority.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    if host.is_empty() {
        return Err("it has no host".to_owned());
    }
    if !authority.starts_with('[') && !host.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-') {
        return Err("its host has characters other than letters, digits, '.' and '-'".to_owned());
    }
    if let Some(port) = port
        && (port.is_empty() || port.parse::<u16>().is_err())
    {
        return Err("its port is not a number from 0 to 65535".to_owned());
    }
    Ok(host.to_ascii_lowercase())
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

/// The origin of an `http(s)://` URL libgit2 hands to the credentials callback; `None` for
/// other schemes, local paths and anything unparsable (the token is then never offered).
pub(crate) fn origin_of(url: &str) -> Option<Origin> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let default_port = match scheme.as_str() {
        "https" => 443,
        "http" => 80,
        _ => return None,
    };
    let host = parse_host(rest).ok()?;
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let after_host = match authority.strip_prefix('[') {
        Some(inner) => inner.split_once(']').map_or("", |(_, after)| after),
        None => authority.split_once(':').map_or("", |(_, port)| port),
    };
    let port = match after_host.strip_prefix(':').unwrap_or(after_host) {
        "" => default_port,
        text => text.parse().ok()?,
    };
    Some(Origin { scheme, host, port })
}

/// The first path segment of an `http(s)://` URL — the owner of `https://HOST/OWNER/REPO.git` —
/// lowercase (GitHub owners are case-insensitive). `None` when the path has none, or has a
/// segment a server could resolve to another owner (`.`, `..`, percent-escapes, backslashes).
pub(crate) fn owner_of(url: &str) -> Option<String> {
    let (_, rest) = url.split_once("://")?;
    let path = &rest[rest.find('/')?..];
    let path = &path[..path.find(['?', '#']).unwrap_or(path.len())];
    if path.split('/').any(|segment| segment == "." || segment == ".." || segment.contains(['%', '\\'])) {
        return None;
    }
    let owner = path.trim_start_matches('/').split('/').next()?;
    (!owner.is_empty()).then(|| owner.to_ascii_lowercase())
}

/// A repository URL as compared for the submodule token scope: origin, then the path without
/// case, trailing slashes or `.git`. `None` for anything [`origin_of`] or [`owner_of`] refuses.
pub(crate) fn repository_key(url: &str) -> Option<String> {
    let origin = origin_of(url)?;
    owner_of(url)?;
    let (_, rest) = url.split_once("://")?;
    let path = &rest[rest.find('/')?..];
    let path = &path[..path.find(['?', '#']).unwrap_or(path.len())];
    let path = path.trim_end_matches('/').to_ascii_lowercase();
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

/// A URL safe to show: credentials in the authority are masked, long input is cut.
fn display_url(url: &str) -> String {
    let masked = match url.split_once("://") {
        Some((scheme, rest)) => {
            let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
            match rest[..end].rfind('@') {
                Some(at) => format!("{scheme}://***@{}", &rest[at + 1..]),
                None => url.to_owned(),
            }
        }
        None => url.to_owned(),
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

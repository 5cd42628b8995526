//! Which environment variable names look like credentials. Shared by the runner's
//! environment allowlist and the redactor's known-values layer, so both agree.

const MARKERS: &[&str] = &[
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "KEY",
    "CREDENTIAL",
    "AUTH",
    "SESSION",
    "COOKIE",
    "PRIVATE",
];

/// Whether `name`, in any case, contains a credential marker (`TOKEN`, `SECRET`, `KEY`, `AUTH`, …).
pub fn looks_like_credential(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    MARKERS.iter().any(|marker| upper.contains(marker))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_names() {
        for name in [
            "GH_TOKEN",
            "github_token",
            "AWS_SECRET_ACCESS_KEY",
            "DB_PASSWORD",
            "NPM_AUTH",
            "SSH_AUTH_SOCK",
            "OPENAI_API_KEY",
            "SESSION_ID",
        ] {
            assert!(looks_like_credential(name), "{name}");
        }
        for name in ["PATH", "HOME", "LANG", "CARGO_HOME", "CI", "TERM"] {
            assert!(!looks_like_credential(name), "{name}");
        }
    }
}

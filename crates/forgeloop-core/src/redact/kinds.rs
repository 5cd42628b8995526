//! The kinds of span the redactor masks, and the candidate span every rule reports. Every
//! rule module depends on this one, never on the engine.

/// What a masked span is. Names, masks and priorities of formats and user rules live in
/// their tables (`engine::Rules` looks them up).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Kind {
    /// A known value, with the kind its caller gave (index into `KnownSet`).
    Known(u16),
    /// A row of the built-in formats table (`formats::FORMATS`).
    Format(u16),
    /// A user rule from config (`user::UserRules`).
    User(u16),
    /// A kind hand-written code picks: the generic assignment's and the paths'.
    Named(Named),
}

/// A span a rule wants masked.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cand {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) kind: Kind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Named {
    Password,
    Secret,
    AwsSecretKey,
    CheckoutDir,
    HomeDir,
    LocalPath,
}

impl Named {
    pub(crate) const ALL: [Named; 6] =
        [Named::Password, Named::Secret, Named::AwsSecretKey, Named::CheckoutDir, Named::HomeDir, Named::LocalPath];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Named::Password => "password",
            Named::Secret => "secret",
            Named::AwsSecretKey => "aws-secret-key",
            Named::CheckoutDir => "checkout-dir",
            Named::HomeDir => "home-dir",
            Named::LocalPath => "local-path",
        }
    }

    /// Lower wins when spans of different kinds overlap (formats are 1 and 2): an AWS secret
    /// key is as specific as a token format, any secret beats a path, and the checkout beats
    /// the home it lies in.
    pub(crate) fn priority(self) -> u8 {
        match self {
            Named::AwsSecretKey => 1,
            Named::Password | Named::Secret => 3,
            Named::CheckoutDir => 4,
            Named::HomeDir => 5,
            Named::LocalPath => 6,
        }
    }

    /// What replaces the span. Paths keep their shape so `file:line` stays readable.
    pub(crate) fn mask(self) -> &'static str {
        match self {
            Named::Password => "[REDACTED:password]",
            Named::Secret => "[REDACTED:secret]",
            Named::AwsSecretKey => "[REDACTED:aws-secret-key]",
            Named::CheckoutDir => "<checkout>",
            Named::HomeDir => "~",
            Named::LocalPath => "[LOCAL_PATH]",
        }
    }
}

/// Makes a caller's kind safe to put in a mask: lowercase ASCII letters, digits and `-`, so
/// a mask can never itself look like a key, an assignment or a path.
pub(crate) fn sanitize_kind(kind: &str) -> String {
    let mut out: String =
        kind.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).take(40).collect();
    while out.starts_with('-') {
        out.remove(0);
    }
    while out.ends_with('-') {
        out.pop();
    }
    if out.is_empty() { "secret".to_owned() } else { out }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_name_the_kind() {
        for named in Named::ALL {
            let mask = named.mask();
            assert!(mask == format!("[REDACTED:{}]", named.name()) || !mask.starts_with("[REDACTED"), "{mask}");
        }
        assert_eq!(Named::LocalPath.mask(), "[LOCAL_PATH]");
    }

    #[test]
    fn kinds_are_sanitized() {
        assert_eq!(sanitize_kind("GitHub Token"), "github-token");
        assert_eq!(sanitize_kind("token = x]"), "token---x");
        assert_eq!(sanitize_kind("::"), "secret");
    }
}

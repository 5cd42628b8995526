//! ChatGPT URL validation (design §12.7), pure: no I/O.
//!
//! The registry only accepts URLs a person or agent actually saw in the browser's address
//! bar, so the shapes are exact: scheme `https`, host `chatgpt.com` (no port, no userinfo,
//! no subdomain, lowercase as browsers show it), no query, no fragment, one optional
//! trailing slash. Anything else — look-alike hosts, encoded characters, `_` in IDs — is
//! refused rather than normalised, because a wrong Project URL routes work to the wrong
//! place.

use std::fmt;

const PREFIX: &str = "https://chatgpt.com/";
const PROJECT_PREFIX: &str = "g-p-";

/// Why a ChatGPT URL was refused: the text refused, and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    #[error(
        "expected a browser-observed ChatGPT project home URL like https://chatgpt.com/g/g-p-<id>/project, got {0:?}: {1}"
    )]
    /// Not a Project home URL (`https://chatgpt.com/g/g-p-<id>/project`).
    Project(String, &'static str),
    #[error(
        "expected a browser-observed ChatGPT conversation URL like https://chatgpt.com/g/g-p-<id>/c/<id> or https://chatgpt.com/c/<id>, got {0:?}: {1}"
    )]
    /// Not a conversation URL (`…/c/<id>`, with or without its Project segment).
    Conversation(String, &'static str),
}

/// A validated Project home URL; its identity is the `g-p-…` segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectUrl {
    url: String,
    id: String,
}

impl ProjectUrl {
    /// Accepts exactly a Project home URL as the browser shows it; nothing is normalised.
    pub fn parse(text: &str) -> Result<ProjectUrl, UrlError> {
        let err = |why| UrlError::Project(text.to_owned(), why);
        let segments = path_segments(text).map_err(err)?;
        match segments.as_slice() {
            ["g", id, "project"] if is_project_id(id) => Ok(ProjectUrl { url: text.to_owned(), id: (*id).to_owned() }),
            ["g", _, "project"] => Err(err("the Project ID must be g-p- followed by letters, digits or '-'")),
            ["c", ..] | ["g", _, "c", ..] => Err(err("this is a conversation URL, not the Project home page")),
            _ => Err(err("the path must be /g/g-p-<id>/project")),
        }
    }

    /// The URL exactly as given (spelling kept, e.g. a trailing slash).
    pub fn as_str(&self) -> &str {
        &self.url
    }

    /// The `g-p-…` segment: two URLs name the same Project when their IDs are equal.
    pub fn id(&self) -> &str {
        &self.id
    }
}

impl fmt::Display for ProjectUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.url)
    }
}

/// A validated conversation URL, with or without its Project segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversationUrl {
    url: String,
    project_id: Option<String>,
    conversation_id: String,
}

impl ConversationUrl {
    /// Accepts exactly a conversation URL as the browser shows it; nothing is normalised.
    pub fn parse(text: &str) -> Result<ConversationUrl, UrlError> {
        let err = |why| UrlError::Conversation(text.to_owned(), why);
        let segments = path_segments(text).map_err(err)?;
        let (project_id, conversation_id) = match segments.as_slice() {
            ["c", id] => (None, *id),
            ["g", project, "c", id] => {
                if !is_project_id(project) {
                    return Err(err("the Project segment must be g-p- followed by letters, digits or '-'"));
                }
                (Some((*project).to_owned()), *id)
            }
            ["g", _, "project"] => return Err(err("this is a Project home URL, not a conversation")),
            _ => return Err(err("the path must be /c/<id> or /g/g-p-<id>/c/<id>")),
        };
        if !is_id(conversation_id) {
            return Err(err("the conversation ID must be letters, digits or '-'"));
        }
        Ok(ConversationUrl { url: text.to_owned(), project_id, conversation_id: conversation_id.to_owned() })
    }

    /// The URL exactly as given.
    pub fn as_str(&self) -> &str {
        &self.url
    }

    /// The `g-p-…` segment, when the URL has one. A plain `/c/…` URL says nothing about
    /// Project membership; that must be checked in the browser.
    pub fn project_id(&self) -> Option<&str> {
        self.project_id.as_deref()
    }

    /// The `/c/<id>` segment.
    pub fn conversation_id(&self) -> &str {
        &self.conversation_id
    }

    /// The URL without its optional trailing slash: two spellings of one conversation
    /// compare equal.
    pub fn normalized(&self) -> &str {
        self.url.strip_suffix('/').unwrap_or(&self.url)
    }

    /// The same conversation, whatever the trailing slash.
    pub fn same_as(&self, other: &ConversationUrl) -> bool {
        self.normalized() == other.normalized()
    }
}

impl fmt::Display for ConversationUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.url)
    }
}

/// Splits `https://chatgpt.com/<path>[/]` into its path segments, refusing anything that
/// is not exactly that shape. Segments are returned only when every byte of the path is
/// an ID character or `/`, so no escape, dot segment or control character gets through.
fn path_segments(text: &str) -> Result<Vec<&str>, &'static str> {
    if text.trim() != text {
        return Err("it has surrounding whitespace, which is not part of a URL");
    }
    let Some(path) = text.strip_prefix(PREFIX) else {
        return Err(if text.starts_with("http://") {
            "the scheme must be https"
        } else if text.to_ascii_lowercase().starts_with(PREFIX) {
            "the scheme and host must be lowercase, as the browser's address bar shows them"
        } else {
            "it must start with https://chatgpt.com/ (no port, no user, no other host)"
        });
    };
    if path.contains(['?', '#']) {
        return Err("no query or fragment is allowed, not even an empty '?' or '#'");
    }
    let path = path.strip_suffix('/').unwrap_or(path);
    if !path.bytes().all(|b| b == b'/' || is_id_byte(b)) {
        return Err("the path may contain only letters, digits, '-' and '/'");
    }
    let segments: Vec<&str> = path.split('/').collect();
    if segments.iter().any(|s| s.is_empty()) {
        return Err("the path has an empty segment");
    }
    Ok(segments)
}

fn is_id_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-'
}

fn is_id(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(is_id_byte)
}

fn is_project_id(text: &str) -> bool {
    text.strip_prefix(PROJECT_PREFIX).is_some_and(is_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_urls_accepted() {
        let url = ProjectUrl::parse("https://chatgpt.com/g/g-p-example/project").unwrap();
        assert_eq!(url.id(), "g-p-example");
        let slash = ProjectUrl::parse("https://chatgpt.com/g/g-p-68a1b2-Widget-Research/project/").unwrap();
        assert_eq!(slash.id(), "g-p-68a1b2-Widget-Research");
        assert_eq!(slash.as_str(), "https://chatgpt.com/g/g-p-68a1b2-Widget-Research/project/");
    }

    #[test]
    fn reference_p4_project_urls_refused() {
        for bad in [
            "https://chatgpt.com.evil/g/g-p-good/project",
            "http://chatgpt.com/g/g-p-good/project",
            "https://chatgpt.com/c/chat-1",
            "https://chatgpt.com/g/g-p-good/project?redirect=elsewhere",
        ] {
            assert!(matches!(ProjectUrl::parse(bad), Err(UrlError::Project(..))), "{bad:?}");
        }
    }

    #[test]
    fn project_url_look_alikes_and_odd_shapes_refused() {
        for bad in [
            "https://evil.com/chatgpt.com/g/g-p-good/project",
            "https://chatgpt.com:443/g/g-p-good/project",
            "https://user@chatgpt.com/g/g-p-good/project",
            "https://chatgpt.com@evil.com/g/g-p-good/project",
            "https://www.chatgpt.com/g/g-p-good/project",
            "https://evil.chatgpt.com/g/g-p-good/project",
            "https://chatgpt.com.evil.com/g/g-p-good/project",
            "https://CHATGPT.COM/g/g-p-good/project",
            "HTTPS://chatgpt.com/g/g-p-good/project",
            "https://chatgpt.com/g/g-p-go_od/project",
            "https://chatgpt.com/g/g-p-/project",
            "https://chatgpt.com/g/g-x-good/project",
            "https://chatgpt.com/g/good/project",
            "https://chatgpt.com/G/g-p-good/project",
            "https://chatgpt.com/g/g-p-good/Project",
            "https://chatgpt.com/g/g-p-good/project#top",
            "https://chatgpt.com/g/g-p-good/project?",
            "https://chatgpt.com/g/g-p-good/project//",
            "https://chatgpt.com//g/g-p-good/project",
            "https://chatgpt.com/g/g-p-good/./project",
            "https://chatgpt.com/g/g-p-good/../g-p-evil/project",
            "https://chatgpt.com/g/g-p-go%6Fd/project",
            "https://chatgpt.com/g/g-p-good/project/extra",
            "https://chatgpt.com/g/g-p-good",
            "https://chatgpt.com/g/g-p-good/c/chat-1",
            "https://chatgpt.com/g/g-p-good/project\n",
            " https://chatgpt.com/g/g-p-good/project",
            "https://chatgpt.com/g/g-p-good\0/project",
            "https://chatgpt.com\\@evil.com/g/g-p-good/project",
            "https://chatgpt.com",
            "https://chatgpt.com/",
            "chatgpt.com/g/g-p-good/project",
            "//chatgpt.com/g/g-p-good/project",
            "",
        ] {
            assert!(ProjectUrl::parse(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn conversation_urls_accepted() {
        let in_project = ConversationUrl::parse("https://chatgpt.com/g/g-p-example/c/task-1").unwrap();
        assert_eq!(in_project.project_id(), Some("g-p-example"));
        assert_eq!(in_project.conversation_id(), "task-1");
        let plain = ConversationUrl::parse("https://chatgpt.com/c/68a1b2c3-0000-aaaa/").unwrap();
        assert_eq!(plain.project_id(), None);
        assert_eq!(plain.normalized(), "https://chatgpt.com/c/68a1b2c3-0000-aaaa");
        let slash = ConversationUrl::parse("https://chatgpt.com/g/g-p-example/c/task-1/").unwrap();
        assert!(slash.same_as(&in_project));
        assert!(!slash.same_as(&ConversationUrl::parse("https://chatgpt.com/g/g-p-example/c/task-2").unwrap()));
    }

    #[test]
    fn conversation_urls_refused() {
        for bad in [
            "https://chatgpt.com.evil/c/chat-1",
            "http://chatgpt.com/c/chat-1",
            "https://chatgpt.com:443/c/chat-1",
            "https://user@chatgpt.com/c/chat-1",
            "https://evil.com/chatgpt.com/c/chat-1",
            "https://chatgpt.com/c/chat-1?model=x",
            "https://chatgpt.com/c/chat-1#x",
            "https://chatgpt.com/c/chat_1",
            "https://chatgpt.com/c/",
            "https://chatgpt.com/c",
            "https://chatgpt.com/c/chat-1/extra",
            "https://chatgpt.com/g/g-p-example/project",
            "https://chatgpt.com/g/not-a-project/c/chat-1",
            "https://chatgpt.com/g/g-p-ex_ample/c/chat-1",
            "https://chatgpt.com/g/g-p-example/c/",
            "https://chatgpt.com/c/chat-1//",
            "https://chatgpt.com/C/chat-1",
            "",
        ] {
            assert!(matches!(ConversationUrl::parse(bad), Err(UrlError::Conversation(..))), "{bad:?}");
        }
    }

    #[test]
    fn error_messages_say_what_was_expected() {
        let err = ProjectUrl::parse("http://chatgpt.com/g/g-p-good/project").unwrap_err().to_string();
        assert!(err.contains("browser-observed ChatGPT project home URL") && err.contains("https"), "{err}");
        let err = ConversationUrl::parse("https://chatgpt.com/c/a_b").unwrap_err().to_string();
        assert!(err.contains("browser-observed ChatGPT conversation URL"), "{err}");
    }
}

//! A registry record (design §12.6): `{"repository","project_url","project_name"}`,
//! compact JSON without a trailing newline, exactly as the reference tool writes it, so
//! either tool reads the other's files. Keys neither tool knows are kept on rewrite.

use serde_json::{Map, Value};

use super::key::RepoKey;
use super::urls::{ProjectUrl, UrlError};

/// Records are a few hundred bytes; anything past this is not a record.
pub const MAX_RECORD_BYTES: usize = 1024 * 1024;
/// A ChatGPT Project name is one short line; this only stops abuse.
pub const MAX_NAME_CHARS: usize = 500;

/// Why a record (or a name for one) is unusable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    /// The file is larger than any record could be.
    #[error("the record is larger than {MAX_RECORD_BYTES} bytes")]
    TooLarge,
    /// Not a JSON object whose `repository` is the file's own key.
    #[error("invalid repository project mapping: {0}")]
    Mapping(String),
    /// A missing, blank or unusable `project_url` or `project_name`.
    #[error("invalid project URL or name: {0}")]
    Fields(String),
    /// The stored Project URL is not a valid one.
    #[error("invalid project URL in the record: {0}")]
    Url(#[from] UrlError),
}

/// One repository's link to its ChatGPT Project, `<registry>/<owner>/<repo>.json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The repository, `owner/repo` lowercase; always the file's own key.
    pub repository: String,
    /// The Project's address (`https://chatgpt.com/g/g-p-…/project`).
    pub project_url: String,
    /// The Project's name as the browser shows it.
    pub project_name: String,
    /// Keys written by someone else; preserved, never interpreted.
    pub extra: Map<String, Value>,
}

impl Record {
    /// A new record linking `key` to the Project at `url` named `name`.
    pub fn new(key: &RepoKey, url: &ProjectUrl, name: &str) -> Record {
        Record {
            repository: key.to_string(),
            project_url: url.as_str().to_owned(),
            project_name: name.to_owned(),
            extra: Map::new(),
        }
    }

    /// Parses and validates a record read from `key`'s file. The stored name is returned as
    /// stored (the reference tool kept surrounding whitespace).
    pub fn parse(bytes: &[u8], key: &RepoKey) -> Result<Record, RecordError> {
        if bytes.len() > MAX_RECORD_BYTES {
            return Err(RecordError::TooLarge);
        }
        let value: Value = serde_json::from_slice(bytes)
            .map_err(|e| RecordError::Mapping(format!("the file is not valid JSON ({e})")))?;
        let Value::Object(mut map) = value else {
            return Err(RecordError::Mapping("the file must hold a JSON object".into()));
        };
        let repository = match map.shift_remove("repository") {
            Some(Value::String(r)) if r == key.to_string() => r,
            Some(Value::String(r)) => {
                return Err(RecordError::Mapping(format!("its repository is {r:?}, but the file is for {key}")));
            }
            _ => return Err(RecordError::Mapping(format!("its repository field is not {:?}", key.to_string()))),
        };
        let project_url = match map.shift_remove("project_url") {
            Some(Value::String(u)) => u,
            _ => return Err(RecordError::Fields("project_url is not a string".into())),
        };
        let project_name = match map.shift_remove("project_name") {
            Some(Value::String(n)) if !n.trim().is_empty() => n,
            _ => return Err(RecordError::Fields("project_name is not a non-blank string".into())),
        };
        ProjectUrl::parse(&project_url)?;
        Ok(Record { repository, project_url, project_name, extra: map })
    }

    /// The validated Project URL (checked by [`Record::parse`] or built from one).
    pub fn url(&self) -> Result<ProjectUrl, UrlError> {
        ProjectUrl::parse(&self.project_url)
    }

    /// The `g-p-…` Project ID, or empty if the URL is somehow invalid (never for a parsed record).
    pub fn project_id(&self) -> String {
        self.url().map(|u| u.id().to_owned()).unwrap_or_default()
    }

    /// Compact JSON, the three fields first, then any preserved keys; no trailing newline.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut map = Map::new();
        map.insert("repository".into(), Value::from(self.repository.as_str()));
        map.insert("project_url".into(), Value::from(self.project_url.as_str()));
        map.insert("project_name".into(), Value::from(self.project_name.as_str()));
        for (k, v) in &self.extra {
            map.entry(k.clone()).or_insert_with(|| v.clone());
        }
        serde_json::to_vec(&Value::Object(map)).unwrap_or_default()
    }
}

/// Checks a name given to `bind` and returns it trimmed (what is stored).
pub fn clean_name(name: &str) -> Result<String, RecordError> {
    let trimmed = name.trim();
    if trimmed.is_empty() {
        return Err(RecordError::Fields("--project-name is blank; give the Project name shown in the browser".into()));
    }
    if trimmed.chars().any(char::is_control) {
        return Err(RecordError::Fields("--project-name contains control characters (a newline, tab or NUL)".into()));
    }
    if trimmed.chars().count() > MAX_NAME_CHARS {
        return Err(RecordError::Fields(format!("--project-name is longer than {MAX_NAME_CHARS} characters")));
    }
    Ok(trimmed.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> RepoKey {
        RepoKey::parse("acme/widget").unwrap()
    }

    #[test]
    fn a_record_round_trips_in_the_reference_format() {
        let url = ProjectUrl::parse("https://chatgpt.com/g/g-p-example/project").unwrap();
        let record = Record::new(&key(), &url, "Widget");
        let bytes = record.to_bytes();
        assert_eq!(
            String::from_utf8(bytes.clone()).unwrap(),
            r#"{"repository":"acme/widget","project_url":"https://chatgpt.com/g/g-p-example/project","project_name":"Widget"}"#
        );
        assert_eq!(Record::parse(&bytes, &key()).unwrap(), record);
        assert_eq!(record.project_id(), "g-p-example");
    }

    #[test]
    fn reference_spelling_with_spaces_and_extra_keys_is_read_and_kept() {
        let text = br#"{"repository": "acme/widget", "project_url": "https://chatgpt.com/g/g-p-x/project/", "project_name": "  Widget  ", "note": {"by": "me"}}"#;
        let record = Record::parse(text, &key()).unwrap();
        assert_eq!(record.project_name, "  Widget  ");
        assert_eq!(record.extra["note"]["by"], "me");
        let back: Value = serde_json::from_slice(&record.to_bytes()).unwrap();
        assert_eq!(back["note"]["by"], "me");
    }

    /// Found by the `registry_record` fuzz target: removing the known keys reordered the
    /// preserved ones, so every rewrite of a record permuted them.
    #[test]
    fn preserved_keys_keep_their_order_across_rewrites() {
        let text = br#"{"repository":"acme/widget","project_url":"https://chatgpt.com/g/g-p-x/project","project_name":"W","a":1,"b":2,"c":3}"#;
        let once = Record::parse(text, &key()).unwrap().to_bytes();
        assert_eq!(once, text.to_vec());
        assert_eq!(Record::parse(&once, &key()).unwrap().to_bytes(), once);
    }

    #[test]
    fn invalid_records_are_errors_not_absent() {
        for bad in [
            &br#"{"repository":"#[..],
            b"",
            b"[]",
            b"null",
            br#"{"repository":"acme/other","project_url":"https://chatgpt.com/g/g-p-x/project","project_name":"n"}"#,
            br#"{"repository":"Acme/Widget","project_url":"https://chatgpt.com/g/g-p-x/project","project_name":"n"}"#,
            br#"{"project_url":"https://chatgpt.com/g/g-p-x/project","project_name":"n"}"#,
            br#"{"repository":"acme/widget","project_url":4,"project_name":"n"}"#,
            br#"{"repository":"acme/widget","project_url":"https://chatgpt.com/g/g-p-x/project","project_name":"  "}"#,
            br#"{"repository":"acme/widget","project_url":"https://chatgpt.com/g/g-p-x/project"}"#,
            br#"{"repository":"acme/widget","project_url":"http://chatgpt.com/g/g-p-x/project","project_name":"n"}"#,
        ] {
            assert!(Record::parse(bad, &key()).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
        assert_eq!(Record::parse(&vec![b' '; MAX_RECORD_BYTES + 1], &key()), Err(RecordError::TooLarge));
    }

    #[test]
    fn names_are_trimmed_and_checked() {
        assert_eq!(clean_name("  Existing product research \n").unwrap(), "Existing product research");
        for bad in ["", "   ", "a\nb", "a\0b", &"x".repeat(MAX_NAME_CHARS + 1)] {
            assert!(clean_name(bad).is_err(), "{bad:?}");
        }
    }
}

//! The cycle journal (design §5.4): `NAME.d/events.jsonl`, append-only, one event per line,
//! each carrying `hash = sha256(previous hash + canonical JSON of this event)`, so an edited
//! or removed line is detected by `forgeloop log --verify`.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::private;
use crate::domain::event::EventKind;
use crate::domain::event_data::EventData;
use crate::domain::state::{Actor, sha256_hex};

/// One line of the journal, as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Its place in the journal, from 1, one more than the line before.
    pub seq: u64,
    /// When it was appended (RFC 3339, UTC).
    pub at: String,
    /// The event's name (an [`EventKind`]'s, or a newer version's).
    pub kind: String,
    /// Who caused it.
    pub actor: Actor,
    /// What it records (redacted); [`Event::typed`] reads it.
    pub data: Value,
    /// sha256 of the previous line's hash and this event's canonical JSON.
    pub hash: String,
}

impl Event {
    /// The kind, when this forgeloop knows it (a newer version's events stay readable).
    pub fn event_kind(&self) -> Option<EventKind> {
        EventKind::parse(&self.kind)
    }

    /// What the event records, typed; `None` for a kind or shape this version does not know.
    pub fn typed(&self) -> Option<EventData> {
        EventData::parse(&self.kind, &self.data)
    }
}

/// An event before it is numbered and chained.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEvent {
    /// What happened.
    pub kind: EventKind,
    /// Who caused it.
    pub actor: Actor,
    /// What it records, as the line's `data`.
    pub data: Value,
}

impl NewEvent {
    /// An event from its parts; writers use [`NewEvent::of`], which cannot mismatch them.
    pub fn new(kind: EventKind, actor: Actor, data: Value) -> Self {
        NewEvent { kind, actor, data }
    }

    /// The event `data` records, by `actor`: how writers make one (the kind comes with it).
    pub fn of(actor: Actor, data: EventData) -> Self {
        NewEvent { kind: data.kind(), actor, data: data.to_value() }
    }
}

/// Why the journal could not be read or appended to.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// Opening, reading or writing it failed (a symlink at its path included).
    #[error("cannot access the journal {path}: {source}")]
    Io {
        /// The journal file.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// A complete line is not an event, or (verifying) breaks the hash chain.
    #[error("the journal {path} is damaged at line {line}: {reason}; inspect it with `forgeloop log --verify`")]
    Damaged {
        /// The journal file.
        path: PathBuf,
        /// The damaged line, from 1.
        line: usize,
        /// What is wrong with it.
        reason: String,
    },
}

/// Sorted keys, no whitespace: the form the hash is computed over.
fn canonical_json(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let fields: Vec<String> =
                keys.into_iter().map(|k| format!("{}:{}", Value::String(k.clone()), canonical_json(&map[k]))).collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => format!("[{}]", items.iter().map(canonical_json).collect::<Vec<_>>().join(",")),
        other => other.to_string(),
    }
}

fn chain_hash(previous: &str, seq: u64, at: &str, kind: &str, actor: Actor, data: &Value) -> String {
    let mut body = Map::new();
    body.insert("seq".into(), Value::from(seq));
    body.insert("at".into(), Value::from(at));
    body.insert("kind".into(), Value::from(kind));
    body.insert("actor".into(), Value::from(actor.as_str()));
    body.insert("data".into(), data.clone());
    sha256_hex(format!("{previous}{}", canonical_json(&Value::Object(body))).as_bytes())
}

/// Appends events to a journal. The caller holds the cycle lock, so there is one writer.
pub fn append(path: &Path, events: &[NewEvent], now: &str) -> Result<Vec<Event>, JournalError> {
    let io_err = |source| JournalError::Io { path: path.to_path_buf(), source };
    if let Some(parent) = path.parent() {
        private::create_dir_all(parent).map_err(io_err)?;
    }
    let mut file = private::open(OpenOptions::new().read(true).append(true).create(true), path).map_err(io_err)?;
    let (mut seq, mut previous) = match last_complete_line(&mut file).map_err(io_err)? {
        None => (0, String::new()),
        Some((line_no, text)) => {
            let event: Event = serde_json::from_str(&text).map_err(|e| JournalError::Damaged {
                path: path.to_path_buf(),
                line: line_no,
                reason: e.to_string(),
            })?;
            (event.seq, event.hash)
        }
    };
    let mut written = Vec::with_capacity(events.len());
    let mut buffer = String::new();
    for new in events {
        seq += 1;
        let hash = chain_hash(&previous, seq, now, new.kind.as_str(), new.actor, &new.data);
        let event = Event {
            seq,
            at: now.to_owned(),
            kind: new.kind.as_str().to_owned(),
            actor: new.actor,
            data: new.data.clone(),
            hash,
        };
        buffer.push_str(&serde_json::to_string(&event).unwrap_or_default());
        buffer.push('\n');
        previous = event.hash.clone();
        written.push(event);
    }
    // One write of whole lines, then fsync: a crash leaves at most one torn last line.
    file.write_all(buffer.as_bytes()).map_err(io_err)?;
    file.sync_data().map_err(io_err)?;
    Ok(written)
}

/// Finds the last newline-terminated line; a torn fragment after it (a crash mid-append)
/// is cut off so the next append continues a clean chain. Returns (1-based line, text).
fn last_complete_line(file: &mut File) -> io::Result<Option<(usize, String)>> {
    let len = file.seek(SeekFrom::End(0))?;
    if len == 0 {
        return Ok(None);
    }
    let mut all = Vec::new();
    file.seek(SeekFrom::Start(0))?;
    file.read_to_end(&mut all)?;
    let complete_end = match all.iter().rposition(|&b| b == b'\n') {
        Some(i) => i + 1,
        None => 0,
    };
    if complete_end < all.len() {
        file.set_len(complete_end as u64)?;
        all.truncate(complete_end);
    }
    if all.is_empty() {
        return Ok(None);
    }
    let body = &all[..all.len() - 1];
    let start = body.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let line_no = body.iter().filter(|&&b| b == b'\n').count() + 1;
    Ok(Some((line_no, String::from_utf8_lossy(&body[start..]).into_owned())))
}

/// What a reader found: the events, and whether a torn last line was ignored.
#[derive(Debug, Clone, PartialEq)]
pub struct Contents {
    /// Every complete event, in order.
    pub events: Vec<Event>,
    /// The last line was cut short by a crash and was ignored.
    pub torn_tail: bool,
}

/// Reads every event. A missing journal is empty; a torn last line is reported and
/// ignored; any other unreadable line is an error naming it.
pub fn read(path: &Path) -> Result<Contents, JournalError> {
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            return Ok(Contents { events: Vec::new(), torn_tail: false });
        }
        Err(source) => return Err(JournalError::Io { path: path.to_path_buf(), source }),
    };
    let ends_clean = bytes.last().is_none_or(|&b| b == b'\n');
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.split_terminator('\n').collect();
    let mut events = Vec::with_capacity(lines.len());
    let mut torn_tail = false;
    for (i, line) in lines.iter().enumerate() {
        let is_last = i + 1 == lines.len();
        match serde_json::from_str::<Event>(line) {
            Ok(event) => events.push(event),
            Err(_) if is_last && !ends_clean => torn_tail = true,
            Err(e) => {
                return Err(JournalError::Damaged { path: path.to_path_buf(), line: i + 1, reason: e.to_string() });
            }
        }
    }
    Ok(Contents { events, torn_tail })
}

/// Checks numbering and the hash chain.
pub fn verify(path: &Path) -> Result<Contents, JournalError> {
    let contents = read(path)?;
    let mut previous = String::new();
    for (i, event) in contents.events.iter().enumerate() {
        let damaged = |reason: String| JournalError::Damaged { path: path.to_path_buf(), line: i + 1, reason };
        if event.seq != i as u64 + 1 {
            return Err(damaged(format!("expected event {} but found {}", i + 1, event.seq)));
        }
        let expected = chain_hash(&previous, event.seq, &event.at, &event.kind, event.actor, &event.data);
        if expected != event.hash {
            return Err(damaged("hash mismatch: the line was edited, or an earlier line was removed".into()));
        }
        previous = event.hash.clone();
    }
    Ok(contents)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sample(path: &Path) {
        append(
            path,
            &[NewEvent::new(EventKind::Created, Actor::Agent, json!({"b": 1, "a": [1, {"z": 1, "y": 2}]}))],
            "t1",
        )
        .unwrap();
        append(
            path,
            &[
                NewEvent::new(EventKind::MessageSent, Actor::Agent, json!({"sha256": "x"})),
                NewEvent::new(EventKind::StatusChanged, Actor::System, json!({"from": "A", "to": "B"})),
            ],
            "t2",
        )
        .unwrap();
    }

    #[test]
    fn canonical_json_sorts_keys_recursively() {
        assert_eq!(
            canonical_json(&json!({"b": 1, "a": {"d": [1, {"f": 1, "e": "x"}], "c": null}})),
            r#"{"a":{"c":null,"d":[1,{"e":"x","f":1}]},"b":1}"#
        );
    }

    #[test]
    fn the_chain_verifies_and_numbers_events() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.d/events.jsonl");
        sample(&path);
        let contents = verify(&path).unwrap();
        assert_eq!(contents.events.iter().map(|e| e.seq).collect::<Vec<_>>(), [1, 2, 3]);
        assert!(!contents.torn_tail);
    }

    #[test]
    fn an_edited_or_removed_line_is_detected() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        sample(&path);
        let original = fs::read_to_string(&path).unwrap();
        fs::write(&path, original.replace("\"sha256\":\"x\"", "\"sha256\":\"y\"")).unwrap();
        let err = verify(&path).unwrap_err().to_string();
        assert!(err.contains("line 2") && err.contains("hash mismatch"), "{err}");
        let mut lines: Vec<&str> = original.lines().collect();
        lines.remove(1);
        fs::write(&path, lines.join("\n") + "\n").unwrap();
        assert!(verify(&path).unwrap_err().to_string().contains("line 2"));
    }

    #[test]
    fn a_torn_last_line_is_ignored_by_readers_and_cut_by_the_next_append() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        sample(&path);
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(b"{\"seq\":4,\"at\":\"t3\",\"ki").unwrap();
        let contents = verify(&path).unwrap();
        assert!(contents.torn_tail);
        assert_eq!(contents.events.len(), 3);
        append(&path, &[NewEvent::new(EventKind::Aborted, Actor::Human, json!({}))], "t4").unwrap();
        let contents = verify(&path).unwrap();
        assert!(!contents.torn_tail);
        assert_eq!(contents.events.last().unwrap().seq, 4);
    }

    #[test]
    fn a_damaged_middle_line_is_an_error_not_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        sample(&path);
        let text = fs::read_to_string(&path).unwrap().replacen("{\"seq\":2", "garbage{", 1);
        fs::write(&path, text).unwrap();
        assert!(matches!(read(&path), Err(JournalError::Damaged { line: 2, .. })));
    }
}

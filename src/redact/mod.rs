//! Redaction (SPEC §7). PLACEHOLDER API: the engine is being written separately; this stub
//! keeps the public surface stable so callers can be wired now.

use std::borrow::Cow;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One masked span, reported by `explain` (never the value itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub kind: String,
    /// Byte offsets in the input text.
    pub start: usize,
    pub end: usize,
}

#[derive(Debug, Default, Clone)]
pub struct RedactorBuilder {
    known: Vec<(String, String)>,
    home: Option<PathBuf>,
    checkouts: Vec<PathBuf>,
}

impl RedactorBuilder {
    /// A secret value to mask wherever it appears, in any encoding.
    pub fn known_value(mut self, kind: &str, value: &str) -> Self {
        if value.len() >= 8 {
            self.known.push((kind.to_owned(), value.to_owned()));
        }
        self
    }

    /// Takes the values of credential-like variables from an environment.
    pub fn env_vars<I, K, V>(mut self, vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        for (name, value) in vars {
            if crate::domain::secret_names::looks_like_credential(name.as_ref()) {
                self = self.known_value("env-secret", value.as_ref());
            }
        }
        self
    }

    pub fn home_dir(mut self, home: &Path) -> Self {
        self.home = Some(home.to_path_buf());
        self
    }

    pub fn checkout_dir(mut self, dir: &Path) -> Self {
        self.checkouts.push(dir.to_path_buf());
        self
    }

    pub fn build(self) -> Redactor {
        Redactor { inner: Arc::new(self) }
    }
}

/// Built once per process; cheap to clone and share between threads.
#[derive(Debug, Clone)]
pub struct Redactor {
    inner: Arc<RedactorBuilder>,
}

impl Default for Redactor {
    fn default() -> Self {
        RedactorBuilder::default().build()
    }
}

impl Redactor {
    pub fn builder() -> RedactorBuilder {
        RedactorBuilder::default()
    }

    /// The same rules plus a run's checkout directory, which becomes `<checkout>`.
    pub fn with_checkout(&self, dir: &Path) -> Redactor {
        (*self.inner).clone().checkout_dir(dir).build()
    }

    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        self.explain(text).0
    }

    pub fn explain<'a>(&self, text: &'a str) -> (Cow<'a, str>, Vec<Finding>) {
        let mut out = text.to_owned();
        for dir in &self.inner.checkouts {
            if let Some(dir) = dir.to_str() {
                out = out.replace(dir, "<checkout>");
            }
        }
        for (kind, value) in &self.inner.known {
            out = out.replace(value, &format!("[REDACTED:{kind}]"));
        }
        if let Some(home) = self.inner.home.as_ref().and_then(|h| h.to_str()).filter(|h| h.len() > 1) {
            out = out.replace(home, "~");
        }
        if out == text { (Cow::Borrowed(text), Vec::new()) } else { (Cow::Owned(out), Vec::new()) }
    }

    /// Redacts every string in a JSON document in place.
    pub fn redact_json(&self, value: &mut serde_json::Value) {
        match value {
            serde_json::Value::String(s) => {
                if let Cow::Owned(new) = self.redact(s) {
                    *s = new;
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(|v| self.redact_json(v)),
            serde_json::Value::Object(map) => map.values_mut().for_each(|v| self.redact_json(v)),
            _ => {}
        }
    }

    /// A writer that redacts line by line into `out`.
    pub fn stream<W: Write>(&self, out: W) -> StreamRedactor<W> {
        StreamRedactor { redactor: self.clone(), out, pending: Vec::new() }
    }
}

/// Bytes in, redacted lines out; flush or finish to emit a last partial line.
pub struct StreamRedactor<W: Write> {
    redactor: Redactor,
    out: W,
    pending: Vec<u8>,
}

impl<W: Write> StreamRedactor<W> {
    pub fn finish(mut self) -> io::Result<W> {
        self.emit_pending()?;
        self.out.flush()?;
        Ok(self.out)
    }

    fn emit_pending(&mut self) -> io::Result<()> {
        if !self.pending.is_empty() {
            let text = String::from_utf8_lossy(&self.pending).into_owned();
            self.out.write_all(self.redactor.redact(&text).as_bytes())?;
            self.pending.clear();
        }
        Ok(())
    }
}

impl<W: Write> Write for StreamRedactor<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        for &byte in buf {
            self.pending.push(byte);
            if byte == b'\n' {
                self.emit_pending()?;
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

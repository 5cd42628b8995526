//! `forgeloop redact [FILE]`: the redactor as a filter. Streams (bounded memory, invalid
//! UTF-8 replaced); `--explain` lists what was masked by kind and position, never the value,
//! and the user rules in effect (a user rule's findings carry its id as their kind).

use std::io::{self, Read, Write};

use crate::cycle::Ctx;
use crate::error::{Error, Result};
use crate::redact::explain_report;

use super::args::RedactArgs;
use crate::output;

/// `--explain` reads the whole input to number lines; more than this is refused.
const MAX_EXPLAIN_BYTES: u64 = 256 * 1024 * 1024;

pub(super) fn run(ctx: &Ctx, args: &RedactArgs) -> Result<i32> {
    let mut input: Box<dyn Read> = match &args.file {
        Some(path) => {
            Box::new(std::fs::File::open(path).map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?)
        }
        None => Box::new(io::stdin().lock()),
    };
    if args.explain {
        let mut bytes = Vec::new();
        input.take(MAX_EXPLAIN_BYTES + 1).read_to_end(&mut bytes).map_err(|e| Error::io("cannot read the input", e))?;
        if bytes.len() as u64 > MAX_EXPLAIN_BYTES {
            return Err(Error::Invalid(format!("--explain reads at most {MAX_EXPLAIN_BYTES} bytes")));
        }
        let text = String::from_utf8_lossy(&bytes);
        let (_, findings) = ctx.redactor.explain(&text);
        let mut report = explain_report(&findings);
        let rules = ctx.redactor.user_rules();
        if !rules.is_empty() {
            report["user_rules"] = rules.specs().iter().map(|r| serde_json::Value::from(r.id.as_str())).collect();
        }
        return Ok(output::json(&ctx.redactor, &report));
    }
    let stdout = io::stdout().lock();
    let mut stream = ctx.redactor.stream(io::BufWriter::new(stdout));
    let copied = io::copy(&mut input, &mut stream).and_then(|_| stream.finish()).and_then(|mut out| out.flush());
    match copied {
        Ok(()) => Ok(0),
        // A reader that went away (`| head`) is not an error worth a message.
        Err(err) if err.kind() == io::ErrorKind::BrokenPipe => Ok(0),
        Err(err) => Err(Error::io("cannot redact the input", err)),
    }
}

// forgeloop (issue 57): a `node --test` reporter, added through NODE_OPTIONS beside the spec
// reporter the person sees, that records each test's outcome as node's test runner reports it.
// The record format is documented in src/results/mod.rs. Records are written at once
// (fs.writeSync on an append-mode descriptor) to $FORGELOOP_RESULTS/node-<pid>.jsonl rather
// than through the reporter's destination: node opens a destination afresh for every test run
// (a second `node --test` of the same command would truncate the first one's), and a process
// that exits in the middle loses what a stream still buffered. Its destination is /dev/null.
//
// Node loads a reporter only in the process that runs the tests and reports them: the
// `node --test` process (its per-file child processes report to it), or a program run directly
// that uses node:test. Loading it is the run's beginning; the end of its event stream, the run's
// end. A test's id is its file (relative to the working directory) and the names of its
// enclosing suites and tests, joined by " > ".

import fs from 'node:fs';
import path from 'node:path';

const VERSION = 1;
const dir = process.env.FORGELOOP_RESULTS;
let fd = null;

function emit(record) {
  if (!dir) return;
  try {
    if (fd === null) fd = fs.openSync(path.join(dir, `node-${process.pid}.jsonl`), 'a', 0o644);
    fs.writeSync(fd, JSON.stringify({ v: VERSION, r: 'node', ...record }) + '\n');
  } catch {
    // Recording must never change the run.
  }
}

emit({ k: 'begin', pid: process.pid });

function relative(file) {
  if (typeof file !== 'string') return '';
  let name = file;
  if (name.startsWith('file://')) {
    try {
      name = new URL(name).pathname;
    } catch {
      // Keep it as it is.
    }
  }
  const rel = path.relative(process.cwd(), name);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : name;
}

export default async function* forgeloopReporter(source) {
  // The names of the tests and suites that enclose the current one, per file, by nesting.
  const stacks = new Map();
  let tests = 0;
  let failed = 0;
  for await (const event of source) {
    try {
      const data = event.data || {};
      const file = data.file;
      if (event.type === 'test:start') {
        const stack = stacks.get(file) || [];
        stack.length = data.nesting || 0;
        stack.push(String(data.name));
        stacks.set(file, stack);
        continue;
      }
      if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
      const details = data.details || {};
      const failure = (details.error && (details.error.failureType || (details.error.cause && details.error.cause.failureType))) || '';
      const nesting = data.nesting || 0;
      // A test file whose process reported no test of its own: only its failure (it did not
      // load, or exited non-zero) says anything.
      const whole_file = nesting === 0 && typeof file === 'string' && data.name === file;
      const suite = details.type === 'suite';
      if ((whole_file || suite) && (event.type === 'test:pass' || failure === 'subtestsFailed')) continue;
      const stack = (stacks.get(file) || []).slice(0, nesting);
      const names = whole_file ? [] : [...stack, String(data.name)];
      const id = [relative(file), ...names].filter((part) => part !== '').join(' > ');
      let outcome;
      if (event.type === 'test:pass') {
        outcome = data.skip !== undefined && data.skip !== false ? 'skipped' : 'passed';
      } else if (data.todo !== undefined && data.todo !== false) {
        outcome = 'xfailed';
      } else if (whole_file || suite || failure === 'cancelledByParent' || failure === 'hookFailed') {
        outcome = 'error';
      } else {
        outcome = 'failed';
      }
      tests += 1;
      if (outcome === 'failed' || outcome === 'error') failed += 1;
      emit({ k: 'result', id, o: outcome });
    } catch {
      // Recording must never change the run.
    }
  }
  emit({ k: 'end', tests, failed });
}

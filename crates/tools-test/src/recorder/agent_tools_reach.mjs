// agent-tools' recorder for vitest: which of the project's functions each test file runs.
//
// Loaded as vitest's custom coverage provider (`--coverage.provider=custom`), so nothing is
// installed in the project and its own configuration is kept. In each worker, V8's precise
// coverage (function granularity, through `node:inspector`) is taken after each test file;
// the functions that ran are placed in their source file's lines through the source map
// vite made for the module, read from vitest's module cache (vitest 1–3, vite-node; elsewhere
// nothing is recorded). The main process writes, once the run is over, one JSON file to
// `$AGENT_TOOLS_REACH_OUT-<pid>.json`, shaped as the pytest plugin's:
//
//     {"files": {path: sha256 of its text},
//      "functions": [[path, first line, last line, name], ...],
//      "tests": [{"id": test file, "file": test file, "line": 1, "functions": [index, ...]}]}
//
// Paths are relative to `$AGENT_TOOLS_REACH_ROOT`, with `/`; only files under it and outside
// `node_modules` are kept. A test file's functions include what ran while it was collected.

import { createHash } from "node:crypto";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import inspector from "node:inspector";
import { isAbsolute, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = process.env.AGENT_TOOLS_REACH_ROOT || process.cwd();
const OUT = process.env.AGENT_TOOLS_REACH_OUT;

// ---- In each worker ----

// vitest resets its module cache between test files and runs this module afresh: the
// inspector session lives on the worker's global object.
const STATE = Symbol.for("agent-tools-reach");
const worker = (globalThis[STATE] ??= { session: undefined });

function post(method, params) {
  const { session } = worker;
  return new Promise((resolve, reject) =>
    session.post(method, params, (err, res) => (err ? reject(err) : resolve(res))),
  );
}

async function startCoverage() {
  if (worker.session) return;
  try {
    worker.session = new inspector.Session();
    worker.session.connect();
    await post("Profiler.enable");
    await post("Profiler.startPreciseCoverage", { callCount: true, detailed: false });
  } catch {
    worker.session = undefined;
  }
}

async function takeCoverage() {
  if (!worker.session) return undefined;
  let result;
  try {
    ({ result } = await post("Profiler.takePreciseCoverage"));
  } catch {
    return undefined;
  }
  const cache = globalThis.__vitest_worker__?.moduleCache;
  if (!cache || typeof cache.getSourceMap !== "function") return undefined;
  const files = {};
  const functions = [];
  for (const script of result) {
    const path = inProject(script.url);
    if (!path) continue;
    const placed = placeFunctions(script, cache);
    if (!placed.length) continue;
    const digest = digestOf(script.url);
    if (!digest) continue;
    files[path] = digest;
    for (const [first, last, name] of placed) functions.push([path, first, last, name]);
  }
  return { agentToolsReach: 1, files, functions };
}

async function stopCoverage() {
  if (!worker.session) return;
  try {
    await post("Profiler.stopPreciseCoverage");
    await post("Profiler.disable");
  } catch {
    // The worker is ending anyway.
  }
  worker.session.disconnect();
  worker.session = undefined;
}

/** The script's path relative to the project, with `/`, when it is one of the project's own. */
function inProject(url) {
  let file = url;
  if (file.startsWith("file://")) {
    try {
      file = fileURLToPath(file);
    } catch {
      return undefined;
    }
  }
  if (!isAbsolute(file)) return undefined;
  const rel = relative(ROOT, file);
  if (!rel || rel.startsWith("..") || isAbsolute(rel)) return undefined;
  const parts = rel.split(sep);
  if (parts.includes("node_modules")) return undefined;
  return parts.join("/");
}

function scriptPath(url) {
  return url.startsWith("file://") ? fileURLToPath(url) : url;
}

function digestOf(url) {
  try {
    return createHash("sha256").update(readFileSync(scriptPath(url))).digest("hex");
  } catch {
    return undefined;
  }
}

/**
 * The functions of `script` that ran since the last take, as `[first, last, name]` lines of
 * the source file. vite-node runs a module's transformed code wrapped in a function, after a
 * prefix of its own: the script's length less the code's (and the wrapper's two closing
 * braces and newline) is that prefix.
 */
function placeFunctions(script, cache) {
  const entry = cache.get(scriptPath(script.url));
  const code = entry?.code;
  if (typeof code !== "string") return [];
  let map;
  try {
    map = cache.getSourceMap(scriptPath(script.url));
  } catch {
    return [];
  }
  if (!map || typeof map.mappings !== "string") return [];
  const whole = script.functions.find((f) => f.ranges[0]?.startOffset === 0);
  if (!whole) return [];
  const prefix = whole.ranges[0].endOffset - code.length - 3;
  if (prefix < 0) return [];
  const lines = lineStarts(code);
  const decoded = decodeMappings(map.mappings);
  const out = [];
  for (const f of script.functions) {
    const range = f.ranges[0];
    if (!range || range.count === 0) continue;
    const start = range.startOffset - prefix;
    const end = range.endOffset - prefix - 1;
    // The script and vite-node's wrapper: the module's top level, not a function of it.
    if (start <= 0 || end >= code.length - 1) continue;
    const first = originalLine(decoded, lines, start);
    const last = originalLine(decoded, lines, end);
    if (first === undefined || last === undefined) continue;
    out.push([first + 1, Math.max(first, last) + 1, f.functionName || ""]);
  }
  return out;
}

function lineStarts(code) {
  const starts = [0];
  for (let i = 0; i < code.length; i++) if (code.charCodeAt(i) === 10) starts.push(i + 1);
  return starts;
}

/** The source line (0-based) of the generated offset: the last mapping at or before it. */
function originalLine(decoded, lines, offset) {
  let lo = 0;
  let hi = lines.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (lines[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  const column = offset - lines[lo];
  for (let line = lo; line >= 0; line--) {
    const segments = decoded[line];
    if (!segments || !segments.length) continue;
    let found;
    for (const s of segments) {
      if (line === lo && s[0] > column) break;
      if (s.length >= 4) found = s;
    }
    if (found) return found[2];
  }
  return undefined;
}

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const DIGIT = new Map([...BASE64].map((c, i) => [c, i]));

/** A source map's `mappings`, per generated line: `[column, source, line, column]` absolute. */
function decodeMappings(mappings) {
  const out = [];
  let source = 0;
  let line = 0;
  let column = 0;
  for (const text of mappings.split(";")) {
    const segments = [];
    let generated = 0;
    for (const seg of text.split(",")) {
      if (!seg) continue;
      const values = [];
      let value = 0;
      let shift = 0;
      for (const c of seg) {
        const digit = DIGIT.get(c);
        if (digit === undefined) break;
        value += (digit & 31) << shift;
        if (digit & 32) {
          shift += 5;
        } else {
          values.push(value & 1 ? -(value >>> 1) : value >>> 1);
          value = 0;
          shift = 0;
        }
      }
      generated += values[0] ?? 0;
      if (values.length >= 4) {
        source += values[1];
        line += values[2];
        column += values[3];
        segments.push([generated, source, line, column]);
      } else {
        segments.push([generated]);
      }
    }
    out.push(segments);
  }
  return out;
}

// ---- In the main process ----

function getProvider() {
  return new ReachProvider();
}

class ReachProvider {
  name = "agent-tools-reach";
  files = {};
  functions = [];
  index = new Map();
  tests = new Map();

  initialize(ctx) {
    this.ctx = ctx;
  }

  resolveOptions() {
    return this.ctx.config.coverage;
  }

  clean() {}

  onAfterSuiteRun({ coverage, testFiles }) {
    if (!coverage || coverage.agentToolsReach !== 1) return;
    Object.assign(this.files, coverage.files);
    const refs = coverage.functions.map((f) => {
      const key = JSON.stringify(f);
      let i = this.index.get(key);
      if (i === undefined) {
        i = this.functions.length;
        this.functions.push(f);
        this.index.set(key, i);
      }
      return i;
    });
    for (const name of testFiles || []) {
      const file = isAbsolute(name) ? inProject(name) : name.split(sep).join("/");
      if (!file) continue;
      const seen = this.tests.get(file) || new Set();
      for (const i of refs) seen.add(i);
      this.tests.set(file, seen);
    }
  }

  onTestFailure() {}

  generateCoverage() {
    if (!OUT) return null;
    const tests = [...this.tests].map(([file, fns]) => ({
      id: file,
      file,
      line: 1,
      functions: [...fns].sort((a, b) => a - b),
    }));
    const text = JSON.stringify({ files: this.files, functions: this.functions, tests });
    const out = `${OUT}-${process.pid}.json`;
    writeFileSync(`${out}.part`, text);
    renameSync(`${out}.part`, out);
    return null;
  }

  reportCoverage() {}

  mergeReports() {}
}

// vitest reads the provider's functions from the module's default export.
export default { getProvider, startCoverage, takeCoverage, stopCoverage };

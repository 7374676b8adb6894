/**
 * The only config I/O: read the main file and its `servers_dir`, then run the pipeline
 * parse → interpolate → validate → rules → normalize (C1–C6). Every stage collects problems
 * instead of throwing, so a user sees all of them at once; a broken config yields no Config (C5).
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { isMap, isScalar, LineCounter, parseDocument, visit, YAMLParseError, type YAMLError } from 'yaml';
import type { z } from 'zod';
import type { Config } from './types.js';
import { interpolate, redactSecrets, retype, type EnvMap } from './interpolate.js';
import {
  formatPath,
  issueProblems,
  locateOffset,
  problemAt,
  valueAt,
  type ConfigProblem,
  type KeyPath,
  type ParsedFile,
} from './locate.js';
import { mainFileEntries, normalizeConfig, type ServerEntry } from './normalize.js';
import { checkRules } from './rules.js';
import { ConfigSchema, ServerSchema, type WrittenServer } from './schema.js';

export type { ConfigProblem } from './locate.js';

/** What {@link loadConfig} returns: a config only when there is no error. */
export interface LoadResult {
  readonly config?: Config;
  readonly errors: readonly ConfigProblem[];
  readonly warnings: readonly ConfigProblem[];
}

/**
 * `text` with its `//` and `/* *\/` comments blanked out, outside strings, character for
 * character (newlines kept), so that every line and column still points at the same place.
 * JSON has no comments, but JSONC files (VS Code's `mcp.json`) do, and users copy them.
 * @example withoutJsonComments('{"a": 1} // note') // '{"a": 1}        '
 */
export function withoutJsonComments(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const char = text[i] as string;
    if (char === '"') {
      // A string, escapes included, copied as it is ("https://..." is no comment).
      let j = i + 1;
      while (j < text.length && text[j] !== '"' && text[j] !== '\n') j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (char === '/' && text[i + 1] === '/') {
      const end = text.indexOf('\n', i);
      const stop = end === -1 ? text.length : end;
      out += ' '.repeat(stop - i);
      i = stop;
    } else if (char === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end === -1 ? text.length : end + 2;
      out += text.slice(i, stop).replace(/[^\n]/g, ' ');
      i = stop;
    } else {
      out += char;
      i += 1;
    }
  }
  return out;
}

/** C5: problems listed per file before the rest is summed up in one line. */
export const MAX_PROBLEMS_PER_FILE = 100;

/** How many problems one zod issue stands for (an unrecognized_keys issue lists many keys). */
function issueCount(issue: { code: string; keys?: readonly string[] }): number {
  return issue.code === 'unrecognized_keys' ? (issue.keys?.length ?? 1) : 1;
}

/** Keys repeated within one map (scalar keys, compared as the parser does), in one pass per map. */
function duplicateKeys(doc: ReturnType<typeof parseDocument>): YAMLParseError[] {
  const found: YAMLParseError[] = [];
  visit(doc, {
    Map(_key, map) {
      if (!isMap(map)) return;
      const seen = new Set<unknown>();
      for (const pair of map.items) {
        const key = isScalar(pair.key) ? pair.key.value : pair.key;
        if (!seen.has(key)) {
          seen.add(key);
          continue;
        }
        const range = isScalar(pair.key) ? pair.key.range : undefined;
        if (range !== undefined && range !== null) {
          found.push(new YAMLParseError([range[0], range[1]], 'DUPLICATE_KEY', 'Map keys must be unique'));
        }
      }
    },
  });
  return found;
}

/** How to fix each kind of YAML syntax error, after the parser's own words. */
const SYNTAX_HINTS: Partial<Record<YAMLError['code'], string>> = {
  BAD_INDENT: 'indent keys of the same mapping by the same number of spaces',
  TAB_AS_INDENT: 'indent with spaces, not tabs',
  DUPLICATE_KEY: 'remove one of them',
  MISSING_CHAR: 'add the missing character',
  BLOCK_AS_IMPLICIT_KEY: 'put the nested keys on their own lines, or quote a value that contains ": "',
  MULTILINE_IMPLICIT_KEY: 'put the key on one line, or check the indentation above',
  MULTIPLE_DOCS: 'keep one document per file: remove the "---" separator',
  UNEXPECTED_TOKEN: 'check quotes, commas and brackets here',
  BLOCK_IN_FLOW: 'check for a missing comma or bracket before this point',
};

/**
 * An unclosed `[` or `{`: the parser says the NEXT line "must be sufficiently indented", which
 * reads as an indentation problem there; the mistake is the missing `]` or `}` of the line
 * that opened it.
 */
const UNCLOSED_FLOW =
  /^Flow (sequence|map) in block collection must be sufficiently indented and end with a ([\]}])/;

/** Where a YAML error really starts: an unclosed quote or bracket is reported after it. */
function syntaxOffset(text: string, error: YAMLError): number {
  const quote = /Missing closing (["'])quote/.exec(error.message)?.[1];
  if (quote !== undefined) {
    const opening = text.lastIndexOf(quote, error.pos[0] - 1);
    if (opening !== -1) return opening;
  }
  const flow = UNCLOSED_FLOW.exec(error.message);
  if (flow !== null) {
    const opening = text.lastIndexOf(flow[2] === ']' ? '[' : '{', error.pos[0] - 1);
    if (opening !== -1) return opening;
  }
  return error.pos[0];
}

function syntaxMessage(file: string, text: string, error: YAMLError): string {
  const kind = /\.json$/i.test(file) ? 'JSON' : 'YAML';
  let what = error.message;
  if (error.code === 'DUPLICATE_KEY') {
    // The error's range covers only the key's first character: read the whole key.
    const key = /^("[^"\n]*"|'[^'\n]*'|[^:\n]+)/.exec(text.slice(error.pos[0]))?.[1] ?? '';
    what = `duplicate key "${key.trim().replace(/^["']|["']$/g, '')}"`;
  }
  const quote = /Missing closing (["'])quote/.exec(error.message)?.[1];
  if (quote !== undefined) {
    return `${kind} syntax error: unclosed ${quote === '"' ? 'double' : 'single'} quote: close it with ${quote} where the value ends`;
  }
  const flow = UNCLOSED_FLOW.exec(error.message);
  if (flow !== null) {
    const [open, close] = flow[2] === ']' ? ['[', ']'] : ['{', '}'];
    return `${kind} syntax error: this ${flow[1] === 'sequence' ? 'list' : 'map'} opens with ${open} but is not closed: add ${close} where it ends (a list or map in brackets that goes on over several lines must indent them further)`;
  }
  if (error.code === 'TAB_AS_INDENT') what = 'tab used as indentation';
  if (error.code === 'MULTIPLE_DOCS') what = 'more than one YAML document';
  const hint = SYNTAX_HINTS[error.code];
  return `${kind} syntax error: ${what}${hint === undefined ? '' : `: ${hint}`}`;
}

interface ParseOutcome {
  readonly parsed: ParsedFile;
  readonly tree?: unknown;
  readonly errors: ConfigProblem[];
}

/** Parses YAML or JSON text (JSON through yaml too, so locations work the same), all errors. */
function parseText(file: string, written: string): ParseOutcome {
  // JSON with comments (VS Code's mcp.json allows them): read as JSON without them.
  const text = /\.json$/i.test(file) ? withoutJsonComments(written) : written;
  const lineCounter = new LineCounter();
  // uniqueKeys is checked below in one pass: the parser's own check compares every key of a map
  // with every other (16,000 keys took a second, 50,000 ten).
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: false });
  const docErrors: YAMLError[] = [...doc.errors, ...duplicateKeys(doc)];
  const parsed: ParsedFile = { file, doc, lineCounter };
  const errors: ConfigProblem[] = [];
  const seen = new Set<number>();
  let unclosedQuoteAt = Number.POSITIVE_INFINITY;
  // An unclosed quote swallows the bracket that closed a list after it: that list is no mistake.
  const quoteError = docErrors.find((error) => error.code === 'MISSING_CHAR' && /quote/.test(error.message));
  const quoteAt = quoteError === undefined ? Number.POSITIVE_INFINITY : syntaxOffset(text, quoteError);
  for (const error of docErrors) {
    if (UNCLOSED_FLOW.test(error.message) && error.pos[0] > quoteAt) continue;
    const offset = syntaxOffset(text, error);
    // The parser can report one mistake twice at the same spot, and an unclosed quote swallows
    // the rest of the file so that what follows only echoes it: report the cause once.
    if (seen.has(offset) || offset > unclosedQuoteAt) continue;
    seen.add(offset);
    if (error.code === 'MISSING_CHAR' && /quote/.test(error.message)) unclosedQuoteAt = offset;
    errors.push({
      file,
      ...locateOffset(parsed, offset),
      path: [],
      message: syntaxMessage(file, text, error),
    });
  }
  if (errors.length > 0) return { parsed, errors };
  try {
    // maxAliasCount bounds alias expansion (a "billion laughs" file cannot exhaust memory).
    return { parsed, tree: doc.toJS({ maxAliasCount: 100 }), errors };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { parsed, errors: [{ file, path: [], message: `YAML error: ${reason}` }] };
  }
}

interface Validated<T> {
  readonly data?: T;
  readonly tree: unknown;
  readonly secrets: readonly string[];
  readonly values: readonly string[];
  readonly errors: ConfigProblem[];
}

/** Interpolates (C4) then validates against `schema` (C5), collecting every problem. */
function interpolateAndValidate<S extends z.ZodType>(
  outcome: ParseOutcome,
  schema: S,
  env: EnvMap,
): Validated<z.infer<S>> {
  const { parsed } = outcome;
  const interpolated = interpolate(outcome.tree, env);
  const errors: ConfigProblem[] = interpolated.errors.map((error) =>
    problemAt(parsed, error.path, error.message),
  );
  const tree = interpolated.value;
  let result = schema.safeParse(tree);
  if (!result.success && retypeInterpolated(tree, result.error.issues, interpolated.interpolatedPaths)) {
    result = schema.safeParse(tree);
  }
  if (!result.success) {
    const issues = result.error.issues;
    // "comand: npx" gives both an unknown key and "no transport": the typo is the one to fix.
    const unknownAt = new Set(
      issues.filter((i) => i.code === 'unrecognized_keys').map((i) => formatPath(keyPathOf(i))),
    );
    let more = 0;
    for (const issue of issues) {
      if (isNoTransport(issue) && unknownAt.has(formatPath(keyPathOf(issue)))) continue;
      // C5: every problem is reported, up to a bound: locating one costs a walk of its map, so
      // 16,000 unknown keys took seconds, and nobody reads past the first screens anyway.
      const room = MAX_PROBLEMS_PER_FILE - errors.length;
      const found = room > 0 ? issueProblems(parsed, schema, tree, issue, room) : undefined;
      errors.push(...(found?.problems ?? []));
      more += found === undefined ? issueCount(issue) : found.skipped;
    }
    errors.sort(byPosition);
    if (more > 0) {
      errors.push({
        file: parsed.file,
        path: [],
        message: `and ${more} more problem${more === 1 ? '' : 's'} in this file (the first ${MAX_PROBLEMS_PER_FILE} are listed): fix these and check again`,
      });
    }
  } else {
    errors.sort(byPosition);
  }
  // L2: a message quoting what was written ("got string …") must not reveal an env value.
  const redacted = errors.map((error) => ({
    ...error,
    message: redactSecrets(error.message, interpolated.values),
  }));
  return {
    ...(result.success ? { data: result.data as z.infer<S> } : {}),
    tree,
    secrets: interpolated.secrets,
    values: interpolated.values,
    errors: redacted,
  };
}

function keyPathOf(issue: z.core.$ZodIssue): KeyPath {
  return issue.path.map((segment) => (typeof segment === 'number' ? segment : String(segment)));
}

function isNoTransport(issue: z.core.$ZodIssue): boolean {
  return (
    issue.code === 'custom' && (issue.params as { noTransport?: boolean } | undefined)?.noTransport === true
  );
}

/** Problems in reading order: by line, then column (problems without a position last). */
function byPosition(a: ConfigProblem, b: ConfigProblem): number {
  const line = (a.line ?? Number.MAX_SAFE_INTEGER) - (b.line ?? Number.MAX_SAFE_INTEGER);
  return line !== 0 ? line : (a.column ?? 0) - (b.column ?? 0);
}

/**
 * `port: ${PORT:-3333}` interpolates to the string "3333": where the schema expects a number or
 * boolean at an interpolated path, read the string as one. Returns whether anything changed.
 */
function retypeInterpolated(
  tree: unknown,
  issues: readonly z.core.$ZodIssue[],
  paths: readonly KeyPath[],
): boolean {
  const interpolated = new Set(paths.map((p) => formatPath(p)));
  let changed = false;
  for (const issue of issues) {
    if (issue.code !== 'invalid_type' || issue.path.length === 0) continue;
    const keyPath = keyPathOf(issue);
    if (!interpolated.has(formatPath(keyPath))) continue;
    const value = valueAt(tree, keyPath);
    const typed =
      typeof value === 'string'
        ? retype(value, issue.expected === 'int' ? 'number' : issue.expected)
        : undefined;
    const parent = valueAt(tree, keyPath.slice(0, -1)) as Record<string | number, unknown> | undefined;
    const key = keyPath.at(-1);
    if (typed === undefined || parent === undefined || key === undefined) continue;
    parent[key] = typed;
    changed = true;
  }
  return changed;
}

async function readText(file: string): Promise<{ text?: string; error?: ConfigProblem }> {
  try {
    return { text: await readFile(file, 'utf8') };
  } catch (error) {
    const code = (error as { code?: string }).code;
    const why = code === 'ENOENT' ? 'file not found' : code === 'EISDIR' ? 'is a folder' : String(error);
    return { error: { file, path: [], message: `cannot read config file: ${why}` } };
  }
}

const SERVER_FILE = /\.(ya?ml|json)$/i;

interface DirOutcome {
  readonly entries: ServerEntry[];
  readonly errors: ConfigProblem[];
  readonly secrets: string[];
  readonly values: string[];
}

/** C2: one server per file in `servers_dir`, key = file name, sorted by name. */
async function loadServersDir(main: ParsedFile, dir: string, env: EnvMap): Promise<DirOutcome> {
  const folder = path.resolve(path.dirname(main.file), dir);
  const out: DirOutcome = { entries: [], errors: [], secrets: [], values: [] };
  let names: string[];
  try {
    names = (await readdir(folder)).filter((name) => SERVER_FILE.test(name) && !name.startsWith('.')).sort();
  } catch {
    out.errors.push(
      problemAt(
        main,
        ['servers_dir'],
        `servers_dir "${dir}" is not a readable folder: create it or fix the path`,
      ),
    );
    return out;
  }
  for (const name of names) {
    const file = path.join(path.dirname(main.file), dir, name);
    const read = await readText(file);
    if (read.text === undefined) {
      if (read.error !== undefined) out.errors.push(read.error);
      continue;
    }
    const parsed = parseText(file, read.text);
    if (parsed.errors.length > 0) {
      out.errors.push(...parsed.errors);
      continue;
    }
    const validated = interpolateAndValidate(parsed, ServerSchema, env);
    out.errors.push(...validated.errors);
    out.secrets.push(...validated.secrets);
    out.values.push(...validated.values);
    if (validated.data !== undefined) {
      const server: WrittenServer = validated.data;
      out.entries.push({
        name: name.replace(SERVER_FILE, ''),
        section: 'servers_dir',
        server,
        parsed: parsed.parsed,
        path: [],
      });
    }
  }
  return out;
}

/** The first line with something on it, and whether it is a comment (for C5's empty-file hint). */
function firstLineOf(text: string): { number: number; comment: boolean } {
  const lines = text.split(/\r?\n/);
  const index = lines.findIndex((line) => line.trim() !== '');
  return { number: index + 1, comment: /^(#|\/\/|\/\*)/.test((lines[index] ?? '').trim()) };
}

/**
 * Loads and validates a config file and its `servers_dir` (C1–C6).
 * @param file the main config (YAML, or JSON with `mcpServers`)
 * @param env the environment for `${VAR}` and `MCP_TOOL_PREFIX`
 * @example const { config, errors } = await loadConfig('config.yaml');
 */
export async function loadConfig(file: string, env: EnvMap = process.env): Promise<LoadResult> {
  const read = await readText(file);
  if (read.text === undefined) return { errors: read.error === undefined ? [] : [read.error], warnings: [] };
  if (read.text.trim() === '') {
    const message = `the file is empty: a config needs at least a \`servers:\` map (config/default.yaml in the repository is a working example)`;
    return { errors: [{ file, line: 1, column: 1, path: [], message }], warnings: [] };
  }
  const outcome = parseText(file, read.text);
  if (outcome.errors.length > 0) return { errors: outcome.errors, warnings: [] };
  // C5: a file of comments only (or a lone `null`) is a document with nothing in it.
  if (outcome.parsed.doc.contents === null || outcome.parsed.doc.toJS() === null) {
    const line = firstLineOf(read.text);
    const message = `the file has no settings, only ${line.comment ? 'comments' : 'null'}: a config needs at least a \`servers:\` map${line.comment ? ' (is it all commented out?)' : ''} (config/default.yaml in the repository is a working example)`;
    return { errors: [{ file, line: line.number, column: 1, path: [], message }], warnings: [] };
  }

  const main = interpolateAndValidate(outcome, ConfigSchema, env);
  const errors = [...main.errors];
  // Read servers_dir even when the main file has problems, so that every problem is listed.
  const dir = valueAt(main.tree, ['servers_dir']);
  const fromDir =
    typeof dir === 'string' && dir !== '' ? await loadServersDir(outcome.parsed, dir, env) : undefined;
  errors.push(...(fromDir?.errors ?? []));
  if (main.data === undefined || errors.length > 0) return { errors, warnings: [] };

  const entries = [...mainFileEntries(main.data, outcome.parsed), ...(fromDir?.entries ?? [])];
  const rules = checkRules(main.data, entries, outcome.parsed);
  if (rules.errors.length > 0) return { errors: rules.errors, warnings: rules.warnings };
  const secrets = [...new Set([...main.secrets, ...(fromDir?.secrets ?? [])])];
  const values = [...new Set([...main.values, ...(fromDir?.values ?? [])])];
  const config = normalizeConfig(main.data, entries, { file, env, secrets, values });
  return { config, errors: [], warnings: rules.warnings };
}

/**
 * One line per problem: `config.yaml:12:5: servers.fs.comand: unknown key "comand" (did you
 * mean "command"?)`. The file is shown relative to `relativeTo` when it lies below it.
 * @default relativeTo process.cwd()
 */
export function formatProblem(problem: ConfigProblem, relativeTo: string = process.cwd()): string {
  const relative = path.relative(relativeTo, problem.file);
  const shown =
    relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : problem.file;
  const position =
    problem.line === undefined
      ? ''
      : problem.column === undefined
        ? `:${problem.line}`
        : `:${problem.line}:${problem.column}`;
  const key = problem.path.length > 0 ? ` ${formatPath(problem.path)}:` : '';
  return `${shown}${position}:${key} ${problem.message}`;
}

/**
 * Cross-field rules over a config that passed the schema (C5): problems that no single key can
 * see. Every rule appends to `errors` or `warnings`; none throws, so the user sees all of them.
 */
import picomatch from 'picomatch';
import { closest } from '../core/suggest.js';
import { formatPath, problemAt, type ConfigProblem, type ParsedFile } from './locate.js';
import type { ServerEntry } from './normalize.js';
import { MCP_ENTRY_KEYS, type WrittenConfig, type WrittenServer } from './schema.js';

/** Problems found by {@link checkRules}. */
export interface RuleProblems {
  readonly errors: ConfigProblem[];
  readonly warnings: ConfigProblem[];
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

function isEnabled(entry: ServerEntry): boolean {
  const server = entry.server as { enabled?: boolean; disabled?: boolean };
  return server.enabled ?? server.disabled !== true;
}

function where(entry: ServerEntry): string {
  return entry.section === 'servers_dir' ? entry.parsed.file : formatPath(entry.path);
}

/** C2: a server key may be defined once across `servers`, `mcpServers` and `servers_dir`. */
function uniqueNames(entries: readonly ServerEntry[], out: RuleProblems): void {
  const seen = new Map<string, ServerEntry>();
  for (const entry of entries) {
    const first = seen.get(entry.name);
    if (first === undefined) {
      seen.set(entry.name, entry);
      continue;
    }
    out.errors.push(
      problemAt(
        entry.parsed,
        entry.path,
        `server "${entry.name}" is defined twice (also in ${where(first)}): keep one of them`,
        'key',
      ),
    );
  }
}

/** T1/T4: two enabled servers may not expose their tools under the same prefix. */
function uniquePrefixes(entries: readonly ServerEntry[], out: RuleProblems): void {
  const byPrefix = new Map<string, ServerEntry>();
  const unprefixed: ServerEntry[] = [];
  for (const entry of entries) {
    if (!isEnabled(entry)) continue;
    const server = entry.server as WrittenServer;
    const prefix = server.prefix ?? entry.name;
    if (prefix === '') {
      unprefixed.push(entry);
      continue;
    }
    const first = byPrefix.get(prefix);
    // Two definitions of one key are already reported by uniqueNames.
    if (first?.name === entry.name) continue;
    if (first === undefined) {
      byPrefix.set(prefix, entry);
      continue;
    }
    const path = server.prefix === undefined ? entry.path : [...entry.path, 'prefix'];
    out.errors.push(
      problemAt(
        entry.parsed,
        path,
        `prefix "${prefix}" of server "${entry.name}" is already used by server "${first.name}": give one of them another "prefix"`,
        server.prefix === undefined ? 'key' : 'value',
      ),
    );
  }
  // Several unprefixed servers are a legitimate flat merge; T4 still withholds colliding names.
  const [, ...others] = unprefixed;
  for (const entry of others) {
    out.warnings.push(
      problemAt(
        entry.parsed,
        [...entry.path, 'prefix'],
        `servers "${unprefixed[0]?.name ?? ''}" and "${entry.name}" both expose their tools unprefixed: tools with the same name are withheld (T4)`,
      ),
    );
  }
}

/** T5: glob patterns must compile, renames must not merge two tools, overrides use new names. */
function toolRules(entry: ServerEntry, out: RuleProblems): void {
  const tools = (entry.server as WrittenServer).tools;
  if (tools === undefined) return;
  for (const key of ['include', 'exclude'] as const) {
    (tools[key] ?? []).forEach((pattern, index) => {
      try {
        // strictBrackets: an unbalanced `[` is a typo, not a literal character.
        picomatch.makeRe(pattern, { strictBrackets: true });
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        out.errors.push(
          problemAt(
            entry.parsed,
            [...entry.path, 'tools', key, index],
            `invalid glob pattern "${pattern}": ${reason}`,
          ),
        );
      }
    });
  }
  const rename = tools.rename ?? {};
  const targets = new Map<string, string>();
  for (const [from, to] of Object.entries(rename)) {
    const other = targets.get(to);
    if (other === undefined) {
      targets.set(to, from);
      continue;
    }
    out.errors.push(
      problemAt(
        entry.parsed,
        [...entry.path, 'tools', 'rename', from],
        `"${from}" and "${other}" are both renamed to "${to}": give each tool its own name`,
      ),
    );
  }
  for (const name of Object.keys(tools.overrides ?? {})) {
    const renamedTo = rename[name];
    if (renamedTo === undefined || Object.prototype.hasOwnProperty.call(tools.overrides, renamedTo)) continue;
    out.warnings.push(
      problemAt(
        entry.parsed,
        [...entry.path, 'tools', 'overrides', name],
        `override "${name}" names the tool before its rename: overrides are keyed by the new name, write "${renamedTo}"`,
        'key',
      ),
    );
  }
}

/** C2: keys other clients put in `mcpServers` entries are ignored, with a warning. */
function ignoredMcpKeys(entry: ServerEntry, out: RuleProblems): void {
  if (entry.section !== 'mcpServers') return;
  for (const key of Object.keys(entry.server)) {
    if (MCP_ENTRY_KEYS.has(key)) continue;
    const [suggestion] = closest(key, MCP_ENTRY_KEYS, { limit: 1 });
    const hint = suggestion === undefined ? '' : ` (did you mean "${suggestion}"?)`;
    out.warnings.push({
      ...problemAt(
        entry.parsed,
        [...entry.path, key],
        `key "${key}" is not used by mcp-normalizer and is ignored${hint}`,
        'key',
      ),
      ignoredKey: true,
    });
  }
}

/** I3, I6: the name globs of `access:` rules and `profiles:` must compile (`c_(` is a typo). */
function accessGlobs(written: WrittenConfig, main: ParsedFile, out: RuleProblems): void {
  const check = (globs: readonly string[], at: (string | number)[]): void =>
    globs.forEach((glob, index) => {
      try {
        picomatch.makeRe(glob.startsWith('!') ? glob.slice(1) : glob, { strictBrackets: true });
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        out.errors.push(problemAt(main, [...at, index], `invalid glob pattern "${glob}": ${reason}`));
      }
    });
  written.access?.forEach((rule, index) => {
    check(rule.allow, ['access', index, 'allow']);
    check(Object.keys(rule.scopes), ['access', index, 'scopes']);
    check(rule.resources ?? [], ['access', index, 'resources']);
  });
  // I7: rate limits are checked as access rules are.
  written.rate_limits?.forEach((rule, index) => check(rule.tools, ['rate_limits', index, 'tools']));
  for (const [name, profile] of Object.entries(written.profiles ?? {})) {
    check(profile.tools, ['profiles', name, 'tools']);
    check(profile.prompts ?? [], ['profiles', name, 'prompts']);
  }
}

/**
 * I2: `sub:` and `client:` name the issuer's principals, never a static token: a rule that names
 * a static token's name so would match nobody, or an issuer's token of that subject instead.
 */
function principalNames(written: WrittenConfig, main: ParsedFile, out: RuleProblems): void {
  const auth = written.http.auth;
  if (auth === undefined) return;
  const statics = new Set(Object.keys(auth.tokens));
  if (written.http.token !== undefined) statics.add('token');
  const check = (patterns: readonly string[], at: (string | number)[]): void =>
    patterns.forEach((pattern, index) => {
      const [kind, name] = [pattern.slice(0, pattern.indexOf(':')), pattern.slice(pattern.indexOf(':') + 1)];
      if ((kind === 'sub' || kind === 'client') && statics.has(name) && name !== 'local')
        out.errors.push(
          problemAt(
            main,
            [...at, index],
            `"${pattern}" names the static token "${name}": write "token:${name}" (sub: and client: name the issuer's principals only)`,
          ),
        );
    });
  check(auth.admins, ['http', 'auth', 'admins']);
  written.access?.forEach((rule, index) => check(rule.principals, ['access', index, 'principals']));
  written.rate_limits?.forEach((rule, index) => check(rule.principals, ['rate_limits', index, 'principals']));
}

/**
 * Runs every cross-field rule.
 * @param written the validated main file
 * @param entries every server, in config order (main file, then servers_dir)
 * @param main the parsed main file, for problems about top-level keys
 */
export function checkRules(
  written: WrittenConfig,
  entries: readonly ServerEntry[],
  main: ParsedFile,
): RuleProblems {
  const out: RuleProblems = { errors: [], warnings: [] };
  if (entries.length === 0) {
    const at = written.servers !== undefined ? ['servers'] : [];
    out.errors.push(
      problemAt(
        main,
        at,
        'No servers configured: add one under "servers:" (e.g. servers: { fs: { command: npx, args: [...] } }), or set "servers_dir" to a folder of <key>.yaml files',
      ),
    );
  } else if (entries.every((entry) => !isEnabled(entry))) {
    out.warnings.push(
      problemAt(main, ['servers'], 'every server is disabled ("enabled: false"): no tools will be served'),
    );
  }
  // I1: a resource server needs something to accept.
  const auth = written.http.auth;
  if (auth !== undefined && auth.issuer === undefined && Object.keys(auth.tokens).length === 0) {
    out.errors.push(
      problemAt(
        main,
        ['http', 'auth'],
        'http.auth accepts no token: set "issuer" (an OAuth authorization server) or add "tokens"',
      ),
    );
  }
  principalNames(written, main, out);
  accessGlobs(written, main, out);
  uniqueNames(entries, out);
  uniquePrefixes(entries, out);
  for (const entry of entries) {
    toolRules(entry, out);
    ignoredMcpKeys(entry, out);
  }
  // U2: listening beyond loopback without a token lets anyone on the network call the tools.
  if (!LOOPBACK.has(written.http.host) && (written.http.token ?? '') === '') {
    out.warnings.push(
      problemAt(
        main,
        ['http', 'host'],
        `serve --http on "${written.http.host}" without "http.token" accepts calls from any host that can reach it: set a token`,
      ),
    );
  }
  return out;
}

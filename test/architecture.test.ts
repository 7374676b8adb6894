/**
 * Boundary rules of docs/architecture.md, checked on the sources:
 * - core is pure: no `node:` modules, no pino, no SDK client/server runtime, nothing of ours
 *   outside core;
 * - R2: only src/upstream/server.ts imports the renderer;
 * - nothing in src/ outside the CLI writes to the console (stdout is the protocol channel);
 * - no import circle, type-only imports included (a circle of types becomes one of code the day a
 *   value is added to it).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Every module specifier a file imports or re-exports, with whether it is type-only. */
function imports(file: string): { spec: string; typeOnly: boolean }[] {
  const text = readFileSync(file, 'utf8');
  const found: { spec: string; typeOnly: boolean }[] = [];
  const pattern =
    /^\s*(import|export)\s+(type\s+)?(?:[^'"]*?\sfrom\s+)?['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm;
  for (const m of text.matchAll(pattern)) {
    const spec = m[3] ?? m[4];
    if (spec) found.push({ spec, typeOnly: Boolean(m[2]) });
  }
  return found;
}

const all = sources(join(root, 'src')).map((file) => ({ file: relative(root, file), abs: file }));
const core = all.filter((f) => f.file.startsWith('src/core/'));

describe('architecture boundaries', () => {
  it('N10: src/core imports no node: module, no pino, no SDK runtime class and nothing of ours outside core', () => {
    const offences: string[] = [];
    for (const { file, abs } of core) {
      for (const { spec, typeOnly } of imports(abs)) {
        // The SDK's schemas (`@modelcontextprotocol/core`) are pure data; its client and server
        // packages may be imported for types only.
        const sdkRuntime =
          spec.startsWith('@modelcontextprotocol/') && spec !== '@modelcontextprotocol/core' && !typeOnly;
        if (spec.startsWith('node:') || spec === 'pino' || spec.startsWith('pino/') || sdkRuntime) {
          offences.push(`${file} imports ${spec}`);
        }
        if (spec.startsWith('.') && !spec.startsWith('./')) offences.push(`${file} imports ${spec}`);
      }
      const text = readFileSync(abs, 'utf8');
      if (/\b(process\.|Date\.now\(|Math\.random\(|new Date\()/.test(text)) {
        offences.push(`${file} reads the clock, randomness or the process`);
      }
    }
    expect(offences).toEqual([]);
  });

  it("U1: the product runs on SDK v2; SDK v1 (@modelcontextprotocol/sdk) is only the tests' legacy peer", () => {
    const offences = all
      .filter(({ abs }) => imports(abs).some(({ spec }) => spec.startsWith('@modelcontextprotocol/sdk')))
      .map(({ file }) => file);
    expect(offences).toEqual([]);
  });

  it('R2: only src/upstream/server.ts imports the renderer', () => {
    const importers = all
      .filter(({ abs }) => imports(abs).some(({ spec }) => /(^|\/)render(\.js)?$/.test(spec)))
      .map(({ file }) => file);
    expect(importers).toEqual(['src/upstream/server.ts']);
  });

  it('arch: upstream and downstream never import each other; they meet only in app/ (the composition root)', () => {
    const offences: string[] = [];
    for (const { file, abs } of all) {
      for (const { spec } of imports(abs)) {
        if (file.startsWith('src/upstream/') && spec.includes('/downstream/'))
          offences.push(`${file} imports ${spec}`);
        if (file.startsWith('src/downstream/') && spec.includes('/upstream/'))
          offences.push(`${file} imports ${spec}`);
      }
    }
    expect(offences).toEqual([]);
  });

  it('arch: src/wire (the stdio framing both ends share) imports nothing of ours', () => {
    const offences = all
      .filter(({ file }) => file.startsWith('src/wire/'))
      .flatMap(({ file, abs }) =>
        imports(abs)
          .filter(({ spec }) => spec.startsWith('.') && !spec.startsWith('./'))
          .map(({ spec }) => `${file} imports ${spec}`),
      );
    expect(offences).toEqual([]);
    expect(all.some(({ file }) => file.startsWith('src/wire/'))).toBe(true);
  });

  it('arch: every layer imports only the layers the table of docs/architecture.md allows', () => {
    // docs/architecture.md, "Layers": who may import whom (a layer's own files aside).
    const allowed: Record<string, readonly string[]> = {
      core: [],
      wire: [],
      config: ['core'],
      log: ['config', 'core'],
      downstream: ['config', 'core', 'log', 'wire'],
      upstream: ['core', 'log', 'wire'],
      app: ['config', 'core', 'log', 'wire', 'downstream', 'upstream'],
      cli: ['app', 'config', 'log', 'core'],
    };
    const offences: string[] = [];
    for (const { file, abs } of all) {
      const layer = /^src\/([^/]+)\//.exec(file)?.[1];
      if (layer === undefined) continue; // src/index.ts: the public API re-exports any layer
      const permitted = allowed[layer];
      expect(permitted, `${file}: its layer "${layer}" is not in the table`).toBeDefined();
      for (const { spec } of imports(abs)) {
        if (!spec.startsWith('.')) continue;
        // The layer is the target's first folder under src/ (a room inside a layer is that layer).
        const target = /^src\/([^/]+)\//.exec(relative(root, resolve(dirname(abs), spec)))?.[1];
        if (target === undefined || target === layer) continue;
        if (!permitted?.includes(target)) offences.push(`${file} (${layer}) imports ${spec}`);
      }
    }
    expect(offences).toEqual([]);
  });

  it('arch: no source file is longer than 450 lines, with no exception', () => {
    // A long file is usually two modules (docs/architecture.md says where each job lives).
    const offences = all
      .map(({ file, abs }) => ({ file, lines: readFileSync(abs, 'utf8').split('\n').length }))
      .filter(({ lines }) => lines > 450)
      .map(({ file, lines }) => `${file}: ${lines} lines`);
    expect(offences).toEqual([]);
  });

  it("I3: the policy is applied only by the callers' views and the call pipeline's authorization step", () => {
    // app/views.ts (lists, reads, the step-up) and core/prepare-call.ts (a tools/call); core/policy.ts
    // decides. A verb of the policy anywhere else is a site that can be missed.
    const verbs = /\.(sees|decide|seesPrompt|readsResource|usesProfile)\(|access\??\.expose\b|refuseHidden\(/;
    const allowed = new Set(['src/core/policy.ts', 'src/app/views.ts', 'src/core/prepare-call.ts']);
    const offences = all
      .filter(({ file }) => !allowed.has(file))
      .flatMap(({ file, abs }) =>
        readFileSync(abs, 'utf8')
          .split('\n')
          .flatMap((line, i) => (verbs.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
      );
    expect(offences).toEqual([]);
  });

  it('L1: nothing in src/ outside the CLI writes to the console', () => {
    const offences = all
      .filter(({ file }) => !file.startsWith('src/cli/'))
      .filter(({ abs }) => /\bconsole\.\w+\(/.test(readFileSync(abs, 'utf8')))
      .map(({ file }) => file);
    expect(offences).toEqual([]);
  });

  it('arch: no import circle in src/ (type-only imports count too)', () => {
    const graph = new Map<string, string[]>();
    for (const { abs } of all) {
      const specs = imports(abs)
        .map(({ spec }) => spec)
        .filter((spec) => spec.startsWith('.'));
      graph.set(
        abs,
        specs.map((spec) => resolve(dirname(abs), spec.replace(/\.js$/, '.ts'))),
      );
    }
    const circles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (file: string, path: string[]): void => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') {
        circles.push([...path.slice(path.indexOf(file)), file].map((f) => relative(root, f)).join(' -> '));
        return;
      }
      state.set(file, 'open');
      for (const next of graph.get(file) ?? []) if (graph.has(next)) visit(next, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of graph.keys()) visit(file, []);
    expect(circles).toEqual([]);
  });

  it('arch, issue 57: the rooms of app/ import no room above them: state/ none, logins/ only state/, ext/ only state/', () => {
    const below: Record<string, readonly string[]> = { state: [], logins: ['state'], ext: ['state'] };
    const offences: string[] = [];
    for (const { file, abs } of all) {
      const room = /^src\/app\/([^/]+)\//.exec(file)?.[1];
      if (room === undefined) continue;
      for (const { spec } of imports(abs)) {
        const target = /^src\/app\/([^/]+)\//.exec(relative(root, resolve(dirname(abs), spec)))?.[1];
        if (target === undefined || target === room) continue;
        if (!(below[room] ?? []).includes(target)) offences.push(`${file} imports ${spec}`);
      }
    }
    expect(offences).toEqual([]);
    // And the top level stays a handful: the rooms take what grows.
    const top = readdirSync(join(root, 'src/app')).filter((name) => name.endsWith('.ts'));
    expect(top.length).toBeLessThanOrEqual(22);
  });

  it('arch, issue 57: the three hubs stay small: createToolBackend <= 250 lines, createUpstreamServer <= 220, createProxy <= 175', () => {
    const lengthOf = (file: string, name: string): number => {
      const lines = readFileSync(resolve(root, file), 'utf8').split('\n');
      const start = lines.findIndex((line) => line.startsWith(`export function ${name}`));
      const end = lines.findIndex((line, i) => i > start && line.startsWith('}'));
      expect(start, `${name} in ${file}`).toBeGreaterThanOrEqual(0);
      return end - start + 1;
    };
    expect(lengthOf('src/app/calls.ts', 'createToolBackend')).toBeLessThanOrEqual(250);
    expect(lengthOf('src/upstream/server.ts', 'createUpstreamServer')).toBeLessThanOrEqual(220);
    expect(lengthOf('src/app/proxy.ts', 'createProxy')).toBeLessThanOrEqual(175);
  });

  it('arch, issue 57: every key the replicas share is made in src/app/state/store.ts (KEYS, CHANNELS)', () => {
    const literal = /\bstore\??\.(get|put|delete|increment|setField|fields|publish|subscribe)\(\s*[`'"]/;
    const offences = all
      .filter(({ file }) => file !== 'src/app/state/store.ts')
      .flatMap(({ file, abs }) =>
        readFileSync(abs, 'utf8')
          .split('\n')
          .flatMap((line, i) => (literal.test(line) ? [`${file}:${i + 1}`] : [])),
      );
    expect(offences).toEqual([]);
    // And only the backends add the prefix.
    const prefixed = all
      .filter(({ file }) => !file.startsWith('src/app/state/'))
      .filter(({ abs }) => /['`]mcp-normalizer:[\w$]/.test(readFileSync(abs, 'utf8')))
      .map(({ file }) => file);
    expect(prefixed).toEqual([]);
  });

  it('arch, issue 57: the upstream server names no extension; extensions plug in through upstream/ext/extension.ts', () => {
    const named = (file: string): string[] =>
      imports(resolve(root, file))
        .map(({ spec }) => spec)
        .filter((spec) => spec.startsWith('./ext/') && spec !== './ext/extension.js');
    expect(named('src/upstream/server.ts')).toEqual([]);
    expect(named('src/upstream/features.ts')).toEqual([]);
    // And the seam needs nothing of the server: server.ts and the extensions never need each other.
    expect(imports(resolve(root, 'src/upstream/ext/extension.ts')).map(({ spec }) => spec)).not.toContain(
      '../server.js',
    );
  });
});

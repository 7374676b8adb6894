/**
 * Pinned definitions (CONTRACT K3, K4): what the model reads of a tool or a prompt (name, title,
 * description, input and output schema, annotations; a prompt's arguments) is pinned by its
 * SHA-256 when first seen, and every later listing is compared with the pins. A changed
 * definition is a `definition_changed`: logged with a diff under `pinning: warn`, withheld until
 * an operator approves it under `pinning: hold` (with every new tool of a pinned server). Pure:
 * the digest is given (SHA-256 over the canonical JSON), the pins are read and written by
 * `app/state/memory.ts`.
 */
import { canonicalJson } from './json.js';

/** What a pin covers. */
export type PinKind = 'tool' | 'prompt';

/** One pinned definition: its digest, and the definition itself (for the diff of a change). */
export interface Pin {
  readonly sha256: string;
  readonly definition: Readonly<Record<string, unknown>>;
}

/** One server's pins, by the downstream's own names. */
export interface PinSet {
  readonly tools: Readonly<Record<string, Pin>>;
  readonly prompts: Readonly<Record<string, Pin>>;
}

/** A definition that differs from its pin, or is new on a server that has pins. */
export interface DefinitionChange {
  readonly server: string;
  readonly kind: PinKind;
  /** The downstream's own name. */
  readonly name: string;
  /** `changed`: it has a pin that differs; `new`: it has none. */
  readonly change: 'changed' | 'new';
  /** The pinned digest (`changed`) and the digest now. */
  readonly pinned?: string;
  readonly sha256: string;
  /** The lines that differ, `- pinned` / `+ now`, by field (at most 20). */
  readonly diff: readonly string[];
}

/** How changed definitions are treated: `warn` (served and reported), `hold` (withheld), `off`. */
export type PinningMode = 'warn' | 'hold' | 'off';

const TOOL_FIELDS = ['name', 'title', 'description', 'inputSchema', 'outputSchema', 'annotations'] as const;
const PROMPT_FIELDS = ['name', 'title', 'description', 'arguments'] as const;
const DIFF_LINES = 20;
const LINE_CHARS = 200;

/** The part of `definition` the model reads, as a pin covers it. */
export function pinnedPart(kind: PinKind, definition: unknown): Record<string, unknown> {
  const record = (typeof definition === 'object' && definition !== null ? definition : {}) as Record<
    string,
    unknown
  >;
  const part: Record<string, unknown> = {};
  for (const field of kind === 'tool' ? TOOL_FIELDS : PROMPT_FIELDS)
    if (record[field] !== undefined) part[field] = record[field];
  return part;
}

/** A text's hex SHA-256 (`node:crypto` in the caller: core is pure). */
export type Digest = (text: string) => string;

/** The pin of a definition (key order does not count). */
export function pinOf(kind: PinKind, definition: unknown, digest: Digest): Pin {
  const part = pinnedPart(kind, definition);
  return { sha256: digest(canonicalJson(part)), definition: part };
}

/** `- pinned` / `+ now` lines for each field that differs (bounded, each line cut to 200). */
export function diffDefinitions(
  pinned: Readonly<Record<string, unknown>>,
  now: Readonly<Record<string, unknown>>,
): string[] {
  const lines: string[] = [];
  const cut = (text: string): string =>
    text.length > LINE_CHARS ? `${text.slice(0, LINE_CHARS - 1)}…` : text;
  for (const field of new Set([...Object.keys(pinned), ...Object.keys(now)])) {
    const before = pinned[field] === undefined ? undefined : canonicalJson(pinned[field]);
    const after = now[field] === undefined ? undefined : canonicalJson(now[field]);
    if (before === after) continue;
    if (before !== undefined) lines.push(cut(`- ${field}: ${before}`));
    if (after !== undefined) lines.push(cut(`+ ${field}: ${after}`));
  }
  return lines.length > DIFF_LINES
    ? [...lines.slice(0, DIFF_LINES), `… ${lines.length - DIFF_LINES} more`]
    : lines;
}

/** The name of a raw listed definition, if it has one. */
function nameOf(definition: unknown): string | undefined {
  const name = (definition as { name?: unknown } | null)?.name;
  return typeof name === 'string' ? name : undefined;
}

/** What {@link comparePins} finds in one server's listing. */
export interface PinCheck {
  /** The pins after this listing: unchanged, or (first sight) every definition pinned. */
  readonly pins: PinSet;
  /** True when `pins` differs from what was given (there is something to save). */
  readonly pinned: boolean;
  readonly changes: readonly DefinitionChange[];
}

/**
 * Compares a server's listing with its pins. No pins yet (`undefined`): trust on first use, every
 * definition is pinned and nothing is a change. With pins: a definition whose digest differs is
 * `changed`, one without a pin `new`; under `warn` a new one is pinned at once (nothing to hold),
 * under `hold` it waits for approval like a changed one.
 */
export function comparePins(
  server: string,
  pins: PinSet | undefined,
  listing: { readonly tools: readonly unknown[]; readonly prompts: readonly unknown[] },
  mode: PinningMode,
  digest: Digest,
): PinCheck {
  if (mode === 'off') return { pins: pins ?? { tools: {}, prompts: {} }, pinned: false, changes: [] };
  const first = pins === undefined;
  const next = { tools: { ...pins?.tools }, prompts: { ...pins?.prompts } };
  const changes: DefinitionChange[] = [];
  let pinned = first;
  for (const [kind, list, set] of [
    ['tool', listing.tools, next.tools],
    ['prompt', listing.prompts, next.prompts],
  ] as const) {
    for (const definition of list) {
      const name = nameOf(definition);
      if (name === undefined) continue;
      const now = pinOf(kind, definition, digest);
      const old = Object.hasOwn(set, name) ? set[name] : undefined;
      if (old?.sha256 === now.sha256) continue;
      if (first || (old === undefined && mode === 'warn')) {
        set[name] = now;
        pinned = true;
        continue;
      }
      changes.push({
        server,
        kind,
        name,
        change: old === undefined ? 'new' : 'changed',
        ...(old !== undefined ? { pinned: old.sha256 } : {}),
        sha256: now.sha256,
        diff: diffDefinitions(old?.definition ?? {}, now.definition),
      });
    }
  }
  return { pins: next, pinned, changes };
}

/**
 * The pins with `name` (or every change, without one) of `kind`s approved: pinned as they are now.
 * Returns the new pins and what was approved.
 */
/**
 * K4: what an operator reviewed: a short digest of exactly these changes (each one's name, kind
 * and new digest). `pins approve` approves only when it is the digest of the changes now, so a
 * server that changes again between the review and the approval gets nothing approved.
 */
export function reviewDigest(changes: readonly DefinitionChange[], digest: Digest): string {
  const lines = changes.map((change) => `${change.kind}:${change.name}:${change.sha256}`).sort();
  return digest(lines.join('\n')).slice(0, 16);
}

export function approve(
  pins: PinSet,
  changes: readonly DefinitionChange[],
  listing: { readonly tools: readonly unknown[]; readonly prompts: readonly unknown[] },
  digest: Digest,
  name?: string,
): { readonly pins: PinSet; readonly approved: readonly DefinitionChange[] } {
  const next = { tools: { ...pins.tools }, prompts: { ...pins.prompts } };
  const approved = changes.filter((change) => name === undefined || change.name === name);
  for (const change of approved) {
    const list = change.kind === 'tool' ? listing.tools : listing.prompts;
    const definition = list.find((entry) => nameOf(entry) === change.name);
    if (definition === undefined) continue;
    (change.kind === 'tool' ? next.tools : next.prompts)[change.name] = pinOf(
      change.kind,
      definition,
      digest,
    );
  }
  return { pins: next, approved };
}

/**
 * Skills (SEP-2640, `io.modelcontextprotocol/skills`) through the gateway (issue 47, contract
 * rules X1–X4): how a server's `skill://` URIs are exposed, how an exposed one is routed back,
 * how `skills/list` pages span servers, and how a skill file read through the gateway is checked
 * against its entry. Pure.
 *
 * The URI rule (X1): `skill://<rest>` of the server with URI prefix `p` (`uriPrefix()`, as U5)
 * is exposed as `skill://p/<rest>`. The scheme stays `skill://` (hosts look for it), the skill's
 * name stays the segment before `SKILL.md`, and a skill's files stay under its folder, as the
 * extension's URI rules ask. The reverse splits at the first `/` after `skill://`. A server with
 * `prefix: ""` keeps its URIs; it is asked last.
 */
import { canonicalUri } from './uri-canonical.js';
import { namespaceUri, SKILL_SCHEME, splitNamespacedUri } from './uri-namespace.js';

/** The extension's id, as servers declare it in `capabilities.extensions`. */
export const SKILLS_EXTENSION = 'io.modelcontextprotocol/skills';

/** One file of a skill, as an entry lists it. */
export interface SkillFileEntry {
  readonly uri: string;
  readonly digest: string;
  readonly size: number;
  readonly [key: string]: unknown;
}

/** A skill entry as `skills/list` and `skills/get` carry it (unknown fields kept). */
export interface SkillEntry {
  readonly uri: string;
  readonly frontmatter: {
    readonly name: string;
    readonly description: string;
    readonly [key: string]: unknown;
  };
  readonly resources: readonly SkillFileEntry[] | 'dynamic';
  readonly [key: string]: unknown;
}

/** Whether `uri` is a skill URI. */
export function isSkillUri(uri: string): boolean {
  return uri.startsWith(SKILL_SCHEME);
}

/**
 * X1: the exposed form of a server's skill URI (U5's rule, which keeps `skill://`).
 * @example exposeSkillUri('a', 'skill://release-notes/SKILL.md') // 'skill://a/release-notes/SKILL.md'
 */
export function exposeSkillUri(prefix: string, uri: string): string {
  return isSkillUri(uri) ? namespaceUri(prefix, uri) : uri;
}

/**
 * X1: the server prefix and the server's own URI an exposed skill URI names; undefined when it
 * names none of `prefixes` (a `prefix: ""` server's URI is then its own: the caller asks it).
 */
export function routeSkillUri(
  uri: string,
  prefixes: ReadonlySet<string>,
): { readonly prefix: string; readonly uri: string } | undefined {
  if (!isSkillUri(uri)) return undefined;
  const split = splitNamespacedUri(uri);
  return split !== undefined && prefixes.has(split.prefix) ? split : undefined;
}

/** Whether `value` is a skill entry the gateway can expose (what it cannot read is dropped). */
export function isSkillEntry(value: unknown): value is SkillEntry {
  if (typeof value !== 'object' || value === null) return false;
  const entry = value as Partial<SkillEntry>;
  const front = entry.frontmatter as Partial<SkillEntry['frontmatter']> | undefined;
  return (
    typeof entry.uri === 'string' &&
    typeof front?.name === 'string' &&
    typeof front.description === 'string' &&
    (entry.resources === 'dynamic' ||
      (Array.isArray(entry.resources) &&
        entry.resources.every(
          (file: Partial<SkillFileEntry>) =>
            typeof file.uri === 'string' && typeof file.digest === 'string' && typeof file.size === 'number',
        )))
  );
}

/**
 * X1, U8: `entry` with every URI in its canonical form and exposed; frontmatter, digests, sizes and
 * other fields as they were. A listing names only URIs of its own namespace (X7): an entry whose
 * URI is no skill URI, has no canonical form, or lists a file outside its skill's folder is not
 * exposed, and why is returned instead.
 */
export function exposeSkill(prefix: string, entry: SkillEntry): SkillEntry | { readonly dropped: string } {
  // Namespaced first, then put in its canonical form, as every other listed URI is (U8).
  const expose = (uri: string): string | undefined => {
    const canonical = canonicalUri(namespaceUri(prefix, uri));
    return typeof canonical === 'string' && isSkillUri(canonical) ? canonical : undefined;
  };
  const uri = expose(entry.uri);
  if (uri === undefined || !uri.endsWith('/SKILL.md'))
    return { dropped: `${entry.uri} is not a skill's SKILL.md URI` };
  if (entry.resources === 'dynamic') return { ...entry, uri };
  const folder = skillFolder({ uri });
  const files: SkillFileEntry[] = [];
  for (const file of entry.resources) {
    const exposed = expose(file.uri);
    if (exposed === undefined || !exposed.startsWith(folder))
      return { dropped: `${entry.uri} lists ${file.uri}, which is not a file of its folder` };
    files.push({ ...file, uri: exposed });
  }
  return { ...entry, uri, resources: files };
}

/** The folder of `skill` (its `SKILL.md` URI without the file name), with its final `/`. */
export function skillFolder(skill: Pick<SkillEntry, 'uri'>): string {
  return skill.uri.slice(0, skill.uri.lastIndexOf('/') + 1);
}

/** The `SKILL.md` URI of the skill whose files include exposed `uri`, among `skills`. */
export function skillOfFile(skills: readonly SkillEntry[], uri: string): SkillEntry | undefined {
  return skills.find(
    (skill) =>
      skill.uri === uri ||
      (skill.resources === 'dynamic'
        ? uri.startsWith(skillFolder(skill))
        : skill.resources.some((file) => file.uri === uri)),
  );
}

/** X2: where a `skills/list` page across servers starts: the server's index and its own cursor. */
export interface SkillsCursor {
  readonly server: number;
  readonly cursor?: string;
}

/** X2: a cursor's binding: the server it names and the caller it was given to. */
export interface SkillsCursorBinding {
  /** The server at `at.server` when the cursor was given (a reload may move it). */
  readonly server: string;
  /** The caller's principal ("" for an anonymous caller). */
  readonly caller: string;
}

/** An HMAC of `text` (hex), with a key of the gateway's. */
export type CursorMac = (text: string) => string;

/** Whether `a` and `b` are equal, in a time that does not depend on where they differ. */
function sameText(a: string, b: string): boolean {
  let differ = a.length ^ b.length;
  for (let i = 0; i < b.length; i++) differ |= (a.charCodeAt(i) || 0) ^ b.charCodeAt(i);
  return differ === 0;
}

/** X2: the gateway's cursor for `at` (opaque to hosts), signed and bound to `bound`. */
export function encodeSkillsCursor(at: SkillsCursor, bound: SkillsCursorBinding, mac: CursorMac): string {
  const body = Buffer.from(JSON.stringify({ ...at, name: bound.server }), 'utf8').toString('base64url');
  return `${body}.${mac(`${body}\n${bound.caller}`)}`;
}

/**
 * X2: the position a cursor of {@link encodeSkillsCursor} names; undefined when the gateway did
 * not give it, or gave it to another caller, or its server is no longer at its place.
 */
export function decodeSkillsCursor(
  cursor: string,
  bound: (server: number) => SkillsCursorBinding | undefined,
  mac: CursorMac,
): SkillsCursor | undefined {
  const dot = cursor.indexOf('.');
  if (dot <= 0 || cursor.length > 8192) return undefined;
  const body = cursor.slice(0, dot);
  try {
    const at = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Partial<
      SkillsCursor & { name: string }
    >;
    if (typeof at.server !== 'number' || !Number.isInteger(at.server) || at.server < 0) return undefined;
    if (at.cursor !== undefined && typeof at.cursor !== 'string') return undefined;
    const expected = bound(at.server);
    if (expected === undefined || at.name !== expected.server) return undefined;
    if (!sameText(cursor.slice(dot + 1), mac(`${body}\n${expected.caller}`))) return undefined;
    return at.cursor === undefined ? { server: at.server } : { server: at.server, cursor: at.cursor };
  } catch {
    return undefined;
  }
}

/** X3: the cache hints across hops: the smaller TTL, and private when either side is. */
export function mergeCacheHints(
  hints: readonly { readonly ttlMs?: unknown; readonly cacheScope?: unknown }[],
  personal: boolean,
): { ttlMs: number; cacheScope: 'public' | 'private' } {
  const ttls = hints
    .map((hint) => hint.ttlMs)
    .filter((ttl): ttl is number => typeof ttl === 'number' && ttl >= 0);
  const scope = personal || hints.some((hint) => hint.cacheScope !== 'public') ? 'private' : 'public';
  return {
    ttlMs: ttls.length === 0 ? 0 : Math.min(...ttls),
    cacheScope: hints.length === 0 ? 'private' : scope,
  };
}

/** The bytes of one `resources/read` content (text as UTF-8, a blob decoded). */
export function contentBytes(content: {
  readonly text?: unknown;
  readonly blob?: unknown;
}): Buffer | undefined {
  if (typeof content.text === 'string') return Buffer.from(content.text, 'utf8');
  if (typeof content.blob === 'string') return Buffer.from(content.blob, 'base64');
  return undefined;
}

/**
 * X3: why the bytes read for `file` are not the file its entry lists (size, then SHA-256
 * digest, `sha256hex` computing it); undefined when they are.
 */
export function skillFileMismatch(
  file: SkillFileEntry,
  bytes: Uint8Array,
  sha256hex: (bytes: Uint8Array) => string,
): string | undefined {
  if (bytes.length !== file.size) return `its size is ${bytes.length} bytes, and its entry says ${file.size}`;
  const digest = `sha256:${sha256hex(bytes)}`;
  return digest === file.digest ? undefined : `its SHA-256 digest is not the one its entry lists`;
}

/** The YAML frontmatter block at the start of a `SKILL.md`, or undefined when it has none. */
function frontmatterBlock(text: string): string | undefined {
  const match = /^---\r?\n([\s\S]*?)\r?\n---(?:\r?\n|$)/.exec(text);
  return match?.[1];
}

/**
 * X3: why a `SKILL.md` must not be loaded: its YAML frontmatter differs from its entry's, field
 * by field (a field only one of them has is a difference too); undefined when they agree.
 * `parse` reads YAML (the caller's parser; core does no parsing of its own).
 */
export function skillFrontmatterMismatch(
  entry: SkillEntry,
  bytes: Uint8Array,
  parse: (yaml: string) => unknown,
): string | undefined {
  const block = frontmatterBlock(new TextDecoder().decode(bytes));
  if (block === undefined) return 'it has no YAML frontmatter';
  let found: unknown;
  try {
    found = parse(block);
  } catch {
    return 'its frontmatter is not YAML';
  }
  if (typeof found !== 'object' || found === null || Array.isArray(found))
    return 'its frontmatter is not a map';
  const listed = entry.frontmatter as Record<string, unknown>;
  const read = found as Record<string, unknown>;
  for (const key of new Set([...Object.keys(listed), ...Object.keys(read)]))
    if (JSON.stringify(listed[key]) !== JSON.stringify(read[key]))
      return `its frontmatter's ${key} is not the one its entry lists`;
  return undefined;
}

/**
 * Files as resources (CONTRACT F7): with `output.files: resource` the bodies of a result's files
 * (N4's images, audio and blobs, N9's spilled values) stay here, and the envelope carries a
 * `resource_link` per file that the host reads with `resources/read`. No base64 travels in the
 * tools/call answer, so none can reach a prompt through a host that shows `structuredContent`.
 *
 * Bounded: at most `maxBytes` of decoded file bytes (the oldest files go first; a single file
 * larger than the bound is kept alone), each file for `ttlMs`. Expiry is checked when the store
 * is used (no timers: nothing to leak, nothing to stop). Files of a session belong to it: another
 * session's read is refused, and they go when the session closes. Where there is no session (a
 * 2026-07-28 HTTP request), the link's 128-bit random id is the only key.
 */
import { randomBytes } from 'node:crypto';
import { ResourceNotFoundError, type ReadResourceResult } from '@modelcontextprotocol/server';
import type { FileArtifact, Result } from '../core/result.js';
import { FILE_URI_PREFIX } from '../core/uri-namespace.js';
import type { FeatureBackend } from './features.js';

export { FILE_URI_PREFIX } from '../core/uri-namespace.js';

/** Ids of expired or evicted files remembered, so that a late read says "expired". */
const FORGOTTEN_IDS = 10_000;

/** Options of {@link createFileStore}. */
export interface FileStoreOptions {
  /** Most decoded bytes kept at once. @example 268435456 */
  readonly maxBytes: number;
  /** How long a file can be read after its call answered. @example 600000 */
  readonly ttlMs: number;
  /** The clock (tests pass a fake one). @default Date.now */
  readonly now?: () => number;
  /**
   * Issue 48: where a principal's files are also kept for the other replicas (the shared store);
   * a session's files stay here (its requests come back to this replica). @default none
   */
  readonly shared?: SharedFiles;
}

/** One file as the replicas share it: bound to the principal whose call made it. */
export interface SharedFile {
  readonly name: string;
  readonly mimeType: string;
  readonly base64: string;
  readonly kind: FileArtifact['kind'];
  readonly principal: string;
}

/** Issue 48: the shared store's side of the file links. */
export interface SharedFiles {
  /** Keeps `file` under `id` for `ttlMs` (a failure is the store's to log: the link still works here). */
  put(id: string, file: SharedFile, ttlMs: number): void;
  /** The file under `id`, if another replica kept it and it has not expired; rejects when unreachable. */
  get(id: string): Promise<SharedFile | undefined>;
}

/** The store of one gateway process. */
export interface FileStore {
  /**
   * Moves the bodies of `result.files` into the store, owned by `owner` (a session) or by whoever
   * holds the link (`undefined`); returns the Result with each file's `link` set and no body.
   */
  keep<R extends Result>(result: R, owner: object | undefined): R;
  /** Whether `uri` is one of the store's links (read it here, not from a downstream). */
  owns(uri: string): boolean;
  /** resources/read of a link; throws a JSON-RPC error when it expired or is another session's. */
  read(uri: string, owner: object | undefined): ReadResourceResult;
  /**
   * Issue 48: as {@link read}, and a link this process never held is looked for in the shared
   * store (another replica's, for the same principal only).
   */
  readAnywhere(uri: string, owner: object | undefined): Promise<ReadResourceResult>;
  /** The session `owner` closed: its files go now. */
  forget(owner: object): void;
  /** Files and decoded bytes held now (for tests and metrics). */
  size(): { readonly files: number; readonly bytes: number };
}

interface Entry {
  readonly id: string;
  readonly name: string;
  readonly mimeType: string;
  readonly base64: string;
  readonly bytes: number;
  readonly kind: FileArtifact['kind'];
  readonly owner: object | undefined;
  readonly expiresAt: number;
}

/** Decoded size of a base64 string, without decoding it. */
function decodedBytes(base64: string): number {
  const padding = base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((base64.length * 3) / 4) - padding);
}

/** Issue 48: how often, and how far apart, a link unknown here is looked for in the store. */
const SHARED_TRIES = 4;
const SHARED_RETRY_MS = 150;

function notFound(uri: string, why: string): ResourceNotFoundError {
  // The SDK answers it -32602 with the URI in `data` in every era (the 2026-07-28 spec's MUST).
  return new ResourceNotFoundError(uri, `Resource not found: ${why}`);
}

/**
 * @example
 * const store = createFileStore({ maxBytes: 256 * 1024 * 1024, ttlMs: 600_000 });
 * const linked = store.keep(result, session); // linked.files[0].link.uri
 */
export function createFileStore(options: FileStoreOptions): FileStore {
  const now = options.now ?? Date.now;
  /** Insertion order is age order (every file lives `ttlMs`): the first entry expires first. */
  const entries = new Map<string, Entry>();
  const forgotten = new Map<string, 'expired' | 'evicted' | 'closed'>();
  let bytes = 0;

  function drop(entry: Entry, why: 'expired' | 'evicted' | 'closed'): void {
    entries.delete(entry.id);
    bytes -= entry.bytes;
    forgotten.set(entry.id, why);
    if (forgotten.size > FORGOTTEN_IDS) forgotten.delete(forgotten.keys().next().value as string);
  }

  function sweep(): void {
    const at = now();
    for (const entry of entries.values()) {
      if (entry.expiresAt > at) break;
      drop(entry, 'expired');
    }
  }

  function makeRoom(needed: number): void {
    for (const entry of entries.values()) {
      if (bytes + needed <= options.maxBytes) break;
      drop(entry, 'evicted');
    }
  }

  function idOf(uri: string): string | undefined {
    if (!uri.startsWith(FILE_URI_PREFIX)) return undefined;
    return uri.slice(FILE_URI_PREFIX.length).split('/')[0];
  }

  const contents = (uri: string, file: Pick<Entry, 'kind' | 'mimeType' | 'base64'>): ReadResourceResult => {
    const text = file.kind === 'json' || file.kind === 'text' ? utf8(file.base64) : undefined;
    return {
      contents: [
        text !== undefined
          ? { uri, mimeType: file.mimeType, text }
          : { uri, mimeType: file.mimeType, blob: file.base64 },
      ],
    };
  };

  const store: FileStore = {
    keep(result, owner) {
      if (result.files.length === 0) return result;
      sweep();
      const files = result.files.map((file): FileArtifact => {
        const size = decodedBytes(file.base64);
        makeRoom(size);
        const id = randomBytes(16).toString('base64url');
        entries.set(id, {
          id,
          name: file.name,
          mimeType: file.mimeType,
          base64: file.base64,
          bytes: size,
          kind: file.kind,
          owner,
          expiresAt: now() + options.ttlMs,
        });
        bytes += size;
        const principal = principalOf(owner);
        if (options.shared !== undefined && principal !== undefined)
          options.shared.put(
            id,
            { name: file.name, mimeType: file.mimeType, base64: file.base64, kind: file.kind, principal },
            options.ttlMs,
          );
        const uri = `${FILE_URI_PREFIX}${id}/${encodeURIComponent(file.name)}`;
        return { ...file, base64: '', link: { uri, size } };
      });
      return { ...result, files };
    },
    owns(uri) {
      return uri.startsWith(FILE_URI_PREFIX);
    },
    read(uri, owner) {
      sweep();
      const id = idOf(uri) ?? '';
      const entry = entries.get(id);
      if (entry === undefined) {
        const why = forgotten.get(id);
        throw notFound(
          uri,
          why === 'expired'
            ? `this file link expired (files are kept for output.file_store.ttl_ms, ${options.ttlMs} ms)`
            : why === 'evicted'
              ? `this file was dropped to keep the file store under output.file_store.max_bytes (${options.maxBytes} bytes)`
              : why === 'closed'
                ? 'the session this file belonged to has closed'
                : 'no file with this link is held by this mcp-normalizer process (it expired long ago, was never issued, or another replica holds it)',
        );
      }
      if (entry.owner !== undefined && entry.owner !== owner)
        throw notFound(uri, 'this file belongs to another session');
      return contents(uri, entry);
    },
    async readAnywhere(uri, owner) {
      sweep();
      const id = idOf(uri) ?? '';
      const shared = options.shared;
      if (shared === undefined || entries.has(id) || forgotten.has(id)) return store.read(uri, owner);
      // A link another replica made a moment ago may not have reached the store yet (it is put
      // there in the background): asked again, briefly, before it is unknown.
      let file: SharedFile | undefined;
      for (
        let attempt = 0;
        attempt < SHARED_TRIES && file === undefined && idOf(uri) !== undefined;
        attempt++
      ) {
        if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, SHARED_RETRY_MS));
        file = await shared.get(id).catch(() => undefined);
      }
      if (file === undefined) return store.read(uri, owner);
      // I5: bound to its principal on every replica.
      if (file.principal !== principalOf(owner)) throw notFound(uri, 'this file belongs to another caller');
      return contents(uri, file);
    },
    forget(owner) {
      for (const entry of [...entries.values()]) if (entry.owner === owner) drop(entry, 'closed');
    },
    size: () => ({ files: entries.size, bytes }),
  };
  return store;
}

/** The principal key of an owner that is a principal (not a session), if it is one. */
function principalOf(owner: object | undefined): string | undefined {
  const key = (owner as { principal?: unknown } | undefined)?.principal;
  return typeof key === 'string' ? key : undefined;
}

/** The text of a text file, when its bytes are valid UTF-8 (else it is read as a blob). */
function utf8(base64: string): string | undefined {
  const raw = Buffer.from(base64, 'base64');
  const text = raw.toString('utf8');
  return Buffer.byteLength(text, 'utf8') === raw.length && !text.includes('\uFFFD') ? text : undefined;
}

/** F7: the feature backend with the store's links read from the store, every other URI routed. */
export function withFileLinks(
  features: FeatureBackend,
  files: FileStore,
  owner: () => object | undefined,
): FeatureBackend {
  return {
    ...features,
    readResource: (uri, options) =>
      files.owns(uri) ? files.readAnywhere(uri, owner()) : features.readResource(uri, options),
  };
}

/**
 * Skills through the gateway (issue 47, X1–X4): every server that declares the Skills
 * extension (SEP-2640) has its skills listed, got and read through the gateway, under URIs of
 * their own (core/skills.ts). `skills/list` walks the servers in config order, one downstream
 * page per upstream page, its cursor naming the server and that server's own cursor. A caller's
 * view (app/views.ts) hides a skill whose `SKILL.md` URI it does not hold, and refuses it on
 * `skills/get` and on reads of its files. A file read through the gateway is checked against
 * the entry its server last listed (size and SHA-256 digest): a mismatch is an error, and the
 * bytes are not passed on.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { Logger } from 'pino';
import { parse as parseYaml } from 'yaml';
import type { Config, ServerConfig } from '../../config/types.js';
import type { CallAccess } from '../../core/policy.js';
import {
  contentBytes,
  decodeSkillsCursor,
  encodeSkillsCursor,
  exposeSkill,
  isSkillEntry,
  isSkillUri,
  mergeCacheHints,
  routeSkillUri,
  SKILLS_EXTENSION,
  skillFileMismatch,
  skillFolder,
  skillFrontmatterMismatch,
  skillOfFile,
  type SkillEntry,
} from '../../core/skills.js';
import { canonicalUri } from '../../core/uri-canonical.js';
import { namespaceUri, uriPrefix } from '../../core/uri-namespace.js';
import type { Pool } from '../../downstream/pool.js';
import type { RequestOptions } from '../../downstream/feature-requests.js';
import type { SkillsPort } from '../../upstream/ext/skills.js';
import type { ServerSource } from '../servers.js';
import { declaredBy } from './declared.js';
import { routedRecord, rpcError } from '../routed.js';
import type { Views } from '../views.js';

/**
 * The skills of every server: the upstream handlers' port (upstream/ext/skills.ts, X1–X4), and what
 * the CLI and the status page read.
 */
export interface SkillsBackend extends SkillsPort {
  /** Whether a connected server declares the extension (what `check` verifies). */
  declared(): boolean;
  /** The skills each server listed last (the CLI and the status page). */
  known(): ReadonlyMap<string, readonly SkillEntry[]>;
  /** O4: what each server listed last, listed again in the background when older than 30 s. */
  recent(): ReadonlyMap<string, readonly SkillEntry[]>;
  /** Every skill `access` holds, every page walked (the CLI). */
  all(access: CallAccess | undefined): Promise<readonly SkillEntry[]>;
  /** X3 for `check`: every file of every skill `access` holds read through the gateway; what failed. */
  verify(access: CallAccess | undefined): Promise<{ skills: number; files: number; failures: string[] }>;
}

const sha256hex = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** A downstream's URI exposed and in its canonical form (U8); undefined when it has none. */
function exposeOwn(prefix: string, uri: string): string | undefined {
  const canonical = canonicalUri(namespaceUri(prefix, uri));
  return typeof canonical === 'string' ? canonical : undefined;
}

/** The most exposed URIs whose downstream spelling is remembered (then the table starts over). */
const MAX_ORIGINALS = 100_000;

/** @example const skills = createSkills({ config, servers, pool, views, logger }); */
export function createSkills(deps: {
  readonly config: Config;
  readonly servers: ServerSource;
  readonly pool: Pool;
  readonly views: Views;
  readonly logger: Logger;
  /** P1: resolves once the servers starting in the first moments are up (lists wait for it). */
  readonly settleLists?: () => Promise<void> | undefined;
}): SkillsBackend {
  const { pool, views, logger } = deps;
  /** What each server listed last, exposed (X3's digests are checked against these). */
  const listed = new Map<string, SkillEntry[]>();
  /** O4: when the status page last had the skills listed again. */
  let walked = -Infinity;
  const prefixOf = (server: ServerConfig): string => uriPrefix(deps.config.prefix, server.prefix);
  /**
   * U8: each listed URI's downstream spelling, by its exposed (canonical) form: a read of a listed
   * skill file goes to its server as the server wrote it (a table lookup, as listed resources do).
   */
  const originals = new Map<string, { readonly server: string; readonly uri: string }>();
  function remember(server: string, raw: SkillEntry, exposed: SkillEntry): void {
    if (originals.size > MAX_ORIGINALS) originals.clear();
    originals.set(exposed.uri, { server, uri: raw.uri });
    const files = raw.resources;
    if (files !== 'dynamic' && exposed.resources !== 'dynamic')
      exposed.resources.forEach((file, i) => originals.set(file.uri, { server, uri: files[i]!.uri }));
  }
  // X2: cursors are signed with the key input rounds use (replicas that share it share cursors).
  const cursorKey = deps.config.inputRequired.stateKey ?? randomBytes(32);
  const mac = (text: string): string => createHmac('sha256', cursorKey).update(text).digest('base64url');

  /** Which enabled servers declare the extension now (app/ext/declared.ts). */
  const skillsOf = declaredBy(pool, deps.servers, SKILLS_EXTENSION);
  const skilled = (): readonly ServerConfig[] => skillsOf().servers;

  /** Keeps `skills` as what `server` listed, in place of entries of the same URI (or of all: `fresh`). */
  function keep(server: string, skills: readonly SkillEntry[], fresh: boolean): void {
    const before = fresh ? [] : (listed.get(server) ?? []);
    listed.set(server, [
      ...before.filter((old) => !skills.some((skill) => skill.uri === old.uri)),
      ...skills,
    ]);
  }

  /** One page of `server`'s skills, exposed; remembered (merged into what it listed before). */
  async function page(server: ServerConfig, cursor: string | undefined, options: RequestOptions) {
    const value = routedRecord(
      await pool.extensionRequest(
        server.name,
        'skills/list',
        cursor === undefined ? {} : { cursor },
        options,
      ),
    );
    const raw = Array.isArray(value['skills']) ? (value['skills'] as unknown[]) : [];
    const dropped = raw.filter((entry) => !isSkillEntry(entry)).length;
    if (dropped > 0) logger.warn({ server: server.name, dropped }, 'skills/list entries not valid: left out');
    const skills: SkillEntry[] = [];
    for (const entry of raw.filter(isSkillEntry)) {
      const exposed = exposeSkill(prefixOf(server), entry);
      // X7: a listing names only URIs of its own namespace (a read of them comes back to it).
      const why =
        'dropped' in exposed
          ? exposed.dropped
          : route(exposed.uri)?.server.name !== server.name
            ? `${entry.uri} would name another server's skill`
            : undefined;
      if (why === undefined) {
        skills.push(exposed as SkillEntry);
        remember(server.name, entry, exposed as SkillEntry);
      } else logger.warn({ server: server.name, why }, 'skills/list entry outside its namespace: left out');
    }
    keep(server.name, skills, cursor === undefined);
    const next = typeof value['nextCursor'] === 'string' ? value['nextCursor'] : undefined;
    return { skills, next, hint: { ttlMs: value['ttlMs'], cacheScope: value['cacheScope'] } };
  }

  /** The server an exposed skill URI names, and its own URI there. */
  function route(uri: string): { server: ServerConfig; uri: string } | undefined {
    const servers = skilled();
    const listed = originals.get(uri);
    const lister = listed && servers.find((server) => server.name === listed.server);
    if (listed !== undefined && lister !== undefined) return { server: lister, uri: listed.uri };
    const byPrefix = new Map(servers.map((server) => [prefixOf(server), server]));
    const routed = routeSkillUri(uri, new Set([...byPrefix.keys()].filter((prefix) => prefix !== '')));
    if (routed !== undefined) {
      const server = byPrefix.get(routed.prefix);
      if (server !== undefined) return { server, uri: routed.uri };
    }
    const own = byPrefix.get('');
    return own !== undefined && isSkillUri(uri) ? { server: own, uri } : undefined;
  }

  /** The skill exposed `uri` (a file or a folder) belongs to, its server's listing walked once if need be. */
  async function skillOf(
    server: ServerConfig,
    uri: string,
    options: RequestOptions,
  ): Promise<SkillEntry | undefined> {
    const find = (): SkillEntry | undefined =>
      skillOfFile(listed.get(server.name) ?? [], uri) ??
      (listed.get(server.name) ?? []).find((skill) => `${uri}/`.startsWith(skillFolder(skill)));
    let skill = find();
    for (let cursor: string | undefined, pages = 0; skill === undefined && pages < 20; pages++) {
      const got = await page(server, cursor, options);
      skill = find();
      if (got.next === undefined) break;
      cursor = got.next;
    }
    return skill;
  }

  const unknownSkill = (uri: string): Error =>
    rpcError(ProtocolErrorCode.InvalidParams, `No skill is served at ${uri}`, { uri });

  const backend: SkillsBackend = {
    declared: () => skilled().length > 0,
    async list(access, cursor, options) {
      // P1: a first page waits, as tools/list does, for the servers still starting.
      if (cursor === undefined) await deps.settleLists?.();
      const servers = skilled();
      const caller = options.principal ?? '';
      const bound = (index: number) => {
        const named = servers[index];
        return named === undefined ? undefined : { server: named.name, caller };
      };
      const at = cursor === undefined ? { server: 0 } : decodeSkillsCursor(cursor, bound, mac);
      if (at === undefined)
        throw rpcError(ProtocolErrorCode.InvalidParams, 'Invalid cursor for skills/list', { cursor });
      const server = servers[at.server];
      if (server === undefined) return { skills: [], ...mergeCacheHints([], views.personal) };
      const got = await page(server, at.cursor, options);
      const nextCursor =
        got.next !== undefined
          ? encodeSkillsCursor({ server: at.server, cursor: got.next }, bound(at.server)!, mac)
          : at.server + 1 < servers.length
            ? encodeSkillsCursor({ server: at.server + 1 }, bound(at.server + 1)!, mac)
            : undefined;
      return {
        skills: views.resources(access, got.skills),
        ...(nextCursor !== undefined ? { nextCursor } : {}),
        ...mergeCacheHints([got.hint], views.personal),
      };
    },
    async get(access, uri, options) {
      const target = route(uri);
      if (target === undefined) throw unknownSkill(uri);
      views.refuse(access, 'resource', uri);
      const value = routedRecord(
        await pool.extensionRequest(target.server.name, 'skills/get', { uri: target.uri }, options),
      );
      if (!isSkillEntry(value['skill']))
        throw rpcError(
          ProtocolErrorCode.InternalError,
          `Server "${target.server.name}" returned no valid skill`,
        );
      const skill = exposeSkill(prefixOf(target.server), value['skill']);
      if ('dropped' in skill || route(skill.uri)?.server !== target.server) {
        const why = 'dropped' in skill ? skill.dropped : `it answered with ${skill.uri}`;
        logger.warn({ server: target.server.name, uri, why }, 'skills/get answer outside its namespace');
        throw unknownSkill(uri);
      }
      // X4: the entry the server answered with is the one the caller's view must hold.
      views.refuse(access, 'resource', skill.uri);
      remember(target.server.name, value['skill'], skill);
      keep(target.server.name, [skill], false);
      return {
        skill,
        ...mergeCacheHints([{ ttlMs: value['ttlMs'], cacheScope: value['cacheScope'] }], views.personal),
      };
    },
    owns: (uri) => isSkillUri(uri) && route(uri) !== undefined,
    async read(access, uri, options) {
      const target = route(uri);
      if (target === undefined) throw unknownSkill(uri);
      const name = target.server.name;
      // Not listed yet (a host that read a URI it kept): the server's listing is walked once.
      const skill = await skillOf(target.server, uri, options);
      if (skill === undefined) throw unknownSkill(uri);
      // X4: a hidden skill's files are refused with it.
      views.refuse(access, 'resource', skill.uri);
      views.refuse(access, 'resource', uri);
      const file =
        skill.resources === 'dynamic' ? undefined : skill.resources.find((entry) => entry.uri === uri);
      // X3: a file its skill's entry does not list is not passed on (a host must not load it).
      if (skill.resources !== 'dynamic' && file === undefined)
        throw rpcError(ProtocolErrorCode.InvalidParams, `${uri} is not a file of the skill ${skill.uri}`, {
          uri,
        });
      const value = routedRecord(await pool.readResource(name, target.uri, options));
      const contents = Array.isArray(value['contents'])
        ? (value['contents'] as Record<string, unknown>[])
        : [];
      if (file !== undefined) {
        const bytes = contents.length === 1 ? contentBytes(contents[0] ?? {}) : undefined;
        const why =
          bytes === undefined
            ? 'it did not come back as one file'
            : (skillFileMismatch(file, bytes, sha256hex) ??
              // X3: a SKILL.md whose frontmatter is not its entry's must not be loaded either.
              (file.uri === skill.uri ? skillFrontmatterMismatch(skill, bytes, parseYaml) : undefined));
        if (why !== undefined) {
          logger.warn({ server: name, uri, why }, 'skill file refused: not the file its entry lists');
          throw rpcError(
            ProtocolErrorCode.InternalError,
            `The skill file ${uri} from "${name}" was not passed on: ${why}`,
            {
              error_type: 'downstream_error',
              server: name,
              uri,
            },
          );
        }
      }
      const prefix = prefixOf(target.server);
      const exposed = contents.map((content) =>
        typeof content['uri'] === 'string'
          ? { ...content, uri: exposeOwn(prefix, content['uri']) ?? uri }
          : content,
      );
      return { ...value, contents: exposed };
    },
    known: () => listed,
    recent() {
      if (Date.now() - walked > 30_000 && backend.declared()) {
        walked = Date.now();
        backend
          .all(undefined)
          .catch((error: unknown) =>
            logger.debug(
              { error: error instanceof Error ? error.message : String(error) },
              'skills not listed',
            ),
          );
      }
      return listed;
    },
    async all(access) {
      const found: SkillEntry[] = [];
      const signal = new AbortController().signal;
      let cursor: string | undefined;
      for (let pages = 0; pages < 1000; pages++) {
        const got = await backend.list(access, cursor, { signal });
        found.push(...got.skills);
        if (got.nextCursor === undefined) break;
        cursor = got.nextCursor;
      }
      return found;
    },
    async verify(access) {
      const skills = await backend.all(access);
      const signal = new AbortController().signal;
      let files = 0;
      const failures: string[] = [];
      // X3: each skill as a host loads it: its SKILL.md first, its other files only once it holds.
      for (const skill of skills) {
        const listedFiles = skill.resources === 'dynamic' ? [] : skill.resources;
        const ordered = [...listedFiles].sort(
          (a, b) => Number(b.uri === skill.uri) - Number(a.uri === skill.uri),
        );
        let skillFailed = false;
        for (const file of ordered) {
          files++;
          if (skillFailed) {
            failures.push(`${file.uri}: not read, its skill's SKILL.md failed its check`);
            continue;
          }
          try {
            await backend.read(access, file.uri, { signal });
          } catch (error) {
            failures.push(`${file.uri}: ${error instanceof Error ? error.message : String(error)}`);
            skillFailed = file.uri === skill.uri;
          }
        }
      }
      return { skills: skills.length, files, failures };
    },
    directoryRead: () => {
      const { servers, flags } = skillsOf();
      return (
        servers.length > 0 &&
        servers.every(
          (server) =>
            (flags.get(server.name) as { directoryRead?: unknown } | undefined)?.directoryRead === true,
        )
      );
    },
    async readDirectory(access, uri, cursor, options) {
      const target = route(uri);
      if (target === undefined)
        throw rpcError(ProtocolErrorCode.InvalidParams, `${uri} is not a directory the gateway serves`, {
          uri,
        });
      const skill = await skillOf(target.server, uri, options);
      if (skill !== undefined) views.refuse(access, 'resource', skill.uri);
      const params = cursor === undefined ? { uri: target.uri } : { uri: target.uri, cursor };
      const value = routedRecord(
        await pool.extensionRequest(target.server.name, 'resources/directory/read', params, options),
      );
      const prefix = prefixOf(target.server);
      const children = Array.isArray(value['resources'])
        ? (value['resources'] as Record<string, unknown>[])
        : [];
      // U8, X7: children in their canonical form, under the folder read; any other is left out.
      const exposed = children.flatMap((child) => {
        const shown = typeof child['uri'] === 'string' ? exposeOwn(prefix, child['uri']) : undefined;
        return shown !== undefined && shown.startsWith(uri.endsWith('/') ? uri : `${uri}/`)
          ? [{ ...child, uri: shown }]
          : [];
      });
      return { ...value, resources: views.resources(access, exposed as { uri: string }[]) };
    },
  };
  return backend;
}

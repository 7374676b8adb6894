/**
 * The state files of the gateway's memory (K1–K4, issue 55): their names in the state folder (a
 * server's catalog by its config entry, its pins by its config file) and their shapes. A file,
 * or a store record of one, is read back untrusted (K5): one of another shape is none at all.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { ServerConfig } from '../../config/types.js';
import { canonicalJson, isRecord } from '../../core/json.js';
import type { PinSet } from '../../core/pins.js';
import type { FeatureLists } from '../../downstream/listing.js';
import { readStateFile, writeStateFile } from './state-files.js';

/** A remembered catalog file. */
export interface CatalogFile {
  readonly version: 1;
  readonly server: string;
  readonly savedAt: string;
  readonly tools: readonly unknown[];
  readonly features: FeatureLists;
  /**
   * K2: a stand-in, written when the server's first attempt failed with nothing remembered: it
   * lists nothing, in this folder only (never shared), and a catalog another replica remembered
   * in the store replaces it.
   */
  readonly firstAttemptFailed?: true;
}

/** A text's hex SHA-256 (the pins' digest). */
export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** K1: the key of `server` in the state folder: its name and a digest of its config entry. */
export function memoryKey(server: Pick<ServerConfig, 'name' | 'transport'>): string {
  const digest = sha256(canonicalJson({ name: server.name, transport: server.transport })).slice(0, 16);
  return `${server.name.replace(/[^A-Za-z0-9_.-]/g, '_')}.${digest}`;
}

/**
 * Issue 55: the key of `server`'s pins: its name and a digest of the config file it is in. Pins
 * follow the server, not its entry: a changed entry (a version bump in its arguments, the moment
 * a description most likely changes) keeps them and is compared against them, while two configs
 * that share a state folder and name a server alike keep theirs apart.
 */
export function pinsKey(server: Pick<ServerConfig, 'name'>, configFile: string): string {
  return `${server.name.replace(/[^A-Za-z0-9_.-]/g, '_')}.${sha256(configFile).slice(0, 16)}`;
}

/**
 * The paths of `server`'s state files under `stateDir`: its catalog by its entry (K1), its pins
 * by its config file (`configFile`; without it, by its entry, as before issue 55), and the pins
 * file of its entry's key, which pins made before issue 55 are read from once.
 */
export function memoryPaths(
  stateDir: string,
  server: Pick<ServerConfig, 'name' | 'transport'>,
  configFile?: string,
) {
  const key = memoryKey(server);
  const byEntry = join(stateDir, 'pins', `${key}.json`);
  return {
    catalog: join(stateDir, 'catalogs', `${key}.json`),
    pins: configFile === undefined ? byEntry : join(stateDir, 'pins', `${pinsKey(server, configFile)}.json`),
    pinsByEntry: byEntry,
  };
}

/** A catalog file as written, or undefined when it is not one. */
export function readCatalogFile(path: string): CatalogFile | undefined {
  return catalogOf(readStateFile(path));
}

/** A catalog file's JSON value, or undefined when it is not one. */
export function catalogOf(file: unknown): CatalogFile | undefined {
  if (!isRecord(file) || file['version'] !== 1 || !Array.isArray(file['tools'])) return undefined;
  const features = isRecord(file['features']) ? file['features'] : {};
  const list = (key: string): unknown[] => (Array.isArray(features[key]) ? (features[key] as unknown[]) : []);
  return {
    version: 1,
    server: String(file['server']),
    savedAt: String(file['savedAt']),
    tools: file['tools'] as unknown[],
    features: {
      prompts: list('prompts'),
      resources: list('resources'),
      resourceTemplates: list('resourceTemplates'),
    } as unknown as FeatureLists,
    ...(file['firstAttemptFailed'] === true ? { firstAttemptFailed: true } : {}),
  };
}

/** A pins file as written, or undefined when there is none. */
export function readPinsFile(path: string): PinSet | undefined {
  return pinsOf(readStateFile(path));
}

/** Whether `value` is a pin: a SHA-256 digest and the definition it was taken of. */
function isPin(value: unknown): boolean {
  return (
    isRecord(value) &&
    typeof value['sha256'] === 'string' &&
    /^[0-9a-f]{64}$/.test(value['sha256']) &&
    isRecord(value['definition'])
  );
}

/**
 * A pins file's JSON value, or undefined when it is not one (issue 55: a file or a store record
 * of another shape, or with one entry that is no pin, is no pins at all, never pins of nothing).
 */
export function pinsOf(file: unknown): PinSet | undefined {
  if (!isRecord(file) || file['version'] !== 1) return undefined;
  const sets: Record<string, PinSet['tools']> = {};
  for (const key of ['tools', 'prompts']) {
    const set = file[key] ?? {};
    if (!isRecord(set) || !Object.values(set).every(isPin)) return undefined;
    sets[key] = set as PinSet['tools'];
  }
  return { tools: sets['tools']!, prompts: sets['prompts']! };
}

/** The JSON of `server`'s pins file. */
export function pinsFile(server: string, pins: PinSet): Record<string, unknown> {
  return { version: 1, server, tools: pins.tools, prompts: pins.prompts };
}

/** Writes `pins` as `server`'s pins file. */
export function writePinsFile(path: string, server: string, pins: PinSet): Promise<void> {
  return writeStateFile(path, pinsFile(server, pins));
}

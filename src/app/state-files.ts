/**
 * K1: the gateway's state files (remembered catalogs, pins): JSON read leniently and written
 * atomically. A write goes to a temporary file nobody can guess, created only if it does not exist
 * (O_EXCL, mode 0600), then renamed over the file: several gateways with one config (hosts spawn
 * one each) never corrupt it, and a reader sees the old file or the new one, never half of one.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** The file's JSON, or undefined when it does not exist or is not JSON (a state file is a cache). */
export function readStateFile(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** As {@link readStateFile}, off the event loop. */
export async function readStateFileAsync(path: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** Writes `value` as the file's JSON, atomically (module comment). Rejects on a failed write. */
export async function writeStateFile(path: string, value: unknown): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.${randomBytes(8).toString('hex')}.tmp`;
  let created = false;
  try {
    await writeFile(temporary, `${JSON.stringify(value)}\n`, { mode: 0o600, flag: 'wx' });
    created = true;
    await rename(temporary, path);
  } catch (error) {
    if (created) await rm(temporary, { force: true });
    throw error;
  }
}

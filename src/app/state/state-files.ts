/**
 * K1: the gateway's state files (remembered catalogs, pins): JSON read leniently and written
 * atomically. A write goes to a temporary file nobody can guess, created only if it does not exist
 * (O_EXCL, mode 0600), then renamed over the file: several gateways with one config (hosts spawn
 * one each) never corrupt it, and a reader sees the old file or the new one, never half of one.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm, writeFile } from 'node:fs/promises';
import {
  chmodSync,
  closeSync,
  constants,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  statSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { parseBoundedJson, STATE_FILE_BOUNDS } from '../../core/bounded-json.js';

/** K6: the state folder cannot be used as it is (the message says why and what to do). */
export class StateFolderError extends Error {
  /** Exits as a config error does (docs/cli.md): the operator fixes the folder or `state_dir`. */
  readonly exitCode = 3;
}

/**
 * K6: makes the state folder `dir` fit to hold catalogs, pins and logins: created 0700 (when it
 * cannot be, nothing is remembered and each write logs why); an
 * existing one with group or world bits made 0700 when it is ours, refused when it is not (a
 * folder others can write is never used); `catalogs/` and `pins/` refused when they are symbolic
 * links or not folders, and made 0700 likewise. Throws a {@link StateFolderError} naming the path.
 */
export function secureStateDir(dir: string): void {
  const refuse = (why: string): never => {
    throw new StateFolderError(`the state folder ${dir} ${why} (set state_dir, or fix the folder)`);
  };
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch {
    // Not creatable (a read-only home): nothing is remembered, and each write says so in the
    // log, as before; only a folder that is unsafe to use is refused.
    return;
  }
  for (const [path, label] of [
    [dir, ''],
    [join(dir, 'catalogs'), 'catalogs/ '],
    [join(dir, 'pins'), 'pins/ '],
  ] as const) {
    let stat;
    try {
      stat = path === dir ? statSync(path) : lstatSync(path);
    } catch {
      continue; // Not there yet: created 0700 at the first write.
    }
    if (stat.isSymbolicLink()) refuse(`has ${label}as a symbolic link, which is never followed: remove it`);
    if (!stat.isDirectory()) refuse(label === '' ? 'is not a folder' : `has ${label}that is not a folder`);
    if ((stat.mode & 0o077) === 0) continue;
    const mode = `0${(stat.mode & 0o777).toString(8)}`;
    if (process.getuid !== undefined && stat.uid !== process.getuid())
      refuse(
        `${label === '' ? 'is' : `has ${label}`}open to others (mode ${mode}) and not this user's to fix: make it 0700`,
      );
    chmodSync(path, 0o700);
  }
}

/** Opens the file itself, never what a symbolic link in its place points to (issue 55). */
const NO_FOLLOW = constants.O_RDONLY | constants.O_NOFOLLOW;

/**
 * The file's JSON, or undefined when it does not exist, is a symbolic link, is not JSON or is
 * larger or deeper than a state file may be (a state file is a cache: bounded-json.ts).
 */
export function readStateFile(path: string): unknown {
  try {
    const fd = openSync(path, NO_FOLLOW);
    try {
      return parseBoundedJson(readFileSync(fd, 'utf8'), STATE_FILE_BOUNDS);
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
}

/** As {@link readStateFile}, off the event loop. */
export async function readStateFileAsync(path: string): Promise<unknown> {
  try {
    const handle = await open(path, NO_FOLLOW);
    try {
      return parseBoundedJson(await handle.readFile('utf8'), STATE_FILE_BOUNDS);
    } finally {
      await handle.close();
    }
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

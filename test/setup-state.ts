/**
 * K1: every test file starts with a state folder of its own (`XDG_STATE_HOME`, inherited by the
 * gateways it spawns): no catalog, pin or login remembered by one file is read by another, and
 * nothing is written to the user's own ~/.local/state.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

process.env['XDG_STATE_HOME'] = mkdtempSync(join(tmpdir(), 'xdg-state-'));

/** X5: the Tasks extension's pure words (core/tasks.ts), as tables. */
import { describe, expect, it } from 'vitest';
import {
  declaresTasks,
  exposeTask,
  isCreatedTask,
  rememberMs,
  TASKS_EXTENSION,
} from '../../src/core/tasks.js';

describe('tasks, pure', () => {
  it.each([
    [undefined, false],
    [{}, false],
    [{ extensions: {} }, false],
    [{ extensions: { [TASKS_EXTENSION]: {} } }, true],
    [{ extensions: { [TASKS_EXTENSION]: true } }, false],
    [{ extensions: { 'io.modelcontextprotocol/skills': {} } }, false],
  ])('X5: declaresTasks(%j) is %s', (capabilities, expected) => {
    expect(declaresTasks(capabilities as { extensions?: object } | undefined)).toBe(expected);
  });

  it.each([
    [{ ttlMs: 300_000 }, 300_000],
    [{ ttlMs: 10 }, 60_000],
    [{ ttlMs: null }, 86_400_000],
    [{ ttlMs: 1e12 }, 86_400_000],
    [{}, 86_400_000],
    [{ ttlMs: 1500.5 }, 60_000],
  ])('X5: a task with %j is remembered %i ms', (task, expected) => {
    expect(rememberMs(task)).toBe(expected);
  });

  it('X5, X9: a task is shown under the gateway’s id, without the downstream’s resultType and _meta, its ttlMs what the gateway keeps', () => {
    const shown = exposeTask(
      {
        resultType: 'task',
        taskId: 'down-1',
        status: 'working',
        ttlMs: 5,
        _meta: { 'io.modelcontextprotocol/serverInfo': {} },
      },
      'ours',
    );
    expect(shown).toEqual({ taskId: 'ours', status: 'working', ttlMs: 60_000 });
    expect(isCreatedTask({ kind: 'task' })).toBe(true);
    expect(isCreatedTask({ kind: 'input_required' })).toBe(false);
    expect(isCreatedTask(null)).toBe(false);
  });
});

/** P6: what an exit report shows of a stdio server's last words on stderr. */
import { describe, expect, it } from 'vitest';
import { lastWords } from '../../src/downstream/stdio-client.js';

const NODE_MISSING_MODULE = [
  'node:internal/modules/cjs/loader:1228',
  '  throw err;',
  '  ^',
  '',
  "Error: Cannot find module '/x/server.js'",
  '    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)',
  '    at Module._load (node:internal/modules/cjs/loader:1051:27)',
  '    at Function.executeUserEntryPoint [as runMain] (node:internal/modules/run_main:174:12)',
  '    at node:internal/main/run_main_module:28:49 {',
  "  code: 'MODULE_NOT_FOUND',",
  '  requireStack: []',
  '}',
  '',
  'Node.js v20.20.2',
].join('\n');

describe('lastWords', () => {
  it.each([
    ['a plain last line', 'starting\nfatal: no API key\n', ['starting', 'fatal: no API key']],
    ['nothing', '', []],
    [
      'a Python traceback ends with its error',
      'Traceback (most recent call last):\n  File "s.py", line 1, in <module>\nModuleNotFoundError: No module named \'mcp\'',
      [
        'Traceback (most recent call last):',
        '  File "s.py", line 1, in <module>',
        "ModuleNotFoundError: No module named 'mcp'",
      ],
    ],
  ])('P6: %s', (_label, stderr, expected) => {
    expect(lastWords(stderr)).toEqual(expected);
  });

  it("P6: node's missing module: the message is kept, the stack frames and the version are not", () => {
    const words = lastWords(NODE_MISSING_MODULE);
    expect(words).toContain("Error: Cannot find module '/x/server.js'");
    expect(words.join('\n')).not.toMatch(/\sat Module\._resolveFilename|Node\.js v/);
    expect(words.length).toBeLessThanOrEqual(5);
  });
});

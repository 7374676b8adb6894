import { describe, expect, it } from 'vitest';
import {
  buildCatalog,
  diffCatalogs,
  type CatalogOptions,
  type CatalogServerInput,
} from '../../src/core/catalog.js';

const envelope = { type: 'object', properties: { results: {} } };
const options: CatalogOptions = {
  separator: '_',
  nameMaxLength: 64,
  explicitDestructive: true,
  strictArguments: false,
  describeArguments: false,
  outputSchema: envelope,
};

function tool(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name,
    description: `${name} tool`,
    inputSchema: { type: 'object', properties: { a: { type: 'string' } } },
    ...extra,
  };
}

function server(name: string, tools: unknown[], extra: Partial<CatalogServerInput> = {}): CatalogServerInput {
  return { server: name, prefix: name, tools, ...extra };
}

const names = (servers: CatalogServerInput[], opts: Partial<CatalogOptions> = {}) =>
  buildCatalog(servers, { ...options, ...opts }).tools.map((t) => t.name);

describe('catalog', () => {
  it.each([
    ['server prefix', [server('fs', [tool('read')])], {}, ['fs_read']],
    [
      'global prefix (the MCP_TOOL_PREFIX value, passed in)',
      [server('fs', [tool('read')])],
      { globalPrefix: 'acme' },
      ['acme_fs_read'],
    ],
    ['prefix "" exposes names unprefixed', [server('fs', [tool('read')], { prefix: '' })], {}, ['read']],
    [
      'configured prefix instead of the key',
      [server('fs', [tool('read')], { prefix: 'files' })],
      {},
      ['files_read'],
    ],
    [
      'dotted and unicode names are sanitized',
      [server('fs', [tool('read.file'), tool('löschen')])],
      {},
      ['fs_read_file', 'fs_l_schen'],
    ],
  ])('T1/T2: exposed names, %s', (_label, servers, opts, expected) => {
    expect(names(servers, opts)).toEqual(expected);
  });

  it('T3: routing is a table lookup; a name full of separators is never split', () => {
    const catalog = buildCatalog([server('my_srv', [tool('x_y')]), server('my', [tool('srv_z')])], options);
    expect(catalog.get('my_srv_x_y')).toMatchObject({ server: 'my_srv', tool: 'x_y' });
    expect(catalog.get('my_srv_z')).toMatchObject({ server: 'my', tool: 'srv_z' });
    expect(catalog.get('my_srv')).toBeUndefined();
  });

  it.each([
    [
      'two servers, one exposed name',
      [server('a', [tool('b_c')]), server('a_b', [tool('c')])],
      'a_b_c',
      { server: 'a_b', tool: 'c' },
      { server: 'a', tool: 'b_c' },
    ],
    [
      'sanitizing merges a.b and a_b',
      [server('s', [tool('a.b'), tool('a_b')])],
      's_a_b',
      { server: 's', tool: 'a_b' },
      { server: 's', tool: 'a.b' },
    ],
    [
      'unprefixed servers',
      [server('one', [tool('read')], { prefix: '' }), server('two', [tool('read')], { prefix: '' })],
      'read',
      { server: 'two', tool: 'read' },
      { server: 'one', tool: 'read' },
    ],
    [
      'a rename onto an existing name',
      [server('s', [tool('x'), tool('y')], { rename: { y: 'x' } })],
      's_x',
      { server: 's', tool: 'y' },
      { server: 's', tool: 'x' },
    ],
  ])('T4: %s → the later one is withheld and both are named', (_label, servers, name, withheld, kept) => {
    const catalog = buildCatalog(servers, options);
    expect(catalog.tools.filter((t) => t.name === name)).toHaveLength(1);
    expect(catalog.get(name)).toMatchObject(kept);
    const problem = catalog.problems.find((p) => p.code === 'collision');
    expect(problem).toMatchObject({
      severity: 'error',
      name,
      server: withheld.server,
      tool: withheld.tool,
      keptBy: kept,
    });
    expect(problem?.message).toContain(`"${withheld.tool}" of server "${withheld.server}"`);
    expect(problem?.message).toContain(`"${kept.tool}" of server "${kept.server}"`);
  });

  it.each([
    ['include globs', { include: ['read_*', 'list_*'] }, ['s_read_file', 's_list_dir']],
    ['exclude globs', { exclude: ['write_*'] }, ['s_read_file', 's_list_dir', 's_search']],
    [
      'exclude wins over include',
      { include: ['*'], exclude: ['read_*', 'search'] },
      ['s_write_file', 's_list_dir'],
    ],
    [
      'globs match the downstream name, not the renamed one',
      { include: ['read_file'], rename: { read_file: 'read' } },
      ['s_read'],
    ],
    [
      'empty include means every tool',
      { include: [] },
      ['s_read_file', 's_write_file', 's_list_dir', 's_search'],
    ],
  ])('T5: %s', (_label, settings, expected) => {
    const listing = [tool('read_file'), tool('write_file'), tool('list_dir'), tool('search')];
    expect(names([server('s', listing, settings)])).toEqual(expected);
  });

  it('T5: a renamed tool routes to its original downstream name; overrides use the new name', () => {
    const catalog = buildCatalog(
      [
        server('fs', [tool('read_text_file')], {
          prefix: 'files',
          rename: { read_text_file: 'read' },
          overrides: {
            read: {
              description: 'Read one note.',
              instruction: 'Quote it.',
              instructions: { timeout: 'Retry once.' },
            },
          },
        }),
      ],
      options,
    );
    const entry = catalog.get('files_read');
    expect(entry).toMatchObject({ server: 'fs', tool: 'read_text_file' });
    expect(entry?.definition.description).toBe('Read one note.');
    expect(entry?.instructions).toEqual({ success: 'Quote it.', failure: { timeout: 'Retry once.' } });
    expect(catalog.problems).toEqual([]);
  });

  it.each([
    [
      'a rename of a tool the server does not list',
      { rename: { reed: 'r' } },
      'unused_rename',
      /did you mean "read"/,
    ],
    [
      'an override keyed by the downstream name of a renamed tool',
      { rename: { read: 'r' }, overrides: { read: {} } },
      'unused_override',
      /after rename/,
    ],
  ])('T5: %s is a warning', (_label, settings, code, message) => {
    const catalog = buildCatalog([server('s', [tool('read')], settings)], options);
    expect(catalog.problems).toMatchObject([{ severity: 'warning', code }]);
    expect(catalog.problems[0]?.message).toMatch(message);
  });

  it('T6/T13: the definition keeps inputSchema, title, annotations and _meta; outputSchema is the envelope', () => {
    const inputSchema = {
      type: 'object',
      properties: { q: { type: 'string', description: 'Query.' } },
      required: ['q'],
    };
    const annotations = { readOnlyHint: true, openWorldHint: false };
    const listing = [
      {
        name: 'find',
        title: 'Find',
        description: 'Finds.',
        inputSchema,
        annotations,
        outputSchema: { type: 'object' },
        _meta: { x: 1 },
      },
    ];
    const definition = buildCatalog([server('s', listing)], options).definitions[0];
    expect(definition).toEqual({
      name: 's_find',
      title: 'Find',
      description: 'Finds.',
      inputSchema,
      outputSchema: envelope,
      annotations,
      _meta: { x: 1 },
    });
    expect(definition?.inputSchema).toBe(inputSchema);
  });

  it.each([
    ['optional task support travels', { taskSupport: 'optional' }, { taskSupport: 'optional' }],
    ['forbidden task support travels', { taskSupport: 'forbidden' }, { taskSupport: 'forbidden' }],
    ['a task-only tool is a plain tool here (Q6)', { taskSupport: 'required' }, undefined],
    ['other keys travel without a task-only taskSupport', { taskSupport: 'required', x: 1 }, { x: 1 }],
  ])("T6: a tool's execution: %s", (_label, execution, exposed) => {
    const listing = [{ name: 'run', inputSchema: { type: 'object' }, execution }];
    const definition = buildCatalog([server('s', listing)], options).definitions[0] as Record<
      string,
      unknown
    >;
    expect(definition['execution']).toEqual(exposed);
  });

  it('T13: reserved io.modelcontextprotocol/ keys are dropped; ui:// URIs inside _meta become the exposed ones', () => {
    const listing = [
      {
        name: 'display',
        inputSchema: { type: 'object' },
        _meta: {
          ui: { resourceUri: 'ui://viewer/app.html' },
          'ui/resourceUri': 'ui://viewer/app.html',
          'io.modelcontextprotocol/related-task': { taskId: 't' },
          links: ['https://example.com', 'ui://viewer/other.html'],
        },
      },
      { name: 'plain', inputSchema: { type: 'object' }, _meta: { 'io.modelcontextprotocol/x': 1 } },
    ];
    const catalog = buildCatalog([server('pdf', listing)], { ...options, globalPrefix: 'acme' });
    expect(catalog.definitions[0]?._meta).toEqual({
      ui: { resourceUri: 'ui://acme.pdf/viewer/app.html' },
      'ui/resourceUri': 'ui://acme.pdf/viewer/app.html',
      links: ['https://example.com', 'ui://acme.pdf/viewer/other.html'],
    });
    expect(catalog.definitions[1]).not.toHaveProperty('_meta');
    const unprefixed = buildCatalog([server('pdf', listing, { prefix: '' })], options);
    expect(unprefixed.definitions[0]?._meta?.['ui']).toEqual({ resourceUri: 'ui://viewer/app.html' });
  });

  it("U6: an MCP App server's app-callable tools answer to their downstream names; model-only and non-app servers' do not", () => {
    const app = [
      { name: 'display', inputSchema: { type: 'object' }, _meta: { ui: { resourceUri: 'ui://v/a.html' } } },
      { name: 'read_bytes', inputSchema: { type: 'object' }, _meta: { ui: { visibility: ['app'] } } },
      { name: 'model_only', inputSchema: { type: 'object' }, _meta: { ui: { visibility: ['model'] } } },
      { name: 'list', inputSchema: { type: 'object' } },
    ];
    const plain = [{ name: 'echo', inputSchema: { type: 'object' } }];
    const catalog = buildCatalog([server('pdf', app), server('other', plain)], options);
    expect(catalog.get('read_bytes')?.name).toBe('pdf_read_bytes');
    expect(catalog.isAppName('read_bytes')).toBe(true);
    expect(catalog.get('display')?.name).toBe('pdf_display');
    expect(catalog.get('list')?.name).toBe('pdf_list');
    expect(catalog.get('model_only')).toBeUndefined();
    expect(catalog.get('echo')).toBeUndefined();
    expect(catalog.isAppName('pdf_read_bytes')).toBe(false);
    expect(catalog.get('read_bytes')?.app).toEqual({ visibility: ['app'] });
  });

  it('U6: two MCP App servers sharing a tool name get no alias for it, with a warning', () => {
    const app = (uri: string) => [
      { name: 'show', inputSchema: { type: 'object' }, _meta: { ui: { resourceUri: uri } } },
      { name: 'refresh', inputSchema: { type: 'object' } },
    ];
    const catalog = buildCatalog([server('a', app('ui://a/x')), server('b', app('ui://b/x'))], options);
    expect(catalog.get('refresh')).toBeUndefined();
    expect(catalog.get('show')).toBeUndefined();
    expect(catalog.problems.map((p) => [p.code, p.severity, p.tool])).toEqual([
      ['ambiguous_app_name', 'warning', 'show'],
      ['ambiguous_app_name', 'warning', 'refresh'],
    ]);
  });

  it('T6: describe_arguments appends a markdown argument list to the description', () => {
    const listing = [
      tool('find', {
        inputSchema: {
          type: 'object',
          properties: { q: { type: 'string', description: 'Query.' } },
          required: ['q'],
        },
      }),
    ];
    const definition = buildCatalog([server('s', listing)], { ...options, describeArguments: true })
      .definitions[0];
    expect(definition?.description).toBe('find tool\n\nArguments:\n- `q` (string, required): Query.');
  });

  it.each([
    ['destructive', { annotations: { destructiveHint: true } }, {}, true],
    ['destructive but read-only', { annotations: { destructiveHint: true, readOnlyHint: true } }, {}, false],
    ['unannotated', {}, {}, false],
    ['require_explicit override', {}, { overrides: { drop: { requireExplicit: true } } }, true],
  ])('T7: a %s tool is listed gated or not', (_label, extra, settings, gated) => {
    const catalog = buildCatalog([server('db', [tool('drop', extra)], settings)], options);
    const entry = catalog.get('db_drop');
    expect(entry?.gate).toEqual(gated ? { value: 'DB_DROP' } : undefined);
    const schema = entry?.definition.inputSchema as {
      required?: string[];
      properties: Record<string, unknown>;
    };
    expect('explicit_action' in schema.properties).toBe(gated);
    expect(entry?.definition.description?.startsWith('REQUIRES EXPLICIT USER INSTRUCTION')).toBe(gated);
  });

  it('T7: explicit_destructive: false lists destructive tools ungated', () => {
    const catalog = buildCatalog([server('db', [tool('drop', { annotations: { destructiveHint: true } })])], {
      ...options,
      explicitDestructive: false,
    });
    expect(catalog.get('db_drop')?.gate).toBeUndefined();
  });

  it('T9: suggestions are close exposed names', () => {
    const catalog = buildCatalog(
      [server('fs', [tool('read_file'), tool('write_file'), tool('list')])],
      options,
    );
    expect(catalog.suggest('fs_raed_file')).toEqual(['fs_read_file', 'fs_write_file']);
    expect(catalog.suggest('zzzzzz')).toEqual([]);
  });

  it('T10: a rebuild with a changed list changes definitions and reports added, removed and changed names', () => {
    const before = buildCatalog([server('fs', [tool('read'), tool('write'), tool('list')])], options);
    const after = buildCatalog(
      [server('fs', [tool('read'), tool('list', { description: 'new' }), tool('search')])],
      { ...options, previous: before },
    );
    expect(after.definitions.map((d) => d.name)).toEqual(['fs_read', 'fs_list', 'fs_search']);
    expect(diffCatalogs(before, after)).toEqual({
      added: ['fs_search'],
      removed: ['fs_write'],
      changed: ['fs_list'],
    });
    const same = buildCatalog(
      [server('fs', [tool('read'), tool('list', { description: 'new' }), tool('search')])],
      { ...options, previous: after },
    );
    expect(diffCatalogs(after, same)).toEqual({ added: [], removed: [], changed: [] });
  });

  it.each([
    ['all', undefined, ['s_ro', 's_rw', 's_bare']],
    [
      'read_only lists only readOnlyHint: true (unannotated is not read-only)',
      'read_only' as const,
      ['s_ro'],
    ],
  ])('T11: expose %s', (_label, expose, expected) => {
    const listing = [
      tool('ro', { annotations: { readOnlyHint: true } }),
      tool('rw', { annotations: { readOnlyHint: false } }),
      tool('bare'),
    ];
    expect(names([server('s', listing, { expose })])).toEqual(expected);
  });

  it.each([
    ['not an object', 'oops', '#1', /is not an object/],
    ['no string name', { inputSchema: { type: 'object' } }, '#1', /has no string name/],
    ['no inputSchema', { name: 'bad' }, 'bad', /MCP Tool schema \(inputSchema/],
    ['an inputSchema that is a string', { name: 'bad', inputSchema: 'object' }, 'bad', /MCP Tool schema/],
    ['an inputSchema that is an array', { name: 'bad', inputSchema: [] }, 'bad', /MCP Tool schema/],
    ['the name of an earlier tool', tool('good1'), 'good1', /repeats the name .* first one is kept/],
    [
      'an inputSchema that is not an object schema',
      { name: 'bad', inputSchema: { type: 'string' } },
      'bad',
      /MCP Tool schema/,
    ],
    [
      'an inputSchema that does not compile',
      { name: 'bad', inputSchema: { type: 'object', properties: { a: { $ref: '#/nope' } } } },
      'bad',
      /inputSchema does not compile \(2020-12\): can't resolve reference #\/nope/,
    ],
    [
      'an outputSchema that does not compile',
      {
        name: 'bad',
        inputSchema: { type: 'object' },
        outputSchema: { type: 'object', properties: { a: { type: 'nope' } } },
      },
      'bad',
      /outputSchema does not compile/,
    ],
    [
      'an x-mcp-header on a number property (SEP-2243)',
      {
        name: 'bad',
        inputSchema: { type: 'object', properties: { n: { type: 'number', 'x-mcp-header': 'N' } } },
      },
      'bad',
      /x-mcp-header "N" on \/n is on a number property.*SEP-2243/,
    ],
    [
      'annotations of the wrong type',
      { name: 'bad', inputSchema: { type: 'object' }, annotations: { readOnlyHint: 'yes' } },
      'bad',
      /annotations\.readOnlyHint/,
    ],
  ])(
    'T12: a tool with %s is withheld with a warning naming it; the rest are served',
    (_label, bad, name, message) => {
      const catalog = buildCatalog([server('s', [tool('good1'), bad, tool('good2')])], options);
      expect(catalog.tools.map((t) => t.name)).toEqual(['s_good1', 's_good2']);
      expect(catalog.problems).toHaveLength(1);
      expect(catalog.problems[0]).toMatchObject({
        severity: 'warning',
        code: 'malformed_tool',
        server: 's',
        tool: name,
      });
      expect(catalog.problems[0]?.message).toContain(`"s"`);
      expect(catalog.problems[0]?.message).toMatch(message);
    },
  );

  it('Q6/T12: a task-only tool is served, without its execution field (the gateway runs it as a task)', () => {
    const catalog = buildCatalog(
      [
        server('s', [
          { name: 'research', inputSchema: { type: 'object' }, execution: { taskSupport: 'required' } },
        ]),
      ],
      options,
    );
    expect(catalog.problems).toEqual([]);
    expect(catalog.definitions).toEqual([expect.objectContaining({ name: 's_research' })]);
    expect(catalog.definitions[0]).not.toHaveProperty('execution');
  });

  it.each([
    [
      'draft-07',
      {
        $schema: 'http://json-schema.org/draft-07/schema#',
        type: 'object',
        definitions: { s: { type: 'string' } },
        properties: { a: { $ref: '#/definitions/s' } },
      },
    ],
    [
      '2020-12 with $defs and prefixItems',
      {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        $defs: { s: { type: 'string' } },
        properties: { a: { $ref: '#/$defs/s' }, t: { type: 'array', prefixItems: [{ type: 'number' }] } },
      },
    ],
  ])('T12: %s schemas are served and validate', (_label, inputSchema) => {
    const catalog = buildCatalog(
      [server('s', [{ name: 't', inputSchema, outputSchema: inputSchema }])],
      options,
    );
    expect(catalog.problems).toEqual([]);
    expect(catalog.get('s_t')?.validate({ a: 'x' })).toBeUndefined();
    expect(catalog.get('s_t')?.validate({ a: 1 })).toEqual([{ path: '/a', message: 'must be string' }]);
  });

  it('T8: strict_arguments reaches the validators', () => {
    const catalog = buildCatalog([server('s', [tool('t')])], { ...options, strictArguments: true });
    expect(catalog.get('s_t')?.validate({ a: 'x', extra: 1 })).toEqual([
      { path: '/extra', message: 'is not a known argument' },
    ]);
  });

  it('T3/T10: 20 servers × 100 tools build without compiling a validator, and tools/list is one prebuilt array', () => {
    const servers = Array.from({ length: 20 }, (_, s) =>
      server(
        `s${s}`,
        Array.from({ length: 100 }, (_, i) => ({
          name: `tool_${i}`,
          inputSchema: {
            type: 'object',
            properties: { [`p${s}_${i}`]: { type: 'string' }, n: { type: 'integer', minimum: i } },
          },
          annotations: { readOnlyHint: i % 2 === 0, destructiveHint: i % 3 === 0 },
        })),
      ),
    );
    const catalog = buildCatalog(servers, options);
    expect(catalog.tools).toHaveLength(2000);
    expect(catalog.compiler.compiledCount).toBe(0);
    expect(catalog.definitions).toBe(catalog.definitions);
    expect(catalog.definitions[1999]).toBe(catalog.get('s19_tool_99')?.definition);
    const rebuilt = buildCatalog(servers, { ...options, previous: catalog });
    expect(diffCatalogs(catalog, rebuilt)).toEqual({ added: [], removed: [], changed: [] });
  });
});

describe('strip_prefix (T15)', () => {
  const tool = (name: string) => ({ name, inputSchema: { type: 'object' } });
  it.each([
    ['a tool that repeats the prefix loses the repeat', ['git_status', 'git_log'], ['git_status', 'git_log']],
    ['any case', ['Git_diff'], ['git_diff']],
    ['a tool without the prefix keeps its name', ['status'], ['git_status']],
    ['the prefix alone is no repeat', ['git_'], ['git_git_']],
    [
      'a stripped name that is another tool of the server is not taken',
      ['git_status', 'status'],
      ['git_git_status', 'git_status'],
    ],
  ])('T15: %s', (_name, listing, expected) => {
    const catalog = buildCatalog([server('git', listing.map(tool), { stripPrefix: true })], options);
    expect(catalog.tools.map((t) => t.name)).toEqual(expected);
    expect(catalog.problems).toEqual([]);
  });

  it("T15: a stripped name that another server's tool has unstripped is not taken (no new collision)", () => {
    const catalog = buildCatalog(
      [
        server('git', [tool('git_status')], { stripPrefix: true }),
        server('other', [tool('git_status')], { prefix: '' }),
      ],
      options,
    );
    expect(catalog.tools.map((t) => [t.server, t.name])).toEqual([
      ['git', 'git_git_status'],
      ['other', 'git_status'],
    ]);
    expect(catalog.problems).toEqual([]);
  });

  it('T15: off by default; calls still reach the downstream name', () => {
    expect(names([server('git', [tool('git_status')])])).toEqual(['git_git_status']);
    const catalog = buildCatalog([server('git', [tool('git_status')], { stripPrefix: true })], options);
    expect(catalog.get('git_status')?.tool).toBe('git_status');
  });
});

describe('tool names that are Object.prototype members (T1, T5)', () => {
  it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'])(
    'T5: a tool named %s is exposed under its own name even with renames and overrides configured',
    (name) => {
      const catalog = buildCatalog(
        [
          server('s', [{ name, inputSchema: { type: 'object' } }], {
            rename: { other: 'renamed' },
            overrides: { renamed: { description: 'x' } },
          }),
        ],
        options,
      );
      expect(catalog.tools.map((tool) => [tool.name, tool.tool])).toEqual([[`s_${name}`, name]]);
      expect(catalog.get(`s_${name}`)?.definition.description).toBeUndefined();
    },
  );
});

/**
 * Schema checking and compilation for the catalog (CONTRACT T8, T12), kept apart from the
 * argument validator that uses it.
 *
 * The dialect comes from the schema's `$schema`: draft-07/06/04 → Ajv's draft-07 class, 2019-09 →
 * `Ajv2019`, 2020-12 or none → `Ajv2020` (MCP's default dialect). Each distinct schema is checked
 * once per catalog build and compiled by Ajv at most once (on its tool's first call; a rebuild
 * reuses what the previous build checked and compiled), never per call. The check runs Ajv's
 * meta-schema validators compiled ahead of time (`meta-validators.ts`): compiling them at the
 * first listing cost a starting gateway ~60–100 ms of CPU. Ajv is pure JavaScript: no I/O, and
 * its logger is off so nothing reaches the console.
 */
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { isRecord } from './json.js';
import { META_VALIDATORS } from './meta-validators.js';

/** The JSON Schema dialects the catalog compiles (T12). */
export type SchemaDialect = 'draft-07' | '2019-09' | '2020-12';

/** The build-time verdict on one schema (T12): fine, or why it cannot be used. */
export type SchemaCheck =
  | { readonly ok: true; readonly dialect: SchemaDialect }
  | { readonly ok: false; readonly dialect: SchemaDialect; readonly error: string };

/**
 * Checks schemas at catalog build and compiles validators on first use, both cached per distinct
 * schema (see {@link createSchemaCompiler}).
 */
export interface SchemaCompiler {
  /**
   * T12, cheap: the schema is valid for its dialect's meta-schema, every `$ref` resolves inside
   * it and every `pattern` is a valid Unicode RegExp. This is what makes an Ajv compile fail, at
   * a tenth of its cost. Never throws.
   */
  check(schema: Record<string, unknown>): SchemaCheck;
  /**
   * The compiled validator of `schema`, compiled on the first call and cached (so once per
   * distinct schema, never per tool call). An error string when Ajv still refuses it.
   */
  validator(schema: Record<string, unknown>): ValidateFunction | string;
  /** How many schemas this compiler has compiled itself (not reused from the previous one). */
  readonly compiledCount: number;
}

// ajv-formats is CommonJS with `module.exports = plugin`: under NodeNext the default import is
// the module object in the types but the function at run time.
const addFormats = addFormatsModule as unknown as (ajv: Ajv | Ajv2019 | Ajv2020) => unknown;

const AJV_OPTIONS: Options = {
  strict: false,
  allErrors: true,
  validateFormats: true,
  // check() already ran the meta-schema; compile() need not run it again (nor compile it).
  validateSchema: false,
  // Core must not write to the console (stdout is the stdio protocol channel).
  logger: false,
};

/**
 * T12: the dialect a schema declares through `$schema`. Unknown or absent → 2020-12, the
 * dialect MCP specifies for schemas without `$schema`.
 */
export function dialectOf(schema: Record<string, unknown>): SchemaDialect {
  const declared = schema['$schema'];
  if (typeof declared !== 'string') return '2020-12';
  if (/json-schema\.org\/draft-0[4-7]\/schema/.test(declared)) return 'draft-07';
  if (/json-schema\.org\/draft\/2019-09\/schema/.test(declared)) return '2019-09';
  return '2020-12';
}

type AnyAjv = Ajv | Ajv2019 | Ajv2020;

function createAjv(dialect: SchemaDialect): AnyAjv {
  const ajv =
    dialect === 'draft-07'
      ? new Ajv(AJV_OPTIONS)
      : dialect === '2019-09'
        ? new Ajv2019(AJV_OPTIONS)
        : new Ajv2020(AJV_OPTIONS);
  addFormats(ajv);
  return ajv;
}

/** What is known about one distinct schema. */
interface Entry {
  readonly dialect: SchemaDialect;
  /** The schema without `$schema`: we pick the dialect, so Ajv must not look it up. */
  readonly body: Record<string, unknown>;
  readonly verdict: SchemaCheck;
  compiled?: ValidateFunction | string;
}

interface CompilerState {
  readonly instances: Map<SchemaDialect, AnyAjv>;
  readonly cache: Map<string, Entry>;
}

const STATE = Symbol('compiler state');

const MAX_WALK = 10_000;

/** Why a schema's references or patterns would break a compile, or `undefined`. */
function staticProblem(root: Record<string, unknown>): string | undefined {
  const ids = new Set<string>();
  const anchors = new Set<string>();
  const refs: string[] = [];
  const stack: unknown[] = [root];
  for (let seen = 0; stack.length > 0 && seen < MAX_WALK; seen++) {
    const node = stack.pop();
    if (Array.isArray(node)) stack.push(...node);
    if (!isRecord(node)) continue;
    for (const [key, value] of Object.entries(node)) {
      if (typeof value === 'string') {
        if (key === '$id') ids.add(value.replace(/#$/, ''));
        else if (key === '$anchor' || key === '$dynamicAnchor') anchors.add(value);
        else if (key === '$ref' || key === '$dynamicRef') refs.push(value);
        else if (key === 'pattern') {
          try {
            new RegExp(value, 'u');
          } catch {
            return `pattern ${JSON.stringify(value)} is not a valid regular expression`;
          }
        }
      } else if (typeof value === 'object' && value !== null) stack.push(value);
    }
  }
  for (const ref of refs) {
    if (!resolves(root, ref, ids, anchors)) return `can't resolve reference ${ref}`;
  }
  return undefined;
}

function resolves(
  root: unknown,
  ref: string,
  ids: ReadonlySet<string>,
  anchors: ReadonlySet<string>,
): boolean {
  const hash = ref.indexOf('#');
  const base = hash < 0 ? ref : ref.slice(0, hash);
  const fragment = hash < 0 ? '' : ref.slice(hash + 1);
  // A reference to another document: fine when the schema embeds it, or it is a meta-schema.
  if (base) return ids.has(base) || /^https?:\/\/json-schema\.org\//.test(base);
  if (fragment === '') return true;
  if (!fragment.startsWith('/')) return anchors.has(fragment);
  let node: unknown = root;
  for (const raw of fragment.slice(1).split('/')) {
    let key: string;
    try {
      key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    } catch {
      return false;
    }
    if (Array.isArray(node)) node = node[Number(key)];
    else if (isRecord(node)) node = node[key];
    else return false;
    if (node === undefined) return false;
  }
  return true;
}

/**
 * The schema compiler of one catalog build. Pass the previous build's compiler to reuse its Ajv
 * instances and every check and validator whose schema is still listed; schemas no longer listed
 * leave with the old compiler, so memory follows the current catalog.
 *
 * Why validators compile on first use: an Ajv compile costs milliseconds per schema (measured
 * 3–9 ms on the 2-core CI machine), so compiling 2,000 tools up front would take seconds at every
 * start. {@link SchemaCompiler.check} catches, at build time, what makes a compile fail.
 * @example const compiler = createSchemaCompiler(previousCatalog?.compiler)
 */
export function createSchemaCompiler(previous?: SchemaCompiler): SchemaCompiler {
  const prior = previous
    ? (previous as unknown as Record<symbol, CompilerState | undefined>)[STATE]
    : undefined;
  const instances = prior?.instances ?? new Map<SchemaDialect, AnyAjv>();
  const cache = new Map<string, Entry>();
  let compiledCount = 0;
  const ajvFor = (dialect: SchemaDialect): AnyAjv => {
    let ajv = instances.get(dialect);
    if (!ajv) {
      ajv = createAjv(dialect);
      instances.set(dialect, ajv);
    }
    return ajv;
  };
  const entryFor = (schema: Record<string, unknown>): Entry => {
    const dialect = dialectOf(schema);
    const { $schema: _declared, ...body } = schema;
    let key: string;
    try {
      key = `${dialect}\n${JSON.stringify(body)}`;
    } catch (error) {
      return {
        dialect,
        body,
        verdict: { ok: false, dialect, error: `not serializable as JSON: ${errorMessage(error)}` },
      };
    }
    const known = cache.get(key) ?? prior?.cache.get(key);
    if (known) {
      cache.set(key, known);
      return known;
    }
    const meta = META_VALIDATORS[dialect];
    let verdict: SchemaCheck = { ok: true, dialect };
    if (!meta(body)) {
      verdict = { ok: false, dialect, error: `schema is invalid: ${errorsText(meta.errors)}` };
    } else {
      const problem = staticProblem(body);
      if (problem) verdict = { ok: false, dialect, error: problem };
    }
    const entry: Entry = { dialect, body, verdict };
    cache.set(key, entry);
    return entry;
  };
  const validator = (schema: Record<string, unknown>): ValidateFunction | string => {
    const entry = entryFor(schema);
    if (entry.compiled !== undefined) return entry.compiled;
    if (!entry.verdict.ok) return (entry.compiled = entry.verdict.error);
    const ajv = ajvFor(entry.dialect);
    try {
      entry.compiled = ajv.compile(entry.body);
    } catch (error) {
      entry.compiled = errorMessage(error);
    } finally {
      // Ajv registers the schema by identity and by `$id`; ours is the cache that counts, and two
      // downstreams may reuse one `$id` for different schemas. (Not registering at all, with
      // `addUsedSchema: false`, breaks a root self-reference `$ref: "#"`.)
      ajv.removeSchema(entry.body);
    }
    compiledCount++;
    return entry.compiled;
  };
  return {
    check: (schema) => entryFor(schema).verdict,
    validator,
    get compiledCount() {
      return compiledCount;
    },
    [STATE]: { instances, cache } satisfies CompilerState,
  } as SchemaCompiler;
}

/** Ajv's `errorsText` with `dataVar: "schema"`, for a validator that has no Ajv instance. */
function errorsText(errors: readonly ErrorObject[] | null | undefined): string {
  if (!errors || errors.length === 0) return 'No errors';
  return errors.map((error) => `schema${error.instancePath} ${error.message ?? ''}`).join(', ');
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

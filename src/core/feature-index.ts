/**
 * The prompt and resource index (CONTRACT U5, with T1, T2, T3 and T4 applied to prompts): every
 * downstream's prompts, resources and resource templates in one routing table, built once per
 * change of a downstream's lists and read on every request (lists are prebuilt arrays; gets,
 * reads and completions are Map lookups). Pure: listings in as data, problems out as data.
 *
 * - Prompt names are exposed names (T1, T2), routed by table lookup (T3).
 * - Resource and template URIs are namespaced by `core/uri-namespace` (`<prefix>+<uri>`); a read
 *   routes by table lookup for listed resources, else by the reversible prefix rule, else (for
 *   servers with `prefix: ""`) by the template whose literal start the URI begins with.
 * - Two entries that would be exposed under the same name or URI never shadow each other: the
 *   later one (config order, then listing order) is withheld and reported (T4).
 */
import type { Prompt, Resource, ResourceTemplateType } from '@modelcontextprotocol/server';
import { exposedName } from './naming.js';
import { closest } from './suggest.js';
import { canonicalUri } from './uri-canonical.js';
import { namespaceUri, splitNamespacedUri, templateLiteral, uriPrefix } from './uri-namespace.js';

/** One server's prompts, resources and templates, already checked entry by entry downstream. */
export interface FeatureServerInput {
  /** The server's key in the config. */
  readonly server: string;
  /** T1: the server prefix; `""` exposes its prompt names and URIs unchanged. */
  readonly prefix: string;
  readonly prompts: readonly Prompt[];
  readonly resources: readonly Resource[];
  readonly resourceTemplates: readonly ResourceTemplateType[];
}

/** Index-wide settings: the T1/T2 parts the tool catalog uses too. */
export interface FeatureIndexOptions {
  /** T1: config `prefix`, else env `MCP_TOOL_PREFIX`. @example 'acme' */
  readonly globalPrefix?: string;
  /** T1. @default '_' */
  readonly separator: string;
  /** T2. @default 64 */
  readonly nameMaxLength: number;
}

/** Where an exposed prompt, resource or template goes. */
export interface FeatureRoute<D> {
  /** The exposed name (prompts) or URI / URI template (resources, templates). */
  readonly exposed: string;
  /** The downstream server's key. */
  readonly server: string;
  /** The downstream's own name, URI or URI template: what is forwarded. */
  readonly original: string;
  /** The entry as the upstream lists it. */
  readonly definition: D;
}

/** What kind of entry a problem is about. */
export type FeatureKind = 'prompt' | 'resource' | 'resource_template' | 'uri_prefix';

/** A withheld entry (T4). `check` prints these; the proxy logs them as errors. */
export interface FeatureProblem {
  readonly severity: 'error';
  /** T4: two entries under one name; X7: a URI another server's prefix would route. */
  readonly code: 'collision' | 'outside_namespace';
  readonly kind: FeatureKind;
  readonly server: string;
  /** The downstream's name or URI of the withheld entry (the server prefix, for `uri_prefix`). */
  readonly item: string;
  /** The exposed name or URI both would have. */
  readonly name: string;
  /** T4: the entry that keeps the name. */
  readonly keptBy?: { readonly server: string; readonly item: string };
  readonly message: string;
}

/** A read or completion routed to one server. */
export interface UriRoute {
  readonly server: string;
  /** The downstream's own URI. */
  readonly uri: string;
}

/** The routing table and the three list answers. */
export interface FeatureIndex {
  readonly prompts: readonly FeatureRoute<Prompt>[];
  readonly resources: readonly FeatureRoute<Resource>[];
  readonly resourceTemplates: readonly FeatureRoute<ResourceTemplateType>[];
  /** T3: a Map lookup of the exposed prompt name. */
  getPrompt(name: string): FeatureRoute<Prompt> | undefined;
  /** A Map lookup of the exposed URI template (completions, `ref/resource`). */
  getTemplate(uriTemplate: string): FeatureRoute<ResourceTemplateType> | undefined;
  /** U5: where a read of `uri` goes: listed resource, else prefix rule, else unprefixed template. */
  resolveUri(uri: string): UriRoute | undefined;
  /** Up to 3 exposed prompt names close to `name`. */
  suggestPrompts(name: string): string[];
  /** Up to 3 exposed resource URIs or URI templates close to `uri`. */
  suggestUris(uri: string): string[];
  readonly problems: readonly FeatureProblem[];
}

const LABEL: Readonly<Record<FeatureKind, string>> = {
  prompt: 'prompt',
  resource: 'resource',
  resource_template: 'resource template',
  uri_prefix: 'URI prefix',
};

/** T4 for one kind: adds entries in order, withholding (and reporting) a later duplicate. */
class Table<D> {
  readonly byKey = new Map<string, FeatureRoute<D>>();
  readonly list: FeatureRoute<D>[] = [];
  constructor(
    private readonly kind: FeatureKind,
    private readonly problems: FeatureProblem[],
  ) {}

  add(route: FeatureRoute<D>): void {
    const kept = this.byKey.get(route.exposed);
    if (kept) {
      const label = LABEL[this.kind];
      this.problems.push({
        severity: 'error',
        code: 'collision',
        kind: this.kind,
        server: route.server,
        item: route.original,
        name: route.exposed,
        keptBy: { server: kept.server, item: kept.original },
        message: `Name collision on ${label} "${route.exposed}": ${label} "${route.original}" of server "${route.server}" is withheld because ${label} "${kept.original}" of server "${kept.server}" already has it; give one of the servers a different prefix.`,
      });
      return;
    }
    this.byKey.set(route.exposed, route);
    this.list.push(route);
  }
}

/**
 * Builds the index from every server's lists, in config order. Never throws: collisions are
 * withheld and reported in `problems` (T4).
 * @example buildFeatureIndex([{ server: 'fs', prefix: 'fs', prompts, resources, resourceTemplates }], { separator: '_', nameMaxLength: 64 })
 */
export function buildFeatureIndex(
  servers: readonly FeatureServerInput[],
  options: FeatureIndexOptions,
): FeatureIndex {
  const problems: FeatureProblem[] = [];
  const prompts = new Table<Prompt>('prompt', problems);
  const resources = new Table<Resource>('resource', problems);
  const templates = new Table<ResourceTemplateType>('resource_template', problems);
  const prefixes = new Table<null>('uri_prefix', problems);
  /** Templates of servers whose URIs are unchanged, for the last routing step. */
  const bare: FeatureRoute<ResourceTemplateType>[] = [];
  const allPrefixes = new Set(servers.map((input) => uriPrefix(options.globalPrefix, input.prefix)));
  allPrefixes.delete('');
  for (const input of servers) {
    const { server } = input;
    for (const prompt of input.prompts) {
      const name = exposedName({
        globalPrefix: options.globalPrefix,
        serverPrefix: input.prefix,
        separator: options.separator,
        tool: prompt.name,
        maxLength: options.nameMaxLength,
      });
      prompts.add({ exposed: name, server, original: prompt.name, definition: { ...prompt, name } });
    }
    const prefix = uriPrefix(options.globalPrefix, input.prefix);
    if (prefix !== '') {
      const before = problems.length;
      prefixes.add({ exposed: prefix, server, original: input.prefix, definition: null });
      // T4: two servers whose prefixes give the same URI prefix (`my_fs`, `my-fs`) could not be
      // told apart on a read: the later one's resources are withheld.
      if (problems.length > before) continue;
    }
    for (const resource of input.resources) {
      // U8: listed in the one form a read is routed and checked in.
      const canonical = canonicalUri(namespaceUri(prefix, resource.uri));
      const foreign = typeof canonical === 'string' ? splitNamespacedUri(canonical)?.prefix : undefined;
      if (
        typeof canonical !== 'string' ||
        (prefix === '' && foreign !== undefined && allPrefixes.has(foreign))
      ) {
        // X7: a server lists only URIs of its own namespace (a prefix-"" server's may name another's).
        problems.push({
          severity: 'error',
          code: 'outside_namespace',
          kind: 'resource',
          server,
          item: resource.uri,
          name: typeof canonical === 'string' ? canonical : resource.uri,
          message: `Resource "${resource.uri}" of server "${server}" is withheld: ${typeof canonical === 'string' ? `its URI names server prefix "${String(foreign)}"` : canonical.refused}.`,
        });
        continue;
      }
      resources.add({
        exposed: canonical,
        server,
        original: resource.uri,
        definition: { ...resource, uri: canonical },
      });
    }
    for (const template of input.resourceTemplates) {
      const uriTemplate = namespaceUri(prefix, template.uriTemplate);
      const before = templates.list.length;
      templates.add({
        exposed: uriTemplate,
        server,
        original: template.uriTemplate,
        definition: { ...template, uriTemplate },
      });
      if (prefix === '' && templates.list.length > before) bare.push(templates.list[before]!);
    }
  }
  // Longest literal start first: the most specific unprefixed template wins a read.
  bare.sort((a, b) => templateLiteral(b.original).length - templateLiteral(a.original).length);
  const uris = [...resources.byKey.keys(), ...templates.byKey.keys()];
  const promptNames = [...prompts.byKey.keys()];
  return {
    prompts: prompts.list,
    resources: resources.list,
    resourceTemplates: templates.list,
    getPrompt: (name) => prompts.byKey.get(name),
    getTemplate: (uriTemplate) => templates.byKey.get(uriTemplate),
    resolveUri(uri) {
      const listed = resources.byKey.get(uri);
      if (listed) return { server: listed.server, uri: listed.original };
      const split = splitNamespacedUri(uri);
      const owner = split === undefined ? undefined : prefixes.byKey.get(split.prefix);
      if (split && owner) return { server: owner.server, uri: split.uri };
      const template = bare.find((route) => uri.startsWith(templateLiteral(route.original)));
      return template ? { server: template.server, uri } : undefined;
    },
    suggestPrompts: (name) => closest(name, promptNames),
    suggestUris: (uri) => closest(uri, uris),
    problems,
  };
}

/** Which upstream lists changed between two indexes (U5: one list_changed per kind). */
export interface FeatureIndexDiff {
  readonly prompts: boolean;
  /** Resources or resource templates. */
  readonly resources: boolean;
}

function fingerprint(routes: readonly FeatureRoute<unknown>[]): string {
  return JSON.stringify(routes.map((route) => [route.server, route.original, route.definition]));
}

/** U5: whether the prompt list and the resource lists differ; `false` means "no notification". */
export function diffFeatureIndexes(before: FeatureIndex, after: FeatureIndex): FeatureIndexDiff {
  return {
    prompts: fingerprint(before.prompts) !== fingerprint(after.prompts),
    resources:
      fingerprint(before.resources) !== fingerprint(after.resources) ||
      fingerprint(before.resourceTemplates) !== fingerprint(after.resourceTemplates),
  };
}

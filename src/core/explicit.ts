/**
 * Explicit use (CONTRACT T7): destructive tools get a required `explicit_action` argument whose
 * only allowed value is the exposed name in upper case. An agent has to type that value on
 * purpose, which makes "the user asked for this" a visible step rather than a side effect of a
 * guess. The check and the stripping run before argument validation, so the downstream never
 * sees the argument.
 */
import { failure, type FailureResult } from './result.js';
import { isRecord } from './json.js';

/** T7: the name of the consent argument. */
export const EXPLICIT_ARGUMENT = 'explicit_action';

/** T7: how a gated tool's description (and the argument's description) starts. */
export const EXPLICIT_NOTICE = 'REQUIRES EXPLICIT USER INSTRUCTION';

/** Inputs of {@link isGated}. */
export interface ExplicitPolicy {
  /**
   * Gate tools annotated `destructiveHint: true` (and not `readOnlyHint: true`). Config
   * `explicit_destructive`.
   * @default true
   */
  readonly explicitDestructive: boolean;
  /**
   * The tool's `require_explicit` override. When set it wins over the annotations and over
   * `explicitDestructive`: `true` gates the tool even with the global gate off, `false` lets a
   * destructive tool through.
   */
  readonly requireExplicit?: boolean;
}

/** The consent a gated tool asks for. */
export interface ExplicitGate {
  /** The one accepted value of `explicit_action`: the exposed name in upper case. */
  readonly value: string;
}

/**
 * T7: does this tool need `explicit_action`? A per-tool `requireExplicit` is the most specific
 * word and decides alone (a user who wrote `require_explicit: true` for one tool means it even
 * when the global switch is off). Otherwise: `destructiveHint: true` and not `readOnlyHint: true`,
 * unless `explicitDestructive` is false. Unannotated tools are not gated: the spec's default
 * `destructiveHint: true` would gate almost every tool, which nobody expects from a gateway.
 * @example isGated({ destructiveHint: true }, { explicitDestructive: true }) // true
 */
export function isGated(annotations: unknown, policy: ExplicitPolicy): boolean {
  if (policy.requireExplicit !== undefined) return policy.requireExplicit;
  if (!policy.explicitDestructive || !isRecord(annotations)) return false;
  return annotations['destructiveHint'] === true && annotations['readOnlyHint'] !== true;
}

/** T7: the gate of a tool with this exposed name. */
export function gateFor(exposedName: string): ExplicitGate {
  return { value: exposedName.toUpperCase() };
}

/** T7: the description a gated tool is listed with. */
export function gatedDescription(description: string | undefined, gate: ExplicitGate): string {
  const notice = `${EXPLICIT_NOTICE}: call this tool only when the user has explicitly asked for this action, and then pass ${EXPLICIT_ARGUMENT}: "${gate.value}".`;
  return description ? `${notice}\n\n${description}` : notice;
}

/**
 * T7: a copy of `inputSchema` with the required `explicit_action` property added (the original
 * is not touched: arguments are validated against it after the consent argument is stripped).
 * A downstream property of the same name is replaced: the gate needs the name, and the value is
 * stripped before forwarding anyway.
 */
export function gateSchema(
  inputSchema: Record<string, unknown>,
  gate: ExplicitGate,
): Record<string, unknown> {
  const properties = isRecord(inputSchema['properties']) ? inputSchema['properties'] : {};
  const required = Array.isArray(inputSchema['required'])
    ? inputSchema['required'].filter((key) => key !== EXPLICIT_ARGUMENT)
    : [];
  return {
    ...inputSchema,
    properties: {
      ...properties,
      [EXPLICIT_ARGUMENT]: {
        type: 'string',
        const: gate.value,
        enum: [gate.value],
        description: `${EXPLICIT_NOTICE}: pass "${gate.value}" only when the user has explicitly asked for this action.`,
      },
    },
    required: [...required, EXPLICIT_ARGUMENT],
  };
}

/** Who is asking for consent: named in the failure message and metadata. */
export interface ExplicitContext {
  /** The exposed name the agent called. */
  readonly name: string;
  readonly server: string;
  /** The downstream tool's own name. */
  readonly tool: string;
}

/**
 * T7: a `consent_required` failure when `args` does not carry the consent value, `undefined`
 * when it does. The comparison is exact (the schema lists a single value; a near miss is not
 * consent). `errorData` says which argument to pass with which value, and what was received.
 */
export function checkExplicit(
  args: unknown,
  gate: ExplicitGate,
  context: ExplicitContext,
): FailureResult | undefined {
  const present = isRecord(args) && EXPLICIT_ARGUMENT in args;
  const received = present ? args[EXPLICIT_ARGUMENT] : undefined;
  if (present && received === gate.value) return undefined;
  const reason = present ? 'wrong_value' : 'missing';
  const what = present ? `a wrong ${EXPLICIT_ARGUMENT}` : `no ${EXPLICIT_ARGUMENT}`;
  const errorData: Record<string, unknown> = { argument: EXPLICIT_ARGUMENT, value: gate.value, reason };
  if (present) errorData['received'] = received;
  return failure(
    'consent_required',
    `Tool "${context.name}" requires explicit user instruction and was called with ${what}: only when the user has explicitly asked for this action, call it again with ${EXPLICIT_ARGUMENT}: "${gate.value}".`,
    { meta: { server: context.server, tool: context.tool, source: 'proxy' }, errorData },
  );
}

/** T7: a copy of `args` without `explicit_action`, every other key untouched. */
export function stripExplicit(args: Record<string, unknown>): Record<string, unknown> {
  if (!(EXPLICIT_ARGUMENT in args)) return args;
  const { [EXPLICIT_ARGUMENT]: _removed, ...rest } = args;
  return rest;
}

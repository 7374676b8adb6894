/**
 * Agent instructions (R4): every failure tells the agent whether to retry, fix its arguments, ask
 * the user, or stop. Defaults per error type, overridable globally, per server and per tool.
 */
import { isFailure, withDefaultInstruction, type ErrorType, type Result } from './result.js';

/** R4: the default instruction per error type; one sentence each, saying what to do next. */
export const DEFAULT_INSTRUCTIONS: Readonly<Record<ErrorType, string>> = Object.freeze({
  tool_error:
    'The tool ran and reported an error: if the error shows a mistake in your arguments, fix them and call again once; otherwise tell the user and stop.',
  invalid_arguments:
    'The arguments do not match the tool input schema: fix every listed issue and call again; do not repeat the same arguments.',
  unknown_tool:
    'No tool has this name: use one of the suggested names or list the tools again; do not retry this name.',
  consent_required:
    'This tool needs explicit user instruction: ask the user to confirm, and only then call it again with the explicit_action argument.',
  access_denied:
    'The caller is not allowed this tool: do not retry; tell the user which tool was refused, so that they can ask for access.',
  timeout: 'The tool did not answer in time: retry at most once, then tell the user.',
  cancelled: 'The call was cancelled: do not retry unless the user asks you to.',
  overloaded: 'The server is busy: wait a few seconds and retry, at most twice.',
  downstream_unavailable:
    'The server behind this tool is unavailable: tell the user and retry later, not right away.',
  downstream_error:
    'The server behind this tool failed to handle the call: tell the user and stop; retry only if the user asks.',
  normalization_error: 'mcp-normalizer could not read the tool result: tell the user and stop; do not retry.',
  rate_limited:
    'Too many calls: wait the retry_after_s seconds the error names before calling this tool again; do not retry sooner.',
  definition_changed:
    "The tool's definition changed since it was approved and is withheld until an operator reviews it: do not retry; tell the user that the tool's definition changed and needs their approval.",
});

/**
 * R4, D2, D3: a server unavailable for want of the user's login is not one to retry later: the
 * user acts first (the failure's message says how: a login page, or a command).
 */
export const LOGIN_INSTRUCTION =
  'The server needs the user to log in first: tell the user exactly what the error says (the login page or the command), and call again only once they have logged in.';

/**
 * Issue 55: a call refused because the store the replicas share is unreachable: the tool's server
 * is fine; the gateway cannot count the call (a rate limit) until its operator restores the store.
 */
export const STORE_INSTRUCTION =
  "The gateway's shared store is unreachable, so this call could not be counted and was not made (the tool's server is fine): retry in about a minute; if it fails again, tell the user that the gateway's operator must restore its store (the error names it).";

/** Instruction overrides, most specific last: global (config `instructions`), server, tool. */
export interface InstructionLayers {
  /** Config `instructions`, per error type. */
  readonly global?: Readonly<Partial<Record<ErrorType, string>>>;
  /** `servers.<key>.instructions`, per error type. */
  readonly server?: Readonly<Partial<Record<ErrorType, string>>>;
  /** `tools.overrides.<name>.instructions`, per error type. */
  readonly tool?: Readonly<Partial<Record<ErrorType, string>>>;
  /**
   * `tools.overrides.<name>.instruction`: given to successes that carry none of their own.
   * @example 'Quote the note; do not summarise it.'
   */
  readonly success?: string;
}

/** A configured text counts only when it says something: R4 promises a usable instruction. */
function usable(text: string | undefined): text is string {
  return text !== undefined && text.trim() !== '';
}

/**
 * R4: the instruction for `errorType`: tool → server → global → default; blank overrides are
 * skipped.
 * @example resolveInstruction('timeout', { server: { timeout: 'Retry once.' } }) // 'Retry once.'
 */
export function resolveInstruction(errorType: ErrorType, layers: InstructionLayers = {}): string {
  for (const layer of [layers.tool, layers.server, layers.global]) {
    const text = layer?.[errorType];
    if (usable(text)) return text;
  }
  return DEFAULT_INSTRUCTIONS[errorType];
}

/**
 * R4: fills `result.instruction` when it has none: a failure gets {@link resolveInstruction}, a
 * success gets the tool's `success` override (if any). An instruction the downstream gave itself
 * (ADR-003 `instruction`) is kept.
 */
export function applyInstruction<R extends Result>(result: R, layers: InstructionLayers = {}): R {
  if (isFailure(result)) return withDefaultInstruction(result, resolveInstruction(result.errorType, layers));
  return usable(layers.success) ? withDefaultInstruction(result, layers.success) : result;
}

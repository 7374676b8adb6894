/**
 * M1–M5: `run_code`, code mode's one tool. A run reads its snippet (M1), runs it in the sandbox
 * (sandbox.ts) with each `tools.<name>(args)` sent through the call pipeline as the caller's own
 * call (M2: the pipeline hands `call` in), and answers with what the snippet returned and logged
 * (M4), with the files its calls returned; a bound, a syntax error or a throw is a failure of its
 * own kind (M3). A call that needs an input round or becomes a task cannot be answered from inside
 * a snippet: the snippet gets an error saying to call that tool directly (M2), rather than a run
 * that hangs.
 */
import type { Logger } from 'pino';
import { ArtifactNamer } from '../../core/artifacts.js';
import { CODE_LIMITS, readCodeArguments } from '../../core/code-mode.js';
import { isInputRound } from '../../core/input.js';
import { failure, ok, type FileArtifact, type Result } from '../../core/result.js';
import { isCreatedTask } from '../../core/tasks.js';
import type { CodeRunner, SnippetCall } from '../../upstream/backend.js';
import { runIsolated } from './isolated.js';
import { SandboxError, type BridgeAnswer, type SandboxLimits } from './sandbox-types.js';

/** M4: the files of a run's calls, each under a name no other file of the run has. */
interface RunFiles {
  readonly files: FileArtifact[];
  readonly names: ArtifactNamer;
}

/** M2: what a tool call of the snippet gives the snippet; its files go to `kept` (M4). */
async function bridged(
  call: SnippetCall,
  name: string,
  args: unknown,
  signal: AbortSignal,
  kept: RunFiles,
): Promise<BridgeAnswer> {
  const record =
    typeof args === 'object' && args !== null && !Array.isArray(args)
      ? (args as Record<string, unknown>)
      : {};
  const answer = await call(name, record, signal);
  if (isInputRound(answer) || isCreatedTask(answer))
    return {
      ok: false,
      error: {
        type: 'tool_error',
        message: `"${name}" needs ${isInputRound(answer) ? 'input from the user' : 'to run as a task'}, which a snippet cannot give it`,
        instruction: `Call ${name} directly, not from inside run_code.`,
      },
    };
  for (const file of answer.files) {
    const unique = kept.names.exact(file.name);
    kept.files.push(unique === file.name ? file : { ...file, name: unique });
  }
  if (answer.success) return { ok: true, value: answer.value };
  return {
    ok: false,
    error: {
      type: answer.errorType,
      message: answer.error,
      ...(answer.instruction !== undefined ? { instruction: answer.instruction } : {}),
    },
  };
}

/** M3: a run that stopped, as the caller's failure. */
function stoppedRun(error: SandboxError, elapsedMs: number, calls: () => number): Result {
  const meta = { meta: { server: 'mcp-normalizer', tool: 'run_code', elapsedMs } };
  const errorData = { stopped: error.kind, calls: calls() };
  switch (error.kind) {
    case 'syntax':
      return failure('invalid_arguments', error.message, { ...meta, errorData });
    case 'cpu':
    case 'wall':
      return failure('timeout', error.message, {
        ...meta,
        errorData,
        instruction: 'The snippet took too long. Do less in one run, or fewer calls, and try again.',
      });
    case 'thrown':
      return failure('tool_error', error.message, {
        ...meta,
        errorData: {
          ...errorData,
          ...(error.toolError !== undefined ? { tool_error_type: error.toolError.type } : {}),
        },
        ...(error.toolError?.instruction !== undefined ? { instruction: error.toolError.instruction } : {}),
      });
    default:
      return failure('tool_error', error.message, {
        ...meta,
        errorData,
        instruction:
          'The snippet passed a bound of code mode. Return less, call fewer tools, or split the work.',
      });
  }
}

/**
 * @example const code = createCodeRunner({ name: () => searchPair()?.run, logger });
 */
export function createCodeRunner(options: {
  readonly name: () => string | undefined;
  readonly logger: Logger;
  readonly limits?: SandboxLimits;
}): CodeRunner {
  const limits = options.limits ?? CODE_LIMITS;
  return {
    name: options.name,
    async run(args, call, signal) {
      const read = readCodeArguments(args);
      const started = Date.now();
      if ('issue' in read)
        return failure('invalid_arguments', `run_code: ${read.issue}`, {
          meta: { server: 'mcp-normalizer', tool: 'run_code', elapsedMs: 0 },
        });
      let calls = 0;
      /** M4: the files the snippet's calls returned, for the run's answer. */
      const kept: RunFiles = { files: [], names: new ArtifactNamer() };
      try {
        // M3: in a thread of its own (isolated.ts); the caller going away ends the run.
        const run = await runIsolated(
          read.code,
          (name, toolArgs, ended) => {
            calls++;
            return bridged(call, name, toolArgs, ended, kept);
          },
          limits,
          signal,
        );
        return ok(
          { result: run.value, logs: run.logs, calls: run.calls },
          {
            meta: { server: 'mcp-normalizer', tool: 'run_code', elapsedMs: Date.now() - started },
            files: kept.files,
          },
        );
      } catch (error) {
        if (error instanceof SandboxError) return stoppedRun(error, Date.now() - started, () => calls);
        options.logger.error({ err: error }, 'run_code failed unexpectedly');
        return failure('normalization_error', 'run_code failed unexpectedly', { exception: error });
      }
    },
  };
}

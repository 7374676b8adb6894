/**
 * Exit codes, the error type that carries one, and the output streams: the light part of the
 * CLI, imported by \`main.ts\` without loading any command (so \`--version\` stays instant).
 */

/** The CLI's exit codes (docs/cli.md). */
export const EXIT = {
  /** Everything went as asked. */
  ok: 0,
  /** `check` found a problem (collision, failing server, ...); `call` got an isError result. */
  problems: 1,
  /** Bad command line: unknown command or option, missing or malformed value. */
  usage: 2,
  /** The config file is missing or invalid (every problem printed to stderr). */
  config: 3,
  /** A runtime failure: the port is taken, or an unexpected internal error. */
  runtime: 4,
} as const;

/** Where commands write: stdout for results, stderr for everything else. */
export interface CliIO {
  out(text: string): void;
  err(text: string): void;
}

/** The process's own streams. */
export const processIO: CliIO = {
  out: (text) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
  err: (text) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
};

/** An error that ends the command with a given exit code and a message for stderr. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

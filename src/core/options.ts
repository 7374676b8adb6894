/**
 * The closed lists of the configuration and the protocol, each written once: config's schema,
 * the runtime types, the renderer and the CLI all read them from here (a union spelled in three
 * places drifted before). Pure data.
 */

/** F1–F3: the envelope formats. */
export const OUTPUT_FORMATS = ['results', 'result', 'response'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** F5: where non-text blocks go. */
export const MEDIA_MODES = ['artifacts', 'passthrough'] as const;
export type MediaMode = (typeof MEDIA_MODES)[number];

/** F6: the text block the model reads. */
export const TEXT_MODES = ['json', 'toon'] as const;
export type TextMode = (typeof TEXT_MODES)[number];

/** F7: where file bodies travel. */
export const FILE_MODES = ['inline', 'resource'] as const;
export type FileMode = (typeof FILE_MODES)[number];

/** T11, S1: which tools of a server are listed. */
export const EXPOSE_MODES = ['all', 'read_only', 'search', 'code'] as const;
export type ExposeMode = (typeof EXPOSE_MODES)[number];

/** S1, M1: the modes whose tools are not listed but found with `search_tools` (code mode too). */
export function searchedMode(expose: ExposeMode | undefined): boolean {
  return expose === 'search' || expose === 'code';
}

/** L1: the log levels of the config (the CLI adds `silent`). */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** U7: how 2025 clients are served over HTTP. */
export const LEGACY_MODES = ['sessions', 'stateless'] as const;
export type LegacyMode = (typeof LEGACY_MODES)[number];

/** E1: the two protocol eras: 2025's sessions, 2026-07-28's stateless requests. */
export const ERAS = ['legacy', 'modern'] as const;
export type Era = (typeof ERAS)[number];

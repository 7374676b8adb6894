/**
 * The public API of mcp-normalizer, for embedding the proxy in another program or using the
 * normalizer on its own. Every name here is a deliberate public API: adding or removing one is a
 * breaking-change decision. The renderer is not exported (R2: one rendering place, the server).
 */
export { createProxy } from './app/proxy.js';
export type { Proxy, ProxyOptions, ServerHealth } from './app/proxy.js';
export { installShutdown } from './app/shutdown.js';
export type { ShutdownHandle, ShutdownOptions } from './app/shutdown.js';
export { formatProblem, loadConfig } from './config/load.js';
export type { ConfigProblem, LoadResult } from './config/load.js';
export type {
  Config,
  ExposeMode,
  HttpConfig,
  LogLevel,
  MediaMode,
  OutputConfig,
  OutputFormat,
  ServerConfig,
  ToolOverride,
  ToolsConfig,
  TransportConfig,
} from './config/types.js';
export { normalizeCallToolResult } from './core/normalize.js';
export type { NormalizeOptions } from './core/normalize.js';
export { ERROR_TYPES, failure, isErrorType, isFailure, isOk, ok } from './core/result.js';
export type {
  CallMeta,
  ErrorType,
  FailureResult,
  FileArtifact,
  OkResult,
  ResourceLink,
  Result,
  ResultSource,
} from './core/result.js';
export { createLogger } from './log/logger.js';
export type { LoggerOptions } from './log/logger.js';

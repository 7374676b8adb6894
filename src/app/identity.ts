/**
 * Who may see and call what, compiled from the config once (I1, I3, I4, I6): the callers' views
 * (`access:` rules and profiles, app/views.ts), each profile's own envelope, and the HTTP
 * endpoint's identity options (the resource server, the static tokens, the 403 step-up).
 */
import type { Logger } from 'pino';
import type { Config } from '../config/types.js';
import { compilePolicy, compileProfile } from '../core/policy.js';
import { failure } from '../core/result.js';
import type { ToolBackend } from '../upstream/backend.js';
import type { HttpOptions } from '../upstream/http.js';
import type { RenderOptions } from '../upstream/server.js';
import { createViews, type Views } from './views.js';

/** I3, I6: the callers' views of `config`; `readOnly` reads the catalog now (`expose: read_only`). */
export function callerViews(config: Config, readOnly: (name: string) => boolean, logger: Logger): Views {
  // I3: who may see and call what (every caller everything without `access:`).
  const policy = config.access === undefined ? undefined : compilePolicy(config.access);
  // I6: each profile's selection of exposed names (`expose: read_only`: of the catalog now).
  const profiles = Object.fromEntries(
    Object.entries(config.profiles).map(([name, profile]) => [name, compileProfile(profile, readOnly)]),
  );
  return createViews({ ...(policy !== undefined ? { policy } : {}), profiles, logger });
}

/** F1–F5, I6: the configured envelope, and each profile's own where it names one. */
export function renderings(config: Config): {
  readonly output: RenderOptions;
  readonly profileOutputs: Readonly<Record<string, RenderOptions>>;
} {
  const output = { format: config.output.format, media: config.output.media, text: config.output.text };
  const profileOutputs = Object.fromEntries(
    Object.entries(config.profiles).flatMap(([name, profile]) =>
      profile.output === undefined ? [] : [[name, { ...output, format: profile.output.format }]],
    ),
  );
  return { output, profileOutputs };
}

/**
 * I1: `http.token` alone guards the endpoint with one shared token; with `http.auth` the endpoint
 * is a resource server, and `http.token` becomes one more static token (the principal `token`).
 * I4: with a policy, a call whose tool needs a scope its caller lacks gets 403 at the HTTP layer:
 * the view's decision, asked once per call.
 */
export function httpIdentity(
  config: Config,
  views: Views,
  backend: Pick<ToolBackend, 'calledName' | 'answer'>,
): Pick<HttpOptions, 'token' | 'auth' | 'scopeCheck' | 'admins' | 'stepUpRefused'> {
  const { token, auth, publicUrl } = config.http;
  if (auth === undefined) return token !== undefined ? { token } : {};
  const tokens =
    token === undefined ? auth.tokens : { token: { token, groups: [], scopes: [] }, ...auth.tokens };
  const called = (name: string, args: unknown): string =>
    backend.calledName?.(name, args as Record<string, unknown> | undefined) ?? name;
  return {
    // The runtime AuthConfig is the identity's options already (admins aside).
    auth: { ...auth, ...(publicUrl !== undefined ? { publicUrl } : {}), tokens },
    admins: auth.admins,
    ...(views.personal
      ? {
          scopeCheck: (principal, name, args) => views.missingScope(principal, called(name, args)),
          // I4, O1, O4: the 403 is the call's end: in recent calls, the metrics and the call log.
          stepUpRefused: (name, args, principal, scope) => {
            const tool = called(name, args);
            backend.answer?.(
              tool,
              failure('access_denied', `The tool "${tool}" needs the scope ${scope}`, {
                errorData: { reason: 'insufficient_scope', scope },
              }),
              undefined,
              principal.key,
            );
          },
        }
      : {}),
  };
}

/**
 * What `check` points out beside its problems (U3): settings that do nothing, or that make every
 * call of a server take an extra step. Warnings, not failures: the config works as written.
 */
import { commandLine } from '../config/command-line.js';
import type { Config } from '../config/types.js';
import type { Catalog } from '../core/catalog.js';
import { compileSelection } from '../core/policy.js';

/** `check`'s warnings for `config` over the catalog as it is now (`complete`: every server up). */
export function configHints(
  config: Config,
  catalog: Catalog,
  profileSees: (profile: string, name: string) => boolean,
  complete: boolean,
): string[] {
  const hints: string[] = [];
  const tools = catalog.tools;
  // T7: a server whose every tool is destructive makes every call name explicit_action.
  const byServer = new Map<string, (typeof tools)[number][]>();
  for (const tool of tools) byServer.set(tool.server, [...(byServer.get(tool.server) ?? []), tool]);
  for (const [server, own] of byServer) {
    if (own.length > 1 && own.every((tool) => tool.gate !== undefined))
      hints.push(
        `warning: every tool of "${server}" (${own.length}) is marked destructive, so each call must carry explicit_action; if that is not what you want, set tools.overrides.<tool>.require_explicit: false for the safe ones, or explicit_destructive: false`,
      );
  }
  // I3, I6: an access rule or a profile that selects nothing (of the tools there are now).
  if (tools.length === 0 || !complete) return hints;
  config.access?.forEach((rule, index) => {
    const allows = compileSelection(rule.allow);
    if (!tools.some((tool) => allows(tool.name)))
      hints.push(
        `warning: access rule ${index + 1} (${rule.principals.join(', ')}) allows none of the ${tools.length} tools: check its allow globs against \`${commandLine(['tools'])}\``,
      );
  });
  // I7: a rate limit that counts none of the tools there are.
  config.rateLimits?.forEach((rule, index) => {
    const counts = compileSelection(rule.tools);
    if (!tools.some((tool) => counts(tool.name)))
      hints.push(
        `warning: rate limit ${index + 1} (${rule.principals.join(', ')}) counts none of the ${tools.length} tools: check its tools globs against \`${commandLine(['tools'])}\``,
      );
  });
  for (const profile of Object.keys(config.profiles)) {
    if (!tools.some((tool) => profileSees(profile, tool.name)))
      hints.push(
        `warning: profile "${profile}" selects none of the ${tools.length} tools: check its tools globs against \`${commandLine(['tools'])}\``,
      );
  }
  return hints;
}

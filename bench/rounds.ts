/**
 * What every suite shares: the plan (how much work), starting and checking the targets, and
 * rounds that alternate the targets (direct, passthrough, normalizer, direct, ...) so that the
 * machine's drift hits all of them alike.
 */
import type { Figure } from './figures.js';
import { verify } from './measure.js';
import {
  expectedTools,
  launch,
  type Target,
  type TargetKind,
  type TargetSpec,
  type Wire,
} from './targets.js';

/** How much work each suite does. */
export interface Plan {
  readonly warmup: number;
  readonly latency: { readonly rounds: number; readonly calls: number };
  readonly throughput: {
    readonly rounds: number;
    readonly calls: number;
    readonly inFlight: readonly number[];
  };
  readonly big: { readonly rounds: number; readonly calls: number };
  readonly list: {
    readonly rounds: number;
    readonly calls: number;
    readonly servers: number;
    readonly tools: number;
  };
  readonly cold: { readonly rounds: number; readonly servers: number; readonly calls: number };
  /** The cold echo suites: rounds of fresh processes, each measured over its first `calls` calls. */
  readonly coldEcho: { readonly rounds: number; readonly calls: number };
  /** Which parts of the echo suites run (all when undefined): to profile one of them alone. */
  readonly parts?: readonly EchoPart[];
  /** Per-server settings added to the normalizer's config (a diagnostic; defaults otherwise). */
  readonly serverSettings?: Readonly<Record<string, number | string | boolean>>;
  /** Which targets run under `node --cpu-prof`, and where their profiles go. */
  readonly cpuProf?: { readonly dir: string; readonly kinds: readonly TargetKind[] };
  /** Where the passthrough and mcp-normalizer write their pipe stamps (`--hops`). */
  readonly hopsDir?: string;
  /** The passthrough's downstream in a session of its own, as P5 spawns ours (`--child-session`). */
  readonly childSession?: boolean;
  /** The passthrough's calls carry a progress token, as P3's do (`--passthrough-progress`). */
  readonly passthroughProgress?: boolean;
}

/**
 * The spec as the plan wants it: profiled when it asks for its kind, with its normalizer settings
 * and, when asked, the passthrough's downstream in a session of its own.
 */
export function profiled(spec: TargetSpec, plan: Plan): TargetSpec {
  const settings =
    spec.kind === 'normalizer' && plan.serverSettings ? { serverSettings: plan.serverSettings } : {};
  const prof = plan.cpuProf?.kinds.includes(spec.kind) ? { cpuProfDir: plan.cpuProf.dir } : {};
  const hops = plan.hopsDir !== undefined && spec.kind !== 'direct' ? { hopsDir: plan.hopsDir } : {};
  const passthrough = spec.kind === 'passthrough';
  const session = plan.childSession === true && passthrough ? { childSession: true } : {};
  const progress = plan.passthroughProgress === true && passthrough ? { progress: true } : {};
  return { ...spec, ...settings, ...prof, ...hops, ...session, ...progress };
}

/** The parts of an echo suite. */
export type EchoPart = 'latency' | 'throughput' | 'big';

/** Every echo part, in run order. */
export const ECHO_PARTS: readonly EchoPart[] = ['latency', 'throughput', 'big'];

/** What a suite hands back: its figures and every correctness problem it met. */
export interface SuiteOutput {
  readonly figures: Figure[];
  readonly problems: string[];
}

/** Start every spec; a target that fails to start is reported and left out, the rest run. */
export async function launchAll(
  specs: readonly TargetSpec[],
  problems: string[],
  checkBig = true,
): Promise<Target[]> {
  const targets: Target[] = [];
  for (const spec of specs) {
    try {
      const target = await launch(spec);
      const found = await verify(target, expectedTools(spec), checkBig);
      if (found.length > 0) {
        problems.push(...found);
        await target.close();
      } else {
        targets.push(target);
      }
    } catch (error) {
      problems.push(String(error));
    }
  }
  return targets;
}

/** Run `measure` for every target in turn, `rounds` times; per target, one value per round. */
export async function alternate(
  targets: readonly Target[],
  rounds: number,
  measure: (target: Target) => Promise<number>,
): Promise<Figure['rounds']> {
  const out: Figure['rounds'] = {};
  for (let round = 0; round < rounds; round += 1) {
    for (const target of targets) {
      const value = await measure(target);
      (out[target.spec.kind] ??= []).push(value);
    }
  }
  return out;
}

/**
 * direct, passthrough (and supergateway over HTTP) in front of one bench server, the normalizer
 * in front of `servers`.
 */
export function specs(wire: Wire, servers: number, plan: Plan): TargetSpec[] {
  const all: TargetSpec[] = [
    { kind: 'direct', wire, servers: 1, tools: 0 },
    { kind: 'passthrough', wire, servers: 1, tools: 0 },
    { kind: 'normalizer', wire, servers, tools: 0 },
    ...(wire === 'http' ? [{ kind: 'supergateway', wire, servers: 1, tools: 0 } as const] : []),
  ];
  return all.map((spec) => profiled(spec, plan));
}

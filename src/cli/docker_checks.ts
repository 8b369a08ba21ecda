/**
 * The docker checks at the start of a run that uses docker (not `--dry`): the orphan notice of
 * sandboxes.md rule 97 and the address-pool preflight of rule 118. Both print one `!` line on
 * stderr, so `--json` output stays a clean document; neither ever stops the run. A low preflight
 * also yields the size of the own-network gate, which the caller hands to the docker provider.
 */
import { errorMessage } from "../_shared/mod.ts";
import type { ProcessProbe } from "../coordination/mod.ts";
import { machineSlotLimits } from "../coordination/mod.ts";
import type { Plan } from "../plan/mod.ts";
import { dockerPoolPreflight } from "../sandbox/mod.ts";
import type { Io } from "./io.ts";
import { dockerOrphanNotice } from "./sandbox.ts";

/** How long the preflight may wait for the daemon before the run goes on without it. */
const PREFLIGHT_LIMIT_MS = 5_000;

/** The daemon queries of the checks; tests replace them. */
export interface DockerCheckPorts {
  readonly orphanNotice: typeof dockerOrphanNotice;
  readonly preflight: typeof dockerPoolPreflight;
}

const DAEMON: DockerCheckPorts = {
  orphanNotice: dockerOrphanNotice,
  preflight: dockerPoolPreflight,
};

/** What the checks hand the docker provider. */
export interface DockerCheckResult {
  /**
   * Permits of the own-network gate (`max(1, free)`), present only when the preflight found fewer
   * free networks than the run wants at once (rule 118).
   */
  readonly networkPermits?: number;
}

/**
 * Runs the checks when the plan uses docker; prints what they found.
 *
 * @returns the own-network gate size when the address pools are low; `{}` otherwise, and when the
 *   daemon could not be asked (creates that hit exhaustion still retry, rule 113)
 */
export async function runDockerChecks(
  io: Io,
  o: {
    readonly plan: Plan;
    readonly cap: number;
    readonly maxSandboxes: Readonly<Record<string, number>>;
    readonly hostEnv: Readonly<Record<string, string>>;
    readonly probe: ProcessProbe;
  },
  ports: DockerCheckPorts = DAEMON,
): Promise<DockerCheckResult> {
  const docker = o.plan.slots.filter((s) => s.sandbox?.provider === "docker");
  if (docker.length === 0) return {};
  const notice = await ports.orphanNotice(io, { probe: o.probe }).catch(() => undefined);
  if (notice !== undefined) io.stderr.write(`! ${notice}\n`);
  const own = docker.filter((s) => networkOf(s.sandbox?.physical) === "own").length;
  if (own === 0) return {};
  const limit = new AbortController();
  const timer = io.clock.setTimeout(() => limit.abort(), PREFLIGHT_LIMIT_MS);
  try {
    const preflight = await ports.preflight(o.hostEnv, {
      concurrency: o.cap,
      ownSandboxes: own,
      maxSandboxes: machineSlotLimits(o.maxSandboxes, { cpus: io.cpus }).docker ?? o.cap,
      signal: limit.signal,
    });
    if (preflight.diagnostic) io.stderr.write(`! ${preflight.diagnostic.message}\n`);
    return preflight.permits === undefined ? {} : { networkPermits: preflight.permits };
  } catch (error) {
    // Creates that hit exhaustion still retry and name the fix (rule 113); the run goes on.
    io.stderr.write(`! cannot check the docker address pools: ${errorMessage(error)}\n`);
    return {};
  } finally {
    io.clock.clearTimeout(timer);
  }
}

function networkOf(physical: unknown): unknown {
  return (physical as { network?: unknown } | null)?.network;
}

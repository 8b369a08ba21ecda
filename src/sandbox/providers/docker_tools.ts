/**
 * Lazy entries of the docker tools other domains call: `niceeval doctor docker` (sandboxes.md
 * rules 119–120) and the address-pool preflight of a run (rule 118). dockerode loads only when one
 * is called, never on `--version`, `--help` or a project without docker.
 */
import type { Clock } from "../../_shared/mod.ts";
import type { AddressPoolPreflight, DockerDoctorReport } from "./docker/reports.ts";

export type {
  AddressPoolPreflight,
  AddressPoolUsage,
  DockerDoctorReport,
} from "./docker/reports.ts";

/** Options of {@link inspectDocker}. */
export interface InspectDockerOptions {
  /** CPU cores of this host; the docker machine budget defaults to twice as many. */
  readonly cpus: number;
  /** `maxSandboxes.docker` of the project config, when a project sets it. */
  readonly configuredMaxSandboxes?: number;
  readonly signal: AbortSignal;
  readonly clock: Clock;
}

/**
 * Inspects the daemon of `hostEnv` (rule 104) and renders the report of rule 119.
 *
 * @returns the report and its human text; `report.fix` is present when the address pools hold
 *   fewer free networks than the docker machine budget
 * @throws {Error} `no Docker daemon answered at <endpoint>: <reason>` when the ping fails
 */
export async function inspectDocker(
  hostEnv: Readonly<Record<string, string>>,
  o: InspectDockerOptions,
): Promise<{ readonly report: DockerDoctorReport; readonly text: string }> {
  const { dockerClient, dockerEndpoint } = await import("./docker/client.ts");
  const { dockerDoctor, renderDoctor } = await import("./docker/doctor.ts");
  const report = await dockerDoctor(dockerClient(hostEnv), {
    endpoint: dockerEndpoint(hostEnv),
    cpus: o.cpus,
    ...(o.configuredMaxSandboxes !== undefined
      ? { configuredMaxSandboxes: o.configuredMaxSandboxes }
      : {}),
    signal: o.signal,
    clock: o.clock,
  });
  return { report, text: renderDoctor(report) };
}

/**
 * The address-pool preflight of rule 118 for a run whose plan puts `ownSandboxes` docker sandboxes
 * on their own networks: reads the daemon's pools and compares the free networks with
 * min(G, `ownSandboxes`, `maxSandboxes.docker`).
 *
 * @returns the numbers, and the `docker-address-pool-low` warning plus the size of the
 *   own-network gate when the pools are low
 */
export async function dockerPoolPreflight(
  hostEnv: Readonly<Record<string, string>>,
  o: {
    readonly concurrency: number;
    readonly ownSandboxes: number;
    readonly maxSandboxes: number;
    readonly signal: AbortSignal;
  },
): Promise<AddressPoolPreflight> {
  const { dockerClient } = await import("./docker/client.ts");
  const { addressPoolPreflight, readAddressPoolUsage } = await import("./docker/pools.ts");
  const usage = await readAddressPoolUsage(dockerClient(hostEnv), { signal: o.signal });
  return addressPoolPreflight(usage, o);
}

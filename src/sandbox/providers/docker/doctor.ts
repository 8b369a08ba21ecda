/**
 * `niceeval doctor docker` (sandboxes.md rules 119–120): what the daemon is, whether its address
 * pools can hold the docker machine budget, and — when they cannot — the `daemon.json` change and
 * restart command that fix it. niceeval never edits the daemon's configuration or restarts it.
 */
// @ts-types="@types/dockerode"
import type Docker from "dockerode";
import { type Clock, errorMessage, raceAbort } from "../../../_shared/mod.ts";
import { MANAGED_FILTER } from "./client.ts";
import { addressPoolUsage, RECOMMENDED_POOLS_JSON } from "./pools.ts";
import type { DaemonVariant, DockerDoctorReport, DoctorFix } from "./reports.ts";

export type { DaemonVariant, DockerDoctorReport, DoctorFix } from "./reports.ts";

/** How long the daemon may take to answer the ping (sandboxes.md §10.2). */
export const DOCKER_PING_MS = 2_000;

/** The fix of rule 119 for `variant`. */
export function doctorFix(variant: DaemonVariant): DoctorFix {
  const where = {
    rootful: ["/etc/docker/daemon.json", "sudo systemctl restart docker"],
    rootless: ["~/.config/docker/daemon.json", "systemctl --user restart docker"],
    desktop: ["Docker Desktop: Settings → Docker Engine", "restart Docker Desktop"],
  }[variant];
  return {
    daemonJson: RECOMMENDED_POOLS_JSON,
    networks: 512,
    file: where[0]!,
    restart: where[1]!,
    warning: "restarting the daemon stops every running container",
  };
}

/**
 * Pings the daemon (2 s limit), then reads `/version`, `/info`, `/networks` and the
 * niceeval-managed containers and networks.
 *
 * @throws {Error} `no Docker daemon answered at <endpoint> within 2 s` (or the ping's error)
 */
export async function dockerDoctor(
  docker: Docker,
  o: {
    readonly endpoint: string;
    readonly cpus: number;
    readonly configuredMaxSandboxes?: number;
    readonly signal: AbortSignal;
    readonly clock: Clock;
  },
): Promise<DockerDoctorReport> {
  await pingDocker(docker, o);
  const [version, info, networks, containers, ownedNetworks] = await raceAbort(
    Promise.all([
      docker.version(),
      docker.info(),
      docker.listNetworks(),
      docker.listContainers({ all: true, filters: { label: [MANAGED_FILTER] } }),
      docker.listNetworks({ filters: { label: [MANAGED_FILTER] } }),
    ]),
    o.signal,
  );
  const security: string[] = info.SecurityOptions ?? [];
  const variant: DaemonVariant = security.some((s) => s.includes("name=rootless"))
    ? "rootless"
    : /docker desktop/i.test(String(info.OperatingSystem ?? ""))
    ? "desktop"
    : "rootful";
  const pools = addressPoolUsage({ info, networks });
  const fallback = 2 * Math.max(1, o.cpus);
  const value = o.configuredMaxSandboxes ?? fallback;
  const byState: Record<string, number> = {};
  for (const c of containers) byState[c.State] = (byState[c.State] ?? 0) + 1;
  return {
    endpoint: o.endpoint,
    server: {
      version: version.Version,
      apiVersion: version.ApiVersion,
      storageDriver: String(info.Driver ?? "unknown"),
      cgroupVersion: String(info.CgroupVersion ?? "unknown"),
      variant,
      cpus: Number(info.NCPU ?? 0),
    },
    defaultBridge: networks.some((n) => n.Name === "bridge"),
    machineBudget: {
      cpus: o.cpus,
      default: fallback,
      ...(o.configuredMaxSandboxes !== undefined ? { configured: o.configuredMaxSandboxes } : {}),
      value,
    },
    pools,
    owned: { containers: byState, networks: ownedNetworks.length },
    ...(pools.free < value ? { fix: doctorFix(variant) } : {}),
  };
}

/**
 * Resolves once the daemon answers `ping` within {@link DOCKER_PING_MS}.
 *
 * @throws {Error} naming the endpoint when it does not
 */
export async function pingDocker(
  docker: Docker,
  o: { readonly endpoint: string; readonly signal: AbortSignal; readonly clock: Clock },
): Promise<void> {
  const timer = new AbortController();
  const handle = o.clock.setTimeout(() => timer.abort(), DOCKER_PING_MS);
  const limit = AbortSignal.any([o.signal, timer.signal]);
  try {
    const ping = docker.ping();
    // Past the limit the outcome no longer matters; before it, the race below reports it.
    ping.catch(() => undefined);
    await raceAbort(ping, limit);
  } catch (error) {
    o.signal.throwIfAborted();
    const reason = timer.signal.aborted ? "no answer within 2 s" : errorMessage(error);
    throw new Error(`no Docker daemon answered at ${o.endpoint}: ${reason}`, { cause: error });
  } finally {
    o.clock.clearTimeout(handle);
  }
}

/** The human report of rule 119, one string with a final newline. */
export function renderDoctor(report: DockerDoctorReport): string {
  const { server, machineBudget: budget, pools, owned } = report;
  const containers = Object.entries(owned.containers).sort(([a], [b]) => a < b ? -1 : 1)
    .map(([state, n]) => `${n} ${state}`).join(", ") || "none";
  const lines = [
    `endpoint: ${report.endpoint}`,
    `server: Docker Engine ${server.version}, API ${server.apiVersion} (${server.variant})`,
    `storage driver: ${server.storageDriver}`,
    `cgroup version: ${server.cgroupVersion}`,
    `default bridge: ${report.defaultBridge ? "present" : "absent"}`,
    `cpus: ${budget.cpus} on this host (${server.cpus} for the daemon); maxSandboxes.docker default ${budget.default}` +
    (budget.configured !== undefined ? `, configured ${budget.configured}` : ""),
    `address pools (${
      pools.configured ? "configured" : "built-in"
    }): capacity ${pools.capacity}, used ${pools.used}, free ${pools.free}`,
    ...pools.pools.map((p) =>
      `  ${p.base} size /${p.size}: capacity ${p.capacity}, used ${p.used}, free ${p.free}`
    ),
    `niceeval containers: ${containers}`,
    `niceeval networks: ${owned.networks}`,
  ];
  if (report.fix) {
    const fix = report.fix;
    lines.push(
      "",
      `! the address pools have ${pools.free} free networks, fewer than maxSandboxes.docker ${budget.value}`,
      `fix: set the default address pools (${fix.networks} networks) in ${fix.file}:`,
      `  ${fix.daemonJson}`,
      `then restart the daemon: ${fix.restart}`,
      `warning: ${fix.warning}`,
      "niceeval never edits the daemon configuration or restarts it",
    );
  } else {
    lines.push("ok: nothing needs fixing");
  }
  return lines.join("\n") + "\n";
}

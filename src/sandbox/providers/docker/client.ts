/**
 * The Docker endpoint and the owner-stamp labels (sandboxes.md rule 104, §7.1), shared by the
 * provider, builds, address pools, doctor and the orphan CLI. dockerode is imported here and in
 * the other files of this folder only; the registry loads the folder lazily.
 */
// @ts-types="@types/dockerode"
import Docker from "dockerode";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { OwnerStamp } from "../../types.ts";

/** The endpoint used when `DOCKER_HOST` is unset (rule 104). */
export const DEFAULT_DOCKER_SOCKET = "/var/run/docker.sock";

/** The labels of §7.1. */
export const DOCKER_LABELS = Object.freeze({
  managed: "niceeval.managed",
  expires: "niceeval.expires",
  host: "niceeval.host",
  pid: "niceeval.pid",
  processStart: "niceeval.process-start",
  runId: "niceeval.run",
  provisionToken: "niceeval.token",
  buildKey: "niceeval.build-key",
});

/** The label filter value that selects every niceeval-managed object. */
export const MANAGED_FILTER = `${DOCKER_LABELS.managed}=true`;

/** The endpoint as `DOCKER_HOST` spells it, or the default socket as a `unix://` URL. */
export function dockerEndpoint(hostEnv: Readonly<Record<string, string>>): string {
  return hostEnv.DOCKER_HOST || `unix://${DEFAULT_DOCKER_SOCKET}`;
}

/**
 * A dockerode client for the endpoint of rule 104: `DOCKER_HOST` (`unix://` or `tcp://`, TLS when
 * `DOCKER_TLS_VERIFY` is set or the port is 2376, certificates from `DOCKER_CERT_PATH`), else
 * `/var/run/docker.sock`. Docker contexts are not read. The environment comes from the snapshot,
 * never from the process.
 *
 * @throws {TypeError} when `DOCKER_HOST` has another scheme
 */
export function dockerClient(hostEnv: Readonly<Record<string, string>>): Docker {
  const endpoint = dockerEndpoint(hostEnv);
  if (endpoint.startsWith("unix://")) {
    return new Docker({ socketPath: endpoint.slice("unix://".length) });
  }
  if (!endpoint.startsWith("tcp://")) {
    throw new TypeError(
      `Cannot use DOCKER_HOST "${endpoint}": only unix:// and tcp:// endpoints are supported`,
    );
  }
  const url = new URL(endpoint.replace(/^tcp:/, "http:"));
  const tls = (hostEnv.DOCKER_TLS_VERIFY ?? "") !== "" || url.port === "2376";
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const port = Number(url.port || (tls ? 2376 : 2375));
  if (!tls) return new Docker({ host, port, protocol: "http" });
  // Read once when the client is built, like dockerode's own defaults; a missing file is left to
  // the TLS handshake to report (class `rejected`).
  const certs = hostEnv.DOCKER_CERT_PATH || join(hostEnv.HOME ?? "", ".docker");
  const read = (name: string): Buffer | undefined => {
    try {
      return readFileSync(join(certs, name));
    } catch {
      return undefined; // absent: the handshake decides
    }
  };
  return new Docker({
    host,
    port,
    protocol: "https",
    ca: read("ca.pem"),
    cert: read("cert.pem"),
    key: read("key.pem"),
  });
}

/** The owner-stamp labels of §7.1 plus `niceeval.managed=true` (without `niceeval.expires`). */
export function dockerLabels(owner: OwnerStamp): Record<string, string> {
  return {
    [DOCKER_LABELS.managed]: "true",
    [DOCKER_LABELS.host]: owner.host,
    [DOCKER_LABELS.pid]: String(owner.pid),
    [DOCKER_LABELS.processStart]: owner.processStart,
    [DOCKER_LABELS.runId]: owner.runId,
    [DOCKER_LABELS.provisionToken]: owner.provisionToken,
  };
}

/** The label filters (`key=value`) selecting instances stamped with the fields of `filter`. */
export function ownerLabelFilters(filter: Partial<OwnerStamp>): string[] {
  const filters = [MANAGED_FILTER];
  for (const field of ["host", "pid", "processStart", "runId", "provisionToken"] as const) {
    const value = filter[field];
    if (value !== undefined) filters.push(`${DOCKER_LABELS[field]}=${value}`);
  }
  return filters;
}

/** Reads the owner stamp back from labels; absent or malformed fields are left out. */
export function ownerFromLabels(
  labels: Readonly<Record<string, string>> | undefined,
): Partial<OwnerStamp> {
  const l = labels ?? {};
  const pid = Number(l[DOCKER_LABELS.pid]);
  return {
    ...(l[DOCKER_LABELS.host] === undefined ? {} : { host: l[DOCKER_LABELS.host] }),
    ...(Number.isSafeInteger(pid) && pid > 0 ? { pid } : {}),
    ...(l[DOCKER_LABELS.processStart] === undefined
      ? {}
      : { processStart: l[DOCKER_LABELS.processStart] }),
    ...(l[DOCKER_LABELS.runId] === undefined ? {} : { runId: l[DOCKER_LABELS.runId] }),
    ...(l[DOCKER_LABELS.provisionToken] === undefined
      ? {}
      : { provisionToken: l[DOCKER_LABELS.provisionToken] }),
  };
}

/** The HTTP status of a dockerode error, when it has one. */
export function dockerStatus(error: unknown): number | undefined {
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  return typeof status === "number" ? status : undefined;
}

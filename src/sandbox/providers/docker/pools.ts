/**
 * Docker address pools (sandboxes.md rules 116–118): how many bridge networks the daemon can still
 * allocate, the run-start preflight for `network: "own"`, the in-process gate that keeps own-network
 * creates within the free networks, and the mapping of the daemon's exhaustion error.
 */
// @ts-types="@types/dockerode"
import type Docker from "dockerode";
import { abortable, errorMessage, raceAbort } from "../../../_shared/mod.ts";
import type { AddressPoolPreflight, AddressPoolUsage } from "./reports.ts";

export type { AddressPool, AddressPoolPreflight, AddressPoolUsage } from "./reports.ts";

/** The daemon's answer when no pool has a free network (rule 116). */
export const ADDRESS_POOL_EXHAUSTED_REGEXP =
  /could not find an available, non-overlapping IPv4 address pool/i;
/** The code of a create that hit pool exhaustion (rule 116, class `rejected`). */
export const ADDRESS_POOL_EXHAUSTED = "docker-address-pool-exhausted";
/** The preflight warning (rule 118). */
export const ADDRESS_POOL_LOW = "docker-address-pool-low";

/** The daemon's built-in pools when `DefaultAddressPools` is absent or empty (rule 117). */
export const BUILT_IN_POOLS: readonly { readonly base: string; readonly size: number }[] = [
  ...Array.from({ length: 15 }, (_, i) => ({ base: `172.${17 + i}.0.0/16`, size: 16 })),
  { base: "192.168.0.0/16", size: 20 },
];

/** The `daemon.json` entry that gives 512 networks (rule 119). */
export const RECOMMENDED_POOLS_JSON =
  '{"default-address-pools":[{"base":"172.16.0.0/12","size":20},{"base":"192.168.0.0/16","size":24}]}';

/** The parts of `GET /info` and `GET /networks` the pool count reads. */
export interface PoolSources {
  readonly info: {
    readonly DefaultAddressPools?: readonly { Base: string; Size: number }[] | null | undefined;
  };
  readonly networks: readonly {
    readonly IPAM?:
      | {
        readonly Config?: readonly { readonly Subnet?: string | undefined }[] | null | undefined;
      }
      | null
      | undefined;
  }[];
}

/** A create failure caused by pool exhaustion (rule 116); `classifyCreateError` → `rejected`. */
export class DockerAddressPoolExhaustedError extends Error {
  readonly code = ADDRESS_POOL_EXHAUSTED;
  constructor(options?: ErrorOptions) {
    super(
      "Cannot create a docker network: the daemon's address pools are exhausted; run niceeval doctor docker for the fix",
      options,
    );
    this.name = "DockerAddressPoolExhaustedError";
  }
}

/**
 * Capacity, used and free networks (rule 117): capacity sums `2^(size − prefix)` over the pools
 * (the built-in ones when none are configured); used counts networks with an IPv4 subnet inside a
 * pool. Pure.
 */
export function addressPoolUsage(sources: PoolSources): AddressPoolUsage {
  const reported = sources.info.DefaultAddressPools ?? [];
  const configured = reported.length > 0;
  const specs = configured ? reported.map((p) => ({ base: p.Base, size: p.Size })) : BUILT_IN_POOLS;
  const subnets = sources.networks.flatMap((n) => n.IPAM?.Config ?? [])
    .map((c) => c.Subnet === undefined ? undefined : parseCidr(c.Subnet))
    .filter((c): c is Cidr => c !== undefined);
  const pools = specs.map(({ base, size }) => {
    const cidr = parseCidr(base);
    const capacity = cidr === undefined || size < cidr.prefix ? 0 : 2 ** (size - cidr.prefix);
    const used = cidr === undefined ? 0 : subnets.filter((s) => inside(s, cidr)).length;
    return { base, size, capacity, used, free: Math.max(0, capacity - used) };
  });
  const capacity = pools.reduce((n, p) => n + p.capacity, 0);
  const used = pools.reduce((n, p) => n + p.used, 0);
  return { configured, pools, capacity, used, free: Math.max(0, capacity - used) };
}

/** Reads `/info` and `/networks` and counts the pools (rule 117). */
export async function readAddressPoolUsage(
  docker: Docker,
  o: { readonly signal: AbortSignal },
): Promise<AddressPoolUsage> {
  const [info, networks] = await Promise.all([
    raceAbort(docker.info(), o.signal),
    docker.listNetworks({ abortSignal: o.signal }),
  ]);
  return addressPoolUsage({ info, networks });
}

/** True when `error` is the daemon's pool-exhaustion answer (rule 116). */
export function isAddressPoolExhausted(error: unknown): boolean {
  if (error instanceof DockerAddressPoolExhaustedError) return true;
  const json = (error as { json?: { message?: unknown } } | null)?.json?.message;
  const text = `${errorMessage(error)}\n${typeof json === "string" ? json : ""}`;
  return ADDRESS_POOL_EXHAUSTED_REGEXP.test(text);
}

/**
 * Maps the daemon's exhaustion error to {@link DockerAddressPoolExhaustedError} (keeping it as
 * `cause`); returns any other error unchanged.
 */
export function mapAddressPoolError(error: unknown): unknown {
  if (error instanceof DockerAddressPoolExhaustedError || !isAddressPoolExhausted(error)) {
    return error;
  }
  return new DockerAddressPoolExhaustedError({ cause: error });
}

/**
 * The preflight of rule 118, run when a planned docker layer uses `network: "own"`: wanted =
 * min(G, own-network sandboxes planned, `maxSandboxes.docker`); free < wanted yields the warning
 * `docker-address-pool-low` with the doctor's fix and a gate of `max(1, free)` permits.
 */
export function addressPoolPreflight(
  usage: AddressPoolUsage,
  o: {
    /** The global cap G. */
    readonly concurrency: number;
    /** Sandboxes planned on own networks. */
    readonly ownSandboxes: number;
    /** The docker machine budget (`maxSandboxes.docker`, default 2 × CPU cores). */
    readonly maxSandboxes: number;
  },
): AddressPoolPreflight {
  const wanted = Math.min(o.concurrency, o.ownSandboxes, o.maxSandboxes);
  if (usage.free >= wanted) return { wanted, usage };
  const { capacity, used, free } = usage;
  return {
    wanted,
    usage,
    permits: Math.max(1, free),
    diagnostic: {
      code: ADDRESS_POOL_LOW,
      level: "warning",
      message: `docker can allocate ${free} more networks (capacity ${capacity}, used ${used}) ` +
        `but this run wants ${wanted} at once; own-network sandboxes will wait for a free one. ` +
        `Fix: set ${RECOMMENDED_POOLS_JSON} in the daemon configuration and restart the daemon ` +
        "(niceeval doctor docker shows where)",
      data: { capacity, used, free, wanted },
    },
  };
}

/**
 * The in-process gate of own networks (rule 118): at most `permits` sandboxes hold one at once;
 * waiters are served first come, first served.
 */
export interface NetworkGate {
  /**
   * Waits for a permit; rejects with `signal.reason` on abort. Disposing the permit releases it
   * (twice is harmless).
   *
   * @param onWait called once, before waiting, when no permit is free
   */
  acquire(signal: AbortSignal, onWait?: () => void): Promise<Disposable>;
}

/** A gate of `permits` (at least 1) own networks at once. */
export function createNetworkGate(permits: number): NetworkGate {
  let free = Math.max(1, Math.floor(permits));
  const waiters: (() => void)[] = [];
  const permit = (): Disposable => {
    let released = false;
    return {
      [Symbol.dispose]: () => {
        if (released) return;
        released = true;
        const next = waiters.shift();
        if (next) next();
        else free++;
      },
    };
  };
  return {
    acquire: (signal, onWait) => {
      signal.throwIfAborted();
      if (free > 0) {
        free--;
        return Promise.resolve(permit());
      }
      onWait?.();
      return abortable<Disposable>(signal, (resolve) => {
        const grant = () => resolve(permit());
        waiters.push(grant);
        return () => {
          const at = waiters.indexOf(grant);
          if (at >= 0) waiters.splice(at, 1);
        };
      });
    },
  };
}

interface Cidr {
  readonly address: number;
  readonly prefix: number;
}

/** Parses an IPv4 CIDR; undefined for IPv6 or malformed text. */
function parseCidr(text: string): Cidr | undefined {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(text.trim());
  if (!match) return undefined;
  const octets = match.slice(1, 5).map(Number);
  const prefix = Number(match[5]);
  if (octets.some((o) => o > 255) || prefix > 32) return undefined;
  const address = octets.reduce((n, o) => n * 256 + o, 0);
  return { address, prefix };
}

/** True when `subnet` lies inside `pool`. */
function inside(subnet: Cidr, pool: Cidr): boolean {
  if (subnet.prefix < pool.prefix) return false;
  const span = 2 ** (32 - pool.prefix);
  const start = pool.address - (pool.address % span);
  return subnet.address >= start && subnet.address < start + span;
}

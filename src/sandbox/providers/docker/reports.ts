/**
 * The plain data the docker tools report: address-pool usage and preflight (sandboxes.md rules
 * 117–118) and the doctor's findings (rule 119). No Docker client types, so other domains (and
 * the published type declarations) can name them without loading the client.
 */
import type { SandboxDiagnostic } from "../../types.ts";

/** One address pool with its networks. */
export interface AddressPool {
  readonly base: string;
  readonly size: number;
  readonly capacity: number;
  readonly used: number;
  readonly free: number;
}

/** The daemon's pools and their totals (rule 117). */
export interface AddressPoolUsage {
  /** False when the daemon reports no pools and the built-in ones apply. */
  readonly configured: boolean;
  readonly pools: readonly AddressPool[];
  readonly capacity: number;
  readonly used: number;
  readonly free: number;
}

/** The outcome of the preflight of rule 118. */
export interface AddressPoolPreflight {
  readonly wanted: number;
  readonly usage: AddressPoolUsage;
  /** `docker-address-pool-low` when free < wanted. */
  readonly diagnostic?: SandboxDiagnostic;
  /** Size of the own-network gate (`max(1, free)`) when the pools are low; else none. */
  readonly permits?: number;
}

/** How the daemon runs, which decides the file to edit and the restart command. */
export type DaemonVariant = "rootful" | "rootless" | "desktop";

/** What to change when the pools cannot hold the machine budget (rule 119). */
export interface DoctorFix {
  readonly daemonJson: string;
  readonly networks: 512;
  readonly file: string;
  readonly restart: string;
  readonly warning: string;
}

/** Everything the doctor found. */
export interface DockerDoctorReport {
  readonly endpoint: string;
  readonly server: {
    readonly version: string;
    readonly apiVersion: string;
    readonly storageDriver: string;
    readonly cgroupVersion: string;
    readonly variant: DaemonVariant;
    readonly cpus: number;
  };
  readonly defaultBridge: boolean;
  readonly machineBudget: {
    /** CPU cores of this host (the default's base). */
    readonly cpus: number;
    /** 2 × CPU cores. */
    readonly default: number;
    /** `maxSandboxes.docker` of the project config, when set. */
    readonly configured?: number;
    /** What the runs of this project may hold at once. */
    readonly value: number;
  };
  readonly pools: AddressPoolUsage;
  readonly owned: {
    /** niceeval-managed containers by state (`running`, `exited`, …). */
    readonly containers: Readonly<Record<string, number>>;
    readonly networks: number;
  };
  /** Present when free networks < the machine budget. */
  readonly fix?: DoctorFix;
}

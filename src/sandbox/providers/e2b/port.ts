/**
 * The narrow port between the `e2b` provider and the `e2b` SDK (sandboxes.md rule 141): the
 * provider talks to E2B only through {@link E2BPort} and {@link E2BInstance}; `sdk_port.ts` maps
 * them one to one onto the SDK, tests use an in-memory implementation.
 */

/** Options of {@link E2BPort.create}. */
export interface E2BCreateOptions {
  /** The requested lifetime (rule 122). */
  readonly timeoutMs: number;
  /** The owner stamp as E2B metadata (§7.1). */
  readonly metadata: Readonly<Record<string, string>>;
  readonly signal?: AbortSignal;
}

/** A sandbox as a list answers it. */
export interface E2BListedSandbox {
  readonly id: string;
  readonly metadata: Readonly<Record<string, string>>;
  readonly state: "running" | "paused" | string;
  readonly startedAt?: Date;
}

/** The account-level operations. */
export interface E2BPort {
  create(template: string, o: E2BCreateOptions): Promise<E2BInstance>;
  /** Sandboxes whose metadata holds every entry of `metadata`, over all pages. */
  list(metadata: Readonly<Record<string, string>>, signal?: AbortSignal): AsyncIterable<
    E2BListedSandbox
  >;
  /** Kills a sandbox by id: true when killed, false when it was not found. */
  kill(id: string, signal?: AbortSignal): Promise<boolean>;
}

/** Options of {@link E2BInstance.run}. */
export interface E2BRunOptions {
  readonly cwd?: string;
  readonly user?: string;
  readonly envs?: Readonly<Record<string, string>>;
  /** Sent with `sendStdin`, then `closeStdin` (rule 123). */
  readonly stdin?: Uint8Array;
  /** Output chunks as the SDK decodes them (streaming UTF-8). */
  readonly onStdout?: (text: string) => void;
  readonly onStderr?: (text: string) => void;
}

/** A command started in the background. */
export interface E2BProcess {
  /** Stops receiving events; the process keeps running. */
  disconnect(): Promise<void>;
  /** Kills the started process (not its group). */
  kill(): Promise<boolean>;
  /**
   * Resolves when the event stream ends (the process exited, or after `disconnect`) with the exit
   * code when one was reported; rejects on a transport failure.
   */
  wait(): Promise<{ readonly exitCode: number | undefined }>;
}

/** One sandbox. */
export interface E2BInstance {
  readonly id: string;
  run(cmd: string, o: E2BRunOptions): Promise<E2BProcess>;
  read(
    path: string,
    o: { user?: string | undefined; signal?: AbortSignal | undefined },
  ): Promise<Uint8Array>;
  write(
    path: string,
    data: Uint8Array,
    o: { user?: string | undefined; signal?: AbortSignal | undefined },
  ): Promise<void>;
  exists(
    path: string,
    o: { user?: string | undefined; signal?: AbortSignal | undefined },
  ): Promise<boolean>;
  info(signal?: AbortSignal): Promise<{ readonly endAt: Date }>;
  /** Sets the remaining lifetime, counted from now. */
  setTimeout(ms: number, signal?: AbortSignal): Promise<void>;
  /** True when killed, false when it was already gone. */
  kill(signal?: AbortSignal): Promise<boolean>;
}

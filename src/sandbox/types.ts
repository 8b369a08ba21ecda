/**
 * The interfaces of the sandbox domain (sandboxes.md §1.3, §2): the handle a provider returns, the
 * provider contract, and the facade (`t.sandbox`, hook argument) that one implementation serves for
 * every provider.
 */

/** A command for {@link SandboxHandle.exec}: an argv run without a shell, or a shell script. */
export type ExecCommand = { readonly argv: readonly [string, ...string[]] } | {
  readonly script: string;
};

/** One chunk of live output of a running command. */
export interface OutputChunk {
  readonly stream: "stdout" | "stderr";
  readonly data: Uint8Array;
}

/** Options of {@link SandboxHandle.exec}. */
export interface ExecOptions {
  /** Relative → workdir. */
  readonly cwd?: string;
  /** Overrides the sandbox's default environment. */
  readonly env?: Readonly<Record<string, string>>;
  /** Only values that {@link SandboxCapabilities.user} allows. */
  readonly user?: string;
  /** Requires {@link SandboxCapabilities.stdin}. */
  readonly stdin?: Uint8Array;
  /** `undefined` = no limit; providers apply no default of their own (rule 13). */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  /** Called serially per handle (rule 16). */
  readonly onOutput?: (chunk: OutputChunk) => void | Promise<void>;
}

/** What a finished command reports; a non-zero exit is a value, never a rejection (rule 11). */
export interface ExecResult {
  readonly exitCode: number;
  readonly stdout: Uint8Array;
  readonly stderr: Uint8Array;
  readonly durationMs: number;
  /** Set for a stream whose head was dropped to keep the last 16 MiB (rule 15). */
  readonly truncated?: { readonly stdout?: true; readonly stderr?: true };
}

/** What a handle supports. */
export interface SandboxCapabilities {
  /** Which `ExecOptions.user` values work. */
  readonly user: "any" | "root-only" | "none";
  /** niceeval may exec as root. */
  readonly rootAvailable: boolean;
  readonly stdin: boolean;
  /** `onOutput` is called while the command runs, not after it. */
  readonly liveOutput: boolean;
}

/** Answer of {@link SandboxHandle.ensureLifetime}. */
export type Lifetime = { ready: true; expiresAt?: Date } | { ready: false; reason: string };

/**
 * One entry of a directory upload: `path` is POSIX, relative to the target directory; a file's
 * bytes are read from the host path `source`; `mode` holds the permission bits when the host has
 * them.
 */
export type UploadEntry =
  | { readonly kind: "directory"; readonly path: string; readonly mode?: number }
  | {
    readonly kind: "file";
    readonly path: string;
    readonly source: string;
    readonly mode?: number;
  };

/** Controls one physical sandbox; `[Symbol.asyncDispose]` is `stop`. */
export interface SandboxHandle extends AsyncDisposable {
  /** Provider-native, usable by `destroyDetached`. */
  readonly id: string;
  readonly provider: string;
  /** Absolute. */
  readonly workdir: string;
  readonly capabilities: SandboxCapabilities;
  exec(command: ExecCommand, options?: ExecOptions): Promise<ExecResult>;
  readFile(path: string, signal?: AbortSignal): Promise<Uint8Array>;
  writeFile(
    path: string,
    data: Uint8Array,
    o?: { mode?: number; signal?: AbortSignal },
  ): Promise<void>;
  exists(path: string, signal?: AbortSignal): Promise<boolean>;
  /**
   * Writes a whole upload into `dir` in one transfer, owned by the default user; the facade's
   * `uploadDirectory` uses it when present, else one `writeFile` per file (rule 110).
   */
  uploadEntries?(
    dir: string,
    entries: readonly UploadEntry[],
    o?: { signal?: AbortSignal },
  ): Promise<void>;
  ensureLifetime?(minRemainingMs: number, signal?: AbortSignal): Promise<Lifetime>;
  /** Idempotent (rule 19). */
  stop(signal?: AbortSignal): Promise<void>;
}

/** How a failed create is retried (rule 42). */
export type CreateErrorClass = "rate_limit" | "rejected" | "ambiguous" | "fatal";

/** Scheduling metadata of a provider (§4.1). */
export interface ProviderScheduling {
  readonly recommendedConcurrency: number;
  readonly admission: "shared" | "exclusive";
  readonly laneKey: string;
}

/** The creating process's identity, written onto every instance (§7.1). */
export interface OwnerStamp {
  readonly host: string;
  readonly pid: number;
  /** ISO-8601, whole seconds; `"unknown"` if unreadable. */
  readonly processStart: string;
  readonly runId: string;
  /** 32 lowercase hex digits; new for every create try. */
  readonly provisionToken: string;
}

/** A diagnostic as the sandbox domain emits it. */
export interface SandboxDiagnostic {
  readonly code: string;
  readonly level: "info" | "warning" | "error";
  readonly message: string;
  readonly data?: unknown;
}

/** What `create` receives. */
export interface CreateContext {
  readonly owner: OwnerStamp;
  /** Resolved per §3.5; `Infinity` when unlimited. */
  readonly lifetimeMs: number;
  readonly signal: AbortSignal;
  progress(message: string): void;
  diagnostic(d: SandboxDiagnostic): void;
}

/** An instance found by {@link SandboxProvider.findOwned}. */
export interface OwnedInstance {
  readonly id: string;
  readonly owner: Partial<OwnerStamp>;
  readonly state: "running" | "stopped" | "unknown";
  readonly createdAt?: Date;
}

/** The provider contract (§2.2). */
export interface SandboxProvider<Spec = unknown, Plan = unknown> {
  readonly name: string;
  readonly scheduling: ProviderScheduling;
  /** No network or daemon I/O (rule 21). */
  plan(
    spec: Spec,
    ctx: { projectRoot: string; signal: AbortSignal },
  ): Promise<{ plan: Plan; identity: string; buildKeys: readonly string[] }>;
  prepareArtifacts?(
    plan: Plan,
    key: string,
    ctx: { signal: AbortSignal; progress(m: string): void },
  ): Promise<{ source: "cache" | "pulled" | "built" }>;
  /** Destroys partial instances before rejecting; stamps the owner (rule 22). */
  create(plan: Plan, ctx: CreateContext): Promise<SandboxHandle>;
  classifyCreateError(error: unknown): CreateErrorClass;
  /**
   * Checked once per experiment that has Attempts to run, before any of them starts (docs/bail.md):
   * null when the provider can run, else what is missing (a credential, say) and how to fix it.
   * The experiment is then halted with `provider "<name>" cannot run: <message>`.
   */
  precondition?(): { readonly message: string; readonly hint?: string } | null;
  findOwned?(filter: Partial<OwnerStamp>, signal: AbortSignal): Promise<readonly OwnedInstance[]>;
  destroyDetached?(id: string, signal: AbortSignal): Promise<"destroyed" | "already-gone">;
}

/** Options of the facade's commands (§2.3). */
export interface CommandOptions {
  /** Relative → workdir. */
  cwd?: string;
  /** Values are never persisted (names only). */
  env?: Record<string, string>;
  user?: string;
  /** Default: the remaining Attempt time, else none (rule 27). */
  timeoutMs?: number;
  /** Combined with the Attempt signal. */
  signal?: AbortSignal;
  stdin?: string | Uint8Array;
  onStdout?(chunk: string): void | Promise<void>;
  onStderr?(chunk: string): void | Promise<void>;
  /** Replaced with `***` in evidence and error messages. */
  sensitiveValues?: readonly string[];
}

/** A finished facade command, decoded as UTF-8. */
export interface CommandResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  durationMs: number;
  truncated?: { stdout?: true; stderr?: true };
}

/** Options of the directory transfers. */
export interface TransferOptions {
  /** Gitignore-style globs, relative to the directory. */
  ignore?: readonly string[];
}

/** The operations on a sandbox that tests, hooks and sandbox agents use (§2.3). */
export interface SandboxOps {
  readonly id: string;
  readonly provider: string;
  readonly workdir: string;
  readonly shell: "bash" | "sh";
  runCommand(cmd: string, args?: readonly string[], o?: CommandOptions): Promise<CommandResult>;
  runShell(script: string, o?: CommandOptions): Promise<CommandResult>;
  runCommandOrThrow(
    cmd: string,
    args?: readonly string[],
    o?: CommandOptions,
  ): Promise<CommandResult & { exitCode: 0 }>;
  runShellOrThrow(script: string, o?: CommandOptions): Promise<CommandResult & { exitCode: 0 }>;
  readText(path: string): Promise<string>;
  writeText(path: string, text: string): Promise<void>;
  readBytes(path: string): Promise<Uint8Array>;
  writeBytes(path: string, data: Uint8Array): Promise<void>;
  pathExists(path: string): Promise<boolean>;
  uploadFile(hostPath: string | URL, sandboxPath: string): Promise<void>;
  uploadDirectory(hostDir: string | URL, sandboxDir?: string, o?: TransferOptions): Promise<void>;
  downloadFile(sandboxPath: string, hostPath: string | URL): Promise<void>;
  downloadDirectory(sandboxDir: string, hostDir: string | URL, o?: TransferOptions): Promise<void>;
}

/** `t.sandbox`; workspace diff assertions are LATER (authoring.md §9). */
export type EvalSandbox = SandboxOps;

/** What a layer hook receives besides the sandbox. */
export interface HookContext {
  readonly signal: AbortSignal;
  progress(message: string): void;
}

/** A layer `setup` or `teardown` hook; runs once per physical sandbox. */
export type SandboxHook = (sb: SandboxOps, ctx: HookContext) => void | Promise<void>;

/** What a prepare function receives besides the sandbox. */
export interface PrepareContext extends HookContext {
  /** Pushes `fn` onto the Attempt's cleanup stack. */
  onCleanup(fn: () => Promise<void>): void;
}

/** One prepare step: a script, an argv, or a function; runs once per Attempt. */
export type PrepareStep =
  | string
  | readonly [string, ...string[]]
  | ((sb: SandboxOps, ctx: PrepareContext) => Promise<void>);

/** A sandbox layer from `niceeval/sandbox`: immutable; every method returns a new layer. */
export interface SandboxLayer {
  /** `"template"` when made by a provider factory, `"layer"` for `sandboxLayer()`. */
  readonly kind: "template" | "layer";
  /** `undefined` for `sandboxLayer()`. */
  readonly provider: string | undefined;
  /** Adds a hook run once per physical sandbox. */
  setup(fn: SandboxHook): SandboxLayer;
  /** Adds a hook run once per physical sandbox, last-in first-out. */
  teardown(fn: SandboxHook): SandboxLayer;
  /** Adds steps run once per Attempt. */
  prepare(...steps: PrepareStep[]): SandboxLayer;
}

/** Options every provider factory accepts. */
export interface LayerCommon {
  /** Host directory, relative to the declaring file's directory. */
  fixture?: string;
  /** Requested instance lifetime; a positive integer (§3.5). */
  lifetimeMs?: number;
}

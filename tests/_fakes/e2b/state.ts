/**
 * The fake's sandboxes: one temp directory each, plus metadata, lifetime and running processes.
 * Lifetime is bookkeeping on the fake's clock: a sandbox whose `endAt` has passed is killed the
 * next time the fake is asked anything (no timer runs, so a test's clock decides).
 */
import { join } from "node:path";
import { killMarked } from "../../../src/sandbox/providers/_process_tree.ts";
import { PathMap } from "./paths.ts";

/** A running process of a sandbox, as the store needs it. */
export interface SandboxProcess {
  readonly pid: number;
  /** Resolves when the process has exited and its output pipes are drained. */
  readonly done: Promise<void>;
  kill(signal: Deno.Signal): void;
}

/** One live sandbox. */
export interface SandboxRecord {
  readonly id: string;
  readonly templateId: string;
  readonly metadata: Readonly<Record<string, string>>;
  readonly envVars: Readonly<Record<string, string>>;
  readonly paths: PathMap;
  readonly startedAt: Date;
  endAt: Date;
  readonly accessToken: string;
  /** `NAME=value` in the environment of every process of the sandbox and their descendants. */
  readonly marker: string;
  readonly processes: Map<number, SandboxProcess>;
}

/** What the store is built from. */
export interface StoreOptions {
  readonly baseDir: string;
  readonly now: () => number;
  readonly prefixes: readonly string[];
}

/** What `POST /v2/sandboxes` asks for. */
export interface CreateRequest {
  readonly templateId: string;
  readonly metadata: Record<string, string>;
  readonly envVars: Record<string, string>;
  readonly timeoutSeconds: number;
}

function randomHex(bytes: number): string {
  return Array.from(
    crypto.getRandomValues(new Uint8Array(bytes)),
    (b) => b.toString(16).padStart(2, "0"),
  ).join("");
}

/** The sandboxes of one fake. */
export class SandboxStore {
  readonly #live = new Map<string, SandboxRecord>();
  readonly #killing = new Set<Promise<void>>();

  constructor(readonly options: StoreOptions) {}

  /** Creates a sandbox: its root with `/home/user`, `/root` and `/tmp`. */
  async create(request: CreateRequest): Promise<SandboxRecord> {
    const id = `i${randomHex(10)}`;
    const root = join(this.options.baseDir, id);
    for (const dir of ["home/user", "root", "tmp"]) {
      await Deno.mkdir(join(root, dir), { recursive: true });
    }
    const now = this.options.now();
    const record: SandboxRecord = {
      id,
      templateId: request.templateId,
      metadata: { ...request.metadata },
      envVars: { ...request.envVars },
      paths: new PathMap(root, this.options.prefixes),
      startedAt: new Date(now),
      endAt: new Date(now + request.timeoutSeconds * 1000),
      accessToken: randomHex(16),
      marker: `NICEEVAL_FAKE_E2B_SANDBOX=${id}`,
      processes: new Map(),
    };
    this.#live.set(id, record);
    return record;
  }

  /** A live sandbox, after killing the expired ones. */
  get(id: string): SandboxRecord | undefined {
    this.expire();
    return this.#live.get(id);
  }

  /** Every live sandbox, after killing the expired ones. */
  list(): SandboxRecord[] {
    this.expire();
    return [...this.#live.values()];
  }

  /** Kills every sandbox whose end time has passed; the kills finish in the background. */
  expire(): void {
    const now = this.options.now();
    for (const record of [...this.#live.values()]) {
      if (record.endAt.getTime() <= now) void this.kill(record.id);
    }
  }

  /**
   * Kills a sandbox: it is gone at once for the API; then every process started in it, and every
   * process those started (whatever session they moved to), dies, and its root is removed.
   */
  kill(id: string): Promise<boolean> {
    const record = this.#live.get(id);
    if (record === undefined) return Promise.resolve(false);
    this.#live.delete(id);
    const killing = this.#destroy(record);
    this.#killing.add(killing);
    return killing.finally(() => this.#killing.delete(killing)).then(() => true);
  }

  async #destroy(record: SandboxRecord): Promise<void> {
    for (const process of record.processes.values()) process.kill("SIGKILL");
    await killMarked(record.marker);
    await Promise.all([...record.processes.values()].map((p) => p.done));
    await Deno.remove(record.paths.root, { recursive: true }).catch(() => undefined);
  }

  /** Kills every sandbox and waits for kills still running. */
  async close(): Promise<void> {
    await Promise.all([...this.#live.keys()].map((id) => this.kill(id)));
    await Promise.all([...this.#killing]);
  }
}

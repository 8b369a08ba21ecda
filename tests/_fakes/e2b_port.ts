/**
 * An in-memory {@link E2BPort} (sandboxes.md rule 141) for unit tests of the e2b provider. Each
 * sandbox keeps files and process groups in memory. `run` understands the provider's exec wrapper
 * (it decodes the marker from its octal escapes and emits the control frames the wrapper would)
 * and the few control commands the provider sends; the inner command's behaviour comes from the
 * test's {@link FakeProgram}.
 */
import type {
  E2BCreateOptions,
  E2BInstance,
  E2BListedSandbox,
  E2BPort,
  E2BProcess,
  E2BRunOptions,
} from "../../src/sandbox/providers/e2b/port.ts";

/** What the inner command of a wrapped run can do. */
export interface FakeRun {
  readonly command: string;
  readonly user: string | undefined;
  readonly cwd: string | undefined;
  readonly envs: Readonly<Record<string, string>> | undefined;
  readonly stdin: Uint8Array | undefined;
  readonly pgid: number;
  readonly marker: string;
  stdout(text: string): void;
  stderr(text: string): void;
  /** Ends the command: the wrapper's exit frames follow, then the stream ends. */
  exit(code: number): void;
  /** Resolves when the command's group is killed. */
  readonly killed: Promise<void>;
}

/** The behaviour of wrapped commands; runs after the pgid frame was emitted. */
export type FakeProgram = (run: FakeRun) => void | Promise<void>;

/** Options of {@link FakeE2BPort}. */
export interface FakeE2BOptions {
  program?: FakeProgram;
  /** Splits every emitted string into chunks (default: one chunk). */
  split?: (text: string) => string[];
  /** The shell the create probe reports. */
  shell?: "bash" | "sh";
  /** Exit code of the create-time workdir setup. */
  setupExit?: number;
  /** When false, `kill -KILL -<pgid>` leaves the group alive. */
  killable?: boolean;
  /** Withholds the pgid frame. */
  noPgidFrame?: boolean;
  /** Clock for `endAt` (ms since epoch). */
  now?: () => number;
  /** The longest lifetime the service grants (default unlimited). */
  maxTimeoutMs?: number;
}

/** One call seen by the port, for assertions. */
export interface FakeCall {
  readonly op: string;
  readonly args: readonly unknown[];
}

const WRAPPER_REGEXP =
  /^m=\$\(printf '((?:\\[0-7]{3})+)'\); exec 3<&0; setsid (.*) <&3 3<&- & p=\$!;/s;

/** An in-memory sandbox. */
export class FakeInstance implements E2BInstance {
  readonly id: string;
  readonly files = new Map<string, Uint8Array>();
  readonly modes = new Map<string, number>();
  readonly dirs = new Set<string>(["/", "/home", "/home/user", "/tmp"]);
  readonly groups = new Map<number, boolean>();
  readonly commands: { cmd: string; o: E2BRunOptions }[] = [];
  readonly processes: FakeProcess[] = [];
  readonly metadata: Record<string, string>;
  readonly template: string;
  endAt: number;
  killed = false;
  readonly #port: FakeE2BPort;

  constructor(port: FakeE2BPort, id: string, template: string, o: E2BCreateOptions) {
    this.#port = port;
    this.id = id;
    this.template = template;
    this.metadata = { ...o.metadata };
    this.endAt = port.now() + o.timeoutMs;
  }

  run(cmd: string, o: E2BRunOptions): Promise<E2BProcess> {
    this.#alive();
    this.commands.push({ cmd, o });
    const proc = new FakeProcess(this.#port.options.split ?? ((t) => [t]), o);
    this.processes.push(proc);
    const wrapper = WRAPPER_REGEXP.exec(cmd);
    if (wrapper) this.#wrapped(proc, wrapper[1]!, wrapper[2]!, o);
    else queueMicrotask(() => this.#control(proc, cmd, o));
    return Promise.resolve(proc);
  }

  read(path: string): Promise<Uint8Array> {
    this.#alive();
    if (this.dirs.has(path)) {
      return Promise.reject(sdkError("SandboxError", `400: ${path} is a dir`, 400));
    }
    const data = this.files.get(path);
    if (!data) return Promise.reject(sdkError("FileNotFoundError", `file ${path} not found`));
    return Promise.resolve(data.slice());
  }

  write(path: string, data: Uint8Array): Promise<void> {
    this.#alive();
    for (let d = parent(path); d !== "/"; d = parent(d)) this.dirs.add(d);
    this.files.set(path, data.slice());
    return Promise.resolve();
  }

  exists(path: string): Promise<boolean> {
    this.#alive();
    return Promise.resolve(this.files.has(path) || this.dirs.has(path));
  }

  info(): Promise<{ endAt: Date }> {
    this.#alive();
    return Promise.resolve({ endAt: new Date(this.endAt) });
  }

  setTimeout(ms: number): Promise<void> {
    this.#alive();
    this.#port.calls.push({ op: "setTimeout", args: [this.id, ms] });
    const max = this.#port.options.maxTimeoutMs;
    this.endAt = this.#port.now() + (max === undefined ? ms : Math.min(ms, max));
    return Promise.resolve();
  }

  kill(): Promise<boolean> {
    this.#port.calls.push({ op: "instance.kill", args: [this.id] });
    if (this.killed) {
      return Promise.reject(sdkError("SandboxNotFoundError", "sandbox not found", 404));
    }
    this.killed = true;
    return Promise.resolve(true);
  }

  #alive(): void {
    if (this.killed) throw sdkError("SandboxNotFoundError", `sandbox ${this.id} not found`, 404);
  }

  #wrapped(proc: FakeProcess, octal: string, command: string, o: E2BRunOptions): void {
    const marker = octal.split("\\").slice(1).map((n) => String.fromCharCode(parseInt(n, 8)))
      .join("");
    const pgid = this.#port.nextPid++;
    this.groups.set(pgid, true);
    let killedNow!: () => void;
    const killed = new Promise<void>((resolve) => killedNow = resolve);
    proc.onGroupKill = () => killedNow();
    this.#port.groupKills.set(`${this.id}:${pgid}`, () => {
      killedNow();
      finish(137);
    });
    let done = false;
    const finish = (code: number) => {
      if (done) return;
      done = true;
      this.groups.set(pgid, false);
      proc.out("stdout", `\x1e${marker}:exit:${code}\n`);
      proc.out("stderr", `\x1e${marker}:exit:${code}\n`);
      proc.end(code);
    };
    const run: FakeRun = {
      command,
      user: o.user,
      cwd: o.cwd,
      envs: o.envs,
      stdin: o.stdin,
      pgid,
      marker,
      stdout: (text) => proc.out("stdout", text),
      stderr: (text) => proc.out("stderr", text),
      exit: finish,
      killed,
    };
    queueMicrotask(async () => {
      if (!this.#port.options.noPgidFrame) proc.out("stdout", `\x1e${marker}:pgid:${pgid}\n`);
      const program = this.#port.options.program ?? ((r: FakeRun) => r.exit(0));
      try {
        await program(run);
      } catch (error) {
        proc.fail(error);
      }
    });
  }

  #control(proc: FakeProcess, cmd: string, o: E2BRunOptions): void {
    const kill = /^kill -(KILL|0) -(\d+)/.exec(cmd);
    if (kill) {
      const pgid = Number(kill[2]);
      if (kill[1] === "KILL" && this.#port.options.killable !== false) {
        this.#port.groupKills.get(`${this.id}:${pgid}`)?.();
      }
      return proc.end(
        kill[1] === "0" && this.groups.get(pgid) === true ? 0 : kill[1] === "0" ? 1 : 0,
      );
    }
    const setup = /^sh -c 'mkdir -p "\$0".*' '?([^']+)'?$/.exec(cmd);
    if (setup) {
      const code = this.#port.options.setupExit ?? 0;
      if (code === 0) {
        this.dirs.add(setup[1]!);
        proc.out("stdout", `${this.#port.options.shell ?? "bash"}\n`);
      } else proc.out("stderr", "mkdir: permission denied\n");
      return proc.end(code);
    }
    const testDir = /^test -d '?([^']+)'?$/.exec(cmd);
    if (testDir) return proc.end(this.dirs.has(testDir[1]!) ? 0 : 1);
    const chmod = /^chmod ([0-7]+) '?([^']+)'?$/.exec(cmd);
    if (chmod) {
      this.modes.set(chmod[2]!, parseInt(chmod[1]!, 8));
      return proc.end(this.files.has(chmod[2]!) ? 0 : 1);
    }
    proc.out("stderr", `fake: unknown command ${cmd} as ${o.user}\n`);
    proc.end(127);
  }
}

/** A started command. */
export class FakeProcess implements E2BProcess {
  disconnected = false;
  killedByHandle = false;
  onGroupKill: (() => void) | undefined;
  readonly #split: (text: string) => string[];
  readonly #o: E2BRunOptions;
  readonly #waited: Promise<{ exitCode: number | undefined }>;
  #resolve!: (r: { exitCode: number | undefined }) => void;
  #reject!: (error: unknown) => void;
  #ended = false;

  constructor(split: (text: string) => string[], o: E2BRunOptions) {
    this.#split = split;
    this.#o = o;
    this.#waited = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.#waited.catch(() => undefined);
  }

  out(stream: "stdout" | "stderr", text: string): void {
    if (this.disconnected || this.#ended) return;
    const fn = stream === "stdout" ? this.#o.onStdout : this.#o.onStderr;
    for (const chunk of this.#split(text)) fn?.(chunk);
  }

  end(exitCode: number | undefined): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#resolve({ exitCode });
  }

  fail(error: unknown): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#reject(error);
  }

  disconnect(): Promise<void> {
    this.disconnected = true;
    this.end(undefined);
    return Promise.resolve();
  }

  kill(): Promise<boolean> {
    this.killedByHandle = true;
    return Promise.resolve(true);
  }

  wait(): Promise<{ exitCode: number | undefined }> {
    return this.#waited;
  }
}

/** The in-memory port. */
export class FakeE2BPort implements E2BPort {
  readonly instances: FakeInstance[] = [];
  readonly calls: FakeCall[] = [];
  /** Errors thrown by the next creates, in order (before anything is made). */
  readonly createErrors: unknown[] = [];
  /** Sandboxes that exist only in the list (made by other processes). */
  readonly foreign: E2BListedSandbox[] = [];
  /** Page size of `list`. */
  pageSize = 2;
  nextPid = 100;
  readonly groupKills = new Map<string, () => void>();
  readonly options: FakeE2BOptions;
  #ids = 0;

  constructor(options: FakeE2BOptions = {}) {
    this.options = options;
  }

  now(): number {
    return this.options.now?.() ?? 0;
  }

  create(template: string, o: E2BCreateOptions): Promise<E2BInstance> {
    this.calls.push({ op: "create", args: [template, o] });
    const error = this.createErrors.shift();
    if (error instanceof LeakedCreate) {
      // The service made the sandbox, but its answer was lost (an ambiguous failure).
      this.instances.push(new FakeInstance(this, `sbx-${++this.#ids}`, template, o));
      return Promise.reject(error.error);
    }
    if (error !== undefined) return Promise.reject(error);
    const instance = new FakeInstance(this, `sbx-${++this.#ids}`, template, o);
    this.instances.push(instance);
    return Promise.resolve(instance);
  }

  async *list(metadata: Readonly<Record<string, string>>): AsyncIterable<E2BListedSandbox> {
    this.calls.push({ op: "list", args: [metadata] });
    const all: E2BListedSandbox[] = [
      ...this.instances.filter((i) => !i.killed).map((i) => ({
        id: i.id,
        metadata: i.metadata,
        state: "running",
        startedAt: new Date(0),
      })),
      ...this.foreign,
    ].filter((s) => Object.entries(metadata).every(([k, v]) => s.metadata[k] === v));
    for (let i = 0; i < all.length; i += this.pageSize) {
      this.calls.push({ op: "list.page", args: [i / this.pageSize] });
      await Promise.resolve();
      yield* all.slice(i, i + this.pageSize);
    }
  }

  kill(id: string): Promise<boolean> {
    this.calls.push({ op: "kill", args: [id] });
    const instance = this.instances.find((i) => i.id === id && !i.killed);
    if (instance) {
      instance.killed = true;
      return Promise.resolve(true);
    }
    const foreign = this.foreign.findIndex((s) => s.id === id);
    if (foreign >= 0) {
      this.foreign.splice(foreign, 1);
      return Promise.resolve(true);
    }
    return Promise.resolve(false);
  }
}

/** A create whose sandbox exists although the call failed with `error`. */
export class LeakedCreate {
  constructor(readonly error: unknown) {}
}

/** An error shaped like the SDK's (recognised by name and status). */
export function sdkError(name: string, message: string, statusCode?: number): Error {
  const error = new Error(message) as Error & { statusCode?: number };
  error.name = name;
  if (statusCode !== undefined) error.statusCode = statusCode;
  return error;
}

function parent(path: string): string {
  const i = path.lastIndexOf("/");
  return i <= 0 ? "/" : path.slice(0, i);
}

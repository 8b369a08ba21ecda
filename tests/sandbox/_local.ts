/** A real `local` provider over a private temp directory, for the local-provider tests. */
import { realClock } from "../../src/_shared/clock.ts";
import {
  createLocalProvider,
  type LocalPlan,
  type OwnerStamp,
  type SandboxHandle,
  type SandboxProvider,
} from "../../src/sandbox/mod.ts";

/** A provider whose roots live in `tmpDir`; disposing stops every handle and removes `tmpDir`. */
export interface LocalTestBed extends AsyncDisposable {
  readonly tmpDir: string;
  readonly provider: SandboxProvider<{ passEnv?: readonly string[] }, LocalPlan>;
  create(o?: { passEnv?: readonly string[]; owner?: Partial<OwnerStamp> }): Promise<SandboxHandle>;
}

/** The owner stamp of this test process. */
export function testOwner(extra: Partial<OwnerStamp> = {}): OwnerStamp {
  return {
    host: Deno.hostname(),
    pid: Deno.pid,
    processStart: "unknown",
    runId: "run-test",
    provisionToken: "0123456789abcdef0123456789abcdef",
    ...extra,
  };
}

/** Creates a test bed; use with `await using`. */
export async function localTestBed(hostEnv = Deno.env.toObject()): Promise<LocalTestBed> {
  const tmpDir = await Deno.realPath(await Deno.makeTempDir({ prefix: "niceeval-sandbox-test-" }));
  const provider = createLocalProvider({ hostEnv, clock: realClock, tmpDir });
  const handles: SandboxHandle[] = [];
  return {
    tmpDir,
    provider,
    async create(o = {}) {
      const { plan } = await provider.plan(o.passEnv ? { passEnv: o.passEnv } : {}, {
        projectRoot: tmpDir,
        signal: new AbortController().signal,
      });
      const handle = await provider.create(plan, {
        owner: testOwner(o.owner),
        lifetimeMs: Infinity,
        signal: new AbortController().signal,
        progress: () => {},
        diagnostic: () => {},
      });
      handles.push(handle);
      return handle;
    },
    async [Symbol.asyncDispose]() {
      for (const handle of handles) await handle.stop();
      await Deno.remove(tmpDir, { recursive: true });
    },
  };
}

/** Text of bytes. */
export function text(bytes: Uint8Array): string {
  return new TextDecoder().decode(bytes);
}

/**
 * How long {@link pollUntil} callers wait for something that happens without delay (a killed
 * process disappearing): only a safety bound that turns a hang into a failure, never the claim.
 */
export const HANG_MS = 120_000;

/** Polls `check` every 20 ms until it is true or `ms` passed; returns its last answer. */
export async function pollUntil(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** True when `/proc/<pid>` is gone or the process is a zombie. */
export async function processDead(pid: number): Promise<boolean> {
  try {
    const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
    const state = stat.slice(stat.lastIndexOf(")") + 2).trim()[0];
    return state === "Z" || state === "X";
  } catch {
    return true;
  }
}

/** Kills a process and the group it may lead, ignoring missing ones (test cleanup). */
export function killQuietly(pid: number): void {
  for (const target of [-pid, pid]) {
    try {
      Deno.kill(target, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

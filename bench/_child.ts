/**
 * Runs the real CLI (`deno run -A --frozen mod.ts …`) in a benchmark project and measures it from
 * outside: wall time from spawn to exit (process start included), and, through the preloaded
 * `bench/_probe.ts`, the child's own CPU time, peak RSS and live heap at the end. When the probe
 * wrote nothing (the process was killed), the peak RSS polled from `/proc/<pid>/status` stands.
 */
import { join } from "node:path";
import { childEnv, MOD } from "../tests/_helpers/cli.ts";
import type { ProbeFigures } from "./_probe.ts";
import { peakRssKiB } from "./_noop_project.ts";

const PROBE = new URL("./_probe.ts", import.meta.url).pathname;
const POLL_MS = 25;
const TAIL_BYTES = 4_000;

/** Where the CLI runs: a project directory and its private state directory. */
export interface ChildPlace {
  readonly dir: string;
  readonly stateDir: string;
}

/** Options of one measured CLI run. */
export interface ChildOptions {
  /** Preload the probe (CPU, peak RSS, live heap). Default true. */
  readonly probe?: boolean;
  /** Keep the whole stdout (else only its byte count and tail). */
  readonly keepStdout?: boolean;
  readonly env?: Record<string, string>;
  /** Collect and sample the live heap this often while the child runs (perturbs it a little). */
  readonly heapSampleMs?: number;
  /** V8 flags of the child, comma-separated (the launchers' heap settings, say). */
  readonly v8Flags?: string;
}

/** What one CLI run cost. */
export interface ChildFigures {
  readonly code: number;
  readonly wallMs: number;
  readonly cpuMs: number | null;
  readonly peakKiB: number;
  readonly liveHeapBytes: number | null;
  readonly maxLiveHeapBytes: number | null;
  readonly stdout: string;
  readonly stdoutBytes: number;
  readonly stderrTail: string;
}

/** Reads a stream to its end; keeps all of it or only the last {@link TAIL_BYTES}. */
async function drain(
  stream: ReadableStream<Uint8Array>,
  keep: boolean,
): Promise<{ text: string; bytes: number }> {
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  let kept = 0;
  for await (const chunk of stream) {
    bytes += chunk.length;
    chunks.push(chunk);
    kept += chunk.length;
    while (!keep && chunks.length > 1 && kept - chunks[0]!.length >= TAIL_BYTES) {
      kept -= chunks.shift()!.length;
    }
  }
  const all = new Uint8Array(kept);
  let offset = 0;
  for (const chunk of chunks) {
    all.set(chunk, offset);
    offset += chunk.length;
  }
  return { text: new TextDecoder().decode(all), bytes };
}

/** Runs `niceeval <args>` in `place` and measures it. */
export async function runCli(
  place: ChildPlace,
  args: readonly string[],
  options: ChildOptions = {},
): Promise<ChildFigures> {
  const probe = options.probe ?? true;
  const probeOut = join(place.stateDir, `probe-${crypto.randomUUID()}.json`);
  const v8 = [...(probe ? ["--expose-gc"] : []), ...(options.v8Flags ? [options.v8Flags] : [])];
  const flags = [
    ...(v8.length > 0 ? [`--v8-flags=${v8.join(",")}`] : []),
    ...(probe ? ["--preload", PROBE] : []),
  ];
  const env = childEnv(place.stateDir, {
    ...options.env,
    ...(probe ? { NICEEVAL_BENCH_PROBE_OUT: probeOut } : {}),
    ...(probe && options.heapSampleMs
      ? { NICEEVAL_BENCH_PROBE_SAMPLE_MS: String(options.heapSampleMs) }
      : {}),
  });
  const started = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--frozen", ...flags, MOD, ...args],
    cwd: place.dir,
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let polledKiB = 0;
  let running = true;
  const poll = (async () => {
    while (running) {
      polledKiB = Math.max(polledKiB, await peakRssKiB(child.pid));
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  })();
  const [stdout, stderr, status] = await Promise.all([
    drain(child.stdout, options.keepStdout ?? false),
    drain(child.stderr, false),
    child.status,
  ]);
  const wallMs = performance.now() - started;
  running = false;
  await poll;
  const probed = probe ? await readProbe(probeOut) : null;
  return {
    code: status.code,
    wallMs,
    cpuMs: probed?.cpuMs ?? null,
    peakKiB: Math.max(polledKiB, probed?.peakKiB ?? 0),
    liveHeapBytes: probed?.collected ? probed.liveHeapBytes : null,
    maxLiveHeapBytes: probed?.collected ? probed.maxLiveHeapBytes : null,
    stdout: stdout.text,
    stdoutBytes: stdout.bytes,
    stderrTail: stderr.text,
  };
}

async function readProbe(path: string): Promise<ProbeFigures | null> {
  try {
    const figures = JSON.parse(await Deno.readTextFile(path)) as ProbeFigures;
    await Deno.remove(path);
    return figures;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

/** Throws with the stderr tail when a run did not exit 0. */
export function expectSuccess(figures: ChildFigures, what: string): void {
  if (figures.code === 0) return;
  throw new Error(`${what} exited ${figures.code}: ${figures.stderrTail.slice(-2_000)}`);
}

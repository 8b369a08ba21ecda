/**
 * Preloaded into a CLI child by `bench/_child.ts` (`deno run --preload`): when the process ends
 * (its `unload` event, which `Deno.exit` dispatches too) it writes its own CPU time, peak RSS and
 * live heap after a full collection to the file named by `NICEEVAL_BENCH_PROBE_OUT`. With
 * `NICEEVAL_BENCH_PROBE_SAMPLE_MS=<ms>` it also collects and samples the live heap that often
 * while the process runs (an unreferenced timer), and reports the largest sample. The live heap
 * needs `--v8-flags=--expose-gc`; without it the heap is measured without collecting. Nothing in
 * `src/` knows about it.
 */
import process from "node:process";

/** What the probe writes, as JSON. */
export interface ProbeFigures {
  /** User + system CPU time of the process, milliseconds. */
  readonly cpuMs: number;
  /** Peak resident set size, KiB. */
  readonly peakKiB: number;
  /** V8 heap in use at the end, after a full collection when `gc` is exposed. */
  readonly liveHeapBytes: number;
  /** Largest live heap of the samples taken while running (the exit included), or null. */
  readonly maxLiveHeapBytes: number | null;
  readonly collected: boolean;
}

const gc = (globalThis as { gc?: () => void }).gc;

function liveHeap(): number {
  gc?.();
  return Deno.memoryUsage().heapUsed;
}

const out = Deno.env.get("NICEEVAL_BENCH_PROBE_OUT");
const sampleMs = Number(Deno.env.get("NICEEVAL_BENCH_PROBE_SAMPLE_MS") ?? 0);
let maxLive: number | null = null;
if (out !== undefined && sampleMs > 0) {
  Deno.unrefTimer(setInterval(() => {
    maxLive = Math.max(maxLive ?? 0, liveHeap());
  }, sampleMs));
}

if (out !== undefined) {
  globalThis.addEventListener("unload", () => {
    const cpu = process.cpuUsage();
    const peakKiB = process.resourceUsage().maxRSS;
    const atExit = liveHeap();
    const figures: ProbeFigures = {
      cpuMs: (cpu.user + cpu.system) / 1000,
      peakKiB,
      liveHeapBytes: atExit,
      maxLiveHeapBytes: maxLive === null ? null : Math.max(maxLive, atExit),
      collected: gc !== undefined,
    };
    Deno.writeTextFileSync(out, JSON.stringify(figures));
  });
}

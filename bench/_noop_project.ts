/** The generated no-op project the CLI benchmarks run, and the peak-RSS probe they share. */

/** The config and the one no-op experiment (a `scriptedAgent` answering "ok") of a bench project. */
export function noopProjectBase(): Record<string, string> {
  return {
    "niceeval.config.ts":
      `import { defineConfig } from "niceeval";\nexport default defineConfig({});\n`,
    "experiments/noop.ts": [
      `import { defineExperiment } from "niceeval";`,
      `import { scriptedAgent } from "niceeval/adapter";`,
      `export default defineExperiment({`,
      `  agent: scriptedAgent({ name: "noop", script: [], fallback: { text: "ok" } }),`,
      `});`,
      ``,
    ].join("\n"),
  };
}

/** Files of a project with `n` no-op evals (one `scriptedAgent` turn and one check each). */
export function noopProjectFiles(n: number): Record<string, string> {
  return {
    ...noopProjectBase(),
    "evals/noop.eval.ts": [
      `import { defineEval } from "niceeval";`,
      `import { includes } from "niceeval/expect";`,
      `export default Array.from({ length: ${n} }, () =>`,
      `  defineEval({ async test(t) { await t.send("hi"); t.check(t.reply, includes("ok")); } })`,
      `);`,
      ``,
    ].join("\n"),
  };
}

/** Peak resident set size of a live process in KiB, or 0 when unreadable. */
export async function peakRssKiB(pid: number): Promise<number> {
  try {
    const status = await Deno.readTextFile(`/proc/${pid}/status`);
    return Number(/VmHWM:\s+(\d+)\s+kB/.exec(status)?.[1] ?? 0);
  } catch {
    // The process already exited (or /proc is absent): the last sample stands.
    return 0;
  }
}

/** What {@link measureChild} saw of one CLI subprocess. */
export interface ChildMeasurement {
  readonly output: Deno.CommandOutput;
  /** From spawn to exit, process start included. */
  readonly wallMs: number;
  readonly peakKiB: number;
}

/** Polls `child`'s peak RSS every `pollMs` while it runs; resolves with its output once it exits. */
export async function measureChild(
  child: Deno.ChildProcess,
  started: number,
  pollMs = 25,
): Promise<ChildMeasurement> {
  let peakKiB = 0;
  let running = true;
  const poll = (async () => {
    while (running) {
      peakKiB = Math.max(peakKiB, await peakRssKiB(child.pid));
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  })();
  const output = await child.output();
  const wallMs = performance.now() - started;
  running = false;
  await poll;
  return { output, wallMs, peakKiB };
}

/** Directories a benchmark removes when its process ends. */
const leftovers: string[] = [];
globalThis.addEventListener("unload", () => {
  for (const dir of leftovers) {
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch {
      // Already gone.
    }
  }
});

/**
 * Removes `dirs` when the benchmark process ends, not between cases: on some file systems creating
 * files is slower for minutes after many files were deleted, and the next case would pay for it.
 */
export function removeAtUnload(...dirs: string[]): void {
  leftovers.push(...dirs);
}

/**
 * The bench suite (issue 20): `bench/_registry.ts` lists every `bench/<area>_bench.ts`, each of
 * them exports its benchmark, and the driver's quick mode runs the named benchmarks and prints a
 * report with the machine's figures. No timing is asserted.
 */
import assert from "node:assert/strict";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { areaOf, BENCH_FILES, loadBenchmark } from "../../bench/_registry.ts";
import { describeRun, REPO_ROOT, runDeno } from "./_tree.ts";

const DRIVER = join(REPO_ROOT, "bench", "_run.ts");

Deno.test("issue 20: the bench registry lists every bench/<area>_bench.ts file, once", async () => {
  const files = (await readdir(join(REPO_ROOT, "bench"))).filter((f) => f.endsWith("_bench.ts"));
  assert.deepEqual([...BENCH_FILES].sort(), files.sort());
  assert.equal(new Set(BENCH_FILES).size, BENCH_FILES.length);
});

Deno.test("issue 20: every registered bench module exports a benchmark named after its file", async () => {
  for (const file of BENCH_FILES) {
    const benchmark = await loadBenchmark(file);
    assert.equal(benchmark.name, areaOf(file), `bench/${file}`);
    assert.ok(benchmark.title !== "" && benchmark.about !== "", `bench/${file} describes itself`);
  }
});

Deno.test("issue 20: the issue's benchmarks are registered", () => {
  const areas = BENCH_FILES.map(areaOf);
  for (const area of ["overhead", "planning", "start", "utilization", "ramp", "docker"]) {
    assert.ok(areas.includes(area), `no ${area} benchmark`);
  }
});

Deno.test("issue 20: deno task bench --quick prints a report of the named benchmarks and writes nothing", async () => {
  const report = join(REPO_ROOT, "docs", "benchmarks.md");
  const before = await stat(report).then((s) => s.mtimeMs, () => null);
  const r = await runDeno(["run", "-A", "--frozen", DRIVER, "--quick", "--only", "utilization"]);
  assert.equal(r.code, 0, describeRun(r));
  assert.equal(await stat(report).then((s) => s.mtimeMs, () => null), before, "docs/benchmarks.md");
  assert.match(r.stdout, /^# Benchmarks\n/);
  assert.match(r.stdout, /Quick mode/);
  assert.match(r.stdout, /^- CPUs: \d+$/m);
  assert.match(r.stdout, /^- Load average at the start \(1 \/ 5 \/ 15 min\): [\d.]+ \/ /m);
  assert.match(r.stdout, /^- Deno \d+\.\d+\.\d+ /m);
  assert.match(r.stdout, /^## Utilization: /m);
  assert.match(r.stdout, /^\| issue 15 §1: /m);
  assert.doesNotMatch(r.stdout, /^## Overhead/m);
});

Deno.test("issue 20: the bench driver rejects an unknown benchmark name with exit 2", async () => {
  const r = await runDeno(["run", "-A", "--frozen", DRIVER, "--quick", "--only", "nope"]);
  assert.equal(r.code, 2, describeRun(r));
  assert.match(r.stderr, /unknown benchmark "nope"; known: start, planning, overhead/);
});

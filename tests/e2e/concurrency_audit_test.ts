/**
 * The real CLI on a mixed suite (`audit_project`): the NDJSON stream is replayed to check the
 * concurrency audit of `cli.md` OUT-J6 and the slot coverage of OUT-J5.
 */
import assert from "node:assert/strict";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { type AuditEvent, ConcurrencyReplay } from "../_fakes/attempt.ts";
import { ndjson, tempProject } from "../_helpers/cli.ts";

type Line = Record<string, unknown>;

/** OUT-J6: replays the stream against `start.concurrency` and `start.experimentConcurrency`. */
function auditConcurrency(lines: readonly Line[]): ConcurrencyReplay {
  const start = lines[0]!;
  assert.equal(start.type, "start");
  const replay = new ConcurrencyReplay({
    cap: start.concurrency as number,
    experimentCaps: start.experimentConcurrency as Record<string, number>,
  });
  for (const line of lines) {
    replay.apply(line as unknown as AuditEvent);
    if (line.type !== "attempt_end") continue;
    const startedAt = Date.parse(line.startedAt as string);
    const endedAt = Date.parse(line.endedAt as string);
    assert.ok(startedAt <= endedAt, JSON.stringify(line));
    assert.equal(line.durationMs, endedAt - startedAt);
  }
  assert.deepEqual(replay.violations, []);
  assert.equal(replay.running, 0);
  return replay;
}

/** OUT-J5: every planned ordinal appears once in `eval.attempts` and is covered exactly once. */
function auditCoverage(lines: readonly Line[]): Map<string, string> {
  const covered = new Map<string, string[]>();
  const note = (line: Line, how: string) => {
    const key = `${line.experimentId}:${line.evalId}#${line.ordinal}`;
    covered.set(key, [...(covered.get(key) ?? []), how]);
  };
  for (const line of lines) {
    if (line.type === "attempt_start" || line.type === "attempt_end") note(line, line.type);
    if (line.type === "not_dispatched") note(line, "not_dispatched");
    if (line.type === "error" && line.locator === null) note(line, "error");
  }
  const planned = new Map<string, string>();
  let total = 0;
  for (const line of lines.filter((l) => l.type === "eval")) {
    const attempts = line.attempts as { ordinal: number; carried: boolean; verdict: string }[];
    assert.deepEqual(
      attempts.map((a) => a.ordinal),
      Array.from({ length: line.planned as number }, (_, i) => i),
    );
    for (const a of attempts) {
      const key = `${line.experimentId}:${line.evalId}#${a.ordinal}`;
      const how = [...(covered.get(key) ?? []), ...(a.carried ? ["carried"] : [])].join("+");
      assert.ok(
        ["attempt_start+attempt_end", "not_dispatched", "error", "carried"].includes(how),
        `${key} covered by "${how}"`,
      );
      planned.set(key, how);
      total++;
    }
  }
  assert.equal(total, lines[0]!.total);
  assert.equal(covered.size + [...planned.values()].filter((h) => h === "carried").length, total);
  return planned;
}

Deno.test("niceeval exp: a mixed suite stays within the global and experiment caps exits 0", async (t) => {
  await using p = await tempProject("audit_project");
  await t.step("first run executes and skips", async () => {
    const r = await p.run(["exp", "--json", "--max-concurrency", "3"]);
    assert.equal(r.code, 0, r.stderr);
    const lines = ndjson(r.stdout);
    assert.equal(lines.at(-1)!.type, "receipt");
    const replay = auditConcurrency(lines);
    // The first three grants start before any Attempt can end (every reply is delayed).
    assert.equal(replay.peakHeld, 3);
    assert.ok(replay.peakByExperiment.capped! <= 2);
    const coverage = auditCoverage(lines);
    assert.equal(coverage.size, 25);
    assert.equal([...coverage.values()].filter((h) => h === "not_dispatched").length, 2);
  });
  await t.step("second run carries what passed", async () => {
    const r = await p.run(["exp", "--json", "--max-concurrency", "3"]);
    assert.equal(r.code, 0, r.stderr);
    const lines = ndjson(r.stdout);
    auditConcurrency(lines);
    const coverage = auditCoverage(lines);
    assert.equal([...coverage.values()].filter((h) => h === "carried").length, 23);
    assert.equal(lines.filter((l) => l.type === "attempt_start").length, 0);
  });
});

Deno.test("S13 the start event reports the flag's cap and the capped experiments", async () => {
  await using p = await tempProject("audit_project");
  const r = await p.run(["exp", "early", "--json", "--max-concurrency", "7"]);
  assert.equal(r.code, 0, r.stderr);
  const start = ndjson(r.stdout)[0]!;
  assert.equal(start.type, "start");
  assert.equal(start.concurrency, 7);
  assert.equal(start.concurrencySource, "flag");
  assert.equal(start.concurrencyProvider, null);
  assert.deepEqual(start.experimentConcurrency, { early: 1 });
});

for (const value of ["0", "2.5"]) {
  Deno.test(`S8 niceeval exp: --max-concurrency ${value} exits 2`, async () => {
    await using p = await tempProject("audit_project");
    const r = await p.run(["exp", "--json", "--max-concurrency", value]);
    assert.equal(r.code, 2);
    // issue 18.8: with --json the usage error is also one `error` line on stdout.
    assert.deepEqual(
      [JSON.parse(r.stdout).type, JSON.parse(r.stdout).code, r.stdout.split("\n").length],
      ["error", "usage", 2],
    );
    assert.match(r.stderr, /max-concurrency/);
    assert.deepEqual(await readdir(p.stateDir), []);
    await assert.rejects(Deno.stat(join(p.dir, ".niceeval")), Deno.errors.NotFound);
  });
}

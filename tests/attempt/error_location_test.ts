/**
 * Where user code threw: an errored Attempt's error carries the project-relative `file:line:col`
 * of the first user frame and the stack trimmed to user frames, whatever phase threw.
 */
import assert from "node:assert/strict";
import { completeEvidenceCoverage, defineAgent } from "../../src/agents/mod.ts";
import type { AttemptResult } from "../../src/_shared/mod.ts";
import { defineEval } from "../../src/discovery/mod.ts";
import { localSandbox } from "../../src/sandbox/mod.ts";
import { runEval } from "./_run.ts";
import { localRoots, runSandboxEval } from "./_sandbox.ts";

const FILE = "tests/attempt/error_location_test.ts";
const SOURCE_LINES = (await Deno.readTextFile(new URL(import.meta.url))).split("\n");

/** `<FILE>:<line>:<col>` of the source line marked `// throws: <name>`, at `at`'s column. */
function sourceAt(name: string, at: string): string {
  const marker = `// throws: ${name}`;
  const lines = SOURCE_LINES.flatMap((text, i) => text.includes(marker) ? [{ text, i }] : []);
  assert.equal(lines.length, 1, `marker ${marker} appears once`);
  const { text, i } = lines[0]!;
  return `${FILE}:${i + 1}:${text.indexOf(at) + 1}`;
}

/** Checks that the error is located at `location` and that its stack holds user frames only. */
function assertLocated(result: AttemptResult, location: string): void {
  assert.equal(result.verdict, "errored");
  assert.equal(result.error?.location, location);
  const frames = result.error?.stack?.split("\n") ?? [];
  assert.ok(frames.length >= 1 && frames.length <= 10, result.error?.stack ?? "no stack");
  assert.ok(frames[0]!.includes(location), frames[0]);
  for (const frame of frames) {
    assert.match(frame, /^at (?:.+ \()?tests\/attempt\/[^:]+:\d+:\d+\)?$/);
  }
}

Deno.test("createAttemptRunner() records where the test body threw (test-threw)", async () => {
  const result = await runEval(defineEval({
    test() {
      const x: { foo?: { bar(): void } } = {};
      x.foo!.bar(); // throws: body-throw
    },
  }));
  assert.equal(result.error?.code, "test-threw");
  assertLocated(result, sourceAt("body-throw", "bar()"));
  assert.match(result.error?.stack ?? "", /^at (?:Object\.)?test \(/);
});

Deno.test("createAttemptRunner() records where a defineAgent send threw (agent.send)", async () => {
  const agent = defineAgent({
    name: "throwing",
    evidenceCoverage: completeEvidenceCoverage,
    send() {
      throw new Error("cannot reach the model"); // throws: send-throw
    },
  });
  const result = await runEval(defineEval({ test: (t) => t.send("hi").then(() => {}) }), {
    agent,
  });
  assert.equal(result.error?.phase, "agent.send");
  assertLocated(result, sourceAt("send-throw", "new Error"));
});

Deno.test("createAttemptRunner() records where a sandbox setup hook threw (sandbox.setup)", async () => {
  await using roots = await localRoots();
  const template = localSandbox().setup(() => {
    throw new Error("no network"); // throws: setup-throw
  });
  const result = await runSandboxEval(roots, defineEval({ test() {} }), {
    agent: defineAgent({
      name: "idle",
      evidenceCoverage: completeEvidenceCoverage,
      send: () => Promise.resolve({ status: "completed", events: [] }),
    }),
    template,
  });
  assert.equal(result.error?.code, "sandbox-setup-failed");
  assertLocated(result, sourceAt("setup-throw", "new Error"));
});

Deno.test("createAttemptRunner() records no location for a thrown string or plain object", async () => {
  for (const value of ["plain string", { stack: `Error\n    at x (${FILE}:1:1)` }]) {
    const result = await runEval(defineEval({
      test() {
        throw value;
      },
    }));
    assert.equal(result.error?.code, "test-threw");
    assert.equal(result.error?.location, null);
    assert.equal(result.error?.stack, null);
  }
});

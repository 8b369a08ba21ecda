/**
 * `attempt.json` `error.location` and `error.stack` (docs/record_error_location.md): written for
 * every error, read back, and optional on read so that Records written before them stay valid.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { RecordReader } from "../../src/record/mod.ts";
import { writeRun } from "../_fakes/record.ts";
import { result } from "../_fakes/results.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

const T0 = Date.UTC(2026, 10, 29, 10, 0, 0);
const RUN = "5d1c2b7e-8f3a-4c6d-9e0f-1a2b3c4d5e6f";
const ATTEMPT = "0b6f3c1e-2d4a-4e8b-a1c3-7f9e5d2b4a60";
const ERROR = {
  code: "test-threw",
  phase: "test",
  message: "Cannot read properties of undefined (reading 'bar')",
  scope: "attempt" as const,
  location: "evals/throws.eval.ts:4:17",
  stack: "at lookUp (evals/throws.eval.ts:4:17)\nat Object.test (evals/throws.eval.ts:11:5)",
};

async function writeErrored(root: string): Promise<string> {
  await writeRun(root, {
    runId: RUN,
    experimentId: "exp",
    startedAt: T0,
    slots: [{
      evalId: "e1",
      ordinal: 0,
      fill: {
        kind: "executed",
        result: result({ attemptId: ATTEMPT, verdict: "errored", error: ERROR }),
      },
    }],
  });
  return join(root, "runs", RUN, "attempts", ATTEMPT, "attempt.json");
}

Deno.test("RecordWriter writes error.location and error.stack after scope; RecordReader keeps them", () =>
  withTempDir(async (root) => {
    const path = await writeErrored(root);
    const written = JSON.parse(await Deno.readTextFile(path));
    assert.deepEqual(Object.keys(written.error), [
      "code",
      "phase",
      "message",
      "scope",
      "location",
      "stack",
    ]);
    const stored = await new RecordReader(root).attempt(RUN, ATTEMPT);
    assert.deepEqual(stored.doc.error, ERROR);
  }));

Deno.test("RecordReader accepts an attempt.json error written before location and stack existed", () =>
  withTempDir(async (root) => {
    const path = await writeErrored(root);
    const doc = JSON.parse(await Deno.readTextFile(path));
    delete doc.error.location;
    delete doc.error.stack;
    await Deno.writeTextFile(path, JSON.stringify(doc, null, 2) + "\n");
    const stored = await new RecordReader(root).attempt(RUN, ATTEMPT);
    assert.deepEqual(stored.doc.error, {
      code: ERROR.code,
      phase: ERROR.phase,
      message: ERROR.message,
      scope: ERROR.scope,
    });
    assert.equal(stored.verdict, "errored");
  }));

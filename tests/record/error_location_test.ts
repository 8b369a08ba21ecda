/**
 * The attempt document's `error.location` and `error.stack` (docs/record_error_location.md):
 * written for every error in the Attempt's log record, read back, and optional on read so that
 * Records written before them stay valid.
 */
import assert from "node:assert/strict";
import { RecordReader } from "../../src/record/mod.ts";
import { frame, scanLog } from "../../src/record/log.ts";
import { writeRun } from "../_fakes/record.ts";
import { result } from "../_fakes/results.ts";
import { logPathOf, readRunFiles } from "../_helpers/record_files.ts";
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

async function writeErrored(root: string): Promise<void> {
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
}

Deno.test("RecordWriter writes error.location and error.stack after scope; RecordReader keeps them", () =>
  withTempDir(async (root) => {
    await writeErrored(root);
    const written = (await readRunFiles(root, RUN)).attempts.get(ATTEMPT)!.attempt;
    assert.deepEqual(Object.keys(written.error as Record<string, unknown>), [
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

Deno.test("RecordReader accepts an attempt error written before location and stack existed", () =>
  withTempDir(async (root) => {
    await writeErrored(root);
    // The same log with the Attempt's error as older writers wrote it, framed whole again.
    const path = logPathOf(root, RUN);
    const lines = scanLog(await Deno.readFile(path)).entries.map(({ value }) => {
      const error = (value.attempt as { error?: Record<string, unknown> } | undefined)?.error;
      if (error) {
        delete error.location;
        delete error.stack;
      }
      return frame(JSON.stringify(value));
    });
    await Deno.writeFile(path, new Uint8Array(lines.flatMap((line) => [...line])));
    const stored = await new RecordReader(root).attempt(RUN, ATTEMPT);
    assert.deepEqual(stored.doc.error, {
      code: ERROR.code,
      phase: ERROR.phase,
      message: ERROR.message,
      scope: ERROR.scope,
    });
    assert.equal(stored.verdict, "errored");
  }));

/**
 * A hostile Record never makes `show`, `show @<locator>`, `exp --dry` or `exp` read outside the
 * Record root or hang: identifiers in log records are checked before they become paths, symbolic
 * links and FIFOs in place of a Run's files are refused with lstat, a record of another Run is
 * refused, and each is `record-invalid` (exit 2) naming the file.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { frame, scanLog } from "../../src/record/log.ts";
import { logPathOf } from "../_helpers/record_files.ts";
import {
  createRecordBed,
  mkfifo,
  SENTINEL,
  snapshot,
  usageErrorProblem,
} from "../_helpers/fuzz_record.ts";

const bed = await createRecordBed();
const [RUN_1, RUN_2] = bed.runIds as [string, string];
const [ATTEMPT] = bed.attemptIds as [string];

type Json = Record<string, unknown>;

/** Rewrites the log of `runId`: `change` gets and returns its frames (bytes, parsed value). */
async function rewriteLog(
  root: string,
  runId: string,
  change: (frames: { bytes: Uint8Array; value: Json }[]) => Uint8Array[],
): Promise<string> {
  const path = logPathOf(root, runId);
  const bytes = await Deno.readFile(path);
  const frames = scanLog(bytes).entries.map((e) => ({
    bytes: bytes.slice(e.offset, e.offset + e.length),
    value: e.value,
  }));
  const parts = change(frames);
  const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  await Deno.writeFile(path, out);
  return path;
}

async function assertRecordInvalid(args: readonly string[], root: string, names: string) {
  const before = await snapshot(join(root, ".."));
  const r = await bed.run([...args, "--record", root]);
  assert.equal(r.code, 2, r.stderr);
  assert.equal(usageErrorProblem(r.stderr), undefined, r.stderr);
  assert.match(r.stderr, /\[record-invalid\]/);
  assert.ok(r.stderr.includes(names), r.stderr);
  assert.ok(!r.stderr.includes("/outside/") && !(r.stdout + r.stderr).includes(SENTINEL));
  assert.equal(await snapshot(join(root, "..")), before);
}

Deno.test("niceeval show and exp --dry: a member attemptId that climbs out of the root exits 2", async (t) => {
  const c = await bed.newCase();
  // Both Runs: carry planning reads only the source Run, `show --run` the one it names. The
  // records stay whole (a valid checksum): only the identifier check refuses them.
  for (const runId of [RUN_1, RUN_2]) {
    await rewriteLog(c.root, runId, (frames) =>
      frames.map(({ bytes, value }) => {
        const member = value.member as Json | undefined;
        const ref = member?.attempt as Json | null | undefined;
        if (value.record !== "member" || ref?.attemptId !== ATTEMPT) return bytes;
        const attempt = { ...ref, attemptId: "../../../../outside/fifo" };
        return frame(JSON.stringify({ ...value, member: { ...member, attempt } }));
      }));
  }
  for (const args of [["show", "--run", RUN_2], ["exp", "--dry"], ["show", "--json"]]) {
    await t.step(args.join(" "), () => assertRecordInvalid(args, c.root, "/records.log"));
  }
});

Deno.test("niceeval exp --dry: a records.log that is a symbolic link out of the root exits 2", async () => {
  const c = await bed.newCase();
  const log = logPathOf(c.root, RUN_1);
  const moved = join(c.dir, "outside", "moved.log");
  await Deno.rename(log, moved);
  await Deno.symlink(moved, log);
  await assertRecordInvalid(["exp", "--dry"], c.root, log);
});

Deno.test("niceeval show --run: a records.log that is a symbolic link to a sentinel log exits 2", async () => {
  const c = await bed.newCase();
  const log = logPathOf(c.root, RUN_2);
  await Deno.remove(log);
  await Deno.symlink(join(c.outsideFile, "records.log"), log);
  await assertRecordInvalid(["show", "--run", RUN_2], c.root, log);
});

Deno.test("niceeval show @<locator>: a FIFO in place of records.log exits 2 without hanging", async () => {
  const c = await bed.newCase();
  const log = logPathOf(c.root, RUN_1);
  await Deno.remove(log);
  await mkfifo(log);
  await assertRecordInvalid(["show", bed.locators[0]!], c.root, log);
});

Deno.test("niceeval show --run: an Attempt record of another Run in its log exits 2", async (t) => {
  const c = await bed.newCase();
  const attempt = scanLog(await Deno.readFile(logPathOf(c.root, RUN_1))).entries
    .find((e) => e.value.record === "attempt")!;
  const line = (await Deno.readFile(logPathOf(c.root, RUN_1)))
    .slice(attempt.offset, attempt.offset + attempt.length);
  const path = await rewriteLog(c.root, RUN_2, (frames) => [
    ...frames.slice(0, -1).map((f) => f.bytes),
    line,
    frames.at(-1)!.bytes,
  ]);
  // Only a command that reads this Run's log sees it: project-current may pick the other Run.
  for (const args of [["show", "--run", RUN_2], ["show", "--run", RUN_2, "--json"]]) {
    await t.step(args.join(" "), () => assertRecordInvalid(args, c.root, path));
  }
});

Deno.test("niceeval show: a Run directory that is a symbolic link out of the root exits 2", async () => {
  const c = await bed.newCase();
  const link = join(c.root, "runs", "0b9e6f5c-3d2a-4e8f-9a71-2c4d5e6f7a8b");
  await Deno.symlink(c.outsideFile, link);
  await assertRecordInvalid(["show", "--run", RUN_1], c.root, link);
});

Deno.test("niceeval show --run: a run.json naming a RunId that is not a UUID exits 2", async () => {
  const c = await bed.newCase();
  const path = join(c.root, "runs", RUN_1, "run.json");
  const doc = JSON.parse(await Deno.readTextFile(path));
  doc.invocationId = "../../outside";
  await Deno.writeTextFile(path, JSON.stringify(doc));
  await assertRecordInvalid(["show", "--run", RUN_1], c.root, path);
});

Deno.test("record_hostile: removes the temporary project and Records", async () => {
  await bed[Symbol.asyncDispose]();
});

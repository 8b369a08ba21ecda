/**
 * A hostile Record never makes `show`, `show @<locator>`, `exp --dry` or `exp` read outside the
 * Record root or hang: identifiers are checked before they become paths, symbolic links and FIFOs
 * are refused with lstat, and each is `record-invalid` (exit 2) naming the file.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
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

async function memberOf(root: string, runId: string, attemptId: string): Promise<string> {
  const dir = join(root, "runs", runId, "members");
  for await (const e of Deno.readDir(dir)) {
    const doc = JSON.parse(await Deno.readTextFile(join(dir, e.name)));
    if (doc.attempt?.attemptId === attemptId) return join(dir, e.name);
  }
  throw new Error("no member");
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
  // Both Runs: carry planning reads only the source Run, `show --run` the one it names.
  const members = [];
  for (const runId of [RUN_1, RUN_2]) {
    const member = await memberOf(c.root, runId, ATTEMPT);
    const doc = JSON.parse(await Deno.readTextFile(member));
    doc.attempt.attemptId = "../../../../outside/fifo";
    await Deno.writeTextFile(member, JSON.stringify(doc));
    members.push(member);
  }
  for (const args of [["show", "--run", RUN_2], ["exp", "--dry"], ["show", "--json"]]) {
    await t.step(args.join(" "), () => assertRecordInvalid(args, c.root, "/members/"));
  }
});

Deno.test("niceeval exp --dry: an Attempt directory that is a symbolic link out of the root exits 2", async () => {
  const c = await bed.newCase();
  const dir = join(c.root, "runs", RUN_1, "attempts", ATTEMPT);
  const moved = join(c.dir, "outside", "moved");
  await Deno.rename(dir, moved);
  await Deno.symlink(moved, dir);
  await assertRecordInvalid(["exp", "--dry"], c.root, dir);
});

Deno.test("niceeval show @<locator>: a FIFO in place of attempt.json exits 2 without hanging", async () => {
  const c = await bed.newCase();
  const path = join(c.root, "runs", RUN_1, "attempts", ATTEMPT, "attempt.json");
  await Deno.remove(path);
  await mkfifo(path);
  await assertRecordInvalid(["show", bed.locators[0]!], c.root, path);
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

/** `src/coordination/teardown_registry.ts`: ORPH-1 write, flock and removal (S63, S74). */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  registerTeardown,
  type RegisterTeardownOptions,
  teardownsDirOf,
  tryAcquireLock,
} from "../../src/coordination/mod.ts";
import { sha256Hex } from "../../src/_shared/mod.ts";
import { createFakeClock } from "../_fakes/clock.ts";
import { identity, names, tempProject } from "./_helpers.ts";

function registration(root: string, extra: Partial<RegisterTeardownOptions> = {}) {
  return {
    projectRoot: root,
    experimentId: "exp/one",
    selectedEvalIds: ["a/x", "b/y"],
    invocationId: "inv-1",
    identity: identity(),
    clock: createFakeClock(),
    ...extra,
  };
}

Deno.test("S63 registerTeardown() writes the registration, keeps its flock, and remove() deletes it then frees", async () => {
  await using project = await tempProject();
  const result = await registerTeardown(registration(project.root));
  assert.ok(result.ok);
  const dir = teardownsDirOf(project.root);
  const name = `${sha256Hex("exp/one").slice(0, 16)}-inv-1.json`;
  assert.equal(result.held.path, join(dir, name));
  assert.deepEqual(await names(dir), [name], "no temporary file is left");
  assert.deepEqual(JSON.parse(await Deno.readTextFile(result.held.path)), {
    schema: "niceeval.teardown-registration/v1",
    experimentId: "exp/one",
    selectedEvalIds: ["a/x", "b/y"],
    invocationId: "inv-1",
    host: "host-a",
    pid: 4242,
    processStartedAt: "2026-11-29T09:00:00Z",
    startedAt: "2026-11-29T10:00:00.000Z",
  });
  assert.equal(
    await tryAcquireLock(result.held.path, { create: false }),
    null,
    "the registration's flock is held while setup and the run go on",
  );
  assert.deepEqual(await result.held.remove(), { ok: true });
  assert.deepEqual(await result.held.remove(), { ok: true }, "idempotent");
  assert.deepEqual(await names(dir), []);
});

Deno.test("HeldRegistration.abandon() keeps the file and frees its flock; a later remove() touches nothing", async () => {
  await using project = await tempProject();
  const result = await registerTeardown(registration(project.root));
  assert.ok(result.ok);
  result.held.abandon();
  const lock = await tryAcquireLock(result.held.path, { create: false });
  assert.ok(lock, "the flock is free");
  lock.release();
  assert.equal((await result.held.remove()).ok, false);
  assert.equal((await names(teardownsDirOf(project.root))).length, 1);
});

Deno.test("S74 registerTeardown() returns a failure value when the teardowns directory is unwritable", async () => {
  await using project = await tempProject();
  const dir = teardownsDirOf(project.root);
  await Deno.mkdir(join(dir, ".."), { recursive: true });
  await Deno.writeTextFile(dir, "not a directory");
  const result = await registerTeardown(registration(project.root));
  assert.equal(result.ok, false);
  assert.match(
    !result.ok ? result.message : "",
    /^Cannot write the teardown registration of "exp\/one": /,
  );
  assert.equal(await Deno.readTextFile(dir), "not a directory");
});

Deno.test("HeldRegistration.remove() reports a failure and still frees the flock", async () => {
  await using project = await tempProject();
  const result = await registerTeardown(registration(project.root));
  assert.ok(result.ok);
  const moved = `${result.held.path}.elsewhere`;
  await Deno.rename(result.held.path, moved);
  const outcome = await result.held.remove();
  assert.equal(outcome.ok, false);
  const lock = await tryAcquireLock(moved, { create: false });
  assert.ok(lock, "the flock was dropped although the delete failed");
  lock.release();
});

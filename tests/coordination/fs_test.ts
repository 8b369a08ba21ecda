/** Durable small-file helpers of the coordination domain. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { createFileExclusive } from "../../src/coordination/_fs.ts";

async function inTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "niceeval-coord-fs-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("createFileExclusive() publishes the complete file by link and leaves no temporary file", async () => {
  await inTempDir(async (dir) => {
    const path = join(dir, "owner-0000000001.json");
    await createFileExclusive(path, '{"a":1}\n');
    assert.equal(await Deno.readTextFile(path), '{"a":1}\n');
    assert.deepEqual((await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name), [
      "owner-0000000001.json",
    ]);
    // The published name is a link of the written file, so it is never seen empty or partial.
    assert.equal((await Deno.stat(path)).nlink, 1);
  });
});

Deno.test("createFileExclusive() fails with AlreadyExists and keeps the existing file", async () => {
  await inTempDir(async (dir) => {
    const path = join(dir, "key");
    await createFileExclusive(path, "first\n");
    await assert.rejects(() => createFileExclusive(path, "second\n"), Deno.errors.AlreadyExists);
    assert.equal(await Deno.readTextFile(path), "first\n");
    assert.deepEqual((await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name), ["key"]);
  });
});

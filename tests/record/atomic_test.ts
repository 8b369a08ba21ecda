import assert from "node:assert/strict";
import { join } from "node:path";
import { createExclusive, isTempName, writeJsonAtomic } from "../../src/record/mod.ts";
import { createSeededRandom } from "../_fakes/random.ts";

Deno.test("writeJsonAtomic() writes 2-space JSON with a trailing newline and leaves no temp file", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await writeJsonAtomic(join(dir, "a.json"), { b: [1, 2] }, createSeededRandom(1));
    assert.equal(
      await Deno.readTextFile(join(dir, "a.json")),
      '{\n  "b": [\n    1,\n    2\n  ]\n}\n',
    );
    await writeJsonAtomic(join(dir, "a.json"), { b: 3 }, createSeededRandom(2));
    assert.equal(await Deno.readTextFile(join(dir, "a.json")), '{\n  "b": 3\n}\n');
    const names = [];
    for await (const e of Deno.readDir(dir)) names.push(e.name);
    assert.deepEqual(names, ["a.json"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("writeJsonAtomic() never leaves a half-written target when the directory is missing", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await assert.rejects(
      writeJsonAtomic(join(dir, "missing", "a.json"), {}, createSeededRandom(1)),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("createExclusive() refuses to replace an existing file", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await createExclusive(join(dir, "complete"));
    assert.equal((await Deno.stat(join(dir, "complete"))).size, 0);
    await assert.rejects(createExclusive(join(dir, "complete")), Deno.errors.AlreadyExists);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("isTempName() recognises the atomic-write temp names only", () => {
  assert.equal(isTempName(".run.json.tmp-0a1b2c3d"), true);
  assert.equal(isTempName("run.json"), false);
  assert.equal(isTempName(".run.json.tmp-xyz"), false);
});

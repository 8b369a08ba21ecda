import assert from "node:assert/strict";
import { basename, join } from "node:path";
import { createExclusive, isTempName, writeTextAtomic } from "../../src/record/mod.ts";
import { DirectorySyncer, writeFilesAtomic, writeJsonAtomic } from "../../src/record/atomic.ts";
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
    // Neither the target nor a temporary file survives anywhere: the missing directory was not
    // created on the way, and nothing was written beside it instead.
    await assert.rejects(Deno.lstat(join(dir, "missing", "a.json")), Deno.errors.NotFound);
    assert.deepEqual(await Array.fromAsync(Deno.readDir(dir)), []);
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

async function names(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) out.push(e.name);
  return out.sort();
}

/** A DirectorySyncer whose fsyncs finish only when the test says so. */
function manualSyncer() {
  const calls: { dir: string; done: PromiseWithResolvers<void> }[] = [];
  const syncer = new DirectorySyncer((dir) => {
    const done = Promise.withResolvers<void>();
    calls.push({ dir, done });
    return done.promise;
  });
  return { syncer, calls };
}

async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

Deno.test("DirectorySyncer never resolves a request with an fsync that started before it", async () => {
  const { syncer, calls } = manualSyncer();
  let firstDone = false;
  let secondDone = false;
  const first = syncer.sync("/d").then(() => firstDone = true);
  await settle();
  const second = syncer.sync("/d").then(() => secondDone = true);
  assert.equal(calls.length, 1);
  calls[0]!.done.resolve();
  await first;
  await settle();
  // The second request arrived while the first fsync ran: it needs one of its own.
  assert.deepEqual([firstDone, secondDone], [true, false]);
  assert.equal(calls.length, 2);
  calls[1]!.done.resolve();
  await second;
  assert.equal(syncer.count, 2);
});

Deno.test("DirectorySyncer shares one queued fsync among requests that arrive during a running one", async () => {
  const { syncer, calls } = manualSyncer();
  const first = syncer.sync("/d");
  const waiting = [syncer.sync("/d"), syncer.sync("/d"), syncer.sync("/d")];
  const other = syncer.sync("/e");
  await settle();
  assert.deepEqual(calls.map((c) => c.dir), ["/d", "/e"]);
  calls[0]!.done.resolve();
  calls[1]!.done.resolve();
  await first;
  await other;
  await settle();
  assert.deepEqual(calls.map((c) => c.dir), ["/d", "/e", "/d"]);
  calls[2]!.done.resolve();
  await Promise.all(waiting);
  assert.equal(syncer.count, 3);
});

Deno.test("DirectorySyncer passes an fsync failure to every request it covers, then recovers", async () => {
  let fail = true;
  const syncer = new DirectorySyncer(() =>
    fail ? Promise.reject(new Error("EIO")) : Promise.resolve()
  );
  await assert.rejects(syncer.sync("/d"), /EIO/);
  fail = false;
  await syncer.sync("/d");
});

Deno.test("writeFilesAtomic() fsyncs the directory once, after every rename", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const synced: string[][] = [];
    const syncer = new DirectorySyncer(async (d) => {
      synced.push(await names(d));
    });
    await Deno.writeTextFile(join(dir, "c.json"), "old\n");
    await writeFilesAtomic(
      dir,
      [
        { name: "a.json", text: "A\n" },
        { name: "b.json", text: "B\n" },
        { name: "c.json", text: "C\n" },
      ],
      { random: createSeededRandom(3), syncer },
    );
    assert.deepEqual(synced, [["a.json", "b.json", "c.json"]]);
    assert.deepEqual(
      await Promise.all(["a", "b", "c"].map((n) => Deno.readTextFile(join(dir, `${n}.json`)))),
      ["A\n", "B\n", "C\n"],
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("writeFilesAtomic() stops at the first failed rename and removes the temporary files left", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // A directory where a temporary file's target is: its rename fails after the first rename.
    await Deno.mkdir(join(dir, "b.json", "inside"), { recursive: true });
    await assert.rejects(
      writeFilesAtomic(dir, [
        { name: "a.json", text: "A\n" },
        { name: "b.json", text: "B\n" },
        { name: "c.json", text: "C\n" },
      ], { random: createSeededRandom(4) }),
    );
    // a.json was renamed before the failure (renames happen in order); c.json never was.
    assert.deepEqual(await names(dir), ["a.json", "b.json"]);
    await assert.rejects(
      writeFilesAtomic(
        join(dir, "missing"),
        [{ name: "x.json", text: "X" }],
        { random: createSeededRandom(5) },
      ),
      Deno.errors.NotFound,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("writeFilesAtomic() fsyncs every complete temporary file before its rename", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const steps: string[] = [];
    await writeFilesAtomic(dir, [
      { name: "a.json", text: "A\n" },
      { name: "b.json", text: "B\n" },
    ], {
      random: createSeededRandom(6),
      syncFile: async (file, path) => {
        // The whole text is written by the time the file is fsynced.
        steps.push(`sync ${basename(path)} ${await Deno.readTextFile(path)}`);
        await file.sync();
      },
      beforeRename: (target) => {
        steps.push(`rename ${basename(target)}`);
        return Promise.resolve();
      },
    });
    // The temporary files are written and fsynced in parallel, so only the renames are ordered.
    const renames = steps.indexOf("rename a.json");
    assert.deepEqual(steps.slice(renames), ["rename a.json", "rename b.json"]);
    assert.deepEqual(
      steps.slice(0, renames).map((s) => s.replace(/tmp-[0-9a-f]{8}/, "tmp-*")).sort(),
      ["sync .a.json.tmp-* A\n", "sync .b.json.tmp-* B\n"],
    );
    assert.deepEqual(await names(dir), ["a.json", "b.json"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("writeTextAtomic() fsyncs its temporary file before the rename", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const steps: string[] = [];
    await writeTextAtomic(join(dir, "report.xml"), "<x/>\n", createSeededRandom(7), {
      syncFile: (file, path) => {
        steps.push(isTempName(basename(path)) ? "sync temporary file" : `sync ${path}`);
        return file.sync();
      },
      beforeRename: () => {
        steps.push("rename");
        return Promise.resolve();
      },
    });
    assert.deepEqual(steps, ["sync temporary file", "rename"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** `src/cli/path_flags.ts`: `--record` and `--junit` paths are checked before anything runs. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { UsageError } from "../../src/_shared/mod.ts";
import { assertReplaceable, checkRecordRoot, junitTarget } from "../../src/cli/path_flags.ts";
import { writeTextAtomic } from "../../src/record/mod.ts";
import { createSeededRandom } from "../_fakes/random.ts";
import { makeFifo } from "../_helpers/fuzz.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

async function usage(promise: Promise<unknown>): Promise<UsageError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof UsageError, `expected a UsageError, got ${error}`);
    assert.equal(error.code, "usage");
    assert.ok(!error.message.includes("\n"), error.message);
    return error;
  }
  assert.fail("expected a UsageError");
}

/** A sentinel tree: a regular file, a named pipe, a directory, a dangling link. */
async function sentinels(dir: string) {
  const paths = {
    file: join(dir, "file"),
    fifo: join(dir, "fifo"),
    dir: join(dir, "dir"),
    dangling: join(dir, "dangling"),
  };
  await Deno.writeTextFile(paths.file, "keep\n");
  await makeFifo(paths.fifo);
  await Deno.mkdir(paths.dir);
  await Deno.symlink(join(dir, "nothing"), paths.dangling);
  return paths;
}

Deno.test("checkRecordRoot() accepts a directory and a missing path", () =>
  withTempDir(async (dir) => {
    await checkRecordRoot(dir, "x");
    await checkRecordRoot(join(dir, "a", "b", "c"));
  }));

Deno.test("checkRecordRoot() rejects a regular file, a named pipe and a dangling link as the root", () =>
  withTempDir(async (dir) => {
    const p = await sentinels(dir);
    assert.equal(
      (await usage(checkRecordRoot(p.file, "file"))).message,
      '--record "file" must be a directory, got a file',
    );
    assert.equal(
      (await usage(checkRecordRoot(p.fifo, "fifo"))).message,
      '--record "fifo" must be a directory, got a special file',
    );
    assert.equal(
      (await usage(checkRecordRoot(p.dangling, "dangling"))).message,
      '--record "dangling" must be a directory, got a symbolic link to nothing',
    );
    assert.equal(
      (await usage(checkRecordRoot(p.file))).message,
      `record root ${JSON.stringify(p.file)} must be a directory, got a file`,
    );
  }));

Deno.test("checkRecordRoot() rejects a path below a file and a path too long for the system", () =>
  withTempDir(async (dir) => {
    const p = await sentinels(dir);
    assert.equal(
      (await usage(checkRecordRoot(join(p.file, "x"), "file/x"))).message,
      '--record "file/x" cannot be a Record root: a parent is not a directory',
    );
    const long = "ab/".repeat(1700);
    const e = await usage(checkRecordRoot(join(dir, long), long));
    assert.match(
      e.message,
      /^--record "(ab\/)+a?b?…" cannot be a Record root: File name too long$/,
    );
  }));

Deno.test("junitTarget() accepts a missing file in an existing directory and a regular file", () =>
  withTempDir(async (dir) => {
    const p = await sentinels(dir);
    assert.equal(await junitTarget(dir, "new.xml"), join(dir, "new.xml"));
    await Deno.mkdir(join(dir, "out"));
    assert.equal(await junitTarget(dir, "out/j.xml"), join(dir, "out", "j.xml"));
    assert.equal(await junitTarget(dir, "file"), await Deno.realPath(p.file));
  }));

Deno.test("junitTarget() follows a link to a regular file, so the link stays", () =>
  withTempDir(async (dir) => {
    const p = await sentinels(dir);
    await Deno.symlink(p.file, join(dir, "link.xml"));
    assert.equal(await junitTarget(dir, "link.xml"), await Deno.realPath(p.file));
  }));

Deno.test("junitTarget() rejects a directory, a named pipe, a dangling link, a file as parent and a missing directory", () =>
  withTempDir(async (dir) => {
    await sentinels(dir);
    const cases: [string, string][] = [
      ["dir", "it is a directory"],
      ["fifo", "it is a special file"],
      ["dangling", "it is a symbolic link to nothing"],
      ["file/j.xml", "a parent is not a directory"],
      ["file/a/j.xml", "a parent is not a directory"],
      ["missing/j.xml", "its directory does not exist"],
      ["missing/deeper/j.xml", "its directory does not exist"],
      ["x".repeat(300), "File name too long"],
    ];
    for (const [path, reason] of cases) {
      const e = await usage(junitTarget(dir, path));
      assert.equal(e.message.endsWith(`cannot be written: ${reason}`), true, e.message);
    }
  }));

Deno.test("assertReplaceable() stops an atomic write from replacing anything but a regular file", () =>
  withTempDir(async (dir) => {
    const p = await sentinels(dir);
    const random = createSeededRandom();
    for (const target of [p.fifo, p.dir, p.dangling]) {
      await assert.rejects(
        writeTextAtomic(target, "<xml/>", random, { beforeRename: assertReplaceable }),
        /it is not a regular file/,
      );
    }
    assert.ok((await Deno.lstat(p.fifo)).isFifo, "the pipe is still a pipe");
    assert.ok((await Deno.lstat(p.dangling)).isSymlink, "the link is still a link");
    assert.deepEqual(
      (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name).sort(),
      ["dangling", "dir", "fifo", "file"],
      "no temporary file is left behind",
    );
    await writeTextAtomic(p.file, "<xml/>", random, { beforeRename: assertReplaceable });
    assert.equal(await Deno.readTextFile(p.file), "<xml/>");
  }));

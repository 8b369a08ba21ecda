/** `src/coordination/root_lock.ts`: the Record-root lock in an unusable state directory (LOCK-2). */
import assert from "node:assert/strict";
import { join } from "node:path";
import { UsageError } from "../../src/_shared/mod.ts";
import { lockRecordRoot } from "../../src/coordination/mod.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

const OWNER = { pid: 1, hostname: "h", startedAt: "t" };

async function stateDirError(root: string, stateDir: string): Promise<UsageError> {
  try {
    (await lockRecordRoot(root, stateDir, OWNER)).release();
  } catch (error) {
    assert.ok(error instanceof UsageError, `expected a UsageError, got ${error}`);
    return error;
  }
  assert.fail("expected lockRecordRoot() to fail");
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

Deno.test("lockRecordRoot() fails with state-dir-unwritable naming the directory when a part of it is a file", () =>
  withTempDir(async (dir) => {
    // A file as a path component stops every user, root included.
    await Deno.writeTextFile(join(dir, "file"), "");
    const stateDir = join(dir, "file", "state");
    const root = join(dir, "record");
    const error = await stateDirError(root, stateDir);
    assert.equal(error.code, "state-dir-unwritable");
    assert.equal(
      error.message,
      `Cannot write the state directory ${JSON.stringify(stateDir)}: Not a directory`,
    );
    assert.equal(error.hint, "make it writable, or set NICEEVAL_STATE_DIR to a writable directory");
    assert.equal(await exists(root), false, "the Record root is not created");
  }));

Deno.test("lockRecordRoot() fails with state-dir-unwritable when its roots directory is a file", () =>
  withTempDir(async (dir) => {
    const stateDir = join(dir, "state");
    await Deno.mkdir(stateDir);
    await Deno.writeTextFile(join(stateDir, "roots"), "");
    const error = await stateDirError(join(dir, "record"), stateDir);
    assert.equal(error.code, "state-dir-unwritable");
    assert.match(error.message, /^Cannot write the state directory ".*\/state": /);
  }));

Deno.test({
  name: "lockRecordRoot() fails with state-dir-unwritable in a read-only state directory",
  // Permissions do not stop root; the file-component tests above cover that user.
  ignore: Deno.uid() === 0,
  fn: () =>
    withTempDir(async (dir) => {
      const stateDir = join(dir, "state");
      await Deno.mkdir(stateDir);
      await Deno.chmod(stateDir, 0o500);
      try {
        const error = await stateDirError(join(dir, "record"), stateDir);
        assert.equal(error.code, "state-dir-unwritable");
        assert.match(error.message, /Permission denied$/);
      } finally {
        await Deno.chmod(stateDir, 0o700);
      }
    }),
});

Deno.test("lockRecordRoot() fails with record-root-unwritable when the root cannot be created", () =>
  withTempDir(async (dir) => {
    // A dangling link as a parent: stat calls the root missing, but mkdir cannot make it.
    await Deno.symlink(join(dir, "nowhere"), join(dir, "dangling"));
    const root = join(dir, "dangling", "record");
    const error = await stateDirError(root, join(dir, "state"));
    assert.equal(error.code, "record-root-unwritable");
    assert.match(error.message, /^Cannot create the Record root ".*\/dangling\/record": /);
    assert.equal(await exists(join(dir, "nowhere")), false, "nothing is created through the link");
  }));

/** Facade paths and timeout binding (sandboxes.md rules 25–28, 32), on fake time. */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  commandTimeout,
  createIgnoreMatcher,
  hasSandboxCode,
  hostPath,
  sandboxPath,
} from "../../src/sandbox/mod.ts";
import { facadeBed, utf8 } from "./_facade.ts";

Deno.test("sandboxPath() normalizes absolute paths and joins relative ones to the workdir", () => {
  assert.equal(sandboxPath("/workspace", "/etc/../tmp//x/"), "/tmp/x");
  assert.equal(sandboxPath("/workspace", "src/../lib/a.ts"), "/workspace/lib/a.ts");
  assert.equal(sandboxPath("/workspace", "."), "/workspace");
  assert.equal(sandboxPath("/workspace", "../up"), "/up");
  for (const bad of ["", "a\0b"]) {
    assert.throws(
      () => sandboxPath("/workspace", bad),
      (e) => hasSandboxCode(e, "sandbox-path-invalid"),
    );
  }
});

Deno.test("hostPath() resolves relative host paths against the declaring directory, not the cwd", () => {
  assert.equal(hostPath("/project/evals", "fixtures/a.txt"), "/project/evals/fixtures/a.txt");
  assert.equal(hostPath("/project/evals", "/abs/b"), "/abs/b");
  assert.equal(hostPath("/project/evals", new URL("file:///u/c.txt")), "/u/c.txt");
  assert.equal(hostPath("/project/evals", "file:///u/d.txt"), "/u/d.txt");
  assert.throws(
    () => hostPath("/p", new URL("https://x/y")),
    (e) => hasSandboxCode(e, "sandbox-path-invalid"),
  );
});

Deno.test("facade file operations resolve relative sandbox paths against the workdir", async () => {
  const { sb, handle } = await facadeBed();
  await sb.writeText("notes/../out.txt", "hi");
  assert.deepEqual([...handle.files.keys()], ["/workspace/out.txt"]);
  assert.equal(await sb.readText("/workspace/out.txt"), "hi");
  assert.equal(await sb.pathExists("out.txt"), true);
  await assert.rejects(() => sb.readText(""), (e) => hasSandboxCode(e, "sandbox-path-invalid"));
});

Deno.test("commandTimeout() is explicit, else the remaining deadline (at least 1 ms), else none", () => {
  const at = (deadlineAt: number | undefined, now: number) => ({ deadlineAt, now });
  assert.deepEqual(commandTimeout(500, at(10_000, 0)), { timeoutMs: 500, explicit: true });
  assert.deepEqual(commandTimeout(undefined, at(10_000, 4_000)), {
    timeoutMs: 6_000,
    explicit: false,
  });
  assert.deepEqual(commandTimeout(undefined, at(10_000, 12_000)), {
    timeoutMs: 1,
    explicit: false,
  });
  assert.deepEqual(commandTimeout(undefined, at(undefined, 0)), { explicit: false });
});

Deno.test("runCommand() binds each call to the Attempt deadline as time passes", async () => {
  let deadline: number | undefined;
  const { sb, handle, clock, evidence } = await facadeBed({
    facade: { deadlineAt: () => deadline },
  });
  deadline = clock.now() + 60_000;
  await sb.runCommand("true");
  await clock.tickAsync(45_000);
  await sb.runShell("true");
  await sb.runCommand("true", [], { timeoutMs: 120_000 });
  assert.deepEqual(handle.execs.map((e) => e.options.timeoutMs), [60_000, 15_000, 120_000]);
  assert.deepEqual(evidence.map((e) => e.explicitTimeout), [false, false, true]);
  deadline = undefined;
  await sb.runCommand("true");
  assert.equal(handle.execs[3]!.options.timeoutMs, undefined);
});

Deno.test("runCommand() aborts the command when either the Attempt or the call signal aborts", async () => {
  const { sb, handle, attempt } = await facadeBed();
  const call = new AbortController();
  await sb.runCommand("true", [], { signal: call.signal });
  await sb.runCommand("true");
  const [withCall, plain] = handle.execs.map((e) => e.options.signal!);
  call.abort();
  assert.equal(withCall!.aborted, true);
  assert.equal(plain!.aborted, false);
  attempt.abort();
  assert.equal(plain!.aborted, true);
});

Deno.test("uploadDirectory() honours ignore globs and never follows symlinks out of the directory", async () => {
  const host = await Deno.makeTempDir();
  try {
    const dir = join(host, "project");
    await Deno.mkdir(join(dir, "node_modules", "x"), { recursive: true });
    await Deno.mkdir(join(dir, "src"), { recursive: true });
    await Deno.writeTextFile(join(dir, "src", "a.ts"), "a");
    await Deno.writeTextFile(join(dir, "src", "a.log"), "log");
    await Deno.writeTextFile(join(dir, "node_modules", "x", "i.js"), "x");
    await Deno.writeTextFile(join(host, "secret.txt"), "secret");
    await Deno.symlink(join(host, "secret.txt"), join(dir, "escape.txt"));
    await Deno.symlink(join(dir, "src", "a.ts"), join(dir, "inside.ts"));
    const { sb, handle } = await facadeBed({ facade: { hostDir: host } });
    await sb.uploadDirectory("project", "up", { ignore: ["node_modules/", "*.log"] });
    assert.deepEqual([...handle.files.keys()].sort(), [
      "/workspace/up/inside.ts",
      "/workspace/up/src/a.ts",
    ]);
  } finally {
    await Deno.remove(host, { recursive: true });
  }
});

Deno.test("downloadDirectory() and downloadFile() create host parents and overwrite files", async () => {
  const host = await Deno.makeTempDir();
  try {
    const { sb, handle } = await facadeBed({
      facade: { hostDir: host },
      provider: {
        exec: (command) => ({
          stdout: "argv" in command && command.argv[0] === "find"
            ? utf8("./a.txt\0./deep/b.txt\0./skip/c.txt\0")
            : new Uint8Array(),
        }),
      },
    });
    for (const p of ["out/a.txt", "out/deep/b.txt", "out/skip/c.txt"]) {
      handle.files.set(`/workspace/${p}`, utf8(p));
    }
    await Deno.writeTextFile(join(host, "a.txt"), "old");
    await sb.downloadFile("out/a.txt", "a.txt");
    await sb.downloadDirectory("out", "copy", { ignore: ["skip"] });
    assert.equal(await Deno.readTextFile(join(host, "a.txt")), "out/a.txt");
    assert.equal(await Deno.readTextFile(join(host, "copy", "deep", "b.txt")), "out/deep/b.txt");
    assert.equal(await Deno.stat(join(host, "copy", "skip")).then(() => true, () => false), false);
    assert.equal(handle.execs[0]!.options.cwd, "/workspace/out");
  } finally {
    await Deno.remove(host, { recursive: true });
  }
});

Deno.test("createIgnoreMatcher() follows gitignore rules for anchors, directories and negation", () => {
  const m = createIgnoreMatcher([
    "*.log",
    "/build",
    "docs/**/draft.md",
    "cache/",
    "!keep.log",
    "# comment",
  ]);
  assert.equal(m("a/b/x.log", false), true);
  assert.equal(m("keep.log", false), false);
  assert.equal(m("build", true), true);
  assert.equal(m("src/build", true), false);
  assert.equal(m("docs/draft.md", false), true);
  assert.equal(m("docs/a/b/draft.md", false), true);
  assert.equal(m("cache", true), true);
  assert.equal(m("cache", false), false);
});

/** The local provider's files, stop and layout, fully real (sandboxes.md §9.2, rules 17–19, 99–102). */
import assert from "node:assert/strict";
import { join } from "node:path";
import { hasSandboxCode } from "../../src/sandbox/mod.ts";
import {
  HANG_MS,
  killQuietly,
  localTestBed,
  pollUntil,
  processDead,
  testOwner,
  text,
} from "./_local.ts";

const bytes = (s: string) => new TextEncoder().encode(s);

Deno.test("create() lays out work/, home/, tmp/, ledger/ and owner.json in a fresh root", async () => {
  await using bed = await localTestBed();
  const sb = await bed.create({ owner: { runId: "run-layout" } });
  const root = join(sb.workdir, "..");
  const names = [];
  for await (const e of Deno.readDir(root)) names.push(e.name);
  assert.deepEqual(names.sort(), ["home", "ledger", "owner.json", "tmp", "work"]);
  const owner = JSON.parse(await Deno.readTextFile(join(root, "owner.json")));
  assert.deepEqual(owner, testOwner({ runId: "run-layout" }));
  assert.equal(sb.id, root.split("/").at(-1));
  assert.match(sb.id, new RegExp(`^niceeval-local-${Deno.pid}-`));
  assert.deepEqual(await Array.fromAsync(Deno.readDir(sb.workdir)), []);
});

Deno.test("writeFile() creates parents with mode 0o644 and readFile() reads it back", async () => {
  await using bed = await localTestBed();
  const sb = await bed.create();
  await sb.writeFile("a/b/c.txt", bytes("hello"));
  assert.equal(text(await sb.readFile(join(sb.workdir, "a/b/c.txt"))), "hello");
  assert.equal((await Deno.stat(join(sb.workdir, "a/b/c.txt"))).mode! & 0o777, 0o644);
  await sb.writeFile("run.sh", bytes("#!/bin/sh\n"), { mode: 0o755 });
  assert.equal((await Deno.stat(join(sb.workdir, "run.sh"))).mode! & 0o777, 0o755);
  assert.equal(await sb.exists("a/b"), true);
  assert.equal(await sb.exists("nope"), false);
});

Deno.test("readFile() rejects a missing path and a directory with their own codes", async () => {
  await using bed = await localTestBed();
  const sb = await bed.create();
  await Deno.mkdir(join(sb.workdir, "dir"));
  const missing = await sb.readFile("missing.txt").then(() => 0, (e) => e);
  assert.ok(hasSandboxCode(missing, "sandbox-file-not-found"), String(missing));
  const dir = await sb.readFile("dir").then(() => 0, (e) => e);
  assert.ok(hasSandboxCode(dir, "sandbox-path-invalid"), String(dir));
});

Deno.test("file operations reject ../ and symlink escapes from the root", async () => {
  await using bed = await localTestBed();
  const sb = await bed.create();
  const outside = join(bed.tmpDir, "outside");
  await Deno.mkdir(outside);
  await Deno.writeTextFile(join(outside, "secret.txt"), "secret");
  await Deno.symlink(outside, join(sb.workdir, "link"));
  await Deno.symlink(join(outside, "new.txt"), join(sb.workdir, "dangling"));
  const attempts: (() => Promise<unknown>)[] = [
    () => sb.readFile("../../outside/secret.txt"),
    () => sb.readFile("link/secret.txt"),
    () => sb.writeFile("link/new.txt", bytes("x")),
    () => sb.writeFile("dangling", bytes("x")),
    () => sb.writeFile("../../outside/new.txt", bytes("x")),
    () => sb.exists("link/secret.txt"),
  ];
  for (const [i, attempt] of attempts.entries()) {
    const error = await attempt().then(() => undefined, (e) => e);
    assert.ok(hasSandboxCode(error, "sandbox-path-invalid"), `attempt ${i}: ${error}`);
  }
  const left = [];
  for await (const e of Deno.readDir(outside)) left.push(e.name);
  assert.deepEqual(left, ["secret.txt"]);
  // Paths inside the root but outside work/ stay allowed (rule 102 checks the root).
  await sb.writeFile("../home/.profile", bytes("ok"));
  assert.equal(text(await sb.readFile("../home/.profile")), "ok");
});

Deno.test("stop() is idempotent, kills background groups and removes the root", async () => {
  await using bed = await localTestBed();
  const sb = await bed.create();
  const root = join(sb.workdir, "..");
  const r = await sb.exec({ script: "sleep 3600 > /dev/null 2>&1 & echo $!" });
  const background = Number(text(r.stdout).trim());
  try {
    assert.ok(background > 0);
    assert.equal(await processDead(background), false);
    const pgids = await Deno.readTextFile(join(root, "pgids"));
    assert.equal(pgids.trim().split("\n").length, 1);
    await sb.stop();
    assert.ok(await pollUntil(() => processDead(background), HANG_MS), "background still alive");
    assert.equal(await Deno.stat(root).then(() => true, () => false), false);
    const after = await Array.fromAsync(Deno.readDir(bed.tmpDir), (e) => e.name);
    // A second stop is a no-op: it resolves and leaves exactly the state of the first.
    await sb.stop();
    assert.equal(await Deno.stat(root).then(() => true, () => false), false);
    assert.deepEqual(await Array.fromAsync(Deno.readDir(bed.tmpDir), (e) => e.name), after);
    const later = await sb.exec({ argv: ["true"] }).then(() => 0, (e) => e);
    assert.ok(hasSandboxCode(later, "sandbox-retired"), String(later));
    const read = await sb.readFile("x").then(() => 0, (e) => e);
    assert.ok(hasSandboxCode(read, "sandbox-retired"), String(read));
  } finally {
    killQuietly(background);
  }
});

Deno.test("stop() still kills the recorded groups and retires the handle when the root is already gone", async () => {
  await using bed = await localTestBed();
  const sb = await bed.create();
  const root = join(sb.workdir, "..");
  const r = await sb.exec({ script: "sleep 3600 > /dev/null 2>&1 & echo $!" });
  const background = Number(text(r.stdout).trim());
  try {
    assert.ok(background > 0);
    assert.equal(await processDead(background), false);
    // The pgids file goes with the root: stop() must rely on the groups the handle remembers.
    await Deno.remove(root, { recursive: true });
    await sb.stop();
    assert.ok(await pollUntil(() => processDead(background), HANG_MS), "background still alive");
    assert.equal(await Deno.stat(root).then(() => true, () => false), false, "root recreated");
    const later = await sb.exec({ argv: ["true"] }).then(() => 0, (e) => e);
    assert.ok(hasSandboxCode(later, "sandbox-retired"), String(later));
  } finally {
    killQuietly(background);
  }
});

Deno.test("stop() removes read-only directories an agent left behind", async () => {
  await using bed = await localTestBed();
  const sb = await bed.create();
  const r = await sb.exec({ script: "mkdir -p ro/sub && touch ro/sub/f && chmod 555 ro/sub ro" });
  assert.equal(r.exitCode, 0);
  await sb.stop();
  assert.equal(await Deno.stat(join(sb.workdir, "..")).then(() => true, () => false), false);
});

/** The workdir ledger on a real local sandbox with host git (sandboxes.md rules 82–87). */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  anchorLedger,
  baselineLedger,
  hasSandboxCode,
  LEDGER_ANCHOR_TAG,
  ledgerGitArgv,
  resetLedger,
} from "../../src/sandbox/mod.ts";
import { localTestBed } from "./_local.ts";

const signal = new AbortController().signal;

async function write(root: string, files: Record<string, string>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await Deno.mkdir(join(root, path, ".."), { recursive: true });
    await Deno.writeTextFile(join(root, path), content);
  }
}

async function listFiles(dir: string, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    const rel = prefix + e.name;
    if (e.isDirectory) out.push(...await listFiles(join(dir, e.name), rel + "/"));
    else out.push(rel);
  }
  return out.sort();
}

Deno.test("resetLedger() restores the anchor, keeps node_modules and removes other agent files", async () => {
  await using bed = await localTestBed();
  const sb = await bed.create();
  await write(sb.workdir, { "src/app.js": "v1", "README.md": "readme" });
  await anchorLedger(sb, { signal });
  assert.equal(await Deno.stat(join(sb.workdir, ".git")).then(() => true, () => false), false);
  await write(sb.workdir, {
    "src/app.js": "v2 by the agent",
    "src/new.js": "agent file",
    "notes.txt": "agent notes",
    "node_modules/pkg/index.js": "installed",
    "packages/a/node_modules/dep/x.js": "nested install",
    ".cache/tool/blob": "cache",
    ".venv/bin/python": "venv",
    ".git/HEAD": "ref: refs/heads/main\n",
  });
  await Deno.remove(join(sb.workdir, "README.md"));
  await resetLedger(sb, { signal });
  assert.deepEqual(await listFiles(sb.workdir), [
    ".cache/tool/blob",
    ".git/HEAD",
    ".venv/bin/python",
    "README.md",
    "node_modules/pkg/index.js",
    "packages/a/node_modules/dep/x.js",
    "src/app.js",
  ]);
  assert.equal(await Deno.readTextFile(join(sb.workdir, "src/app.js")), "v1");
});

Deno.test("resetLedger() keeps preserved directories across every reset, baselines included (rule 87)", async () => {
  await using bed = await localTestBed();
  const sb = await bed.create();
  // A layer setup installed packages before the anchor; Attempts append to a preserved file.
  await write(sb.workdir, { "src/app.js": "v1", "node_modules/pkg/index.js": "installed" });
  await anchorLedger(sb, { signal });
  const counts: string[] = [];
  for (let attempt = 1; attempt <= 4; attempt++) {
    await baselineLedger(sb, { signal });
    const path = join(sb.workdir, "node_modules", "count");
    const before = await Deno.readTextFile(path).catch(() => "");
    await Deno.writeTextFile(path, before + "x");
    await write(sb.workdir, { "node_modules/pkg/index.js": `patched ${attempt}` });
    counts.push(String((await Deno.readTextFile(path)).length));
    await resetLedger(sb, { signal });
  }
  assert.deepEqual(counts, ["1", "2", "3", "4"]);
  assert.equal(
    await Deno.readTextFile(join(sb.workdir, "node_modules/pkg/index.js")),
    "patched 4",
  );
});

Deno.test("baselineLedger() initializes the ledger when absent and returns a new commit each time", async () => {
  await using bed = await localTestBed();
  const sb = await bed.create();
  await write(sb.workdir, { "a.txt": "a" });
  const first = await baselineLedger(sb, { signal });
  await write(sb.workdir, { "b.txt": "b" });
  const second = await baselineLedger(sb, { signal });
  assert.match(first, /^[0-9a-f]{40}$/);
  assert.notEqual(first, second);
  assert.equal(await Deno.stat(join(sb.workdir, ".git")).then(() => true, () => false), false);
});

Deno.test("anchorLedger() fails with sandbox-ledger-nested-repo naming the nested paths", async () => {
  await using bed = await localTestBed();
  const sb = await bed.create();
  const init = await sb.exec({
    script:
      "mkdir -p vendor/lib && cd vendor/lib && git init -q && git -c user.name=x -c user.email=x@x commit -q --allow-empty -m x",
  });
  assert.equal(init.exitCode, 0, new TextDecoder().decode(init.stderr));
  const error = await anchorLedger(sb, { signal }).then(() => undefined, (e) => e);
  assert.ok(hasSandboxCode(error, "sandbox-ledger-nested-repo"), String(error));
  assert.match((error as Error).message, /"vendor\/lib"/);
});

Deno.test("ledgerGitArgv() isolates every git call from user configuration", () => {
  assert.deepEqual(ledgerGitArgv(["tag", LEDGER_ANCHOR_TAG]), [
    "git",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "init.templateDir=",
    "-c",
    "commit.gpgsign=false",
    "-c",
    "safe.directory=*",
    "-c",
    "user.name=niceeval",
    "-c",
    "user.email=niceeval@localhost",
    "tag",
    "niceeval-anchor",
  ]);
});

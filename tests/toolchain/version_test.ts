/** One version (toolchain.md §2.1) and the Deno pin (§3.1). */
import assert from "node:assert/strict";
import { copyFile, mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describeRun, REPO_ROOT, runDeno, withTempDir, writeTree } from "./_tree.ts";

async function readJson(path: string): Promise<Record<string, unknown> | null> {
  try {
    return JSON.parse(await readFile(path, "utf8"));
  } catch (error) {
    if (error instanceof Error && (error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

async function versionConstant(root: string): Promise<string> {
  const text = await readFile(join(root, "src/_shared/version.ts"), "utf8");
  const match = /^export const VERSION = "([^"]*)";?$/m.exec(text);
  assert.ok(match !== null, 'src/_shared/version.ts has no `export const VERSION = "…";`');
  return match[1]!;
}

async function denoPin(): Promise<string> {
  const text = await readFile(join(REPO_ROOT, "scripts/deno"), "utf8");
  const match = /^DENO_VERSION=(\S+)$/m.exec(text);
  assert.ok(match !== null, "scripts/deno has no DENO_VERSION= line");
  return match[1]!;
}

Deno.test("deno.json, src/_shared/version.ts and npm/package.json carry one version", async () => {
  const config = await readJson(join(REPO_ROOT, "deno.json"));
  assert.equal(await versionConstant(REPO_ROOT), config?.version);
  const npm = await readJson(join(REPO_ROOT, "npm/package.json"));
  if (npm !== null) assert.equal(npm.version, config?.version, "npm/package.json version");
});

Deno.test("the suite runs on the Deno version pinned in scripts/deno", async () => {
  const pin = await denoPin();
  assert.equal(pin, "2.9.6");
  assert.equal(Deno.version.deno, pin);
  const npm = await readJson(join(REPO_ROOT, "npm/package.json"));
  if (npm !== null) {
    const dependencies = (npm.dependencies ?? {}) as Record<string, string>;
    assert.equal(dependencies.deno, pin, "npm/package.json dependencies.deno");
  }
});

Deno.test("set_version.ts rewrites the version in every file and nothing else", async () => {
  await withTempDir(async (dir) => {
    await mkdir(join(dir, "src/_shared"), { recursive: true });
    await copyFile(join(REPO_ROOT, "deno.json"), join(dir, "deno.json"));
    await copyFile(
      join(REPO_ROOT, "src/_shared/version.ts"),
      join(dir, "src/_shared/version.ts"),
    );
    const packageJson = `{\n  "name": "niceeval",\n  "version": "0.1.0",\n` +
      `  "dependencies": { "deno": "2.9.6", "zod": "4.1.0" },\n  "engines": { "node": ">=20" }\n}\n`;
    await writeTree(dir, { "npm/package.json": packageJson });
    const before = {
      deno: await readFile(join(dir, "deno.json"), "utf8"),
      version: await readFile(join(dir, "src/_shared/version.ts"), "utf8"),
    };
    const old = await versionConstant(dir);

    const result = await runDeno([
      "run",
      "-A",
      "--frozen",
      "scripts/set_version.ts",
      "1.2.3-rc.1",
      "--root",
      dir,
    ]);
    assert.equal(result.code, 0, describeRun(result));
    assert.match(result.stdout, /deno\.json: .* -> 1\.2\.3-rc\.1/);
    assert.match(result.stdout, /src\/_shared\/version\.ts: .* -> 1\.2\.3-rc\.1/);
    assert.match(result.stdout, /npm\/package\.json: 0\.1\.0 -> 1\.2\.3-rc\.1/);

    const deno = await readFile(join(dir, "deno.json"), "utf8");
    assert.equal(JSON.parse(deno).version, "1.2.3-rc.1");
    assert.equal(deno, before.deno.replace(`"version": "${old}"`, `"version": "1.2.3-rc.1"`));
    assert.equal(await versionConstant(dir), "1.2.3-rc.1");
    assert.equal(
      await readFile(join(dir, "src/_shared/version.ts"), "utf8"),
      before.version.replace(`"${old}"`, `"1.2.3-rc.1"`),
    );
    assert.equal(
      await readFile(join(dir, "npm/package.json"), "utf8"),
      packageJson.replace(`"version": "0.1.0"`, `"version": "1.2.3-rc.1"`),
    );
  });
});

Deno.test("set_version.ts refuses a version that is not semver", async () => {
  await withTempDir(async (dir) => {
    await mkdir(join(dir, "src/_shared"), { recursive: true });
    await copyFile(join(REPO_ROOT, "deno.json"), join(dir, "deno.json"));
    const before = await readFile(join(dir, "deno.json"), "utf8");
    const result = await runDeno([
      "run",
      "-A",
      "--frozen",
      "scripts/set_version.ts",
      "1.2",
      "--root",
      dir,
    ]);
    assert.equal(result.code, 1, describeRun(result));
    assert.match(result.stderr, /Invalid version "1\.2"/);
    assert.equal(await readFile(join(dir, "deno.json"), "utf8"), before);
  });
});

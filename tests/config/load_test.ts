import assert from "node:assert/strict";
import { join } from "node:path";
import { UsageError } from "../../src/_shared/errors.ts";
import { CONFIG_FILE, loadConfig } from "../../src/config/mod.ts";
import { loadNative } from "../../src/loader/mod.ts";

async function withConfig(
  text: string | null,
  fn: (dir: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "niceeval-config-" });
  try {
    if (text !== null) await Deno.writeTextFile(join(dir, CONFIG_FILE), text);
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function failure(dir: string): Promise<UsageError> {
  try {
    await loadConfig(dir, loadNative);
  } catch (error) {
    assert.ok(error instanceof UsageError, String(error));
    return error;
  }
  assert.fail("expected a UsageError");
}

Deno.test("loadConfig() returns the defineConfig default export", async () => {
  await withConfig(
    'import { defineConfig } from "niceeval";\nexport default defineConfig({ maxConcurrency: 3 });\n',
    async (dir) => {
      const config = await loadConfig(dir, loadNative);
      assert.equal(config.maxConcurrency, 3);
    },
  );
});

Deno.test("loadConfig() fails with config-missing naming the directory (rule 1.1.1)", async () => {
  await withConfig(null, async (dir) => {
    const e = await failure(dir);
    assert.equal(e.code, "config-missing");
    assert.equal(e.message, `no niceeval.config.ts in ${dir}`);
    assert.equal(e.hint, "run niceeval init, or change into the project directory");
  });
});

Deno.test("loadConfig() fails with config-missing when the config is a directory", async () => {
  await withConfig(null, async (dir) => {
    await Deno.mkdir(join(dir, CONFIG_FILE));
    assert.equal((await failure(dir)).code, "config-missing");
  });
});

Deno.test("loadConfig() fails with config-invalid for a missing or foreign default export (rule 1.1.2)", async () => {
  for (const text of ["export const x = 1;\n", "export default { maxConcurrency: 4 };\n"]) {
    await withConfig(text, async (dir) => {
      const e = await failure(dir);
      assert.equal(e.code, "config-invalid");
      assert.equal(e.message, "niceeval.config.ts: the default export must be defineConfig({...})");
    });
  }
});

Deno.test("loadConfig() names both versions for a config of another API copy", async () => {
  await withConfig(
    "const c = {};\nObject.defineProperty(c, Symbol.for('niceeval.definition'), " +
      "{ value: { kind: 'config', version: 9 } });\nexport default c;\n",
    async (dir) => {
      const e = await failure(dir);
      assert.equal(e.code, "config-invalid");
      assert.match(e.message, /format version 9; this niceeval reads version 1$/);
    },
  );
});

Deno.test("loadConfig() reports a DefinitionError as config-invalid naming the field (ERR-5)", async () => {
  await withConfig(
    'import { defineConfig } from "niceeval";\n' +
      "export default defineConfig({ maxConcurrency: 4, ramp: { from: 1, to: 8 } });\n",
    async (dir) => {
      const e = await failure(dir);
      assert.equal(e.code, "config-invalid");
      assert.equal(e.message, "niceeval.config.ts: ramp cannot be combined with maxConcurrency");
    },
  );
});

Deno.test("loadConfig() reports import failures as config.import-failed in one line (rule 1.1.2)", async () => {
  const cases: [string, RegExp][] = [
    [
      'throw new Error("no config today\\nsecond line");\n',
      /^niceeval\.config\.ts: cannot load: no config today \(at niceeval\.config\.ts:1:7\)$/,
    ],
    [
      'import x from "./nope.ts";\nexport default x;\n',
      /^niceeval\.config\.ts: cannot load: Module not found "nope\.ts" \(at niceeval\.config\.ts:1:\d+\)$/,
    ],
    ["export default {\n", /^niceeval\.config\.ts: cannot load: SyntaxError: /],
  ];
  for (const [text, message] of cases) {
    await withConfig(text, async (dir) => {
      const e = await failure(dir);
      assert.equal(e.code, "config.import-failed");
      assert.match(e.message, message);
      assert.ok(!e.message.includes(dir), e.message);
    });
  }
});

Deno.test("loadConfig() reports a Proxy default export whose traps throw as config-invalid", async () => {
  await withConfig(
    "const trap = () => { throw new Error('trap'); };\n" +
      "export default new Proxy({}, { get: trap, has: trap, getPrototypeOf: trap, " +
      "getOwnPropertyDescriptor: trap, ownKeys: trap });\n",
    async (dir) => {
      const e = await failure(dir);
      assert.equal(e.code, "config-invalid");
      assert.match(e.message, /^niceeval\.config\.ts: /);
    },
  );
});

Deno.test("loadConfig() reports a revoked Proxy default export as config-invalid", async () => {
  await withConfig(
    "const { proxy, revoke } = Proxy.revocable({}, {});\nrevoke();\nexport default proxy;\n",
    async (dir) => assert.equal((await failure(dir)).code, "config-invalid"),
  );
});

Deno.test("loadConfig() rejects a branded default export with a getter as config-invalid", async () => {
  await withConfig(
    'import { defineConfig } from "niceeval";\n' +
      "const c = { ...defineConfig({}) };\n" +
      "Object.defineProperty(c, Symbol.for('niceeval.definition'), " +
      "{ value: { kind: 'config', version: 1 } });\n" +
      "Object.defineProperty(c, 'maxConcurrency', { get() { throw new Error('getter'); }, " +
      "enumerable: true });\nexport default c;\n",
    async (dir) => assert.equal((await failure(dir)).code, "config-invalid"),
  );
});

Deno.test("loadConfig() reports a thrown Proxy whose traps throw as config.import-failed", async () => {
  await withConfig(
    "const trap = () => { throw new Error('trap'); };\n" +
      "throw new Proxy({}, { get: trap, getPrototypeOf: trap, has: trap, ownKeys: trap });\n",
    async (dir) => {
      const e = await failure(dir);
      assert.equal(e.code, "config.import-failed");
      assert.match(e.message, /^niceeval\.config\.ts: cannot load: /);
    },
  );
});

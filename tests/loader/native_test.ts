import assert from "node:assert/strict";
import { join } from "node:path";
import { isBranded } from "../../src/_shared/brand.ts";
import { defineEval } from "../../src/discovery/mod.ts";
import { includes } from "../../src/expect/mod.ts";
import { loadNative } from "../../src/loader/mod.ts";

Deno.test("loadNative() evaluates a user module once per process (rule 1.2.4)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "niceeval-loader-" });
  try {
    const path = join(dir, "counter.ts");
    await Deno.writeTextFile(
      path,
      "const g = globalThis as Record<string, number>;\n" +
        "g.niceevalLoaderCount = (g.niceevalLoaderCount ?? 0) + 1;\n" +
        "export const instance = {};\nexport default g.niceevalLoaderCount;\n",
    );
    const first = await loadNative(path);
    const second = await loadNative(path);
    assert.equal(first.default, 1);
    assert.equal(second.instance, first.instance);
    assert.equal((globalThis as Record<string, unknown>).niceevalLoaderCount, 1);
  } finally {
    delete (globalThis as Record<string, unknown>).niceevalLoaderCount;
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadNative() resolves the niceeval specifiers to the running API (rule 1.2.1)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "niceeval-loader-" });
  try {
    const path = join(dir, "uses_api.ts");
    await Deno.writeTextFile(
      path,
      'import { defineEval } from "niceeval";\nimport { includes } from "niceeval/expect";\n' +
        "export { defineEval, includes };\nexport default defineEval({ test() {} });\n",
    );
    const mod = await loadNative(path);
    assert.equal(mod.defineEval, defineEval);
    assert.equal(mod.includes, includes);
    assert.ok(isBranded(mod.default, "eval"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadNative() rejects for a missing file", async () => {
  await assert.rejects(loadNative("/nonexistent/niceeval/nothing.ts"));
});

import assert from "node:assert/strict";
import { API_KEY, type ApiNamespaces, installApi, installedApi } from "../../src/loader/mod.ts";

function namespaces(tag: string): ApiNamespaces {
  return { root: { tag }, expect: {}, adapter: {}, sandbox: {} };
}

Deno.test("installApi() installs the namespaces once; the first install wins", () => {
  const global = globalThis as unknown as Record<symbol, unknown>;
  const before = global[API_KEY];
  delete global[API_KEY];
  try {
    assert.equal(installedApi(), undefined);
    const first = installApi(namespaces("first"));
    assert.equal(first.root.tag, "first");
    assert.ok(Object.isFrozen(first));
    assert.equal(installApi(namespaces("second")), first);
    assert.equal(installedApi(), first);
    assert.equal(global[Symbol.for("niceeval.api")], first);
  } finally {
    delete global[API_KEY];
    if (before !== undefined) global[API_KEY] = before;
  }
});

/**
 * Hostile default exports (Proxies with throwing traps, revoked Proxies, throwing getters, thrown
 * Proxies) end as discovery issues naming the file, never as an exception out of discovery.
 */
import assert from "node:assert/strict";
import { DEFINITION_KEY } from "../../src/_shared/brand.ts";
import type { DiscoveryIssue } from "../../src/discovery/issues.ts";
import { discoverEvals } from "../../src/discovery/evals.ts";
import { discoverExperiments } from "../../src/discovery/experiments.ts";
import { discoverGroups } from "../../src/discovery/groups.ts";
import { fakeLoader, walked } from "./_fixtures.ts";

const trap = () => {
  throw new Error("trap");
};
/** A Proxy every one of whose traps throws. */
const throwingProxy = () =>
  new Proxy({}, {
    get: trap,
    has: trap,
    getPrototypeOf: trap,
    getOwnPropertyDescriptor: trap,
    ownKeys: trap,
  });
const revokedProxy = () => {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
};
const withGetter = (target: object, key: string) =>
  Object.defineProperty(target, key, { get: trap, enumerable: true });

function codes(issues: readonly DiscoveryIssue[]): string[] {
  return issues.map((i) => `${i.file} ${i.code}`);
}

Deno.test("discoverEvals() reports Proxy, revoked Proxy and getter exports as invalid-export", async () => {
  const issues: DiscoveryIssue[] = [];
  const modules = {
    "evals/proxy.eval.ts": { default: throwingProxy() },
    "evals/revoked.eval.ts": { default: revokedProxy() },
    "evals/getter_item.eval.ts": { default: withGetter([], "0") },
    "evals/getter_key.eval.ts": { default: withGetter({}, "row") },
  };
  const evals = await discoverEvals(
    Object.keys(modules).map((file) => walked(file)),
    fakeLoader(modules),
    issues,
  );
  assert.deepEqual(evals, []);
  assert.deepEqual(codes(issues), [
    "evals/proxy.eval.ts discovery.invalid-export",
    "evals/revoked.eval.ts discovery.invalid-export",
    "evals/getter_item.eval.ts discovery.invalid-export",
    "evals/getter_key.eval.ts discovery.invalid-export",
  ]);
});

Deno.test("discoverExperiments() reports a thrown Proxy as import-failed and a revoked one as invalid-export", async () => {
  const issues: DiscoveryIssue[] = [];
  const files = ["experiments/revoked.ts", "experiments/throws.ts"].map((f) => walked(f));
  const load = (path: string) =>
    path.endsWith("throws.ts")
      ? Promise.reject(throwingProxy())
      : Promise.resolve({ default: revokedProxy() });
  assert.deepEqual(await discoverExperiments(files, load, issues), []);
  assert.deepEqual(codes(issues), [
    "experiments/revoked.ts discovery.invalid-export",
    "experiments/throws.ts discovery.import-failed",
  ]);
});

Deno.test("discoverGroups() reports a branded group whose evals getter throws as invalid-export", async () => {
  const issues: DiscoveryIssue[] = [];
  const group = withGetter({ onUnavailable: "stop-group" }, "evals");
  Object.defineProperty(group, DEFINITION_KEY, {
    value: Object.freeze({ kind: "eval-group", version: 1 }),
  });
  const groups = await discoverGroups(
    [walked("evals/g/eval-group.ts")],
    [],
    fakeLoader({ "evals/g/eval-group.ts": { default: group } }),
    issues,
  );
  assert.deepEqual([groups, codes(issues)], [[], [
    "evals/g/eval-group.ts discovery.invalid-export",
  ]]);
});

import assert from "node:assert/strict";
import { brand } from "../../src/_shared/brand.ts";
import { defineEval, defineEvalGroup, type SandboxLayer } from "../../src/discovery/definitions.ts";
import { classifyEvalFiles, discoverEvals } from "../../src/discovery/evals.ts";
import { discoverGroups } from "../../src/discovery/groups.ts";
import type { DiscoveryIssue } from "../../src/discovery/issues.ts";
import { walkFiles } from "../../src/discovery/walk.ts";
import { loadNative } from "../../src/loader/mod.ts";
import { fakeLoader, fixture, walked } from "./_fixtures.ts";

async function discoverFixture(name: string) {
  const root = fixture(name);
  const issues: DiscoveryIssue[] = [];
  const { entries, groups } = classifyEvalFiles(await walkFiles(root, "evals", issues), issues);
  const evals = await discoverEvals(entries, loadNative, issues);
  const found = await discoverGroups(groups, evals, loadNative, issues);
  return { evals, groups: found, issues };
}

function layer(kind: string): SandboxLayer {
  return Object.freeze(brand({ kind }, "sandbox-layer")) as unknown as SandboxLayer;
}

Deno.test("discoverGroups() names a group by its directory and normalizes member order (rule 1.4.1, GRP-2)", async () => {
  const { groups, issues } = await discoverFixture("discovery_project");
  assert.deepEqual(issues.filter((i) => i.level === "error"), []);
  assert.equal(groups.length, 1);
  assert.equal(groups[0]!.id, "group");
  assert.equal(groups[0]!.file, "evals/group/eval-group.ts");
  assert.deepEqual(groups[0]!.memberIds, ["2-b", "group/a", "group/b"]);
});

Deno.test("discoverGroups() marks members without changing IDs or order (rule 1.4.4)", async () => {
  const { evals } = await discoverFixture("discovery_project");
  assert.deepEqual(
    evals.filter((e) => e.groupId !== undefined).map((e) => [e.index, e.id, e.groupId]),
    [[1, "2-b", "group"], [8, "group/a", "group"], [9, "group/b", "group"]],
  );
  assert.equal(evals[0]!.groupId, undefined);
});

Deno.test("discoverGroups() reports location, overlap, unresolved and sandboxed members (rule 1.4)", async () => {
  const { groups, issues } = await discoverFixture("broken_groups_project");
  assert.deepEqual(groups.map((g) => g.id), ["g1", "g6"]);
  assert.deepEqual(issues.map((i) => [i.file, i.code]), [
    ["evals/eval-group.ts", "discovery.group-location"],
    ["evals/g2/eval-group.ts", "discovery.group-overlap"],
    ["evals/g3/eval-group.ts", "discovery.group-member-unresolved"],
    ["evals/g4/eval-group.ts", "discovery.group-member-sandbox"],
    ["evals/g5/eval-group.ts", "discovery.invalid-export"],
  ]);
  assert.equal(issues[1]!.message, 'eval "g1/a" already belongs to group "g1"');
  assert.equal(issues[3]!.message, 'member "g4/own" has its own sandbox template');
  assert.match(issues[4]!.message, /format version 7; this niceeval reads version 1$/);
  assert.ok(issues.every((i) => i.level === "error"));
});

Deno.test("discoverGroups() rejects a default export that is not a group", async () => {
  const issues: DiscoveryIssue[] = [];
  const groups = await discoverGroups(
    [walked("evals/g/eval-group.ts")],
    [],
    fakeLoader({ "evals/g/eval-group.ts": { default: defineEval({ test() {} }) } }),
    issues,
  );
  assert.deepEqual(groups, []);
  assert.equal(issues[0]!.code, "discovery.invalid-export");
});

Deno.test("discoverGroups() hands the group's sandbox to its members", async () => {
  const a = defineEval({ test() {} });
  const shared = layer("shared");
  const evals = [{ id: "g/a", index: 0, file: "evals/g/a.eval.ts", definition: a }];
  const issues: DiscoveryIssue[] = [];
  await discoverGroups(
    [walked("evals/g/eval-group.ts")],
    evals,
    fakeLoader({
      "evals/g/eval-group.ts": {
        default: defineEvalGroup({ evals: [a], onUnavailable: "replace-sandbox", sandbox: shared }),
      },
    }),
    issues,
  );
  assert.deepEqual(issues, []);
  assert.equal((evals[0] as { groupSandbox?: SandboxLayer }).groupSandbox, shared);
});

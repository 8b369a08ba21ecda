/**
 * Reuse identity (REC-4, CARRY-2): what enters the configuration hash and the input fingerprint,
 * and what never does — labels, descriptions, credentials and scheduling settings.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { commandAgent, openAICompatibleAgent, scriptedAgent } from "../../src/agents/mod.ts";
import {
  defineEval,
  defineExperiment,
  type DiscoveredEval,
  type DiscoveredExperiment,
  type DiscoveredGroup,
} from "../../src/discovery/mod.ts";
import { localSandbox } from "../../src/sandbox/mod.ts";
import { sha256Hex } from "../../src/_shared/mod.ts";
import {
  configHashOf,
  digestOf,
  executionDigestOf,
  FingerprintCache,
  planIdentityOf,
  slotIdentifier,
  slotIdOf,
} from "../../src/record/mod.ts";

type ExperimentOptions = Parameters<typeof defineExperiment>[0];

const AGENT = scriptedAgent({ name: "a", script: [], fallback: { text: "hi" } });

function experiment(
  options: Partial<ExperimentOptions> = {},
  extra: Record<string, unknown> = {},
): DiscoveredExperiment {
  const definition = defineExperiment({ agent: AGENT, ...options } as ExperimentOptions);
  return {
    id: "exp",
    index: 0,
    file: "experiments/exp.ts",
    // Fields the definition cannot carry today (labels are a later option) are added as a
    // future definition would hold them: identity must still ignore them.
    definition: { ...definition, ...extra } as DiscoveredExperiment["definition"],
  };
}

const BASE = configHashOf(experiment());

Deno.test("configHashOf() ignores labels, descriptions and every scheduling setting (CARRY-2)", () => {
  const same: [string, DiscoveredExperiment][] = [
    ["labels", experiment({}, { labels: { team: "search", tier: 2 } })],
    ["other labels", experiment({}, { labels: { team: "ranking" } })],
    ["description", experiment({ description: "a new description" })],
    ["attempts", experiment({ attempts: 5 })],
    ["maxConcurrency", experiment({ maxConcurrency: 3 })],
    ["budget", experiment({ budget: 1.5 })],
    ["earlyExit", experiment({ earlyExit: true })],
    ["timeoutMs", experiment({ timeoutMs: 60_000 })],
    ["evals", experiment({ evals: ["greet"] })],
    ["setup and teardown", experiment({ setup: () => {}, teardown: () => {} })],
  ];
  for (const [what, e] of same) assert.equal(configHashOf(e), BASE, what);
});

Deno.test("configHashOf() changes with the agent, model, flags, sharedState key, sandboxReuse and sandbox", () => {
  const other = scriptedAgent({ name: "a", script: [], fallback: { text: "hello" } });
  const renamed = scriptedAgent({ name: "b", script: [], fallback: { text: "hi" } });
  const different: [string, string][] = [
    ["agent script", configHashOf(experiment({ agent: other }))],
    ["agent name", configHashOf(experiment({ agent: renamed }))],
    ["model", configHashOf(experiment({ model: "m2" }))],
    ["flags", configHashOf(experiment({ flags: { temperature: 1 } }))],
    ["sharedState", configHashOf(experiment({ sharedState: { key: "db/main" } }))],
    ["sandbox layer", configHashOf(experiment(), { sandbox: "sha256:layer" })],
  ];
  for (const [what, hash] of different) assert.notEqual(hash, BASE, what);
  const boxed = (reuse: boolean) =>
    configHashOf(
      experiment({
        agent: commandAgent({ name: "c", command: ["echo"] }),
        sandboxReuse: reuse,
      }),
      { sandbox: "sha256:layer" },
    );
  assert.notEqual(boxed(true), boxed(false), "sandboxReuse");
});

Deno.test("configHashOf() ignores the API key variable and header values of an agent, not header names", () => {
  const gateway = (options: { apiKeyEnv?: string; headers?: Record<string, string> }) =>
    configHashOf(
      experiment({
        agent: openAICompatibleAgent({ baseUrl: "http://127.0.0.1:9/v1", ...options }),
      }),
    );
  const first = gateway({ apiKeyEnv: "OPENAI_API_KEY", headers: { "x-trace": "sk-one" } });
  assert.equal(gateway({ apiKeyEnv: "GATEWAY_API_KEY", headers: { "x-trace": "sk-two" } }), first);
  assert.notEqual(gateway({ headers: { "x-other": "sk-one" } }), first);
});

Deno.test("FingerprintCache.fingerprint() covers the eval's local import closure and metadata, nothing else", async () => {
  const root = await Deno.makeTempDir({ prefix: "niceeval-identity-" });
  try {
    const write = (path: string, text: string) => Deno.writeTextFile(join(root, path), text);
    await Deno.mkdir(join(root, "evals", "_lib"), { recursive: true });
    await write("evals/a.eval.ts", 'import { P } from "./_lib/p.ts";\nexport default P;\n');
    await write("evals/_lib/p.ts", 'import { Q } from "./q.ts";\nexport const P = Q;\n');
    await write("evals/_lib/q.ts", "export const Q = 1;\n");
    await write("evals/_lib/unused.ts", "export const U = 1;\n");
    await write(".env", "OPENAI_API_KEY=sk-one\n");
    const evalOf = (definition: Parameters<typeof defineEval>[0]): DiscoveredEval => ({
      id: "a",
      index: 0,
      file: "evals/a.eval.ts",
      definition: defineEval(definition) as unknown as DiscoveredEval["definition"],
    });
    const test = () => {};
    const fingerprint = (e = evalOf({ test })) =>
      new FingerprintCache(root).fingerprint(e, undefined);
    const first = await fingerprint();
    await write(".env", "OPENAI_API_KEY=sk-two\nOTHER_TOKEN=t\n");
    await write("evals/_lib/unused.ts", "export const U = 2;\n");
    assert.equal(await fingerprint(), first, "credentials and files outside the closure");
    assert.equal(await fingerprint(evalOf({ test, description: "new" })), first, "description");
    assert.notEqual(await fingerprint(evalOf({ test, metadata: { level: 2 } })), first, "metadata");
    await write("evals/_lib/q.ts", "export const Q = 2;\n");
    const helper = await fingerprint();
    assert.notEqual(helper, first, "a helper imported through another helper");
    await write("evals/a.eval.ts", 'import { P } from "./_lib/p.ts";\nexport default P; // x\n');
    assert.notEqual(await fingerprint(), helper, "the eval file itself");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("FingerprintCache.fingerprint() is the digest of the canonical JSON of its whole input, for every mix of group, layers and metadata", async () => {
  const root = await Deno.makeTempDir({ prefix: "niceeval-identity-" });
  try {
    await Deno.mkdir(join(root, "evals"), { recursive: true });
    await Deno.writeTextFile(
      join(root, "evals/a.eval.ts"),
      'import "./b.ts";\nexport default 1;\n',
    );
    await Deno.writeTextFile(join(root, "evals/b.ts"), "export {};\n");
    const test = () => {};
    const shared = { "z\u00e9": [1, { b: null, a: '\u2028"q"' }], a: true };
    const definitions = [
      defineEval({ test }),
      defineEval({ test, metadata: shared }),
      defineEval({ test, metadata: shared }),
      defineEval({ test }),
      defineEval({ test, metadata: { n: -0.5e-7 } }),
    ];
    const group = {
      id: "g/h",
      file: "evals/g/h/eval-group.ts",
      definition: { evals: [], onUnavailable: "replace-sandbox" },
      memberIds: ["g/h/x", 'g/h/"y"'],
    } as unknown as DiscoveredGroup;
    const cache = new FingerprintCache(root);
    const cases = [
      ["a/0000", undefined, {}],
      ['a/"\u00e9\u{1F600}"', group, { sandbox: "sha256:eval", groupSandbox: "sha256:group" }],
      ["a/\\x", group, {}],
      ["a/y", undefined, { sandbox: "sha256:eval" }],
      ["a/z", group, { groupSandbox: null }],
    ] as const;
    for (const [i, [id, g, layers]] of cases.entries()) {
      const definition = definitions[i]!;
      const e = { id, index: i, file: "evals/a.eval.ts", definition } as unknown as DiscoveredEval;
      const whole = {
        evalId: id,
        kind: definition.evaluationKind,
        metadata: definition.metadata,
        sandbox: (layers as { sandbox?: string }).sandbox ?? null,
        sources: {
          "evals/a.eval.ts": await hashOf(root, "evals/a.eval.ts"),
          "evals/b.ts": await hashOf(root, "evals/b.ts"),
        },
        group: g
          ? {
            id: g.id,
            members: g.memberIds,
            sandbox: (layers as { groupSandbox?: string | null }).groupSandbox ?? null,
            onUnavailable: g.definition.onUnavailable,
          }
          : null,
      };
      assert.equal(await cache.fingerprint(e, g, layers), digestOf(whole), id);
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

async function hashOf(root: string, path: string): Promise<string> {
  return sha256Hex(await Deno.readFile(join(root, path)));
}

Deno.test("executionDigestOf() is the digest of the canonical JSON of both hashes", () => {
  for (const [c, f] of [["sha256:c1", "sha256:f1"], ['a"\\b', "\u00e9\ud800"]] as const) {
    assert.equal(executionDigestOf(c, f), digestOf({ inputFingerprint: f, configHash: c }));
  }
});

Deno.test("planIdentityOf() hashes each selected experiment and fingerprints each eval once, with injected layer identities", async () => {
  const root = await Deno.makeTempDir({ prefix: "niceeval-identity-" });
  try {
    await Deno.mkdir(join(root, "evals"));
    await Deno.writeTextFile(join(root, "evals", "a.eval.ts"), "export default 1;\n");
    const test = () => {};
    const layer = localSandbox({});
    const evalOf = (id: string, sandbox?: typeof layer): DiscoveredEval => ({
      id,
      index: 0,
      file: "evals/a.eval.ts",
      definition: defineEval({
        test,
        ...(sandbox ? { sandbox } : {}),
      }) as unknown as DiscoveredEval[
        "definition"
      ],
    });
    const evals = [evalOf("a"), evalOf("b", layer)];
    const asked: unknown[] = [];
    const layerIdentity = (l: unknown) => {
      asked.push(l);
      return Promise.resolve(l === undefined ? null : "sha256:layer");
    };
    const exp = experiment();
    const identity = await planIdentityOf(
      [{ experiment: exp, evals: [{ id: "a" }, { id: "b" }] }, {
        experiment: { ...exp, id: "exp2" },
        evals: [{ id: "a" }],
      }],
      { root, evals, groups: [], layerIdentity },
    );
    assert.deepEqual([...identity.configHash.keys()], ["exp", "exp2"]);
    assert.equal(identity.configHash.get("exp"), configHashOf(exp, { sandbox: null }));
    const cache = new FingerprintCache(root);
    assert.equal(identity.inputFingerprint.get("a"), await cache.fingerprint(evals[0]!, undefined));
    assert.equal(
      identity.inputFingerprint.get("b"),
      await cache.fingerprint(evals[1]!, undefined, { sandbox: "sha256:layer" }),
    );
    assert.deepEqual(
      asked,
      [undefined, layer, undefined],
      "one call per experiment and eval layer",
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("slotIdentifier() gives the SlotId and the execution digest of each slot, ordinals of a pair sharing one digest", () => {
  const identity = {
    configHash: new Map([["x", "sha256:c1"], ["y", "sha256:c2"]]),
    inputFingerprint: new Map([["e", "sha256:f1"]]),
  };
  const identify = slotIdentifier(identity);
  const first = identify({ experimentId: "x", evalId: "e", ordinal: 0 });
  const second = identify({ experimentId: "x", evalId: "e", ordinal: 1 });
  const other = identify({ experimentId: "y", evalId: "e", ordinal: 0 });
  assert.deepEqual(first, {
    slotId: slotIdOf("e", 0),
    configHash: "sha256:c1",
    inputFingerprint: "sha256:f1",
    executionIdentityDigest: executionDigestOf("sha256:c1", "sha256:f1"),
  });
  assert.equal(second.slotId, slotIdOf("e", 1));
  assert.equal(second.executionIdentityDigest, first.executionIdentityDigest);
  assert.equal(other.executionIdentityDigest, executionDigestOf("sha256:c2", "sha256:f1"));
  assert.equal(
    slotIdentifier(identity)({ experimentId: "x", evalId: "e", ordinal: 1 })
      .executionIdentityDigest,
    first.executionIdentityDigest,
    "a new identifier computes the same digest",
  );
});

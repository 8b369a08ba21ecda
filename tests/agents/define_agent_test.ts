import assert from "node:assert/strict";
import { API_FORMAT_VERSION, DEFINITION_KEY, isBranded } from "../../src/_shared/brand.ts";
import { DefinitionError } from "../../src/_shared/errors.ts";
import {
  type AgentDefinition,
  completeEvidenceCoverage,
  defineAgent,
  evidenceCoverage,
  resolveAgent,
  type Turn,
} from "../../src/agents/mod.ts";

const send = (): Promise<Turn> => Promise.resolve({ status: "completed", events: [] });

function def(extra: Record<string, unknown> = {}): AgentDefinition {
  return { name: "echo", evidenceCoverage: completeEvidenceCoverage, send, ...extra };
}

function definitionError(fn: () => unknown): DefinitionError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof DefinitionError, `expected DefinitionError, got ${error}`);
    return error;
  }
  assert.fail("expected a DefinitionError");
}

Deno.test("defineAgent() returns a frozen branded agent with defaults", () => {
  const agent = defineAgent(def());
  assert.ok(Object.isFrozen(agent));
  assert.ok(isBranded(agent, "agent"));
  const resolved = resolveAgent(agent)!;
  assert.equal(resolved.name, "echo");
  assert.equal(resolved.kind, "direct");
  assert.equal(resolved.identity, null);
  assert.deepEqual(resolved.evidenceCoverage, completeEvidenceCoverage);
  assert.equal(resolved.send, send);
  assert.equal("setup" in resolved, false);
});

Deno.test("defineAgent() keeps kind, identity and the optional functions", async () => {
  const calls: string[] = [];
  const agent = resolveAgent(defineAgent(def({
    kind: "sandbox",
    identity: { baseUrl: "http://x", tools: ["a"] },
    setup: () => Promise.resolve(void calls.push("setup")),
    teardown: () => Promise.resolve(void calls.push("teardown")),
    classifySendFailure: () => ({ reason: "network" }),
  })))!;
  assert.equal(agent.kind, "sandbox");
  assert.deepEqual(agent.identity, { baseUrl: "http://x", tools: ["a"] });
  assert.ok(Object.isFrozen(agent.identity));
  await agent.setup?.({} as never);
  await agent.teardown?.({} as never);
  assert.deepEqual(calls, ["setup", "teardown"]);
  assert.deepEqual(agent.classifySendFailure?.(new Error("x")), { reason: "network" });
});

Deno.test("defineAgent() copies identity so later edits do not leak in", () => {
  const identity = { model: "a" };
  const agent = resolveAgent(defineAgent(def({ identity })))!;
  identity.model = "b";
  assert.deepEqual(agent.identity, { model: "a" });
});

Deno.test("defineAgent() rejects an invalid name", () => {
  for (const name of ["", "-lead", "has space", "x".repeat(65)]) {
    const error = definitionError(() => defineAgent(def({ name })));
    assert.equal(error.path, "name");
    assert.equal(error.code, "definition.invalid-value");
  }
  defineAgent(def({ name: "A.b_c-1" }));
  defineAgent(def({ name: "x".repeat(64) }));
});

Deno.test("defineAgent() rejects an unknown kind", () => {
  assert.equal(definitionError(() => defineAgent(def({ kind: "remote" }))).path, "kind");
});

Deno.test("defineAgent() rejects a non-JSON identity with its path", () => {
  const error = definitionError(() => defineAgent(def({ identity: { when: new Date(0) } })));
  assert.equal(error.path, "identity.when");
  assert.equal(
    definitionError(() => defineAgent(def({ identity: { n: NaN } }))).path,
    "identity.n",
  );
});

Deno.test("defineAgent() requires evidenceCoverage", () => {
  const error = definitionError(() =>
    defineAgent({ name: "x", send } as unknown as AgentDefinition)
  );
  assert.equal(error.code, "definition.missing-option");
  assert.equal(error.path, "evidenceCoverage");
});

Deno.test("defineAgent() requires every coverage channel", () => {
  const { data: _, ...fiveChannels } = completeEvidenceCoverage;
  const error = definitionError(() => defineAgent(def({ evidenceCoverage: fiveChannels })));
  assert.equal(error.path, "evidenceCoverage.data");
});

Deno.test("defineAgent() rejects a malformed coverage entry", () => {
  const coverage = { ...completeEvidenceCoverage, usage: { status: "unavailable" } };
  const error = definitionError(() => defineAgent(def({ evidenceCoverage: coverage })));
  assert.equal(error.path, "evidenceCoverage.usage.reason");
});

Deno.test("defineAgent() requires send to be a function", () => {
  assert.equal(
    definitionError(() =>
      defineAgent({ name: "x", evidenceCoverage: completeEvidenceCoverage } as never)
    )
      .code,
    "definition.missing-option",
  );
  assert.equal(definitionError(() => defineAgent(def({ send: "go" }))).path, "send");
});

Deno.test("defineAgent() rejects non-function setup, teardown and classifySendFailure", () => {
  for (const key of ["setup", "teardown", "classifySendFailure"]) {
    assert.equal(definitionError(() => defineAgent(def({ [key]: {} }))).path, key);
  }
});

Deno.test("defineAgent() rejects an unknown key with a suggestion", () => {
  const error = definitionError(() => defineAgent(def({ evidenceCoverag: {} })));
  assert.equal(error.code, "definition.unknown-option");
  assert.match(error.message, /did you mean "evidenceCoverage"/);
});

Deno.test("defineAgent() treats undefined options as absent", () => {
  const agent = resolveAgent(defineAgent(def({ kind: undefined, setup: undefined })))!;
  assert.equal(agent.kind, "direct");
  assert.equal("setup" in agent, false);
});

Deno.test("defineAgent() rejects a non-object definition", () => {
  definitionError(() => defineAgent(null as never));
});

Deno.test("defineAgent() accepts coverage built with evidenceCoverage()", () => {
  const coverage = evidenceCoverage({ data: { status: "unavailable", reason: "no data" } });
  const agent = resolveAgent(defineAgent(def({ evidenceCoverage: coverage })))!;
  assert.deepEqual(agent.evidenceCoverage.data, { status: "unavailable", reason: "no data" });
});

Deno.test("resolveAgent() returns undefined for values that are not agents", () => {
  assert.equal(resolveAgent(undefined), undefined);
  assert.equal(resolveAgent({ name: "x", kind: "direct", send }), undefined);
  assert.equal(resolveAgent("agent"), undefined);
});

Deno.test("resolveAgent() recognises an agent branded by another copy of the API", () => {
  const foreign = { name: "x", kind: "direct", identity: null, send };
  Object.defineProperty(foreign, DEFINITION_KEY, { value: { kind: "agent", version: 1 } });
  assert.equal(resolveAgent(foreign), foreign);
});

Deno.test("resolveAgent() rejects a definition of another kind", () => {
  const other = { send };
  Object.defineProperty(other, DEFINITION_KEY, { value: { kind: "eval", version: 1 } });
  assert.equal(resolveAgent(other), undefined);
});

Deno.test("issue 20: resolveAgent() answers a frozen agent the same every time and rereads other values", () => {
  const agent = defineAgent(def());
  const first = resolveAgent(agent);
  assert.ok(first);
  assert.equal(resolveAgent(agent), first);
  assert.equal(resolveAgent(Object.freeze({ name: "plain", send })), undefined);
  // Not frozen: a later brand counts.
  const open: Record<string | symbol, unknown> = { name: "late", send };
  assert.equal(resolveAgent(open), undefined);
  Object.defineProperty(open, DEFINITION_KEY, {
    value: Object.freeze({ kind: "agent", version: API_FORMAT_VERSION }),
  });
  assert.equal(resolveAgent(open)?.name, "late");
});

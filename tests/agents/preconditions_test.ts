/** Issue 18.1: agent preconditions (docs/bail.md): `defineAgent({ precondition })` and the key check. */
import assert from "node:assert/strict";
import { DefinitionError } from "../../src/_shared/errors.ts";
import {
  type AgentContext,
  checkPrecondition,
  completeEvidenceCoverage,
  defineAgent,
  type HostEnvReader,
  openAICompatibleAgent,
  resolveAgent,
} from "../../src/agents/mod.ts";
import { createTestContext } from "./_context.ts";

const ctx = (env: Record<string, string>) => ({
  experimentId: "gateway",
  model: undefined,
  env: (name: string) => env[name],
});

const agentWith = (precondition: unknown) =>
  defineAgent({
    name: "custom",
    evidenceCoverage: completeEvidenceCoverage,
    send: () => Promise.resolve({ status: "completed", events: [] }),
    precondition: precondition as never,
  });

Deno.test("issue 18.1: openAICompatibleAgent needs its key variable set and non-empty, naming apiKeyEnv in the hint", async () => {
  const agent = openAICompatibleAgent({ baseUrl: "http://127.0.0.1:9/v1" });
  const unset = {
    message:
      'agent "openai-compatible" cannot run: its key variable OPENAI_API_KEY (apiKeyEnv) is not set',
    hint:
      "set OPENAI_API_KEY in the environment or in .env, or set apiKeyEnv to the variable that holds the key (null for an endpoint that needs none)",
  };
  assert.deepEqual(await checkPrecondition(agent, ctx({})), unset);
  assert.deepEqual(await checkPrecondition(agent, ctx({ OPENAI_API_KEY: "" })), unset);
  assert.equal(await checkPrecondition(agent, ctx({ OPENAI_API_KEY: "sk-1" })), null);
  const custom = openAICompatibleAgent({ baseUrl: "http://h/v1", apiKeyEnv: "GATEWAY_KEY" });
  const failure = await checkPrecondition(custom, ctx({ OPENAI_API_KEY: "sk-1" }));
  assert.match(failure?.message ?? "", /its key variable GATEWAY_KEY \(apiKeyEnv\) is not set$/);
  assert.equal(await checkPrecondition(custom, ctx({ GATEWAY_KEY: "gw" })), null);
});

Deno.test("issue 18.1: apiKeyEnv: null is an endpoint without keys: no check, no Authorization header", async () => {
  const seen: (string | null)[] = [];
  await using server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, (req) => {
    seen.push(req.headers.get("authorization"));
    return Response.json({
      choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
    });
  });
  const agent = openAICompatibleAgent({
    baseUrl: `http://127.0.0.1:${server.addr.port}/v1`,
    apiKeyEnv: null,
  });
  assert.equal(await checkPrecondition(agent, ctx({})), null);
  const env: HostEnvReader = (name) =>
    ({ OPENAI_API_KEY: "sk-ignored" } as Record<string, string>)[name];
  const context = { ...createTestContext({ model: "m" }), env } as AgentContext;
  await resolveAgent(agent)!.send({ text: "hi" }, context);
  assert.deepEqual(seen, [null]);
});

Deno.test("issue 18.1: defineAgent takes an optional precondition; its failure, throw or bad return names the agent", async () => {
  assert.equal(await checkPrecondition(agentWith(undefined), ctx({})), null);
  assert.equal(await checkPrecondition(agentWith(() => undefined), ctx({})), null);
  const seen: string[] = [];
  const declared = agentWith((c: { experimentId: string; env(n: string): string | undefined }) => {
    seen.push(`${c.experimentId}:${c.env("TOKEN")}`);
    return Promise.resolve({ message: "TOKEN is missing", hint: "export TOKEN" });
  });
  assert.deepEqual(await checkPrecondition(declared, ctx({ TOKEN: "" })), {
    message: 'agent "custom" cannot run: TOKEN is missing',
    hint: "export TOKEN",
  });
  assert.deepEqual(seen, ["gateway:"]);
  assert.deepEqual(
    await checkPrecondition(
      agentWith(() => {
        throw new Error("no binary");
      }),
      ctx({}),
    ),
    { message: 'agent "custom" cannot run: its precondition threw: no binary', hint: null },
  );
  assert.deepEqual(await checkPrecondition(agentWith(() => "nope"), ctx({})), {
    message:
      'agent "custom" cannot run: its precondition returned something other than { message, hint? }',
    hint: null,
  });
  assert.throws(() => agentWith("not a function"), DefinitionError);
});

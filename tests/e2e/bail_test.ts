/**
 * Issue 18.1 end to end (docs/bail.md): the real CLI runs `tests/fixtures/bail_project` (8 evals;
 * an OpenAI-compatible experiment against a 127.0.0.1 server that answers 401, and a scripted
 * experiment that needs no key) in plain output.
 */
import assert from "node:assert/strict";
import { ndjson, tempProject } from "../_helpers/cli.ts";

/** A chat-completions server that rejects every request with 401, counting them. */
function unauthorizedServer(): AsyncDisposable & { baseUrl: string; requests: () => number } {
  let requests = 0;
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
    requests++;
    await req.body?.cancel();
    return Response.json({ error: { message: "Incorrect API key provided" } }, { status: 401 });
  });
  return {
    baseUrl: `http://127.0.0.1:${server.addr.port}/v1`,
    requests: () => requests,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

const lines = (text: string) => text.split("\n");

Deno.test("issue 18.1: an unset key variable halts the experiment before any Attempt, with a hint naming apiKeyEnv; the other experiment runs; exit 1", async () => {
  await using server = unauthorizedServer();
  await using p = await tempProject("bail_project");
  const env = { OPENAI_FIXTURE_BASE_URL: server.baseUrl, CI: "1" };
  const r = await p.run(["exp"], { env });
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assert.equal(server.requests(), 0);
  const out = lines(r.stdout);
  const halt = out.findIndex((l) => l.startsWith("✗ experiment halted"));
  assert.deepEqual(out.slice(halt, halt + 2), [
    '✗ experiment halted · gateway: agent "openai-compatible" cannot run: its key variable OPENAI_API_KEY (apiKeyEnv) is not set (8 attempts not started)',
    "    hint: set OPENAI_API_KEY in the environment or in .env, or set apiKeyEnv to the variable that holds the key (null for an endpoint that needs none)",
  ]);
  assert.ok(!out.some((l) => /^✗ q\d/.test(l)), r.stdout);
  const json = await p.run(["exp", "--rerun", "all", "--json"], { env });
  assert.equal(json.code, 1, json.stderr);
  const events = ndjson(json.stdout);
  const starts = events.filter((e) => e.type === "attempt_start");
  assert.deepEqual([...new Set(starts.map((e) => e.experimentId))], ["scripted"]);
  const halted = events.filter((e) => e.code === "dispatch-halted");
  assert.equal(halted.length, 1);
  assert.equal(halted[0]!.type, "error");
  assert.deepEqual(halted[0]!.data, {
    scope: "experiment",
    reason: "precondition",
    hint:
      "set OPENAI_API_KEY in the environment or in .env, or set apiKeyEnv to the variable that holds the key (null for an endpoint that needs none)",
    unstarted: 8,
  });
});

Deno.test("issue 18.1: a 401 on the first 5 Attempts halts the experiment as a systematic error; --no-bail runs all; exit 1", async (t) => {
  await using server = unauthorizedServer();
  await using p = await tempProject("bail_project");
  const env = { OPENAI_FIXTURE_BASE_URL: server.baseUrl, OPENAI_API_KEY: "sk-wrong", CI: "1" };
  await t.step("the breaker stops dispatching after 5 errors", async () => {
    const r = await p.run(["exp", "gateway"], { env });
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.equal(server.requests(), 5);
    const out = lines(r.stdout);
    const halt = out.findIndex((l) => l.startsWith("✗ experiment-halted"));
    const error =
      `Cannot send to agent "openai-compatible": HTTP 401 from ${server.baseUrl}/chat/completions: ` +
      '{"error":{"message":"Incorrect API key provided"}}';
    assert.deepEqual(out.slice(halt, halt + 2), [
      `✗ experiment-halted · gateway: systematic error: the first 5 attempts all errored with agent-send-failed: ${error} (3 attempts not started)`,
      "    hint: fix the cause and run again; --no-bail runs every attempt anyway",
    ]);
    assert.equal(out.filter((l) => /^✗ q\d {2}gateway#0 {2}errored/.test(l)).length, 5);
  });
  await t.step("--no-bail runs every Attempt", async () => {
    const r = await p.run(["exp", "gateway", "--no-bail", "--rerun", "all", "--json"], { env });
    assert.equal(r.code, 1, r.stderr);
    assert.equal(server.requests(), 5 + 8);
    const events = ndjson(r.stdout);
    assert.equal(events.filter((e) => e.type === "attempt_end").length, 8);
    assert.equal(events.filter((e) => e.code === "experiment-halted").length, 0);
  });
});

/**
 * `openAICompatibleAgent` end to end (authoring.md §8.2): the real CLI runs
 * `tests/fixtures/openai_project` against a local chat-completions server.
 */
import assert from "node:assert/strict";
import { ndjson, tempProject } from "../_helpers/cli.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

interface WeatherServer extends AsyncDisposable {
  readonly baseUrl: string;
  /** Message lists of the requests answered with 200, in order. */
  readonly conversations: Json[][];
  /** Requests answered with 429. */
  readonly rejected: () => number;
  /** `Authorization` header of every request (null when absent). */
  readonly authorizations: (string | null)[];
}

/**
 * A chat-completions server on 127.0.0.1, port 0: the first `rejections` requests get 429; then
 * a user question gets a get_weather call and a tool result gets the final answer.
 */
function weatherServer(rejections = 0): WeatherServer {
  const conversations: Json[][] = [];
  const authorizations: (string | null)[] = [];
  let rejected = 0;
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
    authorizations.push(req.headers.get("authorization"));
    const body = await req.json();
    if (rejected < rejections) {
      rejected++;
      return new Response("rate limited", { status: 429, headers: { "retry-after": "0" } });
    }
    conversations.push(body.messages);
    const last = body.messages.at(-1);
    const message = last.role === "tool"
      ? { role: "assistant", content: `It is ${JSON.parse(last.content).sky} in Brooklyn.` }
      : {
        role: "assistant",
        content: null,
        tool_calls: [{
          id: "call_1",
          type: "function",
          function: { name: "get_weather", arguments: '{"city":"Brooklyn"}' },
        }],
      };
    return Response.json({
      choices: [{ index: 0, message, finish_reason: last.role === "tool" ? "stop" : "tool_calls" }],
      usage: { prompt_tokens: 12, completion_tokens: 5 },
    });
  });
  return {
    baseUrl: `http://127.0.0.1:${server.addr.port}/v1`,
    conversations,
    rejected: () => rejected,
    authorizations,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

Deno.test("niceeval exp: an openai-compatible experiment calls a tool and passes exits 0", async () => {
  await using server = weatherServer();
  await using p = await tempProject("openai_project");
  const r = await p.run(["exp", "gateway", "--json"], {
    env: { OPENAI_FIXTURE_BASE_URL: server.baseUrl },
  });
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const end = ndjson(r.stdout).find((e) => e.type === "attempt_end");
  assert.equal(end?.verdict, "passed", JSON.stringify(end));
  assert.equal(server.conversations.length, 2);
  assert.deepEqual(server.conversations[1]?.map((m: Json) => m.role), [
    "system",
    "user",
    "assistant",
    "tool",
  ]);
  assert.equal(server.conversations[1]?.[3].content, '{"city":"Brooklyn","sky":"sunny"}');
});

Deno.test("niceeval exp: a rate-limited first request backs off and is retried exits 0", async () => {
  // One 429: the backoff waits max(Retry-After 0, 5 s × U) at most 5 s of real time.
  await using server = weatherServer(1);
  await using p = await tempProject("openai_project");
  const r = await p.run(["exp", "gateway", "--json"], {
    env: { OPENAI_FIXTURE_BASE_URL: server.baseUrl },
  });
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const events = ndjson(r.stdout);
  const sleeping = events.filter((e) => e.type === "backoff" && e.state === "sleeping");
  assert.equal(sleeping.length, 1, JSON.stringify(events));
  assert.equal(sleeping[0]?.reason, "rate_limit");
  assert.equal(sleeping[0]?.retry, 1);
  assert.equal(server.rejected(), 1);
  assert.equal(events.find((e) => e.type === "attempt_end")?.verdict, "passed");
});

Deno.test("niceeval exp: the API key comes from .env unless the environment already sets it exits 0", async (t) => {
  await using server = weatherServer();
  await using p = await tempProject("openai_project");
  await p.write(".env", "OPENAI_API_KEY=sk-from-dotenv\n");
  const env = { OPENAI_FIXTURE_BASE_URL: server.baseUrl };
  await t.step(".env fills an unset variable", async () => {
    const r = await p.run(["exp", "gateway", "--json"], { env });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.deepEqual([...new Set(server.authorizations)], ["Bearer sk-from-dotenv"]);
    assert.ok(!r.stdout.includes("sk-from-dotenv"), "the key never reaches the output");
  });
  await t.step("a variable already set wins over .env", async () => {
    server.authorizations.length = 0;
    const r = await p.run(["exp", "gateway", "--rerun", "all", "--json"], {
      env: { ...env, OPENAI_API_KEY: "sk-from-shell" },
    });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.deepEqual([...new Set(server.authorizations)], ["Bearer sk-from-shell"]);
  });
});

/**
 * `openAICompatibleAgent` end to end (authoring.md §8.2): the real CLI runs
 * `tests/fixtures/openai_project` against a local chat-completions server.
 */
import assert from "node:assert/strict";
import { ndjson, tempProject } from "../_helpers/cli.ts";
import { weatherServer } from "../_fakes/chat_server.ts";

Deno.test("niceeval exp: an openai-compatible experiment calls a tool and passes exits 0", async () => {
  await using server = weatherServer();
  await using p = await tempProject("openai_project");
  const r = await p.run(["exp", "gateway", "--json"], {
    env: { OPENAI_FIXTURE_BASE_URL: server.baseUrl, OPENAI_API_KEY: "sk-test" },
  });
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const end = ndjson(r.stdout).find((e) => e.type === "attempt_end");
  assert.equal(end?.verdict, "passed", JSON.stringify(end));
  assert.equal(server.conversations.length, 2);
  assert.deepEqual(server.conversations[1]?.map((m: { role: string }) => m.role), [
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
    env: { OPENAI_FIXTURE_BASE_URL: server.baseUrl, OPENAI_API_KEY: "sk-test" },
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

/**
 * `codexAgent` end to end with the real, pinned Codex CLI against the fake Responses server, all
 * inside a loopback-only network namespace (docs/coding_agents.md). One niceeval run covers the
 * scenarios of `tests/fixtures/codex_project`.
 */
import assert from "node:assert/strict";
import { ndjson, tempProject } from "../../_helpers/cli.ts";
import {
  agentCliBin,
  agentCliSkipReason,
  REQUIRE_AGENT_CLIS,
  runInLoopback,
} from "../../_helpers/agent_cli.ts";
import { RESPONSES_USAGE } from "../../_fakes/model_servers/responses.ts";
import { recordAttempt, recordUsage } from "./_record.ts";
import { standInBed } from "./_stand_in.ts";
import { codexAgent } from "../../../src/agents/mod.ts";

const skip = await agentCliSkipReason(["codex"]);
const KEY = "sk-codex-fake-0123456789abcdef";
const SLEEP_MARKER = "sleep 987654.5";

// deno-lint-ignore no-explicit-any
type Json = any;

Deno.test({
  name: `codexAgent: tool call + file, second turn, 429 retried, crash, timeout, usage${
    skip !== undefined && !REQUIRE_AGENT_CLIS ? ` (skipped: ${skip})` : ""
  }`,
  ignore: skip !== undefined && !REQUIRE_AGENT_CLIS,
  fn: async (t) => {
    assert.equal(skip, undefined, skip);
    await using p = await tempProject("codex_project");
    const r = await runInLoopback({
      fake: {
        module: new URL("../../_fakes/model_servers/responses.ts", import.meta.url),
        factory: "responsesServer",
      },
      project: p.dir,
      stateDir: p.stateDir,
      args: ["exp", "--json"],
      env: {
        CODEX_FIXTURE_BIN: agentCliBin("codex"),
        OPENAI_BASE_URL: "{{baseUrl}}",
        OPENAI_API_KEY: KEY,
      },
      markers: [SLEEP_MARKER],
    });
    const events = ndjson(r.stdout);
    const ends = new Map<string, Json>(
      events.filter((e) => e.type === "attempt_end").map((e: Json) => [e.evalId ?? e.eval, e]),
    );
    const dump = () => r.stdout.slice(-6000) + r.stderr.slice(-3000);
    const requests = r.requests as Json[];
    await t.step("the CLI talks the Responses API to the fake with the key and the model", () => {
      assert.ok(requests.length > 0, dump());
      for (const q of requests) {
        assert.equal(`${q.method} ${q.path}`, "POST /v1/responses", JSON.stringify(q.path));
        assert.equal(q.authorization, `Bearer ${KEY}`);
        assert.equal(q.body.model, "gpt-5.5");
      }
    });
    await t.step("S1/S2: a tool call creates a file the eval reads; a second turn resumes", () => {
      assert.equal(ends.get("tool_file")?.verdict, "passed", dump());
      const second = requests.find((q) => JSON.stringify(q.body.input).includes("append\\nRUN"));
      assert.ok(second, "the second turn reached the fake");
      const inputText = JSON.stringify(second.body.input);
      assert.ok(inputText.includes("make the file"), "the resumed thread carries turn 1");
    });
    await t.step("S3: a 429 becomes a retried rate_limit send", () => {
      assert.equal(ends.get("rate_limit")?.verdict, "passed", dump());
      const backoff = events.filter((e) => e.type === "backoff" && e.state === "sleeping");
      assert.equal(backoff.length, 1, dump());
      assert.equal(backoff[0]?.reason, "rate_limit");
      assert.equal(requests.filter((q) => q.answer === "429").length, 1);
    });
    await t.step("S4: a crashing CLI fails the send with its redacted stderr tail", async () => {
      assert.equal(ends.get("crash")?.verdict, "errored", dump());
      const { error } = await recordAttempt(p.dir, "crash");
      assert.equal(error.code, "agent-send-failed");
      assert.match(error.message, /exited with \d+.*: fatal: lost the connection \(key \*\*\*\)/);
      assert.ok(!r.stdout.includes(KEY) && !r.stderr.includes(KEY), "the key never leaks");
    });
    await t.step("S5: the Attempt deadline kills the CLI and its tool processes", () => {
      assert.equal(ends.get("timeout")?.verdict, "errored", dump());
      assert.match(JSON.stringify(ends.get("timeout")), /timeout/);
      assert.ok(
        requests.some((q) => q.answer === "tool" && JSON.stringify(q.body).includes(SLEEP_MARKER)),
      );
      assert.deepEqual(r.survivors, []);
    });
    await t.step("S6: usage in the Record equals the per-turn usage of the stream", async () => {
      const usage = await recordUsage(p.dir, "tool_file");
      // Four model requests (tool call and answer per turn). The CLI reports the thread's total
      // on resume; summing totals instead of per-turn shares would give six requests' worth.
      const n = 4;
      assert.deepEqual(usage, {
        inputTokens: n * RESPONSES_USAGE.input_tokens,
        outputTokens: n * RESPONSES_USAGE.output_tokens,
        cacheReadTokens: n * RESPONSES_USAGE.input_tokens_details.cached_tokens,
        cacheCreationTokens: 0,
        reasoningTokens: n * RESPONSES_USAGE.output_tokens_details.reasoning_tokens,
        // The stream reports neither a request count nor a cost.
        requests: null,
        costUSD: null,
      });
    });
  },
});

// Fast tests: a stand-in CLI prints streams the real CLI wrote (tests/fixtures/agent_streams/).

Deno.test("codexAgent() writes its config, resumes the thread and reports each turn's share of the thread total", async () => {
  await using bed = await standInBed({
    first: "codex_exit3.ndjson",
    resumed: "codex_resumed.ndjson",
    resumeArg: "resume",
    hostEnv: { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: "http://127.0.0.1:9/v1", HOME: "/nowhere" },
    model: "gpt-5.5",
  });
  const agent = bed.resolve(codexAgent({ bin: bed.bin, env: bed.env }));
  const first = await agent.send({ text: "-first" }, bed.ctx);
  assert.equal(first.status, "completed");
  assert.deepEqual(first.usage, {
    inputTokens: 240,
    outputTokens: 60,
    cacheReadTokens: 40,
    cacheCreationTokens: 0,
    reasoningTokens: 16,
  });
  assert.equal(bed.ctx.session.id, "01a23649-539a-7310-9c47-b01d62ea17d5");
  const second = await agent.send({ text: "second" }, bed.ctx);
  // The resumed stream reports the thread total (480 input tokens): the turn's share is 240.
  assert.deepEqual(second.usage, first.usage);
  const argv = await bed.args(0);
  assert.deepEqual(argv.slice(0, 4), [
    "exec",
    "--json",
    "--skip-git-repo-check",
    "--dangerously-bypass-approvals-and-sandbox",
  ]);
  assert.deepEqual(argv.slice(-2), ["--", "-first"], "an input that looks like a flag stays input");
  assert.deepEqual((await bed.args(1)).slice(-4), [
    "resume",
    "01a23649-539a-7310-9c47-b01d62ea17d5",
    "--",
    "second",
  ]);
  const config = await bed.config(0);
  assert.match(config, /^base_url = "http:\/\/127\.0\.0\.1:9\/v1"$/m);
  assert.match(config, /^model = "gpt-5\.5"$/m);
  assert.ok(!config.includes(KEY), "the key stays in the environment");
});

Deno.test("codexAgent() rejects a send that hit a 429 before any item as rate_limit, capturing no thread", async () => {
  await using bed = await standInBed({
    first: "codex_429.ndjson",
    resumeArg: "resume",
    exitCode: 1,
    hostEnv: { OPENAI_API_KEY: KEY },
  });
  const agent = bed.resolve(codexAgent({ bin: bed.bin, env: bed.env }));
  await assert.rejects(
    () => agent.send({ text: "hi" }, bed.ctx),
    (error: Json) => error.name === "SendRejectedError" && error.reason === "rate_limit",
  );
  assert.equal(bed.ctx.session.id, undefined, "the retry starts a new thread");
});

Deno.test("codexAgent() fails the send with the stream's message when a server error stopped it before any item", async () => {
  await using bed = await standInBed({
    first: "codex_500.ndjson",
    resumeArg: "resume",
    exitCode: 1,
    hostEnv: { OPENAI_API_KEY: KEY },
  });
  const agent = bed.resolve(codexAgent({ bin: bed.bin, env: bed.env }));
  await assert.rejects(
    () => agent.send({ text: "hi" }, bed.ctx),
    (error: Json) =>
      error.name !== "SendRejectedError" &&
      /high demand.*stand-in stderr \(key \*\*\*\)/s.test(error.message),
  );
});

Deno.test("codexAgent() rejects unknown options", () => {
  assert.throws(() => codexAgent({ modle: "x" } as Json), /modle/);
});

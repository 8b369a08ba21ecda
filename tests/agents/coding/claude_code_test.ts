/**
 * `claudeCodeAgent` end to end with the real, pinned Claude Code CLI against the fake Anthropic
 * Messages server, all inside a loopback-only network namespace (docs/coding_agents.md). One
 * niceeval run covers the scenarios of `tests/fixtures/claude_code_project`.
 */
import assert from "node:assert/strict";
import { ndjson, tempProject } from "../../_helpers/cli.ts";
import {
  agentCliBin,
  agentCliSkipReason,
  REQUIRE_AGENT_CLIS,
  runInLoopback,
} from "../../_helpers/agent_cli.ts";
import { FAKE_USAGE } from "../../_fakes/model_servers/anthropic.ts";
import { recordDocuments, recordUsage } from "./_record.ts";

const skip = await agentCliSkipReason(["claude"]);
const KEY = "sk-ant-fake-0123456789abcdef";
// Unique per run, so that a process left by another run is never mistaken for this one's.
const HANG_MARKER = `tail -s ${100000 + Math.floor(Math.random() * 800000)} -f /dev/null`;

// deno-lint-ignore no-explicit-any
type Json = any;

Deno.test({
  name: `claudeCodeAgent: tool call + file, second turn, 429 retried, crash, timeout, usage${
    skip !== undefined && !REQUIRE_AGENT_CLIS ? ` (skipped: ${skip})` : ""
  }`,
  ignore: skip !== undefined && !REQUIRE_AGENT_CLIS,
  fn: async (t) => {
    assert.equal(skip, undefined, skip);
    await using p = await tempProject("claude_code_project");
    const timeoutEval = await p.read("evals/timeout.eval.ts");
    await p.write(
      "evals/timeout.eval.ts",
      timeoutEval.replace("tail -s 987654 -f /dev/null", HANG_MARKER),
    );
    const r = await runInLoopback({
      fake: {
        module: new URL("../../_fakes/model_servers/anthropic.ts", import.meta.url),
        factory: "anthropicFake",
      },
      project: p.dir,
      stateDir: p.stateDir,
      args: ["exp", "--json"],
      env: {
        CLAUDE_FIXTURE_BIN: agentCliBin("claude"),
        ANTHROPIC_BASE_URL: "{{baseUrl}}",
        ANTHROPIC_API_KEY: KEY,
      },
      markers: [HANG_MARKER],
    });
    const events = ndjson(r.stdout);
    const ends = new Map<string, Json>(
      events.filter((e) => e.type === "attempt_end").map((e: Json) => [e.evalId ?? e.eval, e]),
    );
    const errors = (evalId: string) =>
      JSON.stringify(events.filter((e) => e.type === "error" && e.evalId === evalId));
    const dump = () =>
      events.filter((e) => e.type === "error" || e.type === "attempt_end")
        .map((e) => JSON.stringify(e)).join("\n") + r.stderr.slice(-3000);
    await t.step(
      "S1/S2: a tool call creates a file the eval reads; a second turn resumes",
      async () => {
        const verdict = ends.get("tool_file")?.verdict;
        if (verdict !== "passed") assert.fail(dump() + (await recordFiles(p.dir, "tool_file")));
        // The second turn's request carries the first turn's conversation: the session resumed.
        const second = r.requests.find((q) => q.prompt === "second turn");
        assert.ok(Number(second?.messages) >= 5, JSON.stringify(r.requests));
      },
    );
    await t.step("S3: a 429 becomes a retried rate_limit send", () => {
      assert.equal(ends.get("rate_limit")?.verdict, "passed", dump());
      const backoff = events.filter((e) => e.type === "backoff" && e.state === "sleeping");
      assert.equal(backoff.length, 1, dump());
      assert.equal(backoff[0]?.reason, "rate_limit");
      assert.equal(r.requests.filter((q) => q.reply === "429").length, 1);
    });
    await t.step("S4: a crashing CLI fails the send with its redacted stderr tail", () => {
      const end = ends.get("crash");
      assert.equal(end?.verdict, "errored", dump());
      assert.equal(end?.errorCode, "agent-send-failed");
      const text = errors("crash");
      assert.match(text, /lost the connection/);
      assert.ok(!r.stdout.includes(KEY) && !r.stderr.includes(KEY), "the key never leaks");
    });
    await t.step("S5: the Attempt deadline kills the CLI and its tool processes", () => {
      assert.equal(ends.get("timeout")?.verdict, "errored", dump());
      assert.equal(ends.get("timeout")?.errorCode, "timeout", dump());
      assert.ok(r.requests.some((q) => String(q.prompt).includes(HANG_MARKER)));
      assert.deepEqual(r.survivors, []);
    });
    await t.step("S6: usage and cost in the Record equal what the stream reported", async () => {
      const usage = await recordUsage(p.dir, "tool_file");
      // Three model requests (tool call, answer, second turn), each reporting FAKE_USAGE.
      assert.equal(usage.inputTokens, 3 * FAKE_USAGE.input_tokens, JSON.stringify(usage));
      assert.equal(usage.outputTokens, 3 * FAKE_USAGE.output_tokens);
      assert.equal(usage.cacheReadTokens, 3 * FAKE_USAGE.cache_read_input_tokens);
      assert.equal(usage.cacheCreationTokens, 3 * FAKE_USAGE.cache_creation_input_tokens);
      assert.equal(usage.requests, 3);
      // The CLI prices each request at its list price for the model: 100 × $3/M input, 20 × $15/M
      // output, 10 × $0.30/M cache reads, 5 × $3.75/M cache writes = $0.00062175.
      assert.ok(Math.abs(usage.costUSD - 3 * 0.00062175) < 1e-12, JSON.stringify(usage));
      assert.deepEqual(ends.get("tool_file")?.usage, usage);
    });
  },
});

/** Every Record document of the Attempt of `evalId` (for failure messages). */
async function recordFiles(project: string, evalId: string): Promise<string> {
  try {
    return JSON.stringify(await recordDocuments(project, evalId), null, 2);
  } catch (error) {
    return `no Record of ${evalId}: ${error}`;
  }
}

/**
 * `opencodeAgent` end to end with the real, pinned OpenCode CLI against the fake Chat Completions server, all
 * inside a loopback-only network namespace (docs/coding_agents.md). Four niceeval runs, one per eval
 * of `tests/fixtures/opencode_project`, cover its scenarios.
 */
import assert from "node:assert/strict";
import { ndjson, type TempProject, tempProject } from "../../_helpers/cli.ts";
import {
  agentCliBin,
  agentCliSkipReason,
  REQUIRE_AGENT_CLIS,
  runInLoopback,
} from "../../_helpers/agent_cli.ts";
import { CHAT_USAGE } from "../../_fakes/model_servers/chat_completions.ts";
import { recordAttempt, recordUsage } from "./_record.ts";
import { standInBed } from "./_stand_in.ts";
import { opencodeAgent } from "../../../src/agents/mod.ts";

const skip = await agentCliSkipReason(["opencode"]);
const KEY = "sk-opencode-fake-0123456789abcdef";
const SLEEP_MARKER = "sleep 987654.75";

// deno-lint-ignore no-explicit-any
type Json = any;

/** The user texts of a Chat Completions request, whatever the content's shape. */
function userTexts(q: Json): string[] {
  return (q.body.messages as Json[]).filter((m) => m.role === "user").flatMap((m) =>
    typeof m.content === "string"
      ? [m.content]
      : (m.content as Json[]).filter((c) => c.type === "text").map((c) => c.text)
  );
}

/** One niceeval run of the fixture in its own loopback namespace, with its own fake. */
function runFixture(p: TempProject, args: string[], markers: string[] = []) {
  return runInLoopback({
    fake: {
      module: new URL("../../_fakes/model_servers/chat_completions.ts", import.meta.url),
      factory: "chatCompletionsServer",
    },
    project: p.dir,
    stateDir: p.stateDir,
    args: ["exp", ...args, "--json"],
    env: {
      OPENCODE_FIXTURE_BIN: agentCliBin("opencode"),
      OPENAI_BASE_URL: "{{baseUrl}}",
      OPENAI_API_KEY: KEY,
    },
    markers,
  });
}

/**
 * Resolves once a process whose command line contains `marker` runs, or once `run` settled
 * (whichever comes first; the run's own assertions tell what happened).
 */
async function untilRunning(marker: string, run: Promise<unknown>): Promise<void> {
  let settled = false;
  const done = run.then(() => settled = true, () => settled = true);
  while (!settled) {
    for await (const entry of Deno.readDir("/proc")) {
      if (!/^\d+$/.test(entry.name)) continue;
      const cmdline = await Deno.readTextFile(`/proc/${entry.name}/cmdline`).catch(() => "");
      if (cmdline.replaceAll("\0", " ").includes(marker)) return;
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([done, new Promise((resolve) => timer = setTimeout(resolve, 50))]);
    clearTimeout(timer);
  }
}

Deno.test({
  name: `opencodeAgent: tool call + file, second turn, 429 retried, crash, timeout, usage${
    skip !== undefined && !REQUIRE_AGENT_CLIS ? ` (skipped: ${skip})` : ""
  }`,
  ignore: skip !== undefined && !REQUIRE_AGENT_CLIS,
  fn: async (t) => {
    assert.equal(skip, undefined, skip);
    // The local provider runs one Attempt at a time per process, so each eval runs in a process
    // of its own on its own copy of the project. The timeout eval waits out its deadline: it
    // starts first and alone, and once its CLI runs the endless tool command (its CLI started and
    // reached the fake within the deadline, as when it ran alone), the 429 eval (two CLI runs and
    // a backoff), the two-turn eval and the crash eval run side by side with the wait.
    await using twoTurnsProject = await tempProject("opencode_project");
    await using limitedProject = await tempProject("opencode_project");
    await using deadlineProject = await tempProject("opencode_project");
    await using crashProject = await tempProject("opencode_project");
    const deadlineRun = runFixture(deadlineProject, ["opencode", "timeout"], [SLEEP_MARKER]);
    await untilRunning(SLEEP_MARKER, deadlineRun);
    const [limited, main, crash] = await Promise.all([
      runFixture(limitedProject, ["opencode", "rate_limit"]),
      runFixture(twoTurnsProject, ["opencode", "tool_file"]),
      runFixture(crashProject, ["crash"]),
    ]);
    const deadline = await deadlineRun;
    const runs = [limited, main, deadline, crash];
    const r = {
      stdout: runs.map((x) => x.stdout).join(""),
      stderr: runs.map((x) => x.stderr).join(""),
    };
    const events = ndjson(r.stdout);
    const ends = new Map<string, Json>(
      events.filter((e) => e.type === "attempt_end").map((e: Json) => [e.evalId ?? e.eval, e]),
    );
    const dump = () => r.stdout.slice(-6000) + r.stderr.slice(-3000);
    const requests = runs.flatMap((x) => x.requests) as Json[];
    await t.step(
      "the CLI talks Chat Completions to the fake with the key, tools and no title request",
      () => {
        assert.ok(requests.length > 0, dump());
        for (const x of requests) {
          assert.equal(
            `${x.method} ${x.path}`,
            "POST /v1/chat/completions",
            JSON.stringify(x.path),
          );
          assert.equal(x.authorization, `Bearer ${KEY}`);
          assert.equal(x.body.model, "fake-model");
          assert.notEqual(x.answer, "title", "the title request is disabled");
        }
      },
    );
    await t.step(
      "S1/S2: a tool call creates a file the eval reads; a second turn continues",
      () => {
        assert.equal(ends.get("tool_file")?.verdict, "passed", dump());
        const second = requests.find((x) =>
          JSON.stringify(x.body.messages).includes("append\\nRUN")
        );
        assert.ok(second, "the second turn reached the fake");
        const text = JSON.stringify(second.body.messages);
        assert.ok(text.includes("make the file"), "the continued session carries turn 1");
        // A numeric word, quotes and a double space reach the model verbatim (through stdin).
        const first =
          'make the file "made.txt" 42  times\nRUN: printf hello > made.txt\nREPLY: made it';
        assert.ok(userTexts(second).includes(first), JSON.stringify(userTexts(second)));
      },
    );
    await t.step("S3: a 429 becomes a retried rate_limit send", () => {
      assert.equal(ends.get("rate_limit")?.verdict, "passed", dump());
      const backoff = ndjson(limited.stdout).filter((e) =>
        e.type === "backoff" && e.state === "sleeping"
      );
      assert.equal(backoff.length, 1, dump());
      assert.equal(backoff[0]?.reason, "rate_limit");
      // The CLI retries a 429 itself (six requests) before it gives up and niceeval retries.
      assert.equal((limited.requests as Json[]).filter((x) => x.answer === "429").length, 6);
    });
    await t.step("S4: a crashing CLI fails the send with its redacted stderr tail", async () => {
      assert.equal(ends.get("crash")?.verdict, "errored", dump());
      const { error } = await recordAttempt(crashProject.dir, "crash");
      assert.equal(error.code, "agent-send-failed");
      assert.match(error.message, /exited with \d+.*: fatal: lost the connection \(key \*\*\*\)/);
      assert.ok(!r.stdout.includes(KEY) && !r.stderr.includes(KEY), "the key never leaks");
    });
    await t.step("S5: the Attempt deadline kills the CLI and its tool processes", () => {
      assert.equal(ends.get("timeout")?.verdict, "errored", dump());
      assert.match(JSON.stringify(ends.get("timeout")), /timeout/);
      assert.ok(
        (deadline.requests as Json[]).some((x) =>
          x.answer === "tool" && JSON.stringify(x.body).includes(SLEEP_MARKER)
        ),
      );
      assert.deepEqual(deadline.survivors, []);
    });
    await t.step(
      "S6: usage and cost in the Record equal the sums of the stream's steps",
      async () => {
        const usage = await recordUsage(twoTurnsProject.dir, "tool_file");
        // Four model requests (tool call and answer per turn), each one step of the stream.
        const n = 4;
        const { costUSD, ...tokens } = usage;
        assert.deepEqual(tokens, {
          inputTokens: n * CHAT_USAGE.prompt_tokens,
          outputTokens: n * CHAT_USAGE.completion_tokens,
          cacheReadTokens: n * CHAT_USAGE.prompt_tokens_details.cached_tokens,
          cacheCreationTokens: 0,
          reasoningTokens: n * CHAT_USAGE.completion_tokens_details.reasoning_tokens,
          requests: n,
        });
        // Per step, as the CLI prices it: fresh input 150 × $3, cache reads 50 × $0.3, output and
        // reasoning 40 × $15, per million tokens.
        const step = (150 * 3 + 50 * 0.3 + 40 * 15) / 1e6;
        assert.ok(Math.abs(costUSD - n * step) < 1e-12, JSON.stringify(usage));
      },
    );
  },
});

// Fast tests: a stand-in CLI prints streams the real CLI wrote (tests/fixtures/agent_streams/).

Deno.test("opencodeAgent() writes its config, continues the session and sums each run's steps with cost", async () => {
  await using bed = await standInBed({
    first: "opencode_exit3.ndjson",
    resumed: "opencode_resumed.ndjson",
    resumeArg: "--session",
    hostEnv: { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: "http://127.0.0.1:9/v1" },
    model: "fake-model",
  });
  const agent = bed.resolve(
    opencodeAgent({
      bin: bed.bin,
      env: bed.env,
      pricing: { inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3 },
    }),
  );
  const input = 'make  "it" 429\ttimes\n';
  const first = await agent.send({ text: input }, bed.ctx);
  assert.equal(first.status, "completed");
  assert.deepEqual(first.usage, {
    inputTokens: 400,
    outputTokens: 80,
    cacheReadTokens: 100,
    cacheCreationTokens: 0,
    reasoningTokens: 20,
    requests: 2,
    costUSD: 0.00213,
  });
  assert.equal(bed.ctx.session.id, "ses_dc9b56729ffeXufxa7KauibLz7");
  await agent.send({ text: "second" }, bed.ctx);
  const argv = await bed.args(0);
  assert.deepEqual(argv.slice(0, 3), ["run", "--format", "json"]);
  assert.ok(argv.join(" ").includes("--model niceeval/fake-model"), argv.join(" "));
  assert.ok(!argv.some((a) => a.includes("make")), "the input is no argument");
  assert.equal(await bed.stdin(0), input, "the input goes verbatim through standard input");
  const second = await bed.args(1);
  assert.equal(second[second.indexOf("--session") + 1], "ses_dc9b56729ffeXufxa7KauibLz7");
  const config = JSON.parse(await bed.config(0));
  assert.equal(config.provider.niceeval.options.baseURL, "http://127.0.0.1:9/v1");
  assert.equal(config.model, "niceeval/fake-model");
});

Deno.test("opencodeAgent() reports tokens without costUSD when no pricing is given", async () => {
  await using bed = await standInBed({
    first: "opencode_exit3.ndjson",
    resumeArg: "--session",
    model: "fake-model",
  });
  const agent = bed.resolve(opencodeAgent({ bin: bed.bin, env: bed.env }));
  const turn = await agent.send({ text: "x" }, bed.ctx);
  assert.equal(turn.usage?.costUSD, undefined);
  assert.equal(turn.usage?.inputTokens, 400);
});

Deno.test("opencodeAgent() rejects a send that hit a 429 before any step as rate_limit with its Retry-After", async () => {
  await using bed = await standInBed({
    first: "opencode_429.ndjson",
    resumeArg: "--session",
    exitCode: 1,
    model: "fake-model",
  });
  const agent = bed.resolve(opencodeAgent({ bin: bed.bin, env: bed.env }));
  await assert.rejects(
    () => agent.send({ text: "hi" }, bed.ctx),
    (error: Json) =>
      error.name === "SendRejectedError" && error.reason === "rate_limit" &&
      error.retryAfterMs === 0,
  );
  assert.equal(bed.ctx.session.id, undefined, "the retry starts a new session");
});

Deno.test("opencodeAgent() fails a send without a model as agent-config-invalid", async () => {
  await using bed = await standInBed({ first: "opencode_exit3.ndjson", resumeArg: "--session" });
  const agent = bed.resolve(opencodeAgent({ bin: bed.bin, env: bed.env }));
  await assert.rejects(
    () => agent.send({ text: "hi" }, bed.ctx),
    (error: Json) => error.code === "agent-config-invalid" && /needs a model/.test(error.message),
  );
});

Deno.test("opencodeAgent() rejects unknown options and invalid prices", () => {
  assert.throws(() => opencodeAgent({ modle: "x" } as Json), /modle/);
  assert.throws(() => opencodeAgent({ pricing: { inputPerMTok: 1 } } as Json), /outputPerMTok/);
  assert.throws(
    () => opencodeAgent({ pricing: { inputPerMTok: -1, outputPerMTok: 1 } }),
    /pricing\.inputPerMTok/,
  );
});

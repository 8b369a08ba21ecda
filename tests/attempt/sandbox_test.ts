/**
 * Sandbox-agent Attempts on the real `local` provider (sandboxes.md §3.1, §3.3; authoring.md §3.2
 * rule 3, §7.5): `t.sandbox` and `ctx.sandbox`, failure codes by phase (rule 34), the deadline
 * (rule 47), cleanup diagnostics kept with the Attempt (step 14) and no sandbox left behind.
 */
import assert from "node:assert/strict";
import { completeEvidenceCoverage, defineAgent } from "../../src/agents/mod.ts";
import { defineEval } from "../../src/discovery/mod.ts";
import { equals, isTrue } from "../../src/expect/mod.ts";
import { localSandbox, sandboxLayer } from "../../src/sandbox/mod.ts";
import { createFakeControl } from "../_fakes/control.ts";
import { localRoots, runSandboxEval } from "./_sandbox.ts";

/** A sandbox agent that writes the turn's text into `reply.txt` through `ctx.sandbox`. */
const writer = defineAgent({
  name: "writer",
  kind: "sandbox",
  evidenceCoverage: completeEvidenceCoverage,
  send: async (input, ctx) => {
    await ctx.sandbox!.writeText("reply.txt", input.text);
    return { status: "completed", events: [{ type: "message", role: "assistant", text: "ok" }] };
  },
});

Deno.test("a sandbox agent writes through ctx.sandbox and the eval reads it through t.sandbox", async () => {
  await using roots = await localRoots();
  const seen: string[] = [];
  const result = await runSandboxEval(
    roots,
    defineEval({
      async test(t) {
        seen.push(t.sandbox.workdir, t.sandbox.provider);
        await t.send("written in the sandbox");
        t.check(await t.sandbox.readText("reply.txt"), equals("written in the sandbox"));
        t.check(await t.sandbox.pathExists("prepared.txt"), isTrue());
      },
    }),
    { agent: writer, template: localSandbox().prepare("touch prepared.txt") },
  );
  assert.equal(result.verdict, "passed", JSON.stringify(result.error));
  assert.ok(seen[0]!.startsWith(roots.tmpDir), seen[0]);
  assert.equal(seen[1], "local");
  assert.deepEqual(await roots.left(), []);
  assert.ok(result.details.logs.some((l) => l.text.startsWith("$ touch prepared.txt → exit 0")));
});

Deno.test("a failing prepare step errors the Attempt in sandbox.prepare with its code, skipping the agent", async () => {
  await using roots = await localRoots();
  const calls: string[] = [];
  const agent = defineAgent({
    name: "tracked",
    kind: "sandbox",
    evidenceCoverage: completeEvidenceCoverage,
    setup: () => Promise.resolve(void calls.push("setup")),
    teardown: () => Promise.resolve(void calls.push("teardown")),
    send: () => Promise.resolve({ status: "completed", events: [] }),
  });
  const result = await runSandboxEval(
    roots,
    defineEval({ test: () => void calls.push("body") }),
    { agent, template: localSandbox(), evalLayer: sandboxLayer().prepare(["false"]) },
  );
  assert.equal(result.verdict, "errored");
  // Rule 34: the thrown SandboxError's code (a failed OrThrow command), in the prepare phase.
  assert.equal(result.error?.code, "sandbox-command-failed");
  assert.equal(result.error?.phase, "sandbox.prepare");
  assert.deepEqual(calls, []);
  assert.deepEqual(await roots.left(), []);
});

Deno.test("a throwing setup hook is sandbox-setup-failed and its layer's teardown still runs", async () => {
  await using roots = await localRoots();
  const calls: string[] = [];
  const template = localSandbox()
    .teardown(() => void calls.push("teardown"))
    .setup(() => {
      throw new Error("no network");
    });
  const result = await runSandboxEval(roots, defineEval({ test() {} }), {
    agent: writer,
    template,
  });
  assert.equal(result.error?.code, "sandbox-setup-failed");
  assert.match(result.error?.message ?? "", /no network/);
  assert.deepEqual(calls, ["teardown"]);
});

Deno.test("a layer teardown failure is a diagnostic kept with the Attempt; the verdict stays", async () => {
  await using roots = await localRoots();
  const template = localSandbox().teardown(() => {
    throw new Error("cannot clean");
  });
  const result = await runSandboxEval(
    roots,
    defineEval({ test: (t) => void t.check(true, isTrue()) }),
    { agent: writer, template },
  );
  assert.equal(result.verdict, "passed");
  const found = result.details.diagnostics.filter((d) => d.code === "sandbox-teardown-failed");
  assert.equal(found.length, 1);
  assert.equal(found[0]!.level, "warning");
  assert.equal(found[0]!.data?.phase, "sandbox.teardown");
  assert.match(String(found[0]!.data?.sandboxId), /^niceeval-local-/);
  assert.deepEqual(await roots.left(), []);
});

Deno.test("a deadline during the body errors the Attempt with timeout; cleanup still runs", async () => {
  await using roots = await localRoots();
  const control = createFakeControl();
  const result = await runSandboxEval(
    roots,
    defineEval({
      async test(t) {
        const running = t.sandbox.runCommand("sleep", ["30"]);
        control.abort("timeout");
        await running.catch(() => undefined);
      },
    }),
    { agent: writer, template: localSandbox(), control },
  );
  assert.equal(result.verdict, "errored");
  assert.equal(result.error?.code, "timeout");
  assert.deepEqual(await roots.left(), []);
});

Deno.test("fixtures are copied experiment first, then the eval's, into the private workdir", async () => {
  await using roots = await localRoots();
  const fixtures = await Deno.realPath(await Deno.makeTempDir({ prefix: "niceeval-fixtures-" }));
  try {
    await Deno.mkdir(`${fixtures}/exp`);
    await Deno.mkdir(`${fixtures}/eval`);
    await Deno.writeTextFile(`${fixtures}/exp/shared.txt`, "experiment");
    await Deno.writeTextFile(`${fixtures}/eval/shared.txt`, "eval");
    const result = await runSandboxEval(
      roots,
      defineEval({
        async test(t) {
          t.check(await t.sandbox.readText("shared.txt"), equals("eval"));
        },
      }),
      {
        agent: writer,
        template: localSandbox({ fixture: `${fixtures}/exp` }),
        evalLayer: sandboxLayer({ fixture: `${fixtures}/eval` }),
        projectRoot: fixtures,
      },
    );
    assert.equal(result.verdict, "passed", JSON.stringify(result.details.assertions));
    assert.equal(await Deno.readTextFile(`${fixtures}/exp/shared.txt`), "experiment");
  } finally {
    await Deno.remove(fixtures, { recursive: true });
  }
});

Deno.test("sandbox commands are recorded under the phase they ran in: agent.setup, test, cleanup (rule 31)", async () => {
  await using roots = await localRoots();
  const agent = defineAgent({
    name: "phased",
    kind: "sandbox",
    evidenceCoverage: completeEvidenceCoverage,
    setup: async (ctx) => void await ctx.sandbox!.runShell("echo agent-setup"),
    teardown: async (ctx) => void await ctx.sandbox!.runShell("echo agent-teardown"),
    send: async (_input, ctx) => {
      await ctx.sandbox!.runShell("echo agent-send");
      return { status: "completed", events: [] };
    },
  });
  const result = await runSandboxEval(
    roots,
    defineEval({
      async test(t) {
        await t.send("go");
        await t.sandbox.runShell("echo body");
      },
    }),
    { agent, template: localSandbox() },
  );
  assert.equal(result.verdict, "passed", JSON.stringify(result.error));
  const phases = result.details.logs
    .map((l) => /^\$ echo (\S+) → exit 0 \(([^,]+),/.exec(l.text))
    .filter((m) => m !== null)
    .map((m) => `${m[1]} ${m[2]}`);
  assert.deepEqual(phases, [
    "agent-setup agent.setup",
    "agent-send test",
    "body test",
    "agent-teardown cleanup",
  ]);
});

Deno.test("timedMs ends before teardowns and cleanup, which are outside the deadline", async () => {
  await using roots = await localRoots();
  const marks: Record<string, number> = {};
  const template = localSandbox().teardown(async () => {
    marks.teardownStart = Date.now();
    await new Deno.Command("true").output();
    marks.teardownEnd = Date.now();
  });
  const result = await runSandboxEval(
    roots,
    defineEval({ test: (t) => void t.check(1, equals(1)) }),
    {
      agent: writer,
      template,
      experiment: { timeoutMs: 60_000 },
    },
  );
  assert.equal(result.verdict, "passed", JSON.stringify(result.error));
  assert.ok(marks.teardownEnd! > marks.teardownStart!, "the teardown took time");
  assert.ok(
    result.startedAt + result.timedMs <= marks.teardownStart!,
    `timed part ${result.startedAt + result.timedMs} ends after the teardown started`,
  );
  assert.ok(result.endedAt >= marks.teardownEnd!);
});

import assert from "node:assert/strict";
import { defineEval } from "niceeval";
import { completeEvidenceCoverage, defineAgent } from "niceeval/adapter";
import { includes, toolMatch } from "niceeval/expect";
import { diagnosticCodes, REPO_ROOT, runEval } from "./_run.ts";

/** The `file:line` of the line after the caller of `nextLine()`, relative to the repository root. */
function nextLine(): string {
  const frame = new Error().stack!.split("\n")[2]!;
  const match = /tests\/attempt\/context_test\.ts:(\d+)/.exec(frame)!;
  return `tests/attempt/context_test.ts:${Number(match[1]) + 1}`;
}

Deno.test("t.group() nests across awaits and keeps concurrent branches apart", async () => {
  let value: number | undefined;
  const result = await runEval(defineEval({
    async test(t) {
      await t.group("outer", async () => {
        t.check(1, includes("1")).label("first");
        await Promise.all([
          t.group("a", async () => {
            await Promise.resolve();
            await Promise.resolve();
            t.check("a", includes("a")).label("in a");
          }),
          t.group("b", async () => {
            await Promise.resolve();
            t.check("b", includes("b")).label("in b").group("leaf");
          }),
        ]);
        await Promise.resolve();
        t.check("o", includes("o")).label("back in outer");
      });
      value = await t.group("value", () => 42);
      t.check("top", includes("top")).label("top level");
    },
  }));
  assert.equal(value, 42);
  const groups = Object.fromEntries(
    result.details.assertions.map((a) => [a.label, a.group.join(" > ")]),
  );
  assert.deepEqual(groups, {
    "first": "outer",
    "in a": "outer > a",
    "in b": "outer > b > leaf",
    "back in outer": "outer",
    "top level": "",
  });
});

Deno.test("t.sandbox throws no-sandbox and errors the Attempt even when caught", async () => {
  let caught: unknown;
  const result = await runEval(defineEval({
    test(t) {
      try {
        void t.sandbox.workdir;
      } catch (error) {
        caught = error;
      }
      t.check(1, includes("1"));
    },
  }));
  assert.equal((caught as { code?: string }).code, "no-sandbox");
  assert.equal(result.error?.code, "assertion-authoring-error");
  assert.match(result.error?.message ?? "", /sandbox/);
});

Deno.test("LATER members of t and ctx throw not-supported", async () => {
  const codes: Record<string, unknown> = {};
  const capture = (name: string, fn: () => unknown) => {
    try {
      fn();
      codes[name] = "no throw";
    } catch (error) {
      codes[name] = (error as { code?: string }).code;
    }
  };
  const agent = defineAgent({
    name: "later",
    evidenceCoverage: completeEvidenceCoverage,
    send(_input, ctx) {
      const loose = ctx as unknown as Record<string, unknown>;
      capture("ctx.reasoningEffort", () => loose.reasoningEffort);
      capture("ctx.telemetry", () => loose.telemetry);
      return Promise.resolve({ status: "completed", events: [] });
    },
  });
  const result = await runEval(
    defineEval({
      async test(t) {
        const loose = t as unknown as Record<string, (...args: unknown[]) => unknown>;
        for (const name of ["sendFile", "requireInputRequest", "respond", "respondAll", "judge"]) {
          capture(`t.${name}`, () => loose[name]!("x"));
        }
        capture("t.reasoningEffort", () => loose.reasoningEffort);
        await t.send("hi");
        await t.send({ text: "files", files: [] } as never).catch((error) =>
          codes["send files"] = error.code
        );
      },
    }),
    { agent },
  );
  assert.deepEqual(codes, {
    "t.sendFile": "not-supported",
    "t.requireInputRequest": "not-supported",
    "t.respond": "not-supported",
    "t.respondAll": "not-supported",
    "t.judge": "not-supported",
    "t.reasoningEffort": "not-supported",
    "ctx.reasoningEffort": "not-supported",
    "ctx.telemetry": "not-supported",
    "send files": "not-supported",
  });
  assert.equal(result.error?.code, "assertion-authoring-error");
});

Deno.test("t works destructured and spread; its getters read the state at read time", async () => {
  const seen: unknown[] = [];
  const result = await runEval(
    defineEval({
      async test(t) {
        const copy = { ...t };
        const { send, check, newSession, reply } = t;
        seen.push(reply, copy.reply);
        await send({ text: "Say hello" });
        seen.push(reply, t.reply, t.events.length, t.usage.inputTokens);
        const side = newSession();
        await side.send("x");
        seen.push(t.reply, side.reply, t.usage.inputTokens);
        check(t.reply, includes("Hello"));
        seen.push(Object.isFrozen(t.events), t.evaluationKind, t.model, t.flags);
      },
    }),
    { experiment: { model: "scripted-v1", flags: { mode: "fast" } } },
  );
  assert.equal(result.verdict, "passed");
  assert.deepEqual(seen, [
    "",
    "",
    "",
    "Hello, niceeval!",
    2,
    10,
    "Hello, niceeval!",
    "I do not know.",
    undefined,
    true,
    "pass",
    "scripted-v1",
    { mode: "fast" },
  ]);
});

Deno.test("the agent sees the experiment's model and flags, the ids and sendTry 0", async () => {
  let ctxSeen: Record<string, unknown> = {};
  const agent = defineAgent({
    name: "ctx",
    evidenceCoverage: completeEvidenceCoverage,
    send(_input, ctx) {
      ctxSeen = {
        model: ctx.model,
        flags: ctx.flags,
        experimentId: ctx.experimentId,
        evalId: ctx.evalId,
        sendTry: ctx.sendTry,
        aborted: ctx.signal.aborted,
      };
      ctx.diagnostic({ code: "from-agent", level: "warning", message: "hi" });
      ctx.log("agent log");
      return Promise.resolve({ status: "completed", events: [] });
    },
  });
  const result = await runEval(
    defineEval({
      async test(t) {
        await t.send("hi");
        t.check(1, includes("1"));
      },
    }),
    { agent, experiment: { model: "m", flags: { n: 1 } } },
  );
  assert.deepEqual(ctxSeen, {
    model: "m",
    flags: { n: 1 },
    experimentId: "local",
    evalId: "greet/hello",
    sendTry: 0,
    aborted: false,
  });
  assert.deepEqual(diagnosticCodes(result), ["from-agent"]);
  assert.deepEqual(result.details.logs.map((l) => l.text), ["agent log"]);
});

Deno.test("t.signal aborts with test-settled once the body settled", async () => {
  let signal: AbortSignal | undefined;
  await runEval(defineEval({
    test(t) {
      signal = t.signal;
      t.check(signal.aborted, includes("x")).optional();
    },
  }));
  assert.equal(signal?.aborted, true);
  assert.equal((signal?.reason as { kind?: string }).kind, "test-settled");
});

Deno.test("a send still in flight when the body settles is cancelled without an error", async () => {
  const agent = defineAgent({
    name: "hangs",
    evidenceCoverage: completeEvidenceCoverage,
    send: (_input, ctx) =>
      new Promise((_resolve, reject) => {
        ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason), { once: true });
      }),
  });
  const result = await runEval(
    defineEval({
      test(t) {
        void t.send("never answered");
        t.check("x", includes("x"));
      },
    }),
    { agent },
  );
  assert.equal(result.verdict, "passed");
  assert.equal(result.error, null);
  assert.equal(result.details.turns.length, 0);
});

Deno.test("assertions record their call site as <project-relative file>:<line>", async () => {
  let expected = "";
  const result = await runEval(defineEval({
    async test(t) {
      const turn = await t.send("Say hello");
      expected = nextLine();
      turn.succeeded();
      t.check(t.reply, includes("Hello"));
    },
  }));
  const [first, second] = result.details.assertions;
  assert.equal(first?.source, expected);
  assert.match(second?.source ?? "", /^tests\/attempt\/context_test\.ts:\d+$/);
});

Deno.test("every entry point records the line of its caller, destructured or through a helper", async () => {
  const expected: string[] = [];
  const viaHelper = (check: (value: unknown, match: unknown) => unknown) => {
    expected.push(nextLine());
    check("h", includes("h"));
  };
  const result = await runEval(defineEval({
    async test(t) {
      const session = t.newSession();
      const turn = await session.send("Say hello");
      const { check, succeeded } = t;
      expected.push(nextLine());
      check("a", includes("a"));
      expected.push(nextLine());
      succeeded();
      expected.push(nextLine());
      turn.usedNoTools();
      expected.push(nextLine());
      session.toolOrder([toolMatch("a"), toolMatch("b")]);
      expected.push(nextLine());
      t.maxCost(1);
      viaHelper(t.check as never);
    },
  }));
  assert.deepEqual(result.details.assertions.map((a) => a.source), expected);
});

Deno.test("t.signal of every Attempt aborts with a test-settled reason that cannot be changed", async () => {
  const reasons: unknown[] = [];
  for (let i = 0; i < 2; i++) {
    await runEval(defineEval({
      test(t) {
        reasons.push(t.signal);
        t.check(1, includes("1")).optional();
      },
    }));
  }
  for (const signal of reasons as AbortSignal[]) {
    assert.equal(signal.aborted, true);
    const reason = signal.reason as Error & { kind?: string };
    assert.equal(reason.kind, "test-settled");
    assert.equal(reason.name, "AbortError");
    assert.equal(Object.isFrozen(reason), true);
  }
});

Deno.test("call sites outside the project root are not recorded", async () => {
  const root = await Deno.makeTempDir();
  try {
    const result = await runEval(
      defineEval({
        test(t) {
          t.check(1, includes("1"));
        },
      }),
      { root },
    );
    assert.equal(result.details.assertions[0]?.source, null);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("call sites of an eval file inside the project are relative to the root", async () => {
  const root = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${root}/evals/tool`, { recursive: true });
    const file = `${root}/evals/tool/site.eval.ts`;
    await Deno.writeTextFile(
      file,
      [
        `import { defineEval } from ${JSON.stringify(import.meta.resolve("niceeval"))};`,
        `import { includes } from ${JSON.stringify(import.meta.resolve("niceeval/expect"))};`,
        "export default defineEval({",
        "  test(t) {",
        '    t.check("sunny", includes("sun"));',
        "  },",
        "});",
        "",
      ].join("\n"),
    );
    const { default: evalDef } = await import(new URL(`file://${file}`).href);
    const result = await runEval(evalDef, { root });
    assert.equal(result.details.assertions[0]?.source, "evals/tool/site.eval.ts:5");
    assert.notEqual(REPO_ROOT, root);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

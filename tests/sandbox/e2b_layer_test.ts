/**
 * issue 19: the `e2bSandbox` factory (sandboxes.md §1.2, rule 6), the registry entry, and create
 * with retry over the e2b provider (rules 41–42): a rate-limited try is retried, an ambiguous try
 * is reconciled by its provision token.
 */
import assert from "node:assert/strict";
import { createWithRetry, layerState } from "../../src/sandbox/mod.ts";
import { createProviderRegistry } from "../../src/sandbox/registry.ts";
import { createE2BProvider } from "../../src/sandbox/providers/e2b.ts";
import { e2bSandbox } from "../../src/public/sandbox.ts";
import { createFakeClock, type FakeClock } from "../_fakes/clock.ts";
import { FakeE2BPort, LeakedCreate, sdkError } from "../_fakes/e2b_port.ts";
import { createSeededRandom } from "../_fakes/random.ts";

Deno.test("issue 19: e2bSandbox() keeps template, user and workdir; the registry plans it", async () => {
  const layer = e2bSandbox({
    template: "base",
    user: "root",
    workdir: "/work/",
    lifetimeMs: 60_000,
  });
  assert.equal(layer.provider, "e2b");
  assert.deepEqual(layerState(layer).spec, { template: "base", user: "root", workdir: "/work" });
  const registry = createProviderRegistry({ hostEnv: {}, clock: createFakeClock() });
  assert.ok(registry.names().includes("e2b"));
  const { provider, spec } = await registry.forLayer(e2bSandbox({ template: "base" }));
  assert.equal(provider.name, "e2b");
  const planned = await provider.plan(spec, {
    projectRoot: "/",
    signal: new AbortController().signal,
  });
  assert.deepEqual(planned.plan, {
    template: "base",
    user: "user",
    workdir: "/home/user/workspace",
  });
  assert.deepEqual(provider.precondition?.(), {
    message: "E2B_API_KEY is not set",
    hint: "set E2B_API_KEY to an E2B API key in the environment or in .env",
  });
});

Deno.test("rule 6: e2bSandbox() rejects bad options with one error naming the option", () => {
  const cases: [unknown, string, RegExp][] = [
    [{}, "template", /template must be a non-empty string/],
    [{ template: "" }, "template", /template/],
    [{ template: "base", workdir: "rel" }, "workdir", /workdir must be an absolute path/],
    [{ template: "base", user: "" }, "user", /user must be a non-empty string/],
    [{ template: "base", image: "x" }, "image", /unknown option "image"/],
    [{ template: "base", lifetimeMs: 0 }, "lifetimeMs", /lifetimeMs must be a positive integer/],
  ];
  for (const [options, option, message] of cases) {
    assert.throws(
      () => e2bSandbox(options as Parameters<typeof e2bSandbox>[0]),
      (e: Error & { code?: string; option?: string }) => {
        assert.equal(e.code, "sandbox-config-invalid");
        assert.equal(e.option, option);
        assert.match(e.message, message);
        assert.match(e.message, /^e2bSandbox\(\)/);
        return true;
      },
    );
  }
});

/** Settles `promise` while moving fake time in 100 ms steps. */
async function drive<T>(clock: FakeClock, promise: Promise<T>): Promise<T> {
  let done = false;
  const watched = promise.finally(() => done = true);
  watched.catch(() => undefined);
  for (let i = 0; i < 1000 && !done; i++) await clock.tickAsync(100);
  return await watched;
}

const OWNER = { host: "box", pid: 1, processStart: "unknown", runId: "run-1" };

Deno.test("rules 41-42: a 429 on create is retried; an ambiguous try is reconciled by its token, then retried", async () => {
  const clock = createFakeClock();
  const port = new FakeE2BPort({ now: () => clock.now() });
  const provider = createE2BProvider({ hostEnv: { E2B_API_KEY: "k" }, clock, port });
  port.createErrors.push(sdkError("RateLimitError", "Rate limit exceeded, please try again later"));
  port.createErrors.push(new LeakedCreate(sdkError("SandboxError", "502: bad gateway", 502)));
  const tokensBefore: string[] = [];
  const outcome = await drive(
    clock,
    createWithRetry(provider, { template: "base", user: "user", workdir: "/w" }, {
      owner: OWNER,
      lifetimeMs: 60_000,
      signal: new AbortController().signal,
      clock,
      random: createSeededRandom(3),
      beforeTry: () => {
        tokensBefore.push("try");
        return Promise.resolve();
      },
    }),
  );
  assert.equal(outcome.tries, 3);
  assert.deepEqual(outcome.retries, [{ class: "rate_limit", count: 1 }, {
    class: "ambiguous",
    count: 1,
  }]);
  const creates = port.calls.filter((c) => c.op === "create");
  const tokens = creates.map((c) =>
    (c.args[1] as { metadata: Record<string, string> }).metadata["niceeval-token"]
  );
  assert.equal(new Set(tokens).size, 3, "every try has its own token");
  // The leaked sandbox of try 2 was found by its token and killed.
  const listed = port.calls.filter((c) => c.op === "list").map((c) => c.args[0]);
  assert.deepEqual(listed, [{ "niceeval-token": tokens[1] }]);
  const leaked = port.instances.find((i) => i.metadata["niceeval-token"] === tokens[1])!;
  assert.equal(leaked.killed, true);
  assert.equal(outcome.provisionToken, tokens[2]);
  assert.equal(tokensBefore.length, 3);
  await outcome.handle.stop();
});

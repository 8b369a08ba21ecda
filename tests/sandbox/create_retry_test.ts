/** Create with retry on fake time (sandboxes.md §3.4, rules 41–45). */
import assert from "node:assert/strict";
import {
  classifyTransportError,
  createWithRetry,
  ProviderError,
  requestedLifetimeMs,
  type SandboxCreateError,
  type SandboxDiagnostic,
} from "../../src/sandbox/mod.ts";
import { createFakeClock, type FakeClock } from "../_fakes/clock.ts";
import { createFakeProvider, type FakeProviderOptions } from "../_fakes/provider.ts";
import { createScriptedRandom } from "../_fakes/random.ts";

const owner = { host: "h", pid: 1, processStart: "unknown", runId: "run-1" };

function setup(o: Omit<FakeProviderOptions, "clock">, uniform = 0.5) {
  const clock = createFakeClock();
  const provider = createFakeProvider({ clock, ...o });
  const progress: string[] = [];
  const diagnostics: SandboxDiagnostic[] = [];
  const run = (signal = new AbortController().signal) =>
    createWithRetry(provider, "plan", {
      owner,
      lifetimeMs: Infinity,
      signal,
      clock,
      random: createScriptedRandom([uniform]),
      progress: (m) => progress.push(m),
      diagnostic: (d) => diagnostics.push(d),
    });
  return { clock, provider, progress, diagnostics, run };
}

/** Settles `p` while advancing the fake clock; returns the value or the rejection. */
async function settle<T>(clock: FakeClock, p: Promise<T>): Promise<T | unknown> {
  const out = p.then((v) => v, (e) => e);
  await clock.runAllAsync();
  return await out;
}

Deno.test("createWithRetry() retries rate_limit and rejected with delays 1000·2^k·(0.5+U)", async () => {
  const { clock, provider, progress, run } = setup({ failures: ["rate_limit", "rejected"] }, 0.25);
  const start = clock.now();
  const started: number[] = [];
  const creating = run();
  const original = provider.create;
  provider.create = (plan, ctx) => (started.push(clock.now() - start), original(plan, ctx));
  const outcome = await settle(clock, creating) as Awaited<ReturnType<typeof run>>;
  assert.equal(outcome.tries, 3);
  assert.deepEqual(outcome.retries, [{ class: "rate_limit", count: 1 }, {
    class: "rejected",
    count: 1,
  }]);
  assert.deepEqual(started.slice(-2), [750, 750 + 1500]);
  assert.deepEqual(progress, [
    "sandbox retry 2/4 (rate_limit) — waiting 1s",
    "sandbox retry 3/4 (rejected) — waiting 2s",
  ]);
});

Deno.test("createWithRetry() uses a new 32-hex provision token for every try", async () => {
  const { clock, provider, run } = setup({ failures: ["rate_limit", "rate_limit"] });
  const outcome = await settle(clock, run()) as { provisionToken: string };
  assert.equal(provider.tries.length, 3);
  assert.equal(new Set(provider.tries).size, 3);
  for (const token of provider.tries) assert.match(token, /^[0-9a-f]{32}$/);
  assert.equal(outcome.provisionToken, provider.tries[2]);
  assert.equal(provider.handles[0]!.owner.provisionToken, provider.tries[2]);
});

Deno.test("createWithRetry() stops after 4 tries with sandbox-create-failed", async () => {
  const { clock, provider, run } = setup({
    failures: ["rate_limit", "rate_limit", "rate_limit", "rate_limit"],
  });
  const error = await settle(clock, run()) as SandboxCreateError;
  assert.equal(error.code, "sandbox-create-failed");
  assert.deepEqual(error.data, {
    provider: "fake",
    class: "rate_limit",
    tries: 4,
    message: "fake rate_limit",
  });
  assert.equal(error.scope, "attempt");
  assert.equal(provider.tries.length, 4);
});

Deno.test("createWithRetry() never retries fatal", async () => {
  const { clock, provider, progress, run } = setup({ failures: ["fatal"] });
  const error = await settle(clock, run()) as SandboxCreateError;
  assert.equal(error.code, "sandbox-create-failed");
  assert.equal(error.data.tries, 1);
  assert.equal(provider.tries.length, 1);
  assert.deepEqual(progress, []);
});

Deno.test("createWithRetry() reconciles an ambiguous try by the previous token after the delay", async () => {
  const { clock, provider, run } = setup({ failures: [{ class: "ambiguous", leak: true }] });
  const creating = run();
  await clock.flush();
  assert.equal(provider.backend.size, 1, "the ambiguous try left an instance behind");
  const [leaked] = [...provider.backend.keys()];
  await clock.tickAsync(999);
  assert.deepEqual(provider.findOwnedCalls, [], "reconcile waits for the delay");
  const outcome = await settle(clock, creating) as { tries: number };
  assert.equal(outcome.tries, 2);
  assert.deepEqual(provider.findOwnedCalls, [{ provisionToken: provider.tries[0] }]);
  assert.deepEqual(provider.destroyed, [leaked]);
  assert.deepEqual([...provider.backend.values()].map((o) => o.provisionToken), [
    provider.tries[1],
  ]);
});

Deno.test("createWithRetry() rethrows the original error when the reconcile fails", async () => {
  const { clock, provider, diagnostics, run } = setup({
    failures: [{ class: "ambiguous", message: "socket hang up" }],
    findOwnedFails: true,
  });
  const error = await settle(clock, run()) as SandboxCreateError;
  assert.equal(error.code, "sandbox-create-failed");
  assert.deepEqual(error.data, {
    provider: "fake",
    class: "ambiguous",
    tries: 1,
    message: "socket hang up",
  });
  assert.equal(provider.tries.length, 1);
  assert.deepEqual(diagnostics.map((d) => d.code), ["sandbox-reconcile-failed"]);
});

Deno.test("createWithRetry() does not retry ambiguous without findOwned", async () => {
  const { clock, provider, run } = setup({ failures: ["ambiguous"], reconcile: false });
  const error = await settle(clock, run()) as SandboxCreateError;
  assert.equal(error.data.class, "ambiguous");
  assert.equal(provider.tries.length, 1);
});

Deno.test("createWithRetry() gives a fatal ProviderError with scope experiment that scope", async () => {
  const { clock, provider, run } = setup({});
  provider.create = () =>
    Promise.reject(new ProviderError("fatal", "bad credentials", { scope: "experiment" }));
  const error = await settle(clock, run()) as SandboxCreateError;
  assert.equal(error.scope, "experiment");
  assert.equal(error.data.message, "bad credentials");
});

Deno.test("createWithRetry() rejects with the signal's reason when aborted during the delay", async () => {
  const { clock, provider, run } = setup({ failures: ["rate_limit"] });
  const controller = new AbortController();
  const creating = run(controller.signal).then(() => undefined, (e) => e);
  await clock.tickAsync(100);
  const reason = new Error("interrupted");
  controller.abort(reason);
  assert.equal(await creating, reason);
  assert.equal(provider.tries.length, 1);
});

Deno.test("classifyTransportError() follows the shared table", () => {
  const cases: [unknown, string][] = [
    [{ status: 429 }, "rate_limit"],
    [new Error("toomanyrequests: slow down"), "rate_limit"],
    [Object.assign(new Error("connect"), { code: "ECONNREFUSED" }), "rejected"],
    [new Error("getaddrinfo ENOTFOUND api.example"), "rejected"],
    [new Error("read ECONNRESET"), "ambiguous"],
    [{ statusCode: 503 }, "ambiguous"],
    [new TypeError("fetch failed"), "ambiguous"],
    [new Error("other side closed"), "ambiguous"],
    [{ status: 401 }, "fatal"],
    [new Error("image not found"), "fatal"],
  ];
  for (const [error, expected] of cases) {
    assert.equal(classifyTransportError(error), expected, JSON.stringify(String(error)));
  }
});

Deno.test("requestedLifetimeMs() is declared, else timeout + 300 s, else the provider default", () => {
  assert.equal(requestedLifetimeMs("e2b", { lifetimeMs: 5_000, timeoutMs: 60_000 }), 5_000);
  assert.equal(requestedLifetimeMs("e2b", { timeoutMs: 60_000 }), 360_000);
  assert.equal(requestedLifetimeMs("e2b", {}), 3_600_000);
  assert.equal(requestedLifetimeMs("docker", {}), 86_400_000);
  assert.equal(requestedLifetimeMs("vercel", {}), 2_700_000);
  assert.equal(requestedLifetimeMs("local", {}), Infinity);
  assert.equal(requestedLifetimeMs("my-vm", {}), Infinity);
});

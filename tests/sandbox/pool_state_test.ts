/** Pools with the fake provider (sandboxes.md §6.1–§6.5, rules 72–81, 86, 90). */
import assert from "node:assert/strict";
import {
  type AttemptLayer,
  createInstanceFactory,
  hasSandboxCode,
  localSandbox,
  Pool,
  poolCapacity,
  poolIdentity,
  poolScope,
  releaseOutcomeOf,
  type SandboxDiagnostic,
} from "../../src/sandbox/mod.ts";
import { createFakeClock } from "../_fakes/clock.ts";
import {
  createFakeProvider,
  type FakeHandle,
  type FakeProviderOptions,
} from "../_fakes/provider.ts";
import { createSeededRandom } from "../_fakes/random.ts";

const owner = { host: "h", pid: 1, processStart: "unknown", runId: "run-1" };
const signal = new AbortController().signal;

function poolBed(
  o: { capacity?: number; provider?: Omit<FakeProviderOptions, "clock">; layers?: AttemptLayer[] } =
    {},
) {
  const clock = createFakeClock();
  const provider = createFakeProvider({ clock, ...o.provider });
  const diagnostics: SandboxDiagnostic[] = [];
  const factory = createInstanceFactory({
    provider,
    plan: "plan",
    layers: o.layers ?? [],
    owner,
    lifetimeMs: Infinity,
    clock,
    random: createSeededRandom(1),
    hostDir: "/",
    onDiagnostic: (d) => diagnostics.push(d),
  });
  const pool = new Pool({ id: "pool", capacity: o.capacity ?? 2, factory });
  const handles = () => provider.handles as FakeHandle[];
  return { clock, provider, pool, diagnostics, handles };
}

const acquire = (pool: Pool, s = signal) => pool.acquire({ minRemainingMs: 60_000, signal: s });

Deno.test("Pool.acquire() creates on demand up to capacity, then waits for a release", async () => {
  const { pool, handles } = poolBed({ capacity: 2 });
  const a = await acquire(pool);
  const b = await acquire(pool);
  assert.equal(handles().length, 2);
  let settled = false;
  const waiting = acquire(pool).finally(() => void (settled = true));
  await Promise.resolve();
  assert.equal(settled, false);
  await a.release("reset");
  const third = await waiting;
  assert.equal(third.instance, a.instance, "the released instance is leased again");
  assert.equal(handles().length, 2);
  assert.deepEqual(pool.stats, { idle: 0, leased: 2, creating: 0, retiring: 0 });
  await b.release("retire");
  await third.release("retire");
  await pool.stop();
});

Deno.test("Pool.acquire() retires an idle instance that is not ready and creates another", async () => {
  const asked: number[] = [];
  const { pool, handles } = poolBed({
    capacity: 1,
    provider: {
      ensureLifetime: (min, handle) => {
        asked.push(min);
        return handle.id === "fake-1" && asked.length > 1
          ? { ready: false, reason: "expires soon" }
          : { ready: true };
      },
    },
  });
  const first = await acquire(pool);
  await first.release("reset");
  const second = await acquire(pool);
  assert.equal(second.instance.handle.id, "fake-2");
  assert.deepEqual(asked.slice(0, 2), [60_000, 60_000]);
  await second.release("retire");
  await pool.stop();
  assert.deepEqual(handles().map((h) => h.stopCalls), [1, 1]);
});

Deno.test("Pool.acquire() fails a fresh instance that is not ready with sandbox-lifetime-insufficient", async () => {
  const { pool, handles } = poolBed({
    provider: { ensureLifetime: () => ({ ready: false, reason: "max lifetime 1 h" }) },
  });
  const error = await acquire(pool).then(() => 0, (e) => e);
  assert.ok(hasSandboxCode(error, "sandbox-lifetime-insufficient"), String(error));
  assert.equal(handles().length, 1, "no second replacement");
  assert.deepEqual(await pool.stop(), []);
  assert.equal(handles()[0]!.stopped, true);
});

Deno.test("a new pool instance fails the reuse checks of rules 76 and 79 and is stopped", async (t) => {
  const cases: [string, Omit<FakeProviderOptions, "clock">][] = [
    ["sandbox-reuse-unsupported", { ensureLifetime: false }],
    ["sandbox-reuse-root-user", {
      exec: (c) => ({
        stdout: new TextEncoder().encode("argv" in c && c.argv[0] === "id" ? "0\n" : ""),
      }),
    }],
    ["sandbox-reuse-git-missing", {
      exec: (c) => ({ exitCode: "argv" in c && c.argv[0] === "git" ? 127 : 0 }),
    }],
  ];
  for (const [code, provider] of cases) {
    await t.step(code, async () => {
      const bed = poolBed({ provider });
      const error = await acquire(bed.pool).then(() => 0, (e) => e);
      assert.ok(hasSandboxCode(error, code), String(error));
      assert.equal((error as { scope: string }).scope, "experiment");
      assert.equal(bed.handles()[0]!.stopped, true);
    });
  }
});

Deno.test("pool instances run layer setups once and teardowns LIFO when retired", async () => {
  const calls: string[] = [];
  const layer = localSandbox()
    .setup(() => void calls.push("setup-1"))
    .teardown(() => void calls.push("teardown-1"))
    .setup(() => void calls.push("setup-2"))
    .teardown(() => void calls.push("teardown-2"));
  const { pool, handles } = poolBed({ capacity: 1, layers: [{ layer, owner: "exp" }] });
  const a = await acquire(pool);
  await a.release("reset");
  const b = await acquire(pool);
  await b.release("reset");
  assert.deepEqual(calls, ["setup-1", "setup-2"]);
  await pool.stop();
  assert.deepEqual(calls, ["setup-1", "setup-2", "teardown-2", "teardown-1"]);
  const git = handles()[0]!.execs.filter((e) =>
    "argv" in e.command && e.command.argv[0] === "git" && e.command.argv.length > 13
  );
  const args = git.map((e) => ("argv" in e.command ? e.command.argv : []).slice(13).join(" "));
  // Preserved directories stay out of the ledger (docs/sandbox_ledger.md).
  const excluded = ["node_modules", ".venv", ".pnpm-store", ".cache"]
    .map((p) => `:(exclude,glob)**/${p} :(exclude,glob)**/${p}/**`).join(" ");
  assert.deepEqual(args.slice(0, 5), [
    "init -q",
    `add -A -f -- . ${excluded}`,
    "ls-files -s",
    "commit -q --allow-empty -m anchor",
    "tag niceeval-anchor",
  ]);
  assert.ok(args.includes("reset -q --hard niceeval-anchor"));
});

Deno.test("Pool lease release('reset') that fails retires the instance and rejects", async () => {
  const { pool, handles } = poolBed({
    capacity: 1,
    provider: {
      exec: (c) => ({ exitCode: "argv" in c && c.argv.includes("reset") ? 1 : 0 }),
    },
  });
  const lease = await acquire(pool);
  await assert.rejects(() => lease.release("reset"), /git reset/);
  assert.equal(pool.stats.leased, 0);
  await pool.stop();
  assert.equal(handles()[0]!.stopped, true);
});

Deno.test("Pool lease release('retire') stops the instance and frees its capacity", async () => {
  const { pool, handles } = poolBed({ capacity: 1 });
  const lease = await acquire(pool);
  await lease.release("retire");
  await lease.release("reset");
  const next = await acquire(pool);
  assert.equal(next.instance.handle.id, "fake-2");
  await next.release("retire");
  await pool.stop();
  assert.deepEqual(handles().map((h) => h.stopCalls), [1, 1]);
});

Deno.test("Pool.retireIdle() stops idle instances at once (rule 81)", async () => {
  const { pool, handles } = poolBed();
  const a = await acquire(pool);
  const b = await acquire(pool);
  await a.release("reset");
  pool.retireIdle();
  assert.deepEqual(pool.stats, { idle: 0, leased: 1, creating: 0, retiring: 1 });
  await b.release("reset");
  await pool.stop();
  assert.deepEqual(handles().map((h) => h.stopCalls), [1, 1]);
});

Deno.test("Pool.stop() freezes, waits for leases, then stops every instance once", async () => {
  const { pool, handles } = poolBed({ provider: { stopError: "daemon gone" } });
  const lease = await acquire(pool);
  let stopped: unknown;
  const stopping = pool.stop().then((d) => (stopped = d));
  await Promise.resolve();
  await assert.rejects(() => acquire(pool), (e) => hasSandboxCode(e, "sandbox-pool-frozen"));
  assert.equal(stopped, undefined, "stop waits for the leased instance");
  await lease.release("reset");
  const diagnostics = await stopping as SandboxDiagnostic[];
  assert.deepEqual(diagnostics.map((d) => d.code), ["sandbox-stop-failed"]);
  assert.equal(handles()[0]!.stopCalls, 1);
  assert.equal(await pool.stop(), diagnostics, "stop runs once");
});

Deno.test("Pool.acquire() rejects with the abort reason while waiting", async () => {
  const { pool } = poolBed({ capacity: 1 });
  const lease = await acquire(pool);
  const controller = new AbortController();
  const waiting = acquire(pool, controller.signal).then(() => 0, (e) => e);
  const reason = new Error("interrupt");
  controller.abort(reason);
  assert.equal(await waiting, reason);
  await lease.release("retire");
});

Deno.test("releaseOutcomeOf() retires after timeout, abort, agent-send-failed or sandbox-retired", () => {
  const end = { timedOut: false, aborted: false, errorCode: undefined };
  assert.equal(releaseOutcomeOf(end), "reset");
  assert.equal(releaseOutcomeOf({ ...end, errorCode: "test-threw" }), "reset");
  assert.equal(releaseOutcomeOf({ ...end, timedOut: true }), "retire");
  assert.equal(releaseOutcomeOf({ ...end, aborted: true }), "retire");
  assert.equal(releaseOutcomeOf({ ...end, errorCode: "agent-send-failed" }), "retire");
  assert.equal(releaseOutcomeOf({ ...end, errorCode: "sandbox-retired" }), "retire");
});

Deno.test("poolIdentity(), poolScope() and poolCapacity() follow rules 72 and 74", () => {
  const input = {
    providerIdentity: "p",
    agentInstallIdentity: "a",
    hookIdentities: ["x#0:1"],
    scope: "shared",
  };
  assert.match(poolIdentity(input), /^[0-9a-f]{64}$/);
  assert.equal(poolIdentity({ ...input }), poolIdentity(input));
  assert.notEqual(poolIdentity({ ...input, hookIdentities: ["x#0:2"] }), poolIdentity(input));
  assert.equal(poolScope({ evalId: "e", evalLayerHasHooks: false }), "shared");
  assert.equal(poolScope({ evalId: "e", evalLayerHasHooks: true }), "eval:e");
  assert.equal(poolScope({ groupId: "g", evalId: "e", evalLayerHasHooks: false }), "eval-group:g");
  assert.equal(poolCapacity({ group: true, gMax: 8 }), 1);
  assert.equal(poolCapacity({ group: false, gMax: 8 }), 8);
  assert.equal(poolCapacity({ group: false, gMax: 8, maxConcurrency: 3 }), 3);
  assert.equal(poolCapacity({ group: false, gMax: 0, maxConcurrency: 3 }), 1);
});

/** A waiter's signal that counts how often the pool queued it (one abort listener per wait). */
function waiterSignal() {
  const controller = new AbortController();
  const signal = controller.signal;
  let waits = 0;
  const add = signal.addEventListener.bind(signal);
  signal.addEventListener = ((type: string, ...rest: [EventListener, AddEventListenerOptions?]) => {
    if (type === "abort") waits++;
    add(type, ...rest);
  }) as AbortSignal["addEventListener"];
  return { controller, signal, waits: () => waits };
}

const acquireAt = (pool: Pool, priority: number | number[], s: AbortSignal) =>
  pool.acquire({ minRemainingMs: 60_000, signal: s, priority });

Deno.test("Pool waiters: a release wakes only the smallest-key waiter (PRIO-1)", async () => {
  const { pool, handles } = poolBed({ capacity: 1 });
  const held = await acquire(pool);
  // Arrival order is the reverse of priority order.
  const waiters = [
    { name: "low", priority: [3, 0], ...waiterSignal() },
    { name: "mid", priority: [2, 5], ...waiterSignal() },
    { name: "high", priority: [2, 1], ...waiterSignal() },
  ].map((w) => ({ ...w, lease: acquireAt(pool, w.priority, w.signal) }));
  await Promise.resolve();
  const order: string[] = [];
  let release = held;
  for (let left = [...waiters]; left.length > 0;) {
    await release.release("reset");
    const [next, lease] = await Promise.race(
      left.map((w) => w.lease.then((l) => [w, l] as const)),
    );
    order.push(next.name);
    assert.equal(lease.instance, held.instance);
    left = left.filter((w) => w !== next);
    release = lease;
  }
  assert.deepEqual(order, ["high", "mid", "low"]);
  assert.deepEqual(
    waiters.map((w) => [w.name, w.waits()]),
    [["low", 1], ["mid", 1], ["high", 1]],
    "no waiter was woken to re-check and queue again",
  );
  await release.release("retire");
  await pool.stop();
  assert.equal(handles().length, 1);
});

Deno.test("Pool waiters: freed capacity goes to the smallest key; an aborted waiter leaves the queue", async () => {
  const { pool, handles } = poolBed({ capacity: 1 });
  const held = await acquire(pool);
  const late = waiterSignal();
  const first = waiterSignal();
  const second = waiterSignal();
  const lateLease = acquireAt(pool, 9, late.signal);
  const firstLease = acquireAt(pool, 1, first.signal).then(() => 0, (e) => e);
  const secondLease = acquireAt(pool, 2, second.signal);
  await Promise.resolve();
  const reason = new Error("interrupt");
  first.controller.abort(reason);
  assert.equal(await firstLease, reason);
  await held.release("retire");
  const created = await secondLease;
  assert.equal(created.instance.handle.id, "fake-2", "the smallest waiting key created it");
  assert.equal(late.waits(), 1, "the larger key was not woken");
  await created.release("reset");
  const last = await lateLease;
  assert.equal(last.instance, created.instance);
  await last.release("retire");
  assert.equal(handles().length, 2);
  await pool.stop();
});

Deno.test("Pool waiters: a woken waiter that aborts before taking its unit passes it on", async () => {
  const { pool } = poolBed({ capacity: 1 });
  const held = await acquire(pool);
  const top = waiterSignal();
  const next = waiterSignal();
  const topLease = acquireAt(pool, 1, top.signal).then(() => 0, (e) => e);
  const nextLease = acquireAt(pool, 2, next.signal);
  await Promise.resolve();
  const releasing = held.release("reset");
  // The release wakes `top` synchronously once its reset is done; abort before `top` resumes.
  const reason = new Error("interrupt");
  await releasing.then(() => top.controller.abort(reason));
  assert.equal(await topLease, reason);
  const lease = await nextLease;
  assert.equal(lease.instance, held.instance);
  assert.equal(next.waits(), 1);
  await lease.release("retire");
  await pool.stop();
});

Deno.test("Pool waiters: a newcomer does not take a unit reserved for a woken waiter", async () => {
  const { pool } = poolBed({ capacity: 1 });
  const held = await acquire(pool);
  const order: string[] = [];
  const waiting = acquireAt(pool, 5, new AbortController().signal).then((l) => {
    order.push("waiter");
    return l;
  });
  await Promise.resolve();
  const releasing = held.release("reset");
  let newcomer: Promise<unknown> | undefined;
  await releasing.then(() => {
    // Before the woken waiter resumes, a better key arrives: it must queue.
    newcomer = acquireAt(pool, 0, new AbortController().signal).then((l) => {
      order.push("newcomer");
      return l;
    });
  });
  const lease = await waiting;
  assert.deepEqual(order, ["waiter"]);
  await lease.release("reset");
  const second = await newcomer as { release(o: "retire"): Promise<void> };
  assert.deepEqual(order, ["waiter", "newcomer"]);
  await second.release("retire");
  await pool.stop();
});

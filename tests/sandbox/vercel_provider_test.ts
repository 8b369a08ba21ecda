/**
 * The vercel provider through its in-memory port (sandboxes.md rules 130–136, 143; issue 19):
 * create with owner tags and kill-on-failure, create-error classification, stop and
 * destroyDetached, findOwned filters, plan identities, scheduling, credentials and the
 * `vercelSandbox()` factory. Handle behaviour lives in vercel_handle_test.ts.
 */
import assert from "node:assert/strict";
import { createFakeClock } from "../_fakes/clock.ts";
import { createSeededRandom } from "../_fakes/random.ts";
import {
  createFakeVercelPort,
  newVercelBed,
  OWNER,
  TOKEN,
  vercelApiError,
} from "../_fakes/vercel_port.ts";
import {
  createProviderRegistry,
  createWithRetry,
  layerState,
  ProviderError,
  SandboxConfigError,
  vercelSandbox,
} from "../../src/sandbox/mod.ts";
import {
  classifyVercelCreateError,
  createVercelProvider,
  type VercelPlan,
} from "../../src/sandbox/providers/vercel.ts";

const RUNTIME_PLAN: VercelPlan = { source: { type: "runtime", runtime: "node24" } };

Deno.test("issue 19: vercel create() names the sandbox after the token and tags it with the owner stamp", async () => {
  const bed = newVercelBed();
  const handle = await bed.create({ ...RUNTIME_PLAN, vcpus: 2 }, { lifetimeMs: 600_000 });
  assert.equal(handle.id, `niceeval-${TOKEN.slice(0, 12)}`);
  assert.equal(handle.workdir, "/vercel/sandbox");
  assert.equal(handle.shell, "bash");
  const made = bed.port.sandboxes.get(handle.id)!;
  assert.deepEqual(made.tags, {
    "niceeval-host": OWNER.host,
    "niceeval-pid": String(OWNER.pid),
    "niceeval-start": OWNER.processStart,
    "niceeval-run": OWNER.runId,
    "niceeval-token": TOKEN,
  });
  assert.deepEqual(made.params.source, { type: "runtime", runtime: "node24" });
  assert.equal(made.params.timeout, 600_000);
  assert.equal(made.params.vcpus, 2);
});

Deno.test("issue 19: vercel create() starts from a snapshot and uses 45 min without a lifetime", async () => {
  const bed = newVercelBed();
  const handle = await bed.create(
    { source: { type: "snapshot", snapshotId: "snap_1" } },
    { lifetimeMs: Infinity },
  );
  const made = bed.port.sandboxes.get(handle.id)!;
  assert.deepEqual(made.params.source, { type: "snapshot", snapshotId: "snap_1" });
  assert.equal(made.params.timeout, 45 * 60_000);
  assert.equal(made.params.vcpus, undefined);
});

Deno.test("issue 19: vercel create() deletes the sandbox when the shell probe fails (rule 22)", async () => {
  const bed = newVercelBed();
  bed.port.runner = (p) => p.cmd === "sh" ? { exitCode: 127, stderr: "sh: not found" } : undefined;
  const error = await bed.create(RUNTIME_PLAN).then(() => undefined, (e: unknown) => e);
  assert.ok(error instanceof ProviderError, String(error));
  assert.equal(error.kind, "fatal");
  assert.equal(bed.port.sandboxes.size, 0);
  assert.deepEqual(bed.port.calls.map((c) => c.op), ["create", "runCommand", "get", "delete"]);
});

Deno.test("issue 19: vercel create() keeps the probe's class and reports a failed partial delete", async () => {
  const bed = newVercelBed();
  bed.port.runner = (p, sandbox) => {
    if (p.cmd !== "sh") return undefined;
    bed.port.sandboxes.delete(sandbox.name); // the delete below then answers 404: success
    throw vercelApiError(502, "Bad gateway");
  };
  const error = await bed.create(RUNTIME_PLAN).then(() => undefined, (e: unknown) => e);
  assert.ok(error instanceof ProviderError);
  assert.equal(error.kind, "ambiguous");
  assert.deepEqual(bed.diagnostics, []);

  const failing = newVercelBed();
  failing.port.runner = (p) => p.cmd === "sh" ? { exitCode: 1 } : undefined;
  const get = failing.port.get;
  failing.port.get = () => Promise.reject(vercelApiError(500, "Internal error"));
  await assert.rejects(failing.create(RUNTIME_PLAN), ProviderError);
  failing.port.get = get;
  assert.equal(failing.diagnostics.length, 1);
  assert.equal(failing.diagnostics[0]!.code, "sandbox-stop-failed");
  assert.match(failing.diagnostics[0]!.message, /Cannot delete the partial vercel sandbox/);
});

Deno.test("issue 19: vercel create() errors are ProviderErrors with class and scope (rules 45, 49, 135)", async (t) => {
  const cases = [
    { status: 429, kind: "rate_limit", scope: "attempt" },
    { status: 401, kind: "fatal", scope: "experiment" },
    { status: 404, kind: "fatal", scope: "experiment" },
    { status: 503, kind: "ambiguous", scope: "attempt" },
  ] as const;
  for (const c of cases) {
    await t.step(`HTTP ${c.status}`, async () => {
      const bed = newVercelBed();
      bed.port.createFailures.push({ error: vercelApiError(c.status) });
      const error = await bed.create(RUNTIME_PLAN).then(() => undefined, (e: unknown) => e);
      assert.ok(error instanceof ProviderError);
      assert.equal(error.kind, c.kind);
      assert.equal(error.scope, c.scope);
    });
  }
  await t.step("HTTP 400 names lifetimeMs", async () => {
    const bed = newVercelBed();
    bed.port.createFailures.push({ error: vercelApiError(400, "Invalid timeout") });
    await assert.rejects(
      bed.create(RUNTIME_PLAN, { lifetimeMs: 90_000_000 }),
      /Invalid timeout \(requested lifetimeMs 90000000\)/,
    );
  });
});

Deno.test("issue 19: vercel create() aborted after the API made the sandbox deletes it by name", async () => {
  const bed = newVercelBed();
  const controller = new AbortController();
  const reason = new Error("interrupted");
  bed.port.createFailures.push({ error: new Error("request aborted"), made: true });
  const create = bed.port.create;
  bed.port.create = (p) => {
    controller.abort(reason);
    return create(p);
  };
  await assert.rejects(
    bed.create(RUNTIME_PLAN, { signal: controller.signal }),
    (e) => e === reason,
  );
  assert.equal(bed.port.sandboxes.size, 0);
});

Deno.test("issue 19: a 429 on vercel create is retried by createWithRetry and the next try succeeds", async () => {
  const clock = createFakeClock();
  const port = createFakeVercelPort(clock);
  const provider = createVercelProvider({ hostEnv: {}, clock, port });
  port.createFailures.push({ error: vercelApiError(429, "Too many requests") });
  const { pid, host, processStart, runId } = OWNER;
  const outcome = createWithRetry(provider, RUNTIME_PLAN, {
    owner: { pid, host, processStart, runId },
    lifetimeMs: 60_000,
    signal: new AbortController().signal,
    clock,
    random: createSeededRandom(3),
  });
  await clock.runAllAsync();
  const { handle, tries, retries } = await outcome;
  assert.equal(tries, 2);
  assert.deepEqual(retries, [{ class: "rate_limit", count: 1 }]);
  assert.deepEqual([...port.sandboxes.keys()], [handle.id]);
});

Deno.test("issue 19: an ambiguous vercel create is reconciled by its token before the retry (rule 42)", async () => {
  const clock = createFakeClock();
  const port = createFakeVercelPort(clock);
  const provider = createVercelProvider({ hostEnv: {}, clock, port });
  port.createFailures.push({ error: vercelApiError(502, "Bad gateway"), made: true });
  const { pid, host, processStart, runId } = OWNER;
  const outcome = createWithRetry(provider, RUNTIME_PLAN, {
    owner: { pid, host, processStart, runId },
    lifetimeMs: 60_000,
    signal: new AbortController().signal,
    clock,
    random: createSeededRandom(5),
  });
  await clock.runAllAsync();
  const { handle, tries } = await outcome;
  assert.equal(tries, 2);
  const [first, second] = port.calls.filter((c) => c.op === "create").map((c) => c.name);
  assert.notEqual(first, second);
  assert.deepEqual([...port.sandboxes.keys()], [handle.id]);
  assert.equal(handle.id, second);
  assert.ok(port.calls.some((c) => c.op === "delete" && c.name === first));
});

Deno.test("classifyVercelCreateError() follows rule 135, then the shared table", () => {
  const table: [unknown, string][] = [
    [vercelApiError(429), "rate_limit"],
    [vercelApiError(400), "fatal"],
    [vercelApiError(401), "fatal"],
    [vercelApiError(403), "fatal"],
    [vercelApiError(404), "fatal"],
    [vercelApiError(502, "Bad gateway"), "ambiguous"],
    [vercelApiError(409, "Conflict"), "fatal"],
    [
      Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:443"), { code: "ECONNREFUSED" }),
      "rejected",
    ],
    [new TypeError("fetch failed"), "ambiguous"],
    [new Error("Invalid Vercel OIDC token"), "fatal"],
    [new ProviderError("rejected", "wrapped"), "rejected"],
  ];
  for (const [error, expected] of table) {
    assert.equal(classifyVercelCreateError(error), expected, String(error));
  }
});

Deno.test("issue 19: vercel stop() deletes once and treats a sandbox already gone as success (rule 19)", async () => {
  const bed = newVercelBed();
  const handle = await bed.create(RUNTIME_PLAN);
  await handle.stop();
  await handle.stop();
  assert.equal(bed.port.sandboxes.size, 0);
  assert.equal(bed.port.calls.filter((c) => c.op === "delete").length, 1);

  const gone = newVercelBed();
  const elsewhere = await gone.create(RUNTIME_PLAN);
  gone.port.sandboxes.clear(); // deleted elsewhere (prune, the lifetime ran out)
  await elsewhere.stop();
  assert.deepEqual(gone.port.calls.slice(-1), [{ op: "get", name: elsewhere.id }]);
});

Deno.test("issue 19: vercel destroyDetached() gets then deletes; not found is already-gone", async () => {
  const bed = newVercelBed();
  bed.port.seed("niceeval-aaaaaaaaaaaa", { "niceeval-token": "a".repeat(32) });
  const signal = new AbortController().signal;
  assert.equal(await bed.provider.destroyDetached!("niceeval-aaaaaaaaaaaa", signal), "destroyed");
  assert.deepEqual(bed.port.calls.map((c) => c.op), ["get", "delete"]);
  assert.equal(
    await bed.provider.destroyDetached!("niceeval-aaaaaaaaaaaa", signal),
    "already-gone",
  );
});

Deno.test("issue 19: vercel findOwned() lists by one tag and matches the other fields locally (rule 133)", async (t) => {
  const bed = newVercelBed();
  const stamp = (token: string, pid: string, host = OWNER.host) => ({
    "niceeval-host": host,
    "niceeval-pid": pid,
    "niceeval-start": OWNER.processStart,
    "niceeval-run": "run-1",
    "niceeval-token": token,
  });
  bed.port.seed("niceeval-aaaaaaaaaaaa", stamp("a".repeat(32), "11"));
  bed.port.seed("niceeval-bbbbbbbbbbbb", stamp("b".repeat(32), "22"), { status: "stopped" });
  bed.port.seed("niceeval-cccccccccccc", stamp("c".repeat(32), "33", "other-host"));
  bed.port.seed("niceeval-handmade", {});
  bed.port.seed("someone-else", stamp("d".repeat(32), "44"));
  const signal = new AbortController().signal;
  const ids = async (filter: Parameters<NonNullable<typeof bed.provider.findOwned>>[0]) =>
    (await bed.provider.findOwned!(filter, signal)).map((i) => i.id).sort();

  await t.step("by token: one tag query", async () => {
    bed.port.calls.length = 0;
    assert.deepEqual(await ids({ provisionToken: "b".repeat(32) }), ["niceeval-bbbbbbbbbbbb"]);
    assert.deepEqual(bed.port.calls, [{ op: "list", tag: ["niceeval-token", "b".repeat(32)] }]);
  });
  await t.step("by host, pid matched locally", async () => {
    bed.port.calls.length = 0;
    assert.deepEqual(await ids({ host: OWNER.host, pid: 11 }), ["niceeval-aaaaaaaaaaaa"]);
    assert.deepEqual(bed.port.calls, [{ op: "list", tag: ["niceeval-host", OWNER.host] }]);
  });
  await t.step("empty filter: name prefix, stamped sandboxes only", async () => {
    bed.port.calls.length = 0;
    assert.deepEqual(await ids({}), [
      "niceeval-aaaaaaaaaaaa",
      "niceeval-bbbbbbbbbbbb",
      "niceeval-cccccccccccc",
    ]);
    assert.deepEqual(bed.port.calls, [{ op: "list", namePrefix: "niceeval-" }]);
  });
  await t.step("owner, state and creation time are read back", async () => {
    const [found] = await bed.provider.findOwned!({ provisionToken: "b".repeat(32) }, signal);
    assert.deepEqual(found, {
      id: "niceeval-bbbbbbbbbbbb",
      owner: {
        host: OWNER.host,
        pid: 22,
        processStart: OWNER.processStart,
        runId: "run-1",
        provisionToken: "b".repeat(32),
      },
      state: "stopped",
      createdAt: new Date(bed.clock.now()),
    });
  });
});

Deno.test("issue 19: vercel plan() identity is stable and changes with source and vcpus (rule 21)", async () => {
  const bed = newVercelBed();
  const ctx = { projectRoot: "/nowhere", signal: new AbortController().signal };
  const a = await bed.provider.plan({ runtime: "node24" }, ctx);
  const b = await bed.provider.plan({}, ctx);
  const c = await bed.provider.plan({ runtime: "node22" }, ctx);
  const d = await bed.provider.plan({ runtime: "node24", vcpus: 4 }, ctx);
  const e = await bed.provider.plan({ snapshotId: "snap_1" }, ctx);
  assert.equal(a.identity, b.identity);
  assert.equal(new Set([a.identity, c.identity, d.identity, e.identity]).size, 4);
  assert.deepEqual(e.plan, { source: { type: "snapshot", snapshotId: "snap_1" } });
  assert.deepEqual(a.buildKeys, []);
  assert.equal(bed.port.calls.length, 0);
});

Deno.test("issue 19: vercel scheduling is shared with concurrency 1 (§4.1)", async () => {
  const registry = createProviderRegistry({ hostEnv: {}, clock: createFakeClock() });
  const provider = await registry.get("vercel");
  assert.equal(provider.name, "vercel");
  assert.deepEqual(provider.scheduling, {
    recommendedConcurrency: 1,
    admission: "shared",
    laneKey: "vercel",
  });
});

Deno.test("issue 19: vercel precondition() names exactly the missing credential", () => {
  const check = (hostEnv: Record<string, string>) =>
    createVercelProvider({ hostEnv, clock: createFakeClock() }).precondition!();
  const full = { VERCEL_TOKEN: "t", VERCEL_TEAM_ID: "team_1", VERCEL_PROJECT_ID: "prj_1" };
  assert.equal(check(full), null);
  assert.equal(check({ VERCEL_OIDC_TOKEN: "header.payload.sig" }), null);
  assert.match(check({})!.message, /^VERCEL_TOKEN is not set \(nor VERCEL_OIDC_TOKEN\)$/);
  assert.match(check({ ...full, VERCEL_TEAM_ID: "" })!.message, /^VERCEL_TEAM_ID is not set/);
  assert.match(
    check({ VERCEL_TOKEN: "t" })!.message,
    /^VERCEL_TEAM_ID and VERCEL_PROJECT_ID are not set/,
  );
  const failure = check({ ...full, VERCEL_PROJECT_ID: "" })!;
  assert.match(failure.message, /^VERCEL_PROJECT_ID is not set/);
  assert.equal(
    failure.hint,
    "export VERCEL_PROJECT_ID (the id of the project the sandboxes belong to)",
  );
  assert.ok(!JSON.stringify(check({ VERCEL_TOKEN: "secret-value" })).includes("secret-value"));
});

Deno.test("issue 19: vercelSandbox() keeps a runtime (default node24) or a snapshot, never both (rule 6)", () => {
  assert.deepEqual(layerState(vercelSandbox()).spec, { runtime: "node24" });
  assert.deepEqual(layerState(vercelSandbox({ snapshotId: "snap_1", vcpus: 2 })).spec, {
    snapshotId: "snap_1",
    vcpus: 2,
  });
  assert.equal(vercelSandbox().provider, "vercel");
  const invalid: [unknown, string, RegExp][] = [
    [{ snapshotId: "snap_1", runtime: "node22" }, "runtime", /either snapshotId or runtime/],
    [{ runtime: "node18" }, "runtime", /runtime must be one of "node26", "node24"/],
    [{ vcpus: 0 }, "vcpus", /vcpus must be a positive integer/],
    [{ vcpus: 1.5 }, "vcpus", /vcpus must be a positive integer/],
    [{ snapshotId: "" }, "snapshotId", /snapshotId must be a non-empty string/],
    [{ image: "x" }, "image", /unknown option "image"/],
    [{ lifetimeMs: -1 }, "lifetimeMs", /lifetimeMs must be a positive integer/],
  ];
  for (const [options, option, message] of invalid) {
    assert.throws(
      () => vercelSandbox(options as Parameters<typeof vercelSandbox>[0]),
      (e: unknown) =>
        e instanceof SandboxConfigError && e.option === option && message.test(e.message),
      JSON.stringify(options),
    );
  }
});

/**
 * The e2b provider through the in-memory port (sandboxes.md rules 121–129, 141; issue 19): create
 * with owner metadata and kill-on-failure, exec through the wrapper (frames in context, stdin,
 * exit codes, tree kill and its fallback), files, lifetime re-read, stop, findOwned by token.
 */
import assert from "node:assert/strict";
import { createE2BProvider, type E2BPlan } from "../../src/sandbox/providers/e2b.ts";
import type { CreateContext, SandboxDiagnostic, SandboxHandle } from "../../src/sandbox/types.ts";
import { createFakeClock, type FakeClock } from "../_fakes/clock.ts";
import { type FakeE2BOptions, FakeE2BPort, sdkError } from "../_fakes/e2b_port.ts";

const OWNER = {
  host: "box",
  pid: 4242,
  processStart: "2026-11-29T09:00:00Z",
  runId: "run-1",
  provisionToken: "0123456789abcdef0123456789abcdef",
};
const PLAN: E2BPlan = { template: "base", user: "user", workdir: "/home/user/workspace" };
const MARKER = "feedfacecafebeef";
const text = (b: Uint8Array) => new TextDecoder().decode(b);

function setup(options: Omit<FakeE2BOptions, "now"> = {}) {
  const clock = createFakeClock();
  const port = new FakeE2BPort({ ...options, now: () => clock.now() });
  const provider = createE2BProvider({
    hostEnv: { E2B_API_KEY: "e2b_test" },
    clock,
    port,
    marker: () => MARKER,
  });
  const diagnostics: SandboxDiagnostic[] = [];
  const ctx = (o: Partial<CreateContext> = {}): CreateContext => ({
    owner: OWNER,
    lifetimeMs: 600_000,
    signal: new AbortController().signal,
    progress: () => {},
    diagnostic: (d) => diagnostics.push(d),
    ...o,
  });
  return { clock, port, provider, ctx, diagnostics };
}

/** Settles `promise` while moving fake time in small steps. */
async function drive<T>(clock: FakeClock, promise: Promise<T>, stepMs = 10): Promise<T> {
  let done = false;
  const watched = promise.finally(() => done = true);
  watched.catch(() => undefined);
  for (let i = 0; i < 2000 && !done; i++) await clock.tickAsync(stepMs);
  return await watched;
}

Deno.test("issue 19: create stamps the owner as metadata, asks for the lifetime, prepares the workdir as the default user", async () => {
  const { port, provider, ctx } = setup({ shell: "sh" });
  const handle = await provider.create(PLAN, ctx());
  const [template, options] = port.calls.find((c) => c.op === "create")!.args as [string, {
    timeoutMs: number;
    metadata: Record<string, string>;
  }];
  assert.equal(template, "base");
  assert.equal(options.timeoutMs, 600_000);
  assert.deepEqual(options.metadata, {
    "niceeval-host": "box",
    "niceeval-pid": "4242",
    "niceeval-start": "2026-11-29T09:00:00Z",
    "niceeval-run": "run-1",
    "niceeval-token": OWNER.provisionToken,
  });
  const instance = port.instances[0]!;
  assert.equal(instance.commands[0]!.o.user, "user");
  assert.ok(instance.dirs.has("/home/user/workspace"));
  assert.equal((handle as SandboxHandle & { shell: string }).shell, "sh");
  assert.equal(handle.workdir, "/home/user/workspace");
  assert.deepEqual(handle.capabilities, {
    user: "any",
    rootAvailable: true,
    stdin: true,
    liveOutput: true,
  });
  const unlimited = await provider.create(PLAN, ctx({ lifetimeMs: Infinity }));
  assert.equal(
    (port.calls.filter((c) => c.op === "create")[1]!.args[1] as { timeoutMs: number }).timeoutMs,
    3_600_000,
  );
  await handle.stop();
  await unlimited.stop();
});

Deno.test("rule 22: a failed workdir setup kills the partial sandbox before create rejects", async () => {
  const { port, provider, ctx } = setup({ setupExit: 1 });
  await assert.rejects(
    provider.create(PLAN, ctx()),
    /Cannot prepare workdir "\/home\/user\/workspace"/,
  );
  assert.equal(port.instances.length, 1);
  assert.equal(port.instances[0]!.killed, true);
});

Deno.test("rule 45, 128: credential and template failures are fatal with experiment scope; 429 stays raw", async () => {
  const { port, provider, ctx } = setup();
  port.createErrors.push(
    sdkError("AuthenticationError", "Unauthorized, please check your credentials."),
  );
  await assert.rejects(
    provider.create(PLAN, ctx()),
    (e: Error & { kind?: string; scope?: string }) => {
      assert.equal(e.name, "ProviderError");
      assert.equal(e.kind, "fatal");
      assert.equal(e.scope, "experiment");
      assert.match(e.message, /E2B_API_KEY/);
      return true;
    },
  );
  port.createErrors.push(sdkError("SandboxError", "404: template 'nope' not found", 404));
  await assert.rejects(
    provider.create({ ...PLAN, template: "nope" }, ctx()),
    (e: Error & { scope?: string }) => {
      assert.equal(e.scope, "experiment");
      assert.match(e.message, /template "nope"/);
      return true;
    },
  );
  port.createErrors.push(sdkError("SandboxError", "400: timeout exceeds the maximum", 400));
  await assert.rejects(provider.create(PLAN, ctx()), /lifetimeMs/);
  const limited = sdkError("RateLimitError", "Rate limit exceeded, please try again later");
  port.createErrors.push(limited);
  await assert.rejects(provider.create(PLAN, ctx()), (e) => e === limited);
  assert.equal(port.instances.length, 0);
});

Deno.test("rule 128: create errors are classified by SDK name and status, then the shared table", () => {
  const { provider } = setup();
  const table: [Error, string][] = [
    [sdkError("RateLimitError", "Rate limit exceeded"), "rate_limit"],
    [sdkError("SandboxError", "429: slow down", 429), "rate_limit"],
    [sdkError("AuthenticationError", "Unauthorized"), "fatal"],
    [sdkError("NotFoundError", "template not found"), "fatal"],
    [sdkError("InvalidArgumentError", "bad metadata"), "fatal"],
    [sdkError("TemplateError", "update the template"), "fatal"],
    [sdkError("SandboxError", "400: bad request", 400), "fatal"],
    [sdkError("TimeoutError", "request timed out"), "ambiguous"],
    [sdkError("SandboxError", "502: bad gateway", 502), "ambiguous"],
    [sdkError("ServiceBusyError", "Service temporarily unavailable", 503), "ambiguous"],
    [Object.assign(new TypeError("fetch failed"), { code: "ECONNRESET" }), "ambiguous"],
    [
      Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" }),
      "rejected",
    ],
    [new Error("something else"), "fatal"],
  ];
  for (const [error, cls] of table) {
    assert.equal(provider.classifyCreateError(error), cls, `${error.name}: ${error.message}`);
  }
});

Deno.test("rules 11, 123: exec quotes argv into the wrapper, streams output live without frames, resolves the exit code", async () => {
  const { port, provider, ctx } = setup({
    split: (t) => [...t], // every character its own chunk: frames straddle chunks
    program: (run) => {
      run.stdout("out 1\n");
      run.stderr("err 1\n");
      run.stdout(`payload mentions ${MARKER}:exit:0 without the separator\n`);
      run.exit(run.command.startsWith("printf") ? 3 : 0);
    },
  });
  const handle = await provider.create(PLAN, ctx());
  const live: string[] = [];
  const r = await handle.exec({ argv: ["printf", "a b", "it's"] }, {
    cwd: "sub",
    env: { A: "1" },
    user: "root",
    onOutput: (c) => void live.push(`${c.stream}:${text(c.data)}`),
  });
  assert.equal(r.exitCode, 3);
  assert.equal(text(r.stdout), `out 1\npayload mentions ${MARKER}:exit:0 without the separator\n`);
  assert.equal(text(r.stderr), "err 1\n");
  assert.ok(!live.join("").includes("\x1e"));
  assert.equal(
    live.filter((l) => l.startsWith("stderr:")).join("").replaceAll("stderr:", ""),
    "err 1\n",
  );
  const run = port.instances[0]!.commands.at(-1)!;
  assert.match(run.cmd, /setsid printf 'a b' 'it'\\''s' <&3/);
  assert.ok(!run.cmd.includes(MARKER));
  assert.deepEqual([run.o.cwd, run.o.user, run.o.envs], ["/home/user/workspace/sub", "root", {
    A: "1",
  }]);
  const script = await handle.exec({ script: "echo hi" });
  assert.equal(script.exitCode, 0);
  assert.match(port.instances[0]!.commands.at(-1)!.cmd, /setsid \/bin\/bash -c 'echo hi' <&3/);
  assert.equal(port.instances[0]!.commands.at(-1)!.o.user, "user");
  await handle.stop();
});

Deno.test("rule 123: stdin bytes reach the command; output after the exit frame is dropped", async () => {
  const { provider, ctx } = setup({
    program: (run) => {
      run.stdout(text(run.stdin ?? new Uint8Array()));
      run.exit(0);
      run.stdout("late output of a background child");
    },
  });
  const handle = await provider.create(PLAN, ctx());
  const r = await handle.exec({ argv: ["cat"] }, { stdin: new TextEncoder().encode("from stdin") });
  assert.equal(text(r.stdout), "from stdin");
  await handle.stop();
});

Deno.test("rule 123: a malformed control frame retires the sandbox", async () => {
  const { port, provider, ctx } = setup({
    program: (run) => run.stdout(`\x1e${run.marker}:exit:oops\n`),
  });
  const handle = await provider.create(PLAN, ctx());
  await assert.rejects(handle.exec({ argv: ["true"] }), (e: Error & { code?: string }) => {
    assert.equal(e.code, "sandbox-retired");
    assert.match(e.message, /control frame/);
    return true;
  });
  assert.equal(port.instances[0]!.killed, true);
  await assert.rejects(handle.readFile("x"), { code: "sandbox-retired" });
  await handle.stop(); // idempotent on a retired, already killed sandbox
});

Deno.test("rule 123: a stream that ends without an exit frame retires the sandbox", async () => {
  const ref: { port?: FakeE2BPort } = {};
  const s = setup({
    program: (run) => {
      run.stdout("partial");
      ref.port!.instances[0]!.processes.at(-1)!.end(0); // the wrapper died before reporting
    },
  });
  const port = ref.port = s.port;
  const handle = await s.provider.create(PLAN, s.ctx());
  await assert.rejects(handle.exec({ argv: ["true"] }), (e: Error & { code?: string }) => {
    assert.equal(e.code, "sandbox-retired");
    assert.match(e.message, /no exit frame/);
    return true;
  });
  assert.equal(port.instances[0]!.killed, true);
});

Deno.test("rules 14, 124: a timeout kills the process group as root and confirms it before rejecting", async () => {
  const { clock, port, provider, ctx } = setup({
    program: (run) => run.command === "true" ? run.exit(0) : run.killed.then(() => {}),
  });
  const handle = await provider.create(PLAN, ctx());
  const r = drive(clock, handle.exec({ argv: ["sleep", "60"] }, { timeoutMs: 1_000 }));
  await assert.rejects(r, (e: Error & { code?: string; limitMs?: number }) => {
    assert.equal(e.code, "sandbox-command-timeout");
    assert.equal(e.limitMs, 1_000);
    return true;
  });
  const cmds = port.instances[0]!.commands;
  const kill = cmds.find((c) => c.cmd === "kill -KILL -100")!;
  assert.equal(kill.o.user, "root");
  assert.ok(cmds.some((c) => c.cmd.startsWith("kill -0 -100")));
  assert.equal(port.instances[0]!.killed, false);
  const after = await handle.exec({ argv: ["true"] });
  assert.equal(after.exitCode, 0);
  await handle.stop();
});

Deno.test("rules 14, 124: a group that survives the kill makes the provider kill the sandbox and retire the handle", async () => {
  const { clock, port, provider, ctx } = setup({ killable: false, program: () => {} });
  const handle = await provider.create(PLAN, ctx());
  const controller = new AbortController();
  const r = drive(clock, handle.exec({ argv: ["sleep", "60"] }, { signal: controller.signal }));
  await clock.tickAsync(5);
  controller.abort();
  await assert.rejects(r, { code: "sandbox-retired" });
  assert.equal(port.instances[0]!.killed, true);
  assert.ok(port.instances[0]!.commands.filter((c) => c.cmd === "kill -KILL -100").length >= 1);
  await assert.rejects(handle.exec({ argv: ["true"] }), { code: "sandbox-retired" });
});

Deno.test("rule 124: an abort confirmed by the group kill rejects with SandboxAbortedError", async () => {
  const { clock, provider, ctx } = setup({ program: (run) => run.killed.then(() => {}) });
  const handle = await provider.create(PLAN, ctx());
  const controller = new AbortController();
  const r = drive(clock, handle.exec({ argv: ["sleep", "60"] }, { signal: controller.signal }));
  await clock.tickAsync(5);
  controller.abort(new Error("stop"));
  await assert.rejects(r, { code: "sandbox-command-aborted" });
  await handle.stop();
});

Deno.test("rule 124: a timeout before the pgid frame arrived retires the sandbox", async () => {
  const { clock, port, provider, ctx } = setup({ noPgidFrame: true, program: () => {} });
  const handle = await provider.create(PLAN, ctx());
  await assert.rejects(drive(clock, handle.exec({ argv: ["sleep", "9"] }, { timeoutMs: 50 })), {
    code: "sandbox-retired",
  });
  assert.equal(port.instances[0]!.killed, true);
});

Deno.test("rules 17, 18, 125: files go through the files API as the default user", async () => {
  const { port, provider, ctx } = setup();
  const handle = await provider.create(PLAN, ctx());
  await handle.writeFile("notes/a.txt", new TextEncoder().encode("hi"));
  assert.equal(text(await handle.readFile("/home/user/workspace/notes/a.txt")), "hi");
  assert.equal(await handle.exists("notes/a.txt"), true);
  assert.equal(await handle.exists("nope"), false);
  await assert.rejects(handle.readFile("nope"), { code: "sandbox-file-not-found" });
  await assert.rejects(handle.readFile("notes"), { code: "sandbox-path-invalid" });
  await handle.writeFile("run.sh", new TextEncoder().encode("#!/bin/sh\n"), { mode: 0o755 });
  assert.equal(port.instances[0]!.modes.get("/home/user/workspace/run.sh"), 0o755);
  await handle.stop();
});

Deno.test("rule 127: ensureLifetime answers from getInfo, extends when short, and trusts only the re-read", async () => {
  const { clock, port, provider, ctx } = setup({ maxTimeoutMs: 900_000 });
  const handle = await provider.create(PLAN, ctx({ lifetimeMs: 600_000 }));
  const enough = await handle.ensureLifetime!(300_000);
  assert.equal(enough.ready, true);
  assert.equal(port.calls.filter((c) => c.op === "setTimeout").length, 0);
  await clock.tickAsync(500_000);
  const extended = await handle.ensureLifetime!(400_000);
  assert.equal(extended.ready, true);
  assert.ok(extended.ready && extended.expiresAt!.getTime() - clock.now() >= 400_000);
  assert.equal(port.calls.filter((c) => c.op === "setTimeout").length, 1);
  const refused = await handle.ensureLifetime!(2_000_000); // the service caps at 900 s
  assert.equal(refused.ready, false);
  assert.match(!refused.ready ? refused.reason : "", /after extending it/);
  await handle.stop();
});

Deno.test("rule 126: stop kills the sandbox, a second stop and an already-gone sandbox resolve", async () => {
  const { port, provider, ctx } = setup();
  const handle = await provider.create(PLAN, ctx());
  await handle.stop();
  await handle.stop();
  assert.equal(port.calls.filter((c) => c.op === "instance.kill").length, 1);
  await assert.rejects(handle.exec({ argv: ["true"] }), { code: "sandbox-retired" });
  const other = await provider.create(PLAN, ctx());
  port.instances[1]!.killed = true; // gone already (its lifetime ended)
  await other.stop();
});

Deno.test("rule 126: findOwned lists by metadata over all pages; an empty filter keeps stamped sandboxes only", async () => {
  const { port, provider, ctx } = setup();
  const tokens = ["a".repeat(32), "b".repeat(32), "c".repeat(32)];
  for (const provisionToken of tokens) {
    await provider.create(PLAN, ctx({ owner: { ...OWNER, provisionToken } }));
  }
  port.foreign.push({ id: "someone-else", metadata: { team: "x" }, state: "running" });
  port.foreign.push({
    id: "paused-orphan",
    metadata: { "niceeval-token": "d".repeat(32), "niceeval-pid": "1" },
    state: "paused",
  });
  const signal = new AbortController().signal;
  const byToken = await provider.findOwned!({ provisionToken: tokens[1]! }, signal);
  assert.deepEqual(byToken.map((i) => i.id), ["sbx-2"]);
  assert.deepEqual(byToken[0]!.owner, { ...OWNER, provisionToken: tokens[1]! });
  assert.deepEqual(port.calls.filter((c) => c.op === "list").at(-1)!.args[0], {
    "niceeval-token": tokens[1],
  });
  const all = await provider.findOwned!({}, signal);
  assert.deepEqual(all.map((i) => [i.id, i.state]), [
    ["sbx-1", "running"],
    ["sbx-2", "running"],
    ["sbx-3", "running"],
    ["paused-orphan", "stopped"],
  ]);
  assert.ok(port.calls.filter((c) => c.op === "list.page").length >= 3);
  assert.equal(await provider.destroyDetached!("sbx-1", signal), "destroyed");
  assert.equal(await provider.destroyDetached!("sbx-1", signal), "already-gone");
  assert.equal(await provider.destroyDetached!("paused-orphan", signal), "destroyed");
});

Deno.test("issue 19: the provider declares e2b scheduling and needs E2B_API_KEY", () => {
  const { provider } = setup();
  assert.deepEqual(provider.scheduling, {
    recommendedConcurrency: 20,
    admission: "shared",
    laneKey: "e2b",
  });
  assert.equal(provider.precondition!(), null);
  const clock = createFakeClock();
  for (const hostEnv of [{}, { E2B_API_KEY: "" }, { E2B_API_KEY: "  " }]) {
    const missing = createE2BProvider({ hostEnv, clock, port: new FakeE2BPort() }).precondition!();
    assert.deepEqual(missing, {
      message: "E2B_API_KEY is not set",
      hint: "set E2B_API_KEY to an E2B API key in the environment or in .env",
    });
  }
});

Deno.test("rule 21: plan is pure and its identity covers template, user and workdir", async () => {
  const { provider } = setup();
  const ctx = { projectRoot: "/nowhere", signal: new AbortController().signal };
  const a = await provider.plan({ template: "base" }, ctx);
  assert.deepEqual(a.plan, PLAN);
  assert.deepEqual(a.buildKeys, []);
  assert.equal((await provider.plan({ template: "base" }, ctx)).identity, a.identity);
  assert.notEqual(
    (await provider.plan({ template: "base", user: "root" }, ctx)).identity,
    a.identity,
  );
  assert.notEqual((await provider.plan({ template: "other" }, ctx)).identity, a.identity);
});

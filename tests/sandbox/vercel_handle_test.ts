/**
 * The vercel handle through the in-memory port (sandboxes.md rules 132–134, 136; issue 19): exec
 * argv and scripts, output delivered after completion, unsupported stdin and users, retirement on
 * timeout and abort, files, `exists` through `test -e`, and `ensureLifetime`.
 */
import assert from "node:assert/strict";
import {
  SandboxFileNotFoundError,
  SandboxPathError,
  SandboxRetiredError,
  SandboxUnsupportedError,
} from "../../src/sandbox/mod.ts";
import type { OutputChunk } from "../../src/sandbox/mod.ts";
import type { VercelPlan, VercelRunParams } from "../../src/sandbox/providers/vercel.ts";
import { newVercelBed } from "../_fakes/vercel_port.ts";

const PLAN: VercelPlan = { source: { type: "runtime", runtime: "node24" } };
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

/** The commands run after create (the shell probe excluded). */
function commands(bed: ReturnType<typeof newVercelBed>): VercelRunParams[] {
  return bed.port.calls.flatMap((c) => c.op === "runCommand" ? [c.params] : []).slice(1);
}

Deno.test("issue 19: vercel exec() runs an argv without a shell, in the workdir, as the default user", async () => {
  const bed = newVercelBed();
  const handle = await bed.create(PLAN);
  bed.port.runner = (p) =>
    p.cmd === "node" ? { exitCode: 3, stdout: "out", stderr: "err" } : undefined;
  const r = await handle.exec({ argv: ["node", "a b", "'q'"] }, { env: { A: "1" } });
  assert.equal(r.exitCode, 3);
  assert.equal(text(r.stdout), "out");
  assert.equal(text(r.stderr), "err");
  const [p] = commands(bed);
  assert.equal(p!.cmd, "node");
  assert.deepEqual(p!.args, ["a b", "'q'"]);
  assert.equal(p!.cwd, "/vercel/sandbox");
  assert.deepEqual(p!.env, { A: "1" });
  assert.equal(p!.sudo, false);
});

Deno.test("issue 19: vercel exec() runs a script with the probed shell; root runs with sudo", async () => {
  const bed = newVercelBed();
  const handle = await bed.create(PLAN);
  await handle.exec({ script: "echo $HOME" }, { cwd: "src", user: "root" });
  const [p] = commands(bed);
  assert.equal(p!.cmd, "/bin/bash");
  assert.deepEqual(p!.args, ["-c", "echo $HOME"]);
  assert.equal(p!.cwd, "/vercel/sandbox/src");
  assert.equal(p!.sudo, true);

  const sh = newVercelBed();
  sh.port.runner = (q) => q.cmd === "sh" ? { exitCode: 0, stdout: "sh\n" } : undefined;
  const shHandle = await sh.create(PLAN);
  await shHandle.exec({ script: "true" });
  assert.equal(commands(sh)[0]!.cmd, "/bin/sh");
});

Deno.test("issue 19: vercel exec() calls onOutput once per non-empty stream after the command ended", async () => {
  const bed = newVercelBed();
  const handle = await bed.create(PLAN);
  const events: string[] = [];
  bed.port.runner = (p) => {
    if (p.cmd !== "make") return undefined;
    events.push("ran");
    return { exitCode: 0, stdout: "línea 1\nlínea 2\n", stderr: "" };
  };
  const onOutput = (c: OutputChunk) => void events.push(`${c.stream}:${text(c.data)}`);
  await handle.exec({ argv: ["make"] }, { onOutput });
  assert.deepEqual(events, ["ran", "stdout:línea 1\nlínea 2\n"]);
});

Deno.test("issue 19: vercel exec() rejects stdin and users other than root before running anything", async () => {
  const bed = newVercelBed();
  const handle = await bed.create(PLAN);
  await assert.rejects(
    handle.exec({ argv: ["cat"] }, { stdin: new Uint8Array([1]) }),
    (e: unknown) => e instanceof SandboxUnsupportedError && e.option === "stdin",
  );
  await assert.rejects(
    handle.exec({ argv: ["id"] }, { user: "node" }),
    (e: unknown) => e instanceof SandboxUnsupportedError && e.option === "user",
  );
  assert.deepEqual(commands(bed), []);
  assert.deepEqual(handle.capabilities, {
    user: "root-only",
    rootAvailable: true,
    stdin: false,
    liveOutput: false,
  });
});

/** A runner whose `sleep` commands end only when their signal aborts. */
function hangingSleep(p: VercelRunParams) {
  if (p.cmd !== "sleep") return undefined;
  return new Promise<never>((_, reject) => {
    p.signal?.addEventListener("abort", () => reject(new Error("request aborted")), { once: true });
  });
}

Deno.test("issue 19: vercel exec() past its timeout deletes the sandbox and rejects retired (rule 14)", async () => {
  const bed = newVercelBed();
  const handle = await bed.create(PLAN);
  bed.port.runner = hangingSleep;
  const outcome = handle.exec({ argv: ["sleep", "60"] }, { timeoutMs: 5_000 })
    .then(() => undefined, (e: unknown) => e);
  await bed.clock.tickAsync(4_999);
  assert.ok(bed.port.sandboxes.has(handle.id));
  await bed.clock.tickAsync(1);
  const error = await outcome;
  assert.ok(error instanceof SandboxRetiredError, String(error));
  assert.match(error.message, /^Command timed out after 5000 ms; vercel sandbox "niceeval-/);
  assert.equal((error.cause as { code?: string }).code, "sandbox-command-timeout");
  assert.equal(bed.port.sandboxes.size, 0);
  await assert.rejects(handle.exec({ argv: ["true"] }), SandboxRetiredError);
  await assert.rejects(handle.readFile("a"), SandboxRetiredError);
  assert.equal(bed.clock.countTimers(), 0);
});

Deno.test("issue 19: vercel exec() aborted deletes the sandbox and rejects retired with the abort as cause", async () => {
  const bed = newVercelBed();
  const handle = await bed.create(PLAN);
  bed.port.runner = hangingSleep;
  const controller = new AbortController();
  const outcome = handle.exec({ argv: ["sleep", "60"] }, { signal: controller.signal })
    .then(() => undefined, (e: unknown) => e);
  await bed.clock.flush();
  controller.abort(new Error("interrupted"));
  const error = await outcome;
  assert.ok(error instanceof SandboxRetiredError);
  assert.equal((error.cause as { code?: string }).code, "sandbox-command-aborted");
  assert.equal(bed.port.sandboxes.size, 0);
});

Deno.test("issue 19: vercel exec() with an already aborted signal runs nothing and keeps the sandbox", async () => {
  const bed = newVercelBed();
  const handle = await bed.create(PLAN);
  const reason = new Error("gone");
  await assert.rejects(
    handle.exec({ argv: ["true"] }, { signal: AbortSignal.abort(reason) }),
    (e) => e === reason,
  );
  assert.deepEqual(commands(bed), []);
  assert.equal(bed.port.sandboxes.size, 1);
});

Deno.test("issue 19: vercel files: writeFiles with mode, readFileToBuffer, missing and directory paths", async () => {
  const bed = newVercelBed();
  const handle = await bed.create(PLAN);
  await handle.writeFile("notes/a.txt", new TextEncoder().encode("hi"));
  await handle.writeFile("/tmp/run.sh", new TextEncoder().encode("#!/bin/sh"), { mode: 0o755 });
  const files = bed.port.sandboxes.get(handle.id)!.files;
  assert.equal(files.get("/vercel/sandbox/notes/a.txt")!.mode, 0o644);
  assert.equal(files.get("/tmp/run.sh")!.mode, 0o755);
  assert.equal(text(await handle.readFile("notes/a.txt")), "hi");
  await assert.rejects(
    handle.readFile("missing.txt"),
    (e: unknown) =>
      e instanceof SandboxFileNotFoundError && e.path === "/vercel/sandbox/missing.txt",
  );
  await assert.rejects(handle.readFile("notes"), SandboxPathError);
  await assert.rejects(handle.writeFile("/", new Uint8Array()), SandboxPathError);
});

Deno.test("issue 19: vercel exists() runs test -e as root: 0 true, 1 false, else it rejects", async () => {
  const bed = newVercelBed();
  const handle = await bed.create(PLAN);
  await handle.writeFile("a.txt", new Uint8Array([1]));
  assert.equal(await handle.exists("a.txt"), true);
  assert.equal(await handle.exists("b.txt"), false);
  const [p] = commands(bed);
  assert.deepEqual([p!.cmd, ...p!.args, p!.sudo], ["test", "-e", "/vercel/sandbox/a.txt", true]);
  bed.port.runner = (q) => q.cmd === "test" ? { exitCode: 2 } : undefined;
  await assert.rejects(handle.exists("c.txt"), /test exited with 2/);
});

Deno.test("issue 19: vercel ensureLifetime() is ready without a call when enough time is left", async () => {
  const bed = newVercelBed();
  const handle = await bed.create(PLAN, { lifetimeMs: 600_000 });
  const before = bed.port.calls.length;
  const lifetime = await handle.ensureLifetime(600_000);
  assert.deepEqual(lifetime, { ready: true, expiresAt: new Date(bed.clock.now() + 600_000) });
  assert.equal(bed.port.calls.length, before);
});

Deno.test("issue 19: vercel ensureLifetime() extends by what is missing and answers from the re-read (rule 134)", async () => {
  const bed = newVercelBed();
  const handle = await bed.create(PLAN, { lifetimeMs: 600_000 });
  await bed.clock.tickAsync(500_000);
  const lifetime = await handle.ensureLifetime(300_000);
  assert.deepEqual(bed.port.calls.slice(-2), [
    { op: "extendTimeout", name: handle.id, durationMs: 200_000 },
    { op: "get", name: handle.id },
  ]);
  assert.deepEqual(lifetime, { ready: true, expiresAt: new Date(bed.clock.now() + 300_000) });
});

Deno.test("issue 19: vercel ensureLifetime() answers not ready when the extension is refused or falls short", async () => {
  const bed = newVercelBed();
  const handle = await bed.create(PLAN, { lifetimeMs: 600_000 });
  bed.port.maxSessionMs = 700_000;
  const refused = await handle.ensureLifetime(3_600_000);
  assert.equal(refused.ready, false);
  assert.match(
    (refused as { reason: string }).reason,
    /refused to extend its timeout by 3000000 ms: Timeout exceeds the maximum/,
  );

  const short = newVercelBed();
  const shortHandle = await short.create(PLAN, { lifetimeMs: 600_000 });
  const extend = short.port.get;
  short.port.get = async (name, o) => ({ ...(await extend(name, o)), expiresAt: undefined });
  const lifetime = await shortHandle.ensureLifetime(900_000);
  assert.deepEqual(lifetime, {
    ready: false,
    reason: "the vercel sandbox has 0 s left after extending its timeout, 900 s are needed",
  });
});

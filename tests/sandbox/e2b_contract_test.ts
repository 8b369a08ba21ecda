/**
 * sandboxes.md rule 142 (issue 19): the real `e2b` SDK against the local fake E2B cloud over real
 * HTTP on 127.0.0.1. The SDK gets the fake's URLs as connection options rather than through
 * `E2B_API_URL`/`E2B_SANDBOX_URL`, because the process environment is shared with test files
 * running in parallel; the CLI end-to-end test covers the environment variables.
 */
import assert from "node:assert/strict";
import { CommandExitError, FileNotFoundError, RateLimitError, Sandbox } from "e2b";
import {
  E2B_SDK_VERSION,
  type FakeE2B,
  lockedE2bVersion,
  startFakeE2B,
} from "../_fakes/e2b/mod.ts";

const TEMPLATE = "base";

/** The fake's URLs as SDK connection options (static calls type only `apiKey`, read all three). */
function connection(fake: FakeE2B): { apiKey: string; apiUrl: string; sandboxUrl: string } {
  return {
    apiKey: fake.env.E2B_API_KEY,
    apiUrl: fake.apiUrl,
    sandboxUrl: fake.sandboxUrl,
  };
}

async function withSandbox(
  fake: FakeE2B,
  metadata: Record<string, string> = {},
): Promise<Sandbox> {
  return await Sandbox.create(TEMPLATE, { ...connection(fake), metadata, timeoutMs: 60_000 });
}

/** An `onStdout` callback and a promise of the first match of `pattern` in the output so far. */
function watchStdout(pattern: RegExp) {
  let text = "";
  let found!: (m: RegExpExecArray) => void;
  const match = new Promise<RegExpExecArray>((resolve) => found = resolve);
  return {
    match,
    onStdout: (d: string) => {
      text += d;
      const m = pattern.exec(text);
      if (m !== null) found(m);
    },
  };
}

Deno.test("issue 19: the fake's wire format is pinned to the e2b version in deno.lock", async () => {
  assert.equal(
    await lockedE2bVersion(),
    E2B_SDK_VERSION,
    "deno.lock now resolves another e2b version: re-check tests/_fakes/e2b against its sources " +
      "and update E2B_SDK_VERSION",
  );
});

Deno.test("issue 19: Sandbox.create() stores metadata and getInfo() reports it", async () => {
  await using fake = await startFakeE2B();
  const sbx = await withSandbox(fake, { "niceeval-token": "ab12", "niceeval-host": "h 1/x" });
  const info = await sbx.getInfo();
  assert.equal(info.sandboxId, sbx.sandboxId);
  assert.equal(info.templateId, TEMPLATE);
  assert.deepEqual(info.metadata, { "niceeval-token": "ab12", "niceeval-host": "h 1/x" });
  assert.equal(info.endAt.getTime() - info.startedAt.getTime(), 60_000);
  assert.deepEqual(fake.sandboxes().map((s) => s.id), [sbx.sandboxId]);
  await sbx.kill();
});

Deno.test("issue 19: commands.run() in the foreground returns stdout, stderr and exit code", async () => {
  await using fake = await startFakeE2B();
  const sbx = await withSandbox(fake);
  const result = await sbx.commands.run("echo out; echo err >&2; pwd");
  assert.equal(result.exitCode, 0);
  assert.equal(result.stdout, `out\n${fake.sandboxes()[0]!.hostPath("/home/user")}\n`);
  assert.equal(result.stderr, "err\n");
  const failed = await sbx.commands.run("exit 3").catch((e: unknown) => e);
  assert.ok(failed instanceof CommandExitError);
  assert.equal(failed.exitCode, 3);
  assert.equal(failed.message, "exit status 3");
  await sbx.kill();
});

Deno.test("issue 19: commands.run() maps sandbox paths in cwd, arguments and envs", async () => {
  await using fake = await startFakeE2B();
  const sbx = await withSandbox(fake);
  await sbx.files.makeDir("/home/user/workspace");
  const result = await sbx.commands.run('touch /home/user/workspace/a; echo "$X"; ls', {
    cwd: "/home/user/workspace",
    envs: { X: "/tmp/x" },
  });
  const [x, listing] = result.stdout.trim().split("\n");
  assert.equal(x, fake.sandboxes()[0]!.hostPath("/tmp/x"));
  assert.equal(listing, "a");
  assert.equal(await sbx.files.exists("/home/user/workspace/a"), true);
  await sbx.kill();
});

Deno.test("issue 19: a background command streams stdout/stderr live and reads stdin", async () => {
  await using fake = await startFakeE2B();
  const sbx = await withSandbox(fake);
  const stdout: string[] = [];
  const stderr: string[] = [];
  let sawFirst!: () => void;
  const first = new Promise<void>((resolve) => sawFirst = resolve);
  const handle = await sbx.commands.run(
    "echo ready; read line; echo got:$line >&2; cat; exit 4",
    {
      background: true,
      stdin: true,
      timeoutMs: 0,
      onStdout: (d) => {
        stdout.push(d);
        sawFirst();
      },
      onStderr: (d) => void stderr.push(d),
    },
  );
  // The first line arrives while the process still waits for stdin: output is live.
  await first;
  assert.deepEqual([stdout, stderr], [["ready\n"], []]);
  assert.deepEqual(fake.sandboxes()[0]!.processes, [handle.pid]);
  await handle.sendStdin("hello\nrest");
  await handle.closeStdin();
  const failed = await handle.wait().catch((e: unknown) => e);
  assert.ok(failed instanceof CommandExitError);
  assert.equal(failed.exitCode, 4);
  assert.deepEqual([stdout, stderr], [["ready\n", "rest"], ["got:hello\n"]]);
  await sbx.kill();
});

Deno.test("issue 19: the setsid/printf/kill wrapper pattern works on the fake", async () => {
  await using fake = await startFakeE2B();
  const sbx = await withSandbox(fake);
  // Sandboxes.md rule 123: a background session leader whose group is killed by a second command.
  // The control frames start with the record separator 0x1e, as in the provider's wrapper.
  // deno-lint-ignore no-control-regex
  const watch = watchStdout(/\x1em:pgid:(\d+)\n/);
  const handle = await sbx.commands.run(
    "exec 3<&0; setsid sleep 60 <&3 & pid=$!; printf '\\036m:pgid:%s\\n' \"$pid\"; wait $pid; " +
      "printf '\\036m:exit:%s\\n' $?",
    { background: true, timeoutMs: 0, onStdout: watch.onStdout },
  );
  const pgid = (await watch.match)[1];
  await sbx.commands.run(`kill -KILL -${pgid}`, { user: "root" });
  const result = await handle.wait();
  assert.ok(result.stdout.endsWith("\x1em:exit:137\n"), JSON.stringify(result.stdout));
  await sbx.kill();
});

Deno.test("issue 19: commands.kill() sends SIGKILL and the end event reports the signal", async () => {
  await using fake = await startFakeE2B();
  const sbx = await withSandbox(fake);
  const handle = await sbx.commands.run("echo up; sleep 60", {
    background: true,
    timeoutMs: 0,
    onStdout: () => void handle.kill(),
  });
  const failed = await handle.wait().catch((e: unknown) => e);
  assert.ok(failed instanceof CommandExitError);
  assert.equal(failed.exitCode, -1);
  assert.equal(failed.error, "signal: killed");
  await sbx.kill();
});

Deno.test("issue 19: files.write(), read() and exists() round-trip bytes", async () => {
  await using fake = await startFakeE2B();
  const sbx = await withSandbox(fake);
  const bytes = new Uint8Array([0, 1, 2, 255, 10]);
  await sbx.files.write("/home/user/workspace/dir/f.bin", bytes.buffer as ArrayBuffer, {
    user: "user",
  });
  assert.deepEqual(
    await sbx.files.read("/home/user/workspace/dir/f.bin", { format: "bytes", user: "user" }),
    bytes,
  );
  assert.equal(await sbx.files.read("workspace/dir/f.bin"), "\0\x01\x02\uFFFD\n");
  assert.equal(await sbx.files.exists("/home/user/workspace/dir"), true);
  assert.equal(await sbx.files.exists("/home/user/workspace/none"), false);
  assert.equal(await sbx.files.exists("/bin/bash"), true);
  const stat = await Deno.stat(fake.sandboxes()[0]!.hostPath("/home/user/workspace/dir/f.bin"));
  assert.equal((stat.mode ?? 0) & 0o777, 0o644);
  await assert.rejects(
    () => sbx.files.read("/home/user/none", { format: "bytes" }),
    FileNotFoundError,
  );
  await sbx.kill();
});

Deno.test("issue 19: Sandbox.list() filters by metadata across pages", async () => {
  await using fake = await startFakeE2B({ pageSize: 2 });
  const mine = [];
  for (let i = 0; i < 3; i++) mine.push(await withSandbox(fake, { "niceeval-run": "r&1=x" }));
  const other = await withSandbox(fake, { "niceeval-run": "r2" });
  const paginator = Sandbox.list({
    ...connection(fake),
    query: { metadata: { "niceeval-run": "r&1=x" } },
  });
  const found: string[] = [];
  let pages = 0;
  while (paginator.hasNext) {
    found.push(...(await paginator.nextItems()).map((s) => s.sandboxId));
    pages++;
  }
  assert.equal(pages, 2);
  assert.deepEqual(found.sort(), mine.map((s) => s.sandboxId).sort());
  for (const sbx of [...mine, other]) await sbx.kill();
});

Deno.test("issue 19: setTimeout() moves endAt, counted from now on the fake's clock", async () => {
  let now = Date.parse("2030-01-01T00:00:00Z");
  await using fake = await startFakeE2B({ now: () => now });
  const sbx = await withSandbox(fake);
  now += 30_000;
  await sbx.setTimeout(600_000);
  assert.equal((await sbx.getInfo()).endAt.getTime(), now + 600_000);
  now += 600_000;
  // Past endAt the sandbox is gone, as after the cloud's own timeout.
  assert.equal(await sbx.isRunning(), false);
  assert.deepEqual(fake.sandboxes(), []);
});

Deno.test("issue 19: kill() removes the sandbox, its processes and its directory", async () => {
  await using fake = await startFakeE2B();
  const sbx = await withSandbox(fake);
  const watch = watchStdout(/^(\d+)\n/);
  const handle = await sbx.commands.run("setsid sleep 60 & echo $!; sleep 60", {
    background: true,
    timeoutMs: 0,
    onStdout: watch.onStdout,
  });
  const grandchild = Number((await watch.match)[1]);
  const { root } = fake.sandboxes()[0]!;
  assert.equal(await Sandbox.kill(sbx.sandboxId, connection(fake)), true);
  assert.deepEqual(fake.sandboxes(), []);
  assert.equal(await Deno.stat(root).then(() => true, () => false), false);
  const state = await Deno.readTextFile(`/proc/${grandchild}/stat`).catch(() => "gone");
  assert.ok(state === "gone" || / Z /.test(state), `grandchild still alive: ${state}`);
  await handle.wait().catch(() => undefined);
  assert.equal(await Sandbox.kill(sbx.sandboxId, connection(fake)), false);
});

Deno.test("issue 19: a 429 on create surfaces as the SDK's RateLimitError", async () => {
  await using fake = await startFakeE2B({ createFailures: [429] });
  await assert.rejects(() => withSandbox(fake), RateLimitError);
  const sbx = await withSandbox(fake);
  assert.deepEqual(
    fake.requests.filter((r) => r.path === "/v2/sandboxes").map((r) => r.status),
    [429, 201],
  );
  await sbx.kill();
});

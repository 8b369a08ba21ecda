/**
 * The docker provider against a real daemon (sandboxes.md rules 106–113, 139): create, exec,
 * files, stop, kill-on-failure and the TTL dead-man switch.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { dockerAvailability } from "../_helpers/docker.ts";
import {
  SandboxAbortedError,
  SandboxFileNotFoundError,
  SandboxPathError,
  SandboxRetiredError,
  SandboxTimeoutError,
} from "../../src/sandbox/mod.ts";
import { DOCKER_LABELS } from "../../src/sandbox/providers/docker/client.ts";
import { oneEntryTar } from "../../src/sandbox/providers/docker/_tar.ts";
import { BUSYBOX_IMAGE, dockerTestBed, dockerTestOwner, text } from "./_docker.ts";

const docker = await dockerAvailability();
/** Liveness bound of the dead-man test: far above the 3 s lifetime, so only a hang trips it. */
const TTL_DEADLINE_MS = 30_000;

Deno.test({
  name: "docker create() stamps labels and TTL, runs sleep under an init, and stop() removes it",
  ignore: !docker.ok,
  fn: async () => {
    await using bed = dockerTestBed();
    const handle = await bed.create({}, { lifetimeMs: 120_500 });
    const info = await bed.docker.getContainer(handle.id).inspect();
    const labels = info.Config.Labels;
    assert.equal(labels[DOCKER_LABELS.managed], "true");
    assert.equal(labels[DOCKER_LABELS.runId], bed.runId);
    assert.equal(labels[DOCKER_LABELS.pid], String(Deno.pid));
    assert.equal(labels[DOCKER_LABELS.host], Deno.hostname());
    assert.match(labels[DOCKER_LABELS.provisionToken]!, /^[0-9a-f]{32}$/);
    assert.equal(labels[DOCKER_LABELS.expires], handle.expiresAt.toISOString());
    assert.deepEqual(info.Config.Entrypoint, ["sleep"]);
    assert.deepEqual(info.Config.Cmd, ["121"]);
    // ensureLifetime answers from the stamped expiry: ready below it, not ready beyond it.
    assert.equal((await handle.ensureLifetime(1_000)).ready, true);
    assert.equal((await handle.ensureLifetime(600_000)).ready, false);
    assert.equal(info.HostConfig.Init, true);
    assert.equal(info.HostConfig.NetworkMode, "none");
    assert.equal(info.Config.WorkingDir, "/workspace");
    assert.deepEqual(handle.capabilities, {
      user: "any",
      rootAvailable: true,
      stdin: true,
      liveOutput: true,
    });
    const r = await handle.exec({ argv: ["sh", "-c", "pwd; id -u"] });
    assert.deepEqual([r.exitCode, text(r.stdout)], [0, "/workspace\n0\n"]);
    await handle.stop();
    assert.deepEqual(await bed.containers(), []);
  },
});

Deno.test({
  name: "docker exec() resolves a non-zero exit as a value and passes argv unchanged",
  ignore: !docker.ok,
  fn: async () => {
    await using bed = dockerTestBed();
    const handle = await bed.create();
    const r = await handle.exec({ script: "echo out; echo err >&2; exit 3" });
    assert.deepEqual([r.exitCode, text(r.stdout), text(r.stderr)], [3, "out\n", "err\n"]);
    const argv = await handle.exec({ argv: ["printf", "%s|", "a b", "'q'", '"d"'] });
    assert.equal(text(argv.stdout), `a b|'q'|"d"|`);
    const killed = await handle.exec({ script: "kill -TERM $$" });
    assert.equal(killed.exitCode, 143);
    const env = await handle.exec({ argv: ["sh", "-c", 'echo "$X"'] }, { env: { X: "y z" } });
    assert.equal(text(env.stdout), "y z\n");
  },
});

Deno.test({
  name: "docker exec() waits for a command that closes its output before it exits",
  ignore: !docker.ok,
  fn: async () => {
    await using bed = dockerTestBed();
    const handle = await bed.create();
    const r = await handle.exec({
      script: "echo early; exec >/dev/null 2>&1; sleep 1; echo late > done.txt; exit 4",
    });
    assert.deepEqual([r.exitCode, text(r.stdout)], [4, "early\n"]);
    assert.equal(text(await handle.readFile("done.txt")), "late\n");
  },
});

Deno.test({
  name: "docker exec() writes stdin and ends it",
  ignore: !docker.ok,
  fn: async () => {
    await using bed = dockerTestBed();
    const handle = await bed.create();
    const r = await handle.exec({ argv: ["cat"] }, {
      stdin: new TextEncoder().encode("line one\nline two\n"),
    });
    assert.deepEqual([r.exitCode, text(r.stdout)], [0, "line one\nline two\n"]);
  },
});

Deno.test({
  name: "docker exec() reassembles frames split across chunks (large output on both streams)",
  ignore: !docker.ok,
  fn: async () => {
    await using bed = dockerTestBed();
    const handle = await bed.create();
    const live: { stream: string; size: number }[] = [];
    const r = await handle.exec({
      script: "i=0; while [ $i -lt 2000 ]; do echo line-$i; echo err-$i >&2; i=$((i+1)); done; " +
        "head -c 3000000 /dev/zero | tr '\\0' x",
    }, { onOutput: (c) => void live.push({ stream: c.stream, size: c.data.length }) });
    assert.equal(r.exitCode, 0);
    const out = text(r.stdout);
    const lines = Array.from({ length: 2000 }, (_, i) => `line-${i}\n`).join("");
    assert.equal(out, lines + "x".repeat(3_000_000));
    assert.equal(text(r.stderr), Array.from({ length: 2000 }, (_, i) => `err-${i}\n`).join(""));
    const total = (s: string) => live.filter((c) => c.stream === s).reduce((n, c) => n + c.size, 0);
    assert.deepEqual([total("stdout"), total("stderr")], [r.stdout.length, r.stderr.length]);
  },
});

Deno.test({
  name: "docker writeFile() leaves files owned by the default user (uid 1000) with parents",
  ignore: !docker.ok,
  fn: async () => {
    await using bed = dockerTestBed();
    const handle = await bed.create({ user: "sandbox" });
    await handle.writeFile("deep/dir/a.txt", new TextEncoder().encode("hello"));
    await handle.writeFile("run.sh", new TextEncoder().encode("#!/bin/sh\n"), { mode: 0o755 });
    const r = await handle.exec({
      script: "stat -c '%u:%g %a %n' deep deep/dir deep/dir/a.txt run.sh /workspace",
    });
    assert.equal(
      text(r.stdout),
      "1000:1000 755 deep\n1000:1000 755 deep/dir\n1000:1000 644 deep/dir/a.txt\n" +
        "1000:1000 755 run.sh\n1000:1000 755 /workspace\n",
    );
    assert.equal(text(await handle.readFile("/workspace/deep/dir/a.txt")), "hello");
    assert.equal(await handle.exists("deep/dir"), true);
    assert.equal(await handle.exists("nope"), false);
  },
});

Deno.test({
  name: "docker readFile() rejects a missing path (404) and a directory, and follows symlinks",
  ignore: !docker.ok,
  fn: async () => {
    await using bed = dockerTestBed();
    const handle = await bed.create();
    await assert.rejects(handle.readFile("missing.txt"), SandboxFileNotFoundError);
    await assert.rejects(handle.readFile("/tmp"), SandboxPathError);
    await handle.exec({ script: "echo target > t.txt && ln -s t.txt link" });
    assert.equal(text(await handle.readFile("link")), "target\n");
  },
});

Deno.test({
  name: "docker exec() kills the whole process group on timeout and keeps the sandbox",
  ignore: !docker.ok,
  fn: async () => {
    await using bed = dockerTestBed();
    const handle = await bed.create();
    const err = await handle.exec({ script: "sleep 71 & echo $! > /tmp/child; sleep 72" }, {
      timeoutMs: 500,
    }).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof SandboxTimeoutError, String(err));
    const r = await handle.exec({
      script: "ps -o args | grep -v grep | grep -c 'sleep 7[12]' || true",
    });
    assert.equal(text(r.stdout).trim(), "0");
    const after = await handle.exec({ argv: ["true"] });
    assert.equal(after.exitCode, 0);
  },
});

Deno.test({
  name: "docker exec() rejects with SandboxAbortedError when the signal aborts and kills the group",
  ignore: !docker.ok,
  fn: async () => {
    await using bed = dockerTestBed();
    const handle = await bed.create();
    const controller = new AbortController();
    const running = handle.exec({ script: "echo started; sleep 73" }, {
      signal: controller.signal,
      onOutput: () => controller.abort(),
    });
    await assert.rejects(running, SandboxAbortedError);
    const r = await handle.exec({
      script: "ps -o args | grep -v grep | grep -c 'sleep 73' || true",
    });
    assert.equal(text(r.stdout).trim(), "0");
  },
});

Deno.test({
  name: "docker stop() twice resolves, and a stopped handle rejects with SandboxRetiredError",
  ignore: !docker.ok,
  fn: async () => {
    await using bed = dockerTestBed();
    const handle = await bed.create();
    await handle.stop();
    await handle.stop();
    await assert.rejects(handle.exec({ argv: ["true"] }), SandboxRetiredError);
    assert.equal(
      await bed.provider.destroyDetached!(handle.id, new AbortController().signal),
      "already-gone",
    );
    assert.deepEqual(await bed.containers(), []);
  },
});

Deno.test({
  name: "docker create() removes the container when the image has no sleep (kill-on-failure)",
  ignore: !docker.ok,
  fn: async () => {
    await using bed = dockerTestBed();
    const tag = "niceeval-test/no-sleep:local";
    await buildWithoutSleep(bed.docker, tag);
    await assert.rejects(bed.create({ image: tag }));
    assert.deepEqual(await bed.containers(), []);
  },
});

Deno.test({
  name: "docker TTL dead-man: a container with a 3 s lifetime stops by itself",
  ignore: !docker.ok,
  fn: async () => {
    await using bed = dockerTestBed();
    const handle = await bed.create({}, { lifetimeMs: 3_000 });
    const container = bed.docker.getContainer(handle.id);
    // Liveness wait with a named deadline: PID 1 exits at the TTL, which stops the container.
    const deadline = Date.now() + TTL_DEADLINE_MS;
    let info = await container.inspect();
    while (info.State.Running && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      info = await container.inspect();
    }
    assert.equal(info.State.Running, false, "the container outlived its 3 s lifetime");
    assert.equal(info.State.ExitCode, 0);
    await handle.stop();
  },
});

Deno.test({
  name: "docker findOwned() lists containers by owner labels; destroyDetached() removes them",
  ignore: !docker.ok,
  fn: async () => {
    await using bed = dockerTestBed();
    const handle = await bed.create({}, { owner: { pid: 999_999 } });
    const signal = new AbortController().signal;
    const found = await bed.provider.findOwned!({ runId: bed.runId }, signal);
    assert.deepEqual(found.map((f) => [f.id, f.state, f.owner.pid]), [[
      handle.id,
      "running",
      999_999,
    ]]);
    assert.equal(await bed.provider.destroyDetached!(handle.id, signal), "destroyed");
    assert.deepEqual(await bed.provider.findOwned!({ runId: bed.runId }, signal), []);
  },
});

Deno.test({
  name:
    "docker classifyCreateError() maps a missing image to fatal and an unreachable daemon to rejected",
  ignore: !docker.ok,
  fn: async () => {
    await using bed = dockerTestBed();
    const missing = await bed.create({ image: "niceeval-test/absent:local" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.equal(bed.provider.classifyCreateError(missing), "fatal");
    const { createDockerProvider } = await import("../../src/sandbox/providers/docker.ts");
    const { realClock } = await import("../../src/_shared/clock.ts");
    const nowhere = createDockerProvider({
      hostEnv: { DOCKER_HOST: "unix:///nonexistent/docker.sock" },
      clock: realClock,
    });
    const { plan } = await nowhere.plan(
      { image: BUSYBOX_IMAGE, workdir: "/workspace", network: "none" },
      { projectRoot: Deno.cwd(), signal: new AbortController().signal },
    );
    const unreachable = await nowhere.create(plan, {
      owner: dockerTestOwner(bed.runId),
      lifetimeMs: 60_000,
      signal: new AbortController().signal,
      progress: () => {},
      diagnostic: () => {},
    }).then(() => undefined, (e: unknown) => e);
    assert.equal(nowhere.classifyCreateError(unreachable), "rejected");
    assert.deepEqual(await bed.containers(), []);
  },
});

/** Builds `tag` from the busybox image minus `/bin/sleep`, offline. */
async function buildWithoutSleep(
  docker: ReturnType<typeof dockerTestBed>["docker"],
  tag: string,
): Promise<void> {
  const dockerfile = `FROM ${BUSYBOX_IMAGE}\nRUN rm /bin/sleep\n`;
  const context = await oneEntryTar({
    name: "Dockerfile",
    data: new TextEncoder().encode(dockerfile),
    mode: 0o644,
    uid: 0,
    gid: 0,
    mtime: new Date(0),
  });
  const stream = await docker.buildImage(Buffer.from(context) as never, {
    t: tag,
    networkmode: "none",
    labels: { [DOCKER_LABELS.managed]: "true" },
  });
  await new Promise<void>((resolve, reject) => {
    docker.modem.followProgress(stream, (error: Error | null, output: { error?: string }[]) => {
      const failed = output?.find((p) => p.error !== undefined);
      if (error) reject(error);
      else if (failed) reject(new Error(failed.error));
      else resolve();
    });
  });
}

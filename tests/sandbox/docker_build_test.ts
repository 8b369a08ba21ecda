/**
 * Docker builds against the real daemon (sandboxes.md §5, rules 62–70, 114, 139): a Dockerfile
 * build from the test image, the cache hit of a second plan, a failing `RUN` whose `ERR_*` code
 * comes from the log, and at most `maxBuildConcurrency` builds at once. Every image a test builds
 * carries a unique build key and is removed at the end.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { realClock } from "../../src/_shared/clock.ts";
import { realRandom } from "../../src/_shared/random.ts";
import { DOCKER_LABELS, dockerClient } from "../../src/sandbox/providers/docker/client.ts";
import {
  buildImageTag,
  createDockerBuilds,
  DockerBuildError,
  dockerBuildKey,
  type DockerBuildSpec,
  imageExists,
  prepareDockerBuild,
  prepareDockerImage,
} from "../../src/sandbox/providers/docker/build.ts";
import {
  buildFailureDetail,
  buildFailureFacts,
} from "../../src/sandbox/providers/docker/build_failure.ts";
import { buildFailureDiagnostic, BuildGate } from "../../src/scheduler/builds.ts";
import type { PlannedSandbox, PlannedSlot } from "../../src/plan/mod.ts";
import { dockerAvailability } from "../_helpers/docker.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

const docker = await dockerAvailability();
type BuildFailed = Parameters<typeof buildFailureDiagnostic>[1];
const BASE = "niceeval-test/busybox:local";

function client() {
  const host = Deno.env.get("DOCKER_HOST");
  return dockerClient(host === undefined ? {} : { DOCKER_HOST: host });
}

function options(signal: AbortSignal) {
  return { signal, clock: realClock, random: realRandom };
}

/** Writes a build context with a unique file, so each test run has its own build key. */
async function context(dir: string, dockerfile: string, files: Record<string, string> = {}) {
  await Deno.writeTextFile(join(dir, "Dockerfile"), dockerfile);
  await Deno.writeTextFile(join(dir, "unique.txt"), crypto.randomUUID());
  for (const [path, text] of Object.entries(files)) {
    await Deno.mkdir(join(dir, path, ".."), { recursive: true });
    await Deno.writeTextFile(join(dir, path), text);
  }
  return { contextDir: dir, dockerfile: "Dockerfile" } satisfies DockerBuildSpec;
}

async function removeImage(tag: string): Promise<void> {
  await client().getImage(tag).remove({ force: true }).catch(() => undefined);
}

async function containerExists(id: string): Promise<boolean> {
  const found = await client().listContainers({ all: true, filters: { id: [id] } });
  return found.length > 0;
}

function signal(): AbortSignal {
  return new AbortController().signal;
}

Deno.test({
  name: "prepareDockerBuild() builds a Dockerfile, then hits the cache on the second plan",
  ignore: !docker.ok,
  fn: () =>
    withTempDir(async (dir) => {
      const spec = await context(
        dir,
        `FROM ${BASE}\nCOPY app/hello.txt /opt/hello.txt\nRUN cat /opt/hello.txt > /opt/copy.txt\n`,
        { "app/hello.txt": "hello\n" },
      );
      const key = await dockerBuildKey(spec, { signal: signal() });
      const tag = buildImageTag(key);
      try {
        const lines: string[] = [];
        const first = await prepareDockerBuild(client(), spec, {
          ...options(signal()),
          progress: (line) => lines.push(line),
        });
        assert.equal(first, "built");
        assert.ok(lines.some((l) => l.includes("COPY")), lines.join("\n"));
        const info = await client().getImage(tag).inspect();
        assert.equal(info.Config.Labels?.[DOCKER_LABELS.buildKey], key);
        assert.deepEqual(info.RepoTags, [tag]);
        // A second plan of the same inputs computes the same key and finds the image.
        assert.equal(await dockerBuildKey(spec, { signal: signal() }), key);
        assert.equal(await prepareDockerBuild(client(), spec, options(signal())), "cache");
      } finally {
        await removeImage(tag);
      }
      assert.equal(await imageExists(client(), tag), false);
    }),
});

Deno.test({
  name: "prepareDockerBuild() fails a RUN with the ERR_* code of its log and leaves no container",
  ignore: !docker.ok,
  fn: () =>
    withTempDir(async (dir) => {
      const spec = await context(
        dir,
        // The code is assembled by the command, so only the log holds it, not the error message.
        `FROM ${BASE}\nRUN printf ' ERR_%s  Cannot install with frozen-lockfile\\n' PNPM_OUTDATED_LOCKFILE && exit 1\n`,
      );
      const key = await dockerBuildKey(spec, { signal: signal() });
      try {
        const error = await prepareDockerBuild(client(), spec, options(signal())).then(
          () => assert.fail("the build succeeded"),
          (e: unknown) => e,
        );
        assert.ok(error instanceof DockerBuildError, String(error));
        assert.match(error.message, /^Cannot build image "niceeval-build:[0-9a-f]{32}": /);
        assert.equal(error.facts.errorCode, "ERR_PNPM_OUTDATED_LOCKFILE");
        assert.equal(error.facts.remediation, "pnpm-update-lockfile");
        assert.match(error.facts.message, /^ ERR_PNPM_OUTDATED_LOCKFILE {2}Cannot install/);
        const detail = error.detailFor("pkg/install", 2);
        assert.deepEqual(
          { ...detail, message: undefined },
          {
            schema: "niceeval.sandbox-build-failure/v1",
            buildKey: key.slice(0, 16),
            evalId: "pkg/install",
            attempt: 2,
            phase: "sandbox.build",
            errorCode: "ERR_PNPM_OUTDATED_LOCKFILE",
            message: undefined,
            remediation: "pnpm-update-lockfile",
            remediationText: "Run `pnpm install` locally and commit the updated lockfile.",
          },
        );
        assert.ok(new TextEncoder().encode(JSON.stringify(detail)).length <= 1000);
        assert.equal(await imageExists(client(), buildImageTag(key)), false);
        // The step's container is gone although the build failed (forced removal).
        const step = /Running in ([0-9a-f]+)/.exec(error.logTail)?.[1];
        assert.ok(step !== undefined, error.logTail);
        assert.equal(await containerExists(step), false);
      } finally {
        await removeImage(buildImageTag(key));
      }
    }),
});

Deno.test({
  name: "dockerBuildKey() changes with used files and build args, not with ignored files",
  ignore: !docker.ok,
  fn: () =>
    withTempDir(async (dir) => {
      const spec = await context(dir, `FROM ${BASE}\nCOPY . /src\n`, {
        ".dockerignore": "node_modules\n*.log\n!keep.log\n",
        "src/a.txt": "a",
        "node_modules/x/index.js": "1",
        "debug.log": "x",
        "keep.log": "k",
      });
      const key = () => dockerBuildKey(spec, { signal: signal() });
      const k0 = await key();
      await Deno.writeTextFile(join(dir, "node_modules/x/index.js"), "2");
      await Deno.writeTextFile(join(dir, "debug.log"), "y");
      assert.equal(await key(), k0);
      await Deno.writeTextFile(join(dir, "keep.log"), "k2");
      const k1 = await key();
      assert.notEqual(k1, k0);
      await Deno.writeTextFile(join(dir, "src/a.txt"), "b");
      const k2 = await key();
      assert.notEqual(k2, k1);
      await Deno.chmod(join(dir, "src/a.txt"), 0o755);
      const k3 = await key();
      assert.notEqual(k3, k2);
      const withArgs = await dockerBuildKey({ ...spec, buildArgs: { B: "1", A: "2" } }, {
        signal: signal(),
      });
      assert.notEqual(withArgs, k3);
      assert.equal(
        await dockerBuildKey({ ...spec, buildArgs: { A: "2", B: "1" } }, { signal: signal() }),
        withArgs,
      );
      assert.notEqual(
        await dockerBuildKey({ ...spec, target: "base" }, { signal: signal() }),
        k3,
      );
    }),
});

Deno.test({
  name: "prepareDockerImage() finds a local image and fails pull never for a missing one",
  ignore: !docker.ok,
  fn: async () => {
    assert.equal(
      await prepareDockerImage(client(), BASE, { pull: "never", signal: signal() }),
      "cache",
    );
    assert.equal(
      await prepareDockerImage(client(), BASE, { pull: "missing", signal: signal() }),
      "cache",
    );
    const missing = `niceeval-test/absent-${crypto.randomUUID()}:local`;
    const error = await prepareDockerImage(client(), missing, { pull: "never", signal: signal() })
      .then(() => assert.fail("no error"), (e: unknown) => e);
    assert.ok(error instanceof DockerBuildError);
    assert.equal(error.facts.phase, "sandbox.pull");
    assert.match(error.message, /is not present locally and pull is "never"$/);
  },
});

Deno.test({
  name: "BuildGate runs at most maxBuildConcurrency real builds at once and builds each key once",
  ignore: !docker.ok,
  fn: () =>
    withTempDir(async (dir) => {
      const specs = new Map<string, DockerBuildSpec>();
      for (let i = 0; i < 3; i++) {
        const sub = join(dir, `ctx${i}`);
        await Deno.mkdir(sub);
        const spec = await context(sub, `FROM ${BASE}\nCOPY unique.txt /u${i}\n`);
        specs.set(await dockerBuildKey(spec, { signal: signal() }), spec);
      }
      const keys = [...specs.keys()];
      let running = 0;
      let peak = 0;
      const calls: string[] = [];
      const sources: string[] = [];
      const gate = new BuildGate({
        maxConcurrency: 2,
        prepare: async (_sandbox, key, { signal }) => {
          calls.push(key);
          running++;
          peak = Math.max(peak, running);
          try {
            sources.push(await prepareDockerBuild(client(), specs.get(key)!, options(signal)));
          } finally {
            running--;
          }
        },
      }, { clock: realClock, signal: signal() });
      // Four slots: the first key is needed twice, so it must still be built once.
      const slots = [...keys, keys[0]!].map((key) =>
        ({ sandbox: { buildKeys: [key] } as unknown as PlannedSandbox }) as unknown as PlannedSlot
      );
      try {
        gate.start(slots);
        await Promise.all(slots.map((slot) => gate.wait(slot)));
        await gate.settled();
        assert.equal(peak, 2);
        assert.deepEqual(calls.toSorted(), keys.toSorted());
        assert.deepEqual(sources, ["built", "built", "built"]);
        assert.deepEqual(gate.snapshot(), { running: 0, pending: 0, done: 3, failed: 0 });
      } finally {
        for (const key of keys) await removeImage(buildImageTag(key));
      }
    }),
});

Deno.test("buildFailureFacts() takes the first ERR_* code and its line from the ANSI-free log", () => {
  const facts = buildFailureFacts({
    message: 'Cannot build image "x": returned a non-zero code: 1',
    logTail:
      "step 1\n\x1b[31m ERR_PNPM_IGNORED_BUILDS\x1b[0m  Ignored build scripts: esbuild\nmore",
  });
  assert.deepEqual(facts, {
    phase: "sandbox.build",
    errorCode: "ERR_PNPM_IGNORED_BUILDS",
    message: " ERR_PNPM_IGNORED_BUILDS  Ignored build scripts: esbuild\nmore",
    remediation: "pnpm-allow-builds",
  });
});

Deno.test("buildFailureFacts() falls back to the error's code and the last 600 characters", () => {
  const logTail = "x".repeat(700) + "\nno space left on device";
  const facts = buildFailureFacts({ message: "Cannot build", logTail, code: "ECONNRESET" });
  assert.equal(facts.errorCode, "ECONNRESET");
  assert.equal([...facts.message].length, 600);
  assert.ok(facts.message.endsWith("no space left on device"));
  assert.equal(facts.remediation, "docker-disk-full");
  assert.equal(buildFailureFacts({ message: "boom", logTail: "", code: 7 }).errorCode, undefined);
});

Deno.test("buildFailureDetail() cuts the message by quarters until the detail fits 1000 bytes", () => {
  const facts = buildFailureFacts({ message: "é".repeat(600), logTail: "", code: undefined });
  const detail = buildFailureDetail(facts, { buildKey: "ab".repeat(32), evalId: "e", attempt: 0 });
  const size = new TextEncoder().encode(JSON.stringify(detail)).length;
  assert.ok(size <= 1000, String(size));
  assert.ok(detail.message.endsWith("…"));
  assert.equal(detail.buildKey, "ab".repeat(8));
  // 600 code points of 2 bytes each → 450 + "…" (still over) → 338 + "…".
  assert.equal([...detail.message].length, 339);
});

Deno.test("buildFailureDetail() drops the remediation and its text once the message is empty", () => {
  const facts = { phase: "sandbox.build", message: "m", remediation: "image-not-found" } as const;
  const detail = buildFailureDetail(facts, { buildKey: "k", evalId: "x".repeat(850), attempt: 0 });
  assert.equal(detail.message, "");
  assert.equal(detail.remediation, undefined);
  assert.equal(detail.remediationText, undefined);
});

Deno.test("rule 70: buildFailureDetail() carries the remediation text reports show, within 1000 bytes", () => {
  const facts = buildFailureFacts({ message: "x".repeat(900), logTail: "no space left on device" });
  const detail = buildFailureDetail(facts, { buildKey: "ab".repeat(32), evalId: "e", attempt: 1 });
  assert.equal(detail.remediation, "docker-disk-full");
  assert.equal(detail.remediationText, "Free disk space for the Docker data root.");
  assert.ok(new TextEncoder().encode(JSON.stringify(detail)).length <= 1000);
  const plain = buildFailureDetail(buildFailureFacts({ message: "boom", logTail: "" }), {
    buildKey: "k",
    evalId: "e",
    attempt: 0,
  });
  assert.equal("remediationText" in plain, false);
});

Deno.test({
  name: "prepareDockerBuild() rejects with the abort reason when the signal fires mid-build",
  ignore: !docker.ok,
  fn: () =>
    withTempDir(async (dir) => {
      const spec = await context(dir, `FROM ${BASE}\nRUN sleep 300\n`);
      const key = await dockerBuildKey(spec, { signal: signal() });
      const controller = new AbortController();
      const reason = new Error("interrupted");
      let step: string | undefined;
      try {
        const outcome = await prepareDockerBuild(client(), spec, {
          ...options(controller.signal),
          progress: (line) => {
            step ??= /Running in ([0-9a-f]+)/.exec(line)?.[1];
            if (step !== undefined) controller.abort(reason);
          },
        }).then(() => "built", (e: unknown) => e);
        assert.equal(outcome, reason);
        assert.equal(await imageExists(client(), buildImageTag(key)), false);
      } finally {
        // The daemon removes the step's container once it sees the closed request; this only
        // makes sure nothing is left when it has not yet.
        if (step !== undefined) {
          await client().getContainer(step).remove({ force: true }).catch(() => undefined);
        }
        await removeImage(buildImageTag(key));
      }
    }),
});

Deno.test({
  name: "prepareDockerBuild() builds a key once when two builds share the lock directory",
  ignore: !docker.ok,
  fn: () =>
    withTempDir(async (dir) => {
      const spec = await context(dir, `FROM ${BASE}\nCOPY unique.txt /unique.txt\n`);
      const key = await dockerBuildKey(spec, { signal: signal() });
      const lockDir = join(dir, "locks");
      try {
        const both = await Promise.all([
          prepareDockerBuild(client(), spec, { ...options(signal()), lockDir }),
          prepareDockerBuild(client(), spec, { ...options(signal()), lockDir }),
        ]);
        // Both saw no tag at first; the second took the lock after the first and found the tag.
        assert.deepEqual(both.toSorted(), ["built", "cache"]);
        assert.ok((await Deno.stat(join(lockDir, `${key}.lock`))).isFile);
      } finally {
        await removeImage(buildImageTag(key));
      }
    }),
});

Deno.test({
  name: "createDockerBuilds() keys a layer at plan time and builds the planned tag",
  ignore: !docker.ok,
  fn: () =>
    withTempDir(async (dir) => {
      await context(dir, `FROM ${BASE}\nCOPY unique.txt /unique.txt\n`);
      const builds = createDockerBuilds({
        hostEnv: { NICEEVAL_STATE_DIR: join(dir, "state") },
        clock: realClock,
        random: realRandom,
      });
      const layer = { dockerfile: join(dir, "Dockerfile"), context: dir, buildArgs: {} };
      const key = await builds.key(layer, signal());
      assert.equal(
        key,
        await dockerBuildKey({ contextDir: dir, dockerfile: "Dockerfile" }, {
          signal: signal(),
        }),
      );
      const plan = {
        image: buildImageTag(key),
        build: { contextDir: dir, dockerfile: layer.dockerfile, buildArgs: {}, key },
      };
      const ctx = { signal: signal(), progress: () => undefined };
      try {
        assert.deepEqual(await builds.prepare(client(), plan, ctx), { source: "built" });
        assert.deepEqual(await builds.prepare(client(), plan, ctx), { source: "cache" });
        assert.ok((await Deno.stat(join(dir, "state", "builds", `${key}.lock`))).isFile);
      } finally {
        await removeImage(plan.image);
      }
    }),
});

Deno.test({
  name:
    "BuildGate settles a failing RUN as sandbox-build-failed whose cause carries the ERR_* code",
  ignore: !docker.ok,
  fn: () =>
    withTempDir(async (dir) => {
      const spec = await context(
        dir,
        `FROM ${BASE}\nRUN printf 'ERR_%s no lockfile\\n' PNPM_NO_LOCKFILE >&2 && exit 1\n`,
      );
      const key = await dockerBuildKey(spec, { signal: signal() });
      const gate = new BuildGate({
        prepare: (_sandbox, _key, { signal }) =>
          prepareDockerBuild(client(), spec, options(signal)),
      }, { clock: realClock, signal: signal() });
      const slot = {
        evalId: "pkg/install",
        ordinal: 1,
        experimentId: "docker",
        sandbox: { buildKeys: [key] } as unknown as PlannedSandbox,
      } as unknown as PlannedSlot;
      try {
        gate.start([slot]);
        const failure = await gate.wait(slot)!.then(() => assert.fail("built"), (e: unknown) => e);
        await gate.settled();
        const event = buildFailureDiagnostic(slot, failure as BuildFailed, 0);
        assert.equal(event.type === "diagnostic" && event.code, "sandbox-build-failed");
        const cause = (failure as BuildFailed).cause;
        assert.ok(cause instanceof DockerBuildError);
        assert.deepEqual(
          [cause.facts.errorCode, cause.facts.remediation],
          ["ERR_PNPM_NO_LOCKFILE", "pnpm-add-lockfile"],
        );
        const detail = cause.detailFor("pkg/install", 1);
        assert.equal(detail.errorCode, "ERR_PNPM_NO_LOCKFILE");
        assert.equal(detail.attempt, 1);
      } finally {
        await removeImage(buildImageTag(key));
      }
    }),
});

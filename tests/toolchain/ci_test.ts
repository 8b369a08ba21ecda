/**
 * The CI entry point `.ci/run` (toolchain.md §3.4, §3.5, §1.2), the private daemon script
 * `scripts/ci/dockerd.sh` (sandboxes.md §9.3, rules 137–140) and the Docker test-file helper.
 * `.ci/run` itself runs in a temporary git repository with fake `scripts/deno` and
 * `scripts/ci/dockerd.sh`, so no real suite or daemon is involved there.
 */
import assert from "node:assert/strict";
import { copyFile, mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describeRun, REPO_ROOT, run, type RunResult, withTempDir, writeScript } from "./_tree.ts";
import { DEFAULT_DOCKER_HOST, dockerAvailability, skipLine } from "../_helpers/docker.ts";

const docker = await dockerAvailability();
const TEST_COMMAND = "./scripts/deno task test";
const DEMO_COMMAND = "./scripts/deno task demo";
/** The quick benchmarks after the suite (issue 20). */
const BENCH_LINE = "if ! ./scripts/deno task bench --quick >/dev/null; then";
const DOCKERD = join(REPO_ROOT, "scripts", "ci", "dockerd.sh");
const HOST_PATH = Deno.env.get("PATH") ?? "/usr/bin:/bin";

/** Lines of a shell script without comments and blank lines, trimmed. */
function codeLines(text: string): string[] {
  return text.split("\n").map((line) => line.trim()).filter((line) =>
    line !== "" && !line.startsWith("#")
  );
}

/** The commands of the README's "Set up" code block, without trailing comments. */
function setUpCommands(readme: string): string[] {
  const section = readme.split(/^## /m).find((part) => part.startsWith("Set up")) ?? "";
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? "";
  return codeLines(block).map((line) => line.replace(/\s+#.*$/, ""));
}

Deno.test("README set-up section has exactly the two commands of toolchain.md §3.4", async () => {
  const readme = await readFile(join(REPO_ROOT, "README.md"), "utf8");
  assert.deepEqual(setUpCommands(readme), [DEMO_COMMAND, TEST_COMMAND]);
});

Deno.test(".ci/run runs the README's test command, then the quick benchmarks, and no other Deno command", async () => {
  const lines = codeLines(await readFile(join(REPO_ROOT, ".ci", "run"), "utf8"));
  const deno = lines.filter((line) => line.includes("scripts/deno"));
  assert.deepEqual(deno, [TEST_COMMAND, BENCH_LINE]);
  const start = lines.findIndex((line) => line.includes("scripts/ci/dockerd.sh start"));
  const test = lines.indexOf(TEST_COMMAND);
  const bench = lines.indexOf(BENCH_LINE);
  const stop = lines.findLastIndex((line) => line.startsWith("scripts/ci/dockerd.sh stop"));
  assert.ok(
    start >= 0 && start < test && test < bench && bench < stop,
    "order: start, test, bench, stop",
  );
});

for (
  const script of [
    ".ci/run",
    "scripts/ci/dockerd.sh",
    "scripts/ci/agent_clis.sh",
    "scripts/ci/chromium.sh",
  ]
) {
  Deno.test(`${script} is an executable POSIX sh script`, async () => {
    const path = join(REPO_ROOT, script);
    assert.equal((await readFile(path, "utf8")).split("\n", 1)[0], "#!/bin/sh");
    assert.ok(((await stat(path)).mode ?? 0) & 0o100, `${script} is not executable`);
    const syntax = await run("/bin/sh", ["-n", path]);
    assert.equal(syntax.code, 0, describeRun(syntax));
  });
}

// ---- .ci/run in a temporary repository with fakes -------------------------------------------

const FAKE_DOCKERD = `echo "dockerd $1" >> "$FAKE_LOG"
if [ "$1" = start ]; then
  [ -z "\${FAKE_DOCKERD_FAIL:-}" ] || { echo "export BROKEN=1"; exit 1; }
  echo "export DOCKER_HOST=unix:///fake/docker.sock NICEEVAL_REQUIRE_DOCKER=1"
fi
exit 0`;

const FAKE_AGENT_CLIS = `echo "agent_clis" >> "$FAKE_LOG"
exit "\${FAKE_AGENT_CLIS_STATUS:-0}"`;

const FAKE_CHROMIUM = `echo "chromium" >> "$FAKE_LOG"
exit "\${FAKE_CHROMIUM_STATUS:-0}"`;

const FAKE_DENO =
  `echo "deno $* host=\${DOCKER_HOST:-} require=\${NICEEVAL_REQUIRE_DOCKER:-} clis=\${NICEEVAL_REQUIRE_AGENT_CLIS:-} browser=\${NICEEVAL_REQUIRE_BROWSER:-}" >> "$FAKE_LOG"
mkdir -p .tools node_modules && : > .tools/deno && : > node_modules/pkg
case "\${FAKE_CHANGE:-}" in
  modify) echo changed >> tracked.txt ;;
  add) : > stray.txt ;;
esac
[ "$2" = bench ] && exit "\${FAKE_BENCH_STATUS:-0}"
printf '\\033[0m\\033[32mok\\033[0m | 3 passed (1 step) | 0 failed | 2 ignored \\033[0m\\033[38;5;245m(1s)\\033[0m\\n'
exit "\${FAKE_STATUS:-0}"`;

/** A committed repository holding `.ci/run` and the fakes; returns the log and the result. */
async function runCi(
  env: Record<string, string>,
): Promise<{ result: RunResult; log: string[] }> {
  return await withTempDir(async (dir) => {
    const repo = join(dir, "repo");
    await mkdir(join(repo, ".ci"), { recursive: true });
    await copyFile(join(REPO_ROOT, ".ci", "run"), join(repo, ".ci", "run"));
    await writeScript(join(repo, "scripts", "deno"), FAKE_DENO);
    await writeScript(join(repo, "scripts", "ci", "dockerd.sh"), FAKE_DOCKERD);
    await writeScript(join(repo, "scripts", "ci", "agent_clis.sh"), FAKE_AGENT_CLIS);
    await writeScript(join(repo, "scripts", "ci", "chromium.sh"), FAKE_CHROMIUM);
    await writeFile(join(repo, "tracked.txt"), "tracked\n");
    await writeFile(join(repo, ".gitignore"), ".tools/\nnode_modules/\n");
    const base = { PATH: HOST_PATH, HOME: dir, TMPDIR: dir, FAKE_LOG: join(dir, "log") };
    const git = ["-c", "user.name=ci", "-c", "user.email=ci@example.invalid"];
    for (const args of [["init", "-q"], ["add", "-A"], [...git, "commit", "-qm", "fixture"]]) {
      const step = await run("git", args, { cwd: repo, env: base, clearEnv: true });
      assert.equal(step.code, 0, describeRun(step));
    }
    const result = await run("/bin/sh", [".ci/run"], {
      cwd: repo,
      env: { ...base, ...env },
      clearEnv: true,
    });
    const log = (await readFile(base.FAKE_LOG, "utf8").catch(() => "")).trim().split("\n");
    const leftovers = (await readdir(dir)).sort();
    assert.deepEqual(leftovers, ["log", "repo"], "the CI log and status files are removed");
    return { result, log };
  });
}

Deno.test(".ci/run gives the daemon's exports to the test command, then stops the daemon", async () => {
  const { result, log } = await runCi({});
  assert.equal(result.code, 0, describeRun(result));
  assert.deepEqual(log, [
    "dockerd start",
    "agent_clis",
    "chromium",
    "deno task test host=unix:///fake/docker.sock require=1 clis=1 browser=1",
    "deno task bench --quick host=unix:///fake/docker.sock require=1 clis=1 browser=1",
    "dockerd stop",
  ]);
  assert.ok(result.stdout.includes("\x1b[32mok\x1b[0m | 3 passed (1 step)"), "test output passes");
  assert.ok(result.stdout.endsWith("tests: 3 passed, 0 failed, 2 skipped\n"), result.stdout);
});

Deno.test(".ci/run exits with the test command's status", async () => {
  const { result, log } = await runCi({ FAKE_STATUS: "3" });
  assert.equal(result.code, 3, describeRun(result));
  assert.equal(log.at(-1), "dockerd stop");
});

Deno.test(".ci/run fails when the quick benchmarks fail (issue 20)", async () => {
  const { result, log } = await runCi({ FAKE_BENCH_STATUS: "1" });
  assert.equal(result.code, 1, describeRun(result));
  assert.equal(log.at(-1), "dockerd stop");
  assert.match(result.stderr, /deno task bench --quick failed/);
});

Deno.test(".ci/run fails without running the suite when the daemon does not start", async () => {
  const { result, log } = await runCi({ FAKE_DOCKERD_FAIL: "1" });
  assert.notEqual(result.code, 0, describeRun(result));
  assert.deepEqual(log, ["dockerd start", "dockerd stop"]);
  assert.match(result.stderr, /dockerd\.sh start failed/);
});

Deno.test(".ci/run fails without running the suite when the agent CLIs cannot be installed", async () => {
  const { result, log } = await runCi({ FAKE_AGENT_CLIS_STATUS: "1" });
  assert.notEqual(result.code, 0, describeRun(result));
  assert.deepEqual(log, ["dockerd start", "agent_clis", "dockerd stop"]);
  assert.match(result.stderr, /agent_clis\.sh failed/);
});

Deno.test(".ci/run fails without running the suite when the browser cannot be installed", async () => {
  const { result, log } = await runCi({ FAKE_CHROMIUM_STATUS: "1" });
  assert.notEqual(result.code, 0, describeRun(result));
  assert.deepEqual(log, ["dockerd start", "agent_clis", "chromium", "dockerd stop"]);
  assert.match(result.stderr, /chromium\.sh failed/);
});

for (const [change, entry] of [["modify", " M tracked.txt"], ["add", "?? stray.txt"]]) {
  Deno.test(`.ci/run fails when the suite leaves a change (${change}) in the work tree`, async () => {
    const { result } = await runCi({ FAKE_CHANGE: change! });
    assert.equal(result.code, 1, describeRun(result));
    assert.ok(result.stderr.includes(`${entry}\n`), result.stderr);
  });
}

// ---- scripts/ci/dockerd.sh stop ---------------------------------------------------------------

async function dockerdStop(root: string): Promise<RunResult> {
  return await run("/bin/sh", [DOCKERD, "stop"], {
    env: { PATH: HOST_PATH, NICEEVAL_DOCKERD_ROOT: root },
    clearEnv: true,
  });
}

Deno.test("dockerd.sh stop succeeds silently, twice, when no daemon runs", async () => {
  await withTempDir(async (dir) => {
    for (const root of [dir, join(dir, "absent"), dir]) {
      const result = await dockerdStop(root);
      assert.deepEqual([result.code, result.stdout], [0, ""], describeRun(result));
    }
  });
});

Deno.test("dockerd.sh stop removes a pid file whose process is gone", async () => {
  await withTempDir(async (dir) => {
    // Above every possible pid (the kernel's limit is at most 2^22), so nothing is signalled.
    await writeFile(join(dir, "dockerd.pid"), "2147483647\n");
    const result = await dockerdStop(dir);
    assert.equal(result.code, 0, describeRun(result));
    await assert.rejects(stat(join(dir, "dockerd.pid")), { code: "ENOENT" });
  });
});

Deno.test("dockerd.sh stop terminates the daemon and waits until its pid file is gone", async () => {
  await withTempDir(async (dir) => {
    const pidFile = join(dir, "dockerd.pid");
    // A stand-in daemon that, like dockerd, removes its pid file after SIGTERM, a little later.
    const daemon = new Deno.Command("/bin/sh", {
      args: [
        "-c",
        `trap 'sleep 0.3; rm -f "$0"; exit 0' TERM; echo $$ > "$0"; while :; do sleep 0.05; done`,
        pidFile,
      ],
      stdin: "null",
    }).spawn();
    try {
      const deadline = Date.now() + 120_000; // only turns a hang into a failure
      while ((await readFile(pidFile, "utf8").catch(() => "")).trim() === "") {
        assert.ok(Date.now() < deadline, "the stand-in daemon never wrote its pid file");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const result = await dockerdStop(dir);
      assert.equal(result.code, 0, describeRun(result));
      await assert.rejects(stat(pidFile), { code: "ENOENT" });
      assert.equal((await daemon.status).success, true);
    } finally {
      try {
        daemon.kill("SIGKILL");
      } catch {
        // already exited
      }
      await daemon.status;
    }
  });
});

// ---- tests/_helpers/docker.ts -----------------------------------------------------------------

/** Serves one connection on a unix socket with `answer` (or holds it open when null). */
async function withFakeDaemon(
  answer: string | null,
  fn: (endpoint: string) => Promise<void>,
): Promise<void> {
  await withTempDir(async (dir) => {
    const path = join(dir, "docker.sock");
    const listener = Deno.listen({ transport: "unix", path });
    const served = (async () => {
      const conn = await listener.accept();
      try {
        await conn.read(new Uint8Array(1024));
        if (answer !== null) await conn.write(new TextEncoder().encode(answer));
        else await conn.read(new Uint8Array(1024)); // until the client gives up and closes
      } catch {
        // the client closed first
      } finally {
        conn.close();
      }
    })();
    try {
      await fn(`unix://${path}`);
    } finally {
      listener.close();
      await served.catch(() => {});
    }
  });
}

/** Seams for `dockerAvailability()`: the given variables only, and stderr lines collected. */
function seams(vars: Record<string, string>, limitMs = 200) {
  const lines: string[] = [];
  const options = {
    env: (name: string) => vars[name],
    limitMs,
    writeStderr: (line: string) => void lines.push(line),
  };
  return { lines, options };
}

Deno.test("dockerAvailability() is ok when the endpoint answers GET /_ping with 200", async () => {
  await withFakeDaemon("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nOK", async (endpoint) => {
    // A limit far above any answer time: this case is about the answer, not the limit.
    const { lines, options } = seams({ DOCKER_HOST: endpoint }, 120_000);
    const result = await dockerAvailability(options);
    assert.deepEqual([result.ok, result.endpoint, lines], [true, endpoint, []]);
  });
});

const SKIP_CASES: [string, string | null][] = [
  ["answers 500", "HTTP/1.1 500 Oops\r\n\r\n"],
  ["stays silent", null],
];
for (const [label, answer] of SKIP_CASES) {
  Deno.test(`dockerAvailability() skips with the rule 137 line when the endpoint ${label}`, async () => {
    await withFakeDaemon(answer, async (endpoint) => {
      const { lines, options } = seams({ DOCKER_HOST: endpoint });
      const result = await dockerAvailability(options);
      assert.equal(result.ok, false);
      assert.deepEqual(lines, [
        `docker tests skipped: no Docker daemon answered at ${endpoint} within 2 s (start one with scripts/ci/dockerd.sh)`,
      ]);
    });
  });
}

Deno.test("dockerAvailability() throws when NICEEVAL_REQUIRE_DOCKER=1 and nothing answers", async () => {
  await withTempDir(async (dir) => {
    const endpoint = `unix://${join(dir, "none.sock")}`;
    const { lines, options } = seams({ DOCKER_HOST: endpoint, NICEEVAL_REQUIRE_DOCKER: "1" });
    await assert.rejects(
      dockerAvailability(options),
      (error: Error) => error.message.includes(endpoint) && error.message.includes("dockerd.sh"),
    );
    assert.deepEqual(lines, []);
  });
});

Deno.test("dockerAvailability() pings the default socket when DOCKER_HOST is unset", async () => {
  const { lines, options } = seams({});
  const result = await dockerAvailability(options);
  assert.equal(result.endpoint, DEFAULT_DOCKER_HOST);
  assert.deepEqual(lines, result.ok ? [] : [skipLine(DEFAULT_DOCKER_HOST)]);
});

// ---- with the real daemon ---------------------------------------------------------------------

Deno.test({
  name: "niceeval-test/busybox:local runs `echo ok` without a network",
  ignore: !docker.ok,
  fn: async () => {
    const args = ["run", "--rm", "--network", "none", "niceeval-test/busybox:local", "echo", "ok"];
    const result = await run("docker", args, { env: { DOCKER_HOST: docker.endpoint } });
    assert.deepEqual([result.code, result.stdout], [0, "ok\n"], describeRun(result));
  },
});

const dockerdRoot = Deno.env.get("NICEEVAL_DOCKERD_ROOT") || "/tmp/niceeval-dockerd";
Deno.test({
  name: "dockerd.sh start reuses the running daemon and prints only the export line",
  // Only against the script's own daemon: elsewhere `start` would install and start one.
  ignore: !docker.ok || docker.endpoint !== `unix://${dockerdRoot}/docker.sock`,
  fn: async () => {
    const pid = await readFile(join(dockerdRoot, "dockerd.pid"), "utf8");
    const result = await run("/bin/sh", [DOCKERD, "start"]);
    assert.equal(result.code, 0, describeRun(result));
    assert.equal(
      result.stdout,
      `export DOCKER_HOST=unix://${dockerdRoot}/docker.sock NICEEVAL_REQUIRE_DOCKER=1\n`,
    );
    assert.equal(await readFile(join(dockerdRoot, "dockerd.pid"), "utf8"), pid);
  },
});

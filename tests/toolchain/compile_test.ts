/**
 * compile.ts (toolchain.md §9). The unit part drives flags, runtime resolution, builds and the
 * smoke test through a fake port; the real part runs the script on this machine. Building a
 * working binary needs a denort runtime, so that test is ignored, with its reason printed once,
 * when the host has none or NICEEVAL_SKIP_COMPILE=1 is set.
 */
import assert from "node:assert/strict";
import FakeTimers from "@sinonjs/fake-timers";
import { readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  binaryName,
  type CompileOptions,
  type CompilePort,
  createSystemPort,
  esbuildWasmPath,
  isTarget,
  parseChecksums,
  parseFlags,
  PROBE_TIMEOUT_MS,
  type ProcessResult,
  type Resolution,
  resolveRuntimes,
  runCompile,
  type Target,
  TARGETS,
} from "../../compile.ts";
import { UsageError } from "../../src/_shared/mod.ts";
import { LAUNCHER_V8_FLAGS } from "../../src/_shared/heap_flags.ts";
import { describeRun, REPO_ROOT, runDeno, withTempDir, writeTree } from "./_tree.ts";

const HOST: Target = "x86_64-unknown-linux-gnu";
const CROSS: Target = "aarch64-apple-darwin";
const DENO_VERSION = "9.9.9";
const WASM = "/opt/esbuild-wasm/esbuild.wasm";
const VERSION: string = JSON.parse(await readFile(join(REPO_ROOT, "deno.json"), "utf8")).version;
const NICEEVAL_LIST = "Discovered 1 eval:\n  smoke/hello  — greeting round-trip\n";
const REPL_BANNER = "Deno 2.9.6\nexit using ctrl+d, ctrl+c, or close()\n";

function zipName(target: Target): string {
  return `v${DENO_VERSION}/denort-${target}.zip`;
}

function zipPath(denoDir: string, target: Target): string {
  return join(denoDir, "dl", "release", zipName(target));
}

function downloadUrl(target: Target): string {
  return `https://dl.deno.land/release/${zipName(target)}`;
}

async function sha256(text: string): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)),
  );
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** A binary that behaves like niceeval: the version, and the smoke eval in `list`. */
function niceevalBinary(args: readonly string[]): ProcessResult {
  if (args[0] === "--version") return { code: 0, stdout: `${VERSION}\n`, stderr: "" };
  if (args[0] === "list") return { code: 0, stdout: NICEEVAL_LIST, stderr: "" };
  return { code: 2, stdout: "", stderr: "unexpected" };
}

/** Options of {@link fakePort}. */
interface FakePortOptions {
  /** The environment compile.ts sees (DENORT_BIN, …). */
  env?: Record<string, string>;
  /** The Deno cache directory reported instead of asking `deno info`. */
  denoDir: string;
  /** Answers HEAD requests; by default every request fails as on a machine without network. */
  head?: (url: string) => Promise<number>;
  /** Exit code of every `deno compile`; 0 writes the output file. */
  buildCode?: number;
  /** What a built binary prints. */
  binary?: (args: readonly string[]) => ProcessResult;
}

/** The system port with the network, `deno compile`, the binaries and the output faked. */
interface FakePort extends CompilePort {
  readonly out: string[];
  readonly err: string[];
  readonly heads: string[];
  readonly builds: { args: readonly string[]; cwd: string; denortBin: string | null }[];
  readonly runs: { path: string; args: readonly string[]; cwd: string }[];
}

function fakePort(options: FakePortOptions): FakePort {
  const system = createSystemPort({ env: options.env ?? {} });
  const port: FakePort = {
    ...system,
    out: [],
    err: [],
    heads: [],
    builds: [],
    runs: [],
    denoDir: () => Promise.resolve(options.denoDir),
    head: (url, timeoutMs) => {
      assert.equal(timeoutMs, PROBE_TIMEOUT_MS);
      port.heads.push(url);
      return options.head?.(url) ??
        Promise.reject(new TypeError("fetch failed", { cause: new Error("dns error") }));
    },
    runDeno: async (args, { cwd, denortBin }) => {
      port.builds.push({ args, cwd, denortBin });
      const code = options.buildCode ?? 0;
      if (code === 0) await writeFile(args[args.indexOf("--output") + 1]!, "binary");
      return code;
    },
    runBinary: (path, args, { cwd }) => {
      port.runs.push({ path, args, cwd });
      return Promise.resolve((options.binary ?? niceevalBinary)(args));
    },
    print: (line) => void port.out.push(...line.split("\n")),
    printError: (line) => void port.err.push(...line.split("\n")),
  };
  return port;
}

/** Runs `fn` with a temporary DENO_DIR, output directory and checksum file path. */
function withDirs(
  fn: (dirs: { denoDir: string; out: string; checksums: string; root: string }) => Promise<void>,
): Promise<void> {
  return withTempDir((root) =>
    fn({
      denoDir: join(root, "deno_dir"),
      out: join(root, "out"),
      checksums: join(root, "denort.sha256"),
      root,
    })
  );
}

function compileOptions(port: CompilePort, checksumFile: string): CompileOptions {
  return {
    port,
    root: REPO_ROOT,
    cwd: REPO_ROOT,
    host: HOST,
    denoVersion: DENO_VERSION,
    checksumFile,
    wasmPath: WASM,
  };
}

async function exists(path: string): Promise<boolean> {
  return await stat(path).then(() => true, () => false);
}

function usageErrorOf(fn: () => unknown): UsageError {
  try {
    fn();
  } catch (error) {
    if (error instanceof UsageError) return error;
    throw error;
  }
  assert.fail("expected a UsageError");
}

// ---- flags -------------------------------------------------------------------------------

Deno.test("parseFlags() builds the host target into the default directory without flags", () => {
  assert.deepEqual(parseFlags([], HOST), { targets: [HOST], probe: false, help: false, out: null });
});

Deno.test("parseFlags() reads repeated --target, --target=, --out and --probe without duplicates", () => {
  const flags = parseFlags(
    ["--target", CROSS, `--target=${HOST}`, "--target", CROSS, "--out=bin", "--probe"],
    HOST,
  );
  assert.deepEqual(flags, { targets: [CROSS, HOST], probe: true, help: false, out: "bin" });
  assert.equal(parseFlags(["--out", "dist/x"], HOST).out, "dist/x");
});

Deno.test("parseFlags() selects all six targets with --all", () => {
  assert.deepEqual(parseFlags(["--all", "--target", CROSS], HOST).targets, [...TARGETS]);
  assert.equal(TARGETS.length, 6);
});

Deno.test("parseFlags() throws a usage error for bad flags", async (t) => {
  const cases: [string[], RegExp][] = [
    [["--bogus"], /^Unknown flag "--bogus"$/],
    [["-x"], /^Unknown flag "-x"$/],
    [["--target", "x86_64-unknown-linux-musl"], /^Unknown target "x86_64-unknown-linux-musl"$/],
    [["--target"], /^Flag "--target" needs a value$/],
    [["--out", "--probe"], /^Flag "--out" needs a value$/],
    [["--all=yes"], /^Flag "--all" takes no value, got "--all=yes"$/],
    [["build"], /^Unexpected argument "build"$/],
  ];
  for (const [args, message] of cases) {
    await t.step(args.join(" "), () => {
      const error = usageErrorOf(() => parseFlags(args, HOST));
      assert.equal(error.code, "usage");
      assert.match(error.message, message);
      assert.ok(error.hint.length > 0);
    });
  }
});

Deno.test("parseFlags() refuses a host that is no target unless a target is given", () => {
  const error = usageErrorOf(() => parseFlags([], "x86_64-unknown-linux-musl"));
  assert.equal(error.message, `The host "x86_64-unknown-linux-musl" is not a compile target`);
  assert.deepEqual(parseFlags(["--target", HOST], "x86_64-unknown-linux-musl").targets, [HOST]);
});

Deno.test("runCompile() prints one error line and a hint and exits 2 on an unknown flag", async () => {
  await withDirs(async ({ denoDir, checksums }) => {
    const port = fakePort({ denoDir });
    assert.equal(await runCompile(["--bogus"], compileOptions(port, checksums)), 2);
    assert.deepEqual(port.err, [
      `error: Unknown flag "--bogus" [usage]`,
      "hint: run `./scripts/deno task compile --help` for the flags",
    ]);
    assert.deepEqual([port.out, port.heads, port.builds], [[], [], []]);
  });
});

Deno.test("runCompile() prints help and exits 0 with --help", async () => {
  await withDirs(async ({ denoDir, checksums }) => {
    const port = fakePort({ denoDir });
    assert.equal(await runCompile(["--help"], compileOptions(port, checksums)), 0);
    assert.match(port.out[0]!, /^Usage: deno task compile /);
    assert.ok(port.out.some((line) => line.includes("--probe")));
    assert.deepEqual([port.err, port.heads, port.builds], [[], [], []]);
  });
});

Deno.test("binaryName() adds .exe for Windows targets only", () => {
  assert.equal(binaryName(HOST), `niceeval-${HOST}`);
  assert.equal(binaryName("x86_64-pc-windows-msvc"), "niceeval-x86_64-pc-windows-msvc.exe");
});

// ---- resolution -------------------------------------------------------------------------

Deno.test("resolveRuntimes() tries DENORT_BIN, then the cached zip, then a download", async (t) => {
  await withDirs(async ({ denoDir, checksums, root }) => {
    const denort = join(root, "denort");
    await writeTree(root, { denort: "runtime" });
    await writeTree(denoDir, { [join("dl", "release", zipName(HOST))]: "zip" });
    // The real `deno info --json` reports the temporary DENO_DIR.
    const system = createSystemPort({ env: { ...Deno.env.toObject(), DENO_DIR: denoDir } });
    assert.equal(await system.denoDir(), denoDir);
    const resolve = async (env: Record<string, string>, status: number) => {
      const port = fakePort({ env, denoDir, head: () => Promise.resolve(status) });
      const [resolution] = await resolveRuntimes([HOST], compileOptions(port, checksums));
      return { resolution: resolution!, heads: port.heads };
    };

    await t.step("DENORT_BIN first", async () => {
      const { resolution, heads } = await resolve({ DENORT_BIN: denort }, 200);
      assert.deepEqual(resolution, {
        target: HOST,
        source: "DENORT_BIN",
        detail: denort,
        tried: [],
        mismatch: false,
      });
      assert.deepEqual(heads, []);
    });
    await t.step("then the zip in the cache, unverified when unlisted", async () => {
      const { resolution, heads } = await resolve({ DENORT_BIN: join(root, "missing") }, 200);
      assert.equal(resolution.source, "cache");
      assert.equal(
        resolution.detail,
        `${zipPath(denoDir, HOST)} (not listed in scripts/denort.sha256)`,
      );
      assert.deepEqual(resolution.tried, [`DENORT_BIN "${join(root, "missing")}" is not a file`]);
      assert.deepEqual(heads, []);
    });
    await rm(zipPath(denoDir, HOST));
    await t.step("then a download that answers", async () => {
      const { resolution, heads } = await resolve({}, 200);
      assert.equal(resolution.source, "download");
      assert.equal(resolution.detail, downloadUrl(HOST));
      assert.deepEqual(heads, [downloadUrl(HOST)]);
    });
    await t.step("else none, listing each source tried", async () => {
      const { resolution } = await resolve({}, 404);
      assert.equal(resolution.source, "none");
      assert.deepEqual(resolution.tried, [
        "DENORT_BIN not set",
        `${zipPath(denoDir, HOST)} absent`,
        `${downloadUrl(HOST)} unavailable: HTTP 404`,
      ]);
      assert.equal(resolution.detail, `tried ${resolution.tried.join("; ")}`);
    });
  });
});

Deno.test("resolveRuntimes() skips DENORT_BIN for a cross target and uses its cached zip", async () => {
  await withDirs(async ({ denoDir, checksums, root }) => {
    await writeTree(root, { denort: "runtime" });
    await writeTree(denoDir, { [join("dl", "release", zipName(CROSS))]: "zip" });
    const port = fakePort({ env: { DENORT_BIN: join(root, "denort") }, denoDir });
    const [resolution] = await resolveRuntimes([CROSS], compileOptions(port, checksums));
    assert.equal(resolution!.source, "cache");
    assert.deepEqual(resolution!.tried, [`DENORT_BIN skipped: host target "${HOST}" only`]);
  });
});

Deno.test("runCompile() refuses DENORT_BIN for a cross target and exits 2 without a build", async () => {
  await withDirs(async ({ denoDir, checksums, root, out }) => {
    await writeTree(root, { denort: "runtime" });
    const port = fakePort({ env: { DENORT_BIN: join(root, "denort") }, denoDir });
    const code = await runCompile(
      ["--target", CROSS, "--out", out],
      compileOptions(port, checksums),
    );
    assert.equal(code, 2);
    assert.equal(
      port.err[0],
      `note: DENORT_BIN is used for the host target "${HOST}" only; skipped for ${CROSS}`,
    );
    assert.match(
      port.err[1]!,
      new RegExp(`^error: No runtime for "${CROSS}": tried DENORT_BIN skipped: host target`),
    );
    assert.deepEqual(port.builds, []);
    assert.equal(await exists(out), false);
  });
});

Deno.test("resolveRuntimes() accepts a cached zip whose sha256 is the listed one", async () => {
  await withDirs(async ({ denoDir, checksums }) => {
    await writeTree(denoDir, { [join("dl", "release", zipName(HOST))]: "zip" });
    await writeFile(checksums, `# digests\n\n${await sha256("zip")}  ${zipName(HOST)}\n`);
    const port = fakePort({ denoDir });
    const [resolution] = await resolveRuntimes([HOST], compileOptions(port, checksums));
    assert.equal(resolution!.source, "cache");
    assert.equal(resolution!.detail, `${zipPath(denoDir, HOST)} (sha256 verified)`);
  });
});

Deno.test("runCompile() exits 1 and builds nothing when a cached zip fails its checksum", async () => {
  await withDirs(async ({ denoDir, checksums, out }) => {
    await writeTree(denoDir, { [join("dl", "release", zipName(HOST))]: "tampered" });
    const listed = await sha256("zip");
    await writeFile(checksums, `${listed}  ${zipName(HOST)}\n`);
    const port = fakePort({ denoDir, head: () => Promise.resolve(200) });
    assert.equal(await runCompile(["--out", out], compileOptions(port, checksums)), 1);
    assert.deepEqual(port.err, [
      `error: Cannot use the runtime of "${HOST}": checksum mismatch: ${
        zipPath(denoDir, HOST)
      } has sha256 ${await sha256("tampered")}, scripts/denort.sha256 lists ${listed} ` +
      "[compile.checksum]",
      "hint: delete the zip, or correct scripts/denort.sha256; nothing was built",
    ]);
    assert.deepEqual([port.builds, port.heads], [[], []]);
    assert.equal(await exists(out), false);
  });
});

Deno.test("parseChecksums() reads digest lines, skips comments and rejects other lines", async () => {
  const digest = await sha256("zip");
  assert.deepEqual(
    parseChecksums(`# header\n\n${digest}  ${zipName(HOST)}\n`),
    new Map([[zipName(HOST), digest]]),
  );
  assert.throws(
    () => parseChecksums(`# header\n${digest} ${zipName(HOST)}\n`),
    (error) => error instanceof TypeError && /line 2: expected/.test(error.message),
  );
  const committed = await readFile(join(REPO_ROOT, "scripts/denort.sha256"), "utf8");
  assert.ok(parseChecksums(committed) instanceof Map);
});

Deno.test("runCompile() exits 2 and builds nothing when the download probe fails", async () => {
  await withDirs(async ({ denoDir, checksums, out }) => {
    // Only the host's zip is cached: the five other targets fall through to the failing probe.
    await writeTree(denoDir, { [join("dl", "release", zipName(HOST))]: "zip" });
    const port = fakePort({ denoDir });
    assert.equal(await runCompile(["--all", "--out", out], compileOptions(port, checksums)), 2);
    const cross = TARGETS.filter((target) => target !== HOST);
    // The targets are probed concurrently, so the requests arrive in any order.
    assert.deepEqual(port.heads.toSorted(), cross.map(downloadUrl).toSorted());
    assert.deepEqual(
      port.err,
      [
        ...cross.map((target) =>
          `error: No runtime for "${target}": tried DENORT_BIN not set; ${
            zipPath(denoDir, target)
          } absent; ${downloadUrl(target)} unreachable: dns error [compile.no-runtime]`
        ),
        "hint: set DENORT_BIN to the host's denort, or pre-seed the zip (docs/compile.md); " +
        "nothing was built",
      ],
    );
    assert.deepEqual([port.out, port.builds], [[], []]);
    assert.equal(await exists(out), false);
  });
});

Deno.test("runCompile() --probe prints one line per target and exits 0 or 2", async (t) => {
  await withDirs(async ({ denoDir, checksums }) => {
    await writeTree(denoDir, { [join("dl", "release", zipName(HOST))]: "zip" });
    await t.step("every target available: exit 0", async () => {
      const port = fakePort({ denoDir, head: () => Promise.resolve(200) });
      const args = ["--probe", "--target", HOST, "--target", CROSS];
      const code = await runCompile(args, compileOptions(port, checksums));
      assert.equal(code, 0);
      assert.deepEqual(port.out, [
        `${HOST}  cache  ${zipPath(denoDir, HOST)} (not listed in scripts/denort.sha256)`,
        `${CROSS}  download  ${downloadUrl(CROSS)}`,
      ]);
      assert.deepEqual(port.builds, []);
    });
    await t.step("one target missing: exit 2", async () => {
      const port = fakePort({ denoDir });
      const code = await runCompile(["--probe", "--all"], compileOptions(port, checksums));
      assert.equal(code, 2);
      assert.equal(port.out.length, 6);
      assert.match(port.out[0]!, new RegExp(`^${HOST}  cache  `));
      assert.match(port.out[3]!, new RegExp(`^${CROSS}  none  tried DENORT_BIN not set; `));
      assert.deepEqual([port.err, port.builds], [[], []]);
    });
  });
});

// ---- build and smoke test ------------------------------------------------------------------

Deno.test("runCompile() builds each target and smoke-tests only the host binary", async () => {
  await withDirs(async ({ denoDir, checksums, root, out }) => {
    await writeTree(root, { denort: "runtime" });
    const denort = join(root, "denort");
    const port = fakePort({
      env: { DENORT_BIN: denort },
      denoDir,
      head: () => Promise.resolve(200),
    });
    const code = await runCompile(
      ["--target", HOST, "--target", "x86_64-pc-windows-msvc", "--out", out],
      compileOptions(port, checksums),
    );
    assert.equal(code, 0, port.err.join("\n"));
    const command = (target: Target) => [
      "compile",
      "-A",
      "--no-check",
      "--frozen",
      "--target",
      target,
      `--v8-flags=${LAUNCHER_V8_FLAGS}`,
      "--include",
      "src",
      "--include",
      WASM,
      "--output",
      join(out, binaryName(target)),
      "mod.ts",
    ];
    assert.deepEqual(port.builds, [
      { args: command(HOST), cwd: REPO_ROOT, denortBin: denort },
      { args: command("x86_64-pc-windows-msvc"), cwd: REPO_ROOT, denortBin: null },
    ]);
    const host = join(out, binaryName(HOST));
    assert.deepEqual(port.runs, [
      { path: host, args: ["--version"], cwd: REPO_ROOT },
      { path: host, args: ["list"], cwd: join(REPO_ROOT, "tests/fixtures/smoke_project") },
    ]);
    assert.deepEqual(port.out, [
      `${HOST}  built  ${host}  smoke test passed`,
      `x86_64-pc-windows-msvc  built  ${
        join(out, "niceeval-x86_64-pc-windows-msvc.exe")
      }  smoke test not run (cross target)`,
    ]);
    assert.deepEqual(
      (await readdir(out)).sort(),
      [binaryName(HOST), "niceeval-x86_64-pc-windows-msvc.exe"].sort(),
    );
  });
});

Deno.test("runCompile() deletes the host binary and exits 1 when it does not behave like niceeval", async () => {
  await withDirs(async ({ denoDir, checksums, out }) => {
    const port = fakePort({
      denoDir,
      head: () => Promise.resolve(200),
      binary: () => ({ code: 0, stdout: REPL_BANNER, stderr: "" }),
    });
    assert.equal(await runCompile(["--out", out], compileOptions(port, checksums)), 1);
    const file = join(out, binaryName(HOST));
    assert.deepEqual(port.err, [
      `error: ${file} did not behave like niceeval: \`--version\` exited 0 and printed ` +
      `${JSON.stringify(REPL_BANNER)}, expected ${JSON.stringify(`${VERSION}\n`)}; ` +
      "the binary was deleted",
    ]);
    assert.deepEqual(port.out, []);
    assert.equal(await exists(file), false);
  });
});

Deno.test("runCompile() deletes the host binary and exits 1 when list misses smoke/hello", async () => {
  await withDirs(async ({ denoDir, checksums, out }) => {
    const port = fakePort({
      denoDir,
      head: () => Promise.resolve(200),
      binary: (args) =>
        args[0] === "list"
          ? { code: 0, stdout: "Discovered 0 evals:\n", stderr: "" }
          : niceevalBinary(args),
    });
    assert.equal(await runCompile(["--out", out], compileOptions(port, checksums)), 1);
    assert.match(
      port.err[0]!,
      /did not behave like niceeval: `list` in tests\/fixtures\/smoke_project exited 0 without listing "smoke\/hello"/,
    );
    assert.equal(await exists(join(out, binaryName(HOST))), false);
  });
});

Deno.test("runCompile() exits 1 and runs no smoke test when deno compile fails", async () => {
  await withDirs(async ({ denoDir, checksums, out }) => {
    const port = fakePort({ denoDir, head: () => Promise.resolve(200), buildCode: 1 });
    assert.equal(await runCompile(["--out", out], compileOptions(port, checksums)), 1);
    assert.deepEqual(port.err, [`error: Cannot build "${HOST}": deno compile exited 1`]);
    assert.deepEqual(port.runs, []);
  });
});

Deno.test("esbuildWasmPath() names the esbuild.wasm file of the installed package", async () => {
  const path = esbuildWasmPath();
  assert.match(path, /[/\\]esbuild-wasm[/\\]esbuild\.wasm$/);
  assert.ok((await stat(path)).isFile());
});

Deno.test("createSystemPort() head() rejects when no answer comes within the probe timeout", async () => {
  const clock = FakeTimers.install({ toFake: ["setTimeout", "clearTimeout"] });
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const accepted = listener.accept();
    const url = `http://127.0.0.1:${listener.addr.port}/denort.zip`;
    const head = createSystemPort({ env: {} }).head(url, PROBE_TIMEOUT_MS);
    let settled = false;
    const outcome = head.then(() => "answered", (error: Error) => error.message)
      .finally(() => settled = true);
    // The request reached a server that never answers.
    using _connection = await accepted;
    await clock.tickAsync(PROBE_TIMEOUT_MS - 1);
    assert.equal(settled, false);
    await clock.tickAsync(1);
    assert.equal(await outcome, "no answer within 5 s");
  } finally {
    listener.close();
    clock.uninstall();
  }
});

// ---- the real script on this machine --------------------------------------------------------

const SKIP_BUILD = Deno.env.get("NICEEVAL_SKIP_COMPILE") === "1";
const HOST_TARGET = isTarget(Deno.build.target) ? Deno.build.target : null;
const ENV_WITHOUT_DENORT_BIN = Object.fromEntries(
  Object.entries(Deno.env.toObject()).filter(([name]) => name !== "DENORT_BIN"),
);

async function hostRuntime(env: Record<string, string>): Promise<Resolution | null> {
  if (HOST_TARGET === null) return null;
  const port = createSystemPort({ env });
  const [resolution] = await resolveRuntimes([HOST_TARGET], { port });
  return resolution ?? null;
}

// Decided once, at load: at most one bounded HEAD request per call.
const runtimeWithoutBin = await hostRuntime(ENV_WITHOUT_DENORT_BIN);
const runtime = Deno.env.get("DENORT_BIN")
  ? await hostRuntime(Deno.env.toObject())
  : runtimeWithoutBin;
const buildSkipReason = SKIP_BUILD
  ? "NICEEVAL_SKIP_COMPILE=1"
  : HOST_TARGET === null
  ? `the host "${Deno.build.target}" is not a compile target`
  : runtime === null || runtime.source === "none"
  ? `no runtime for ${HOST_TARGET} (${runtime?.detail ?? "not resolved"})`
  : null;
if (buildSkipReason !== null) {
  await Deno.stderr.write(
    new TextEncoder().encode(
      `compile_test.ts: the build-and-smoke test is ignored: ${buildSkipReason}\n`,
    ),
  );
}

Deno.test({
  name: "compile.ts: --probe and the default build without a runtime exit 2, one line per target",
  ignore: HOST_TARGET === null || runtimeWithoutBin?.source !== "none",
  fn: async () => {
    await withTempDir(async (dir) => {
      const env = { env: ENV_WITHOUT_DENORT_BIN, clearEnv: true };
      const probe = await runDeno(["run", "-A", "--frozen", "compile.ts", "--probe"], env);
      assert.equal(probe.code, 2, describeRun(probe));
      assert.match(probe.stdout, new RegExp(`^${HOST_TARGET}  none  tried DENORT_BIN not set; `));
      assert.equal(probe.stdout.split("\n").filter(Boolean).length, 1, describeRun(probe));

      const out = join(dir, "out");
      const build = await runDeno(["run", "-A", "--frozen", "compile.ts", "--out", out], env);
      assert.equal(build.code, 2, describeRun(build));
      const lines = build.stderr.split("\n").filter(Boolean);
      assert.equal(lines.length, 2, describeRun(build));
      assert.match(lines[0]!, new RegExp(`^error: No runtime for "${HOST_TARGET}": tried `));
      assert.match(lines[1]!, /^hint: .*nothing was built$/);
      assert.equal(build.stdout, "");
      assert.equal(await exists(out), false);
    });
  },
});

Deno.test({
  name: "compile.ts: a build on the full deno executable fails its smoke test, is deleted, exits 1",
  ignore: SKIP_BUILD || HOST_TARGET === null,
  fn: async () => {
    await withTempDir(async (dir) => {
      const out = join(dir, "out");
      const result = await runDeno(["run", "-A", "--frozen", "compile.ts", "--out", out], {
        env: { ...ENV_WITHOUT_DENORT_BIN, DENORT_BIN: Deno.execPath(), NO_COLOR: "1" },
        clearEnv: true,
      });
      assert.equal(result.code, 1, describeRun(result));
      assert.match(result.stderr, /did not behave like niceeval: `--version` exited 0/);
      assert.deepEqual(await readdir(out), []);
    });
  },
});

Deno.test({
  name: "compile.ts: the host build passes its smoke test and exits 0",
  ignore: buildSkipReason !== null,
  fn: async () => {
    await withTempDir(async (dir) => {
      const out = join(dir, "out");
      const result = await runDeno(["run", "-A", "--frozen", "compile.ts", "--out", out], {
        env: Deno.env.toObject(),
        clearEnv: true,
      });
      assert.equal(result.code, 0, describeRun(result));
      const file = join(out, binaryName(HOST_TARGET!));
      assert.match(result.stdout, new RegExp(`built  .*smoke test passed`));
      assert.ok((await stat(file)).isFile());
    });
  },
});

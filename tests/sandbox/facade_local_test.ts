/**
 * Every `SandboxOps` method of the facade over a real `local` sandbox (sandboxes.md §2.3,
 * rules 25–32, §8.1): real temp dirs, real subprocesses, real host files.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { realClock } from "../../src/_shared/clock.ts";
import {
  type CommandEvidence,
  createFacade,
  type EvalSandbox,
  hasSandboxCode,
  type SandboxCommandError,
  type SandboxDiagnostic,
} from "../../src/sandbox/mod.ts";
import { createSeededRandom } from "../_fakes/random.ts";
import { localTestBed } from "./_local.ts";

interface LocalFacade extends AsyncDisposable {
  readonly sb: EvalSandbox;
  /** The host directory relative host paths resolve against. */
  readonly host: string;
  readonly evidence: CommandEvidence[];
  readonly diagnostics: SandboxDiagnostic[];
}

async function localFacade(): Promise<LocalFacade> {
  const bed = await localTestBed();
  const host = await Deno.realPath(await Deno.makeTempDir({ prefix: "niceeval-facade-host-" }));
  const handle = await bed.create();
  const evidence: CommandEvidence[] = [];
  const diagnostics: SandboxDiagnostic[] = [];
  const sb = createFacade({
    handle,
    shell: (handle as unknown as { shell: "bash" | "sh" }).shell,
    clock: realClock,
    random: createSeededRandom(5),
    signal: new AbortController().signal,
    hostDir: host,
    phase: () => "test",
    onEvidence: (e) => evidence.push(e),
    onDiagnostic: (d) => diagnostics.push(d),
  });
  return {
    sb,
    host,
    evidence,
    diagnostics,
    async [Symbol.asyncDispose]() {
      await bed[Symbol.asyncDispose]();
      await Deno.remove(host, { recursive: true });
    },
  };
}

Deno.test("runCommand() and runShell() on local resolve with decoded output and the exit code", async () => {
  await using f = await localFacade();
  const argv = await f.sb.runCommand("printf", ["%s|", "a b", "é"]);
  assert.deepEqual([argv.exitCode, argv.stdout, argv.stderr], [0, "a b|é|", ""]);
  const script = await f.sb.runShell("echo out; echo err >&2; exit 4", { env: { X: "1" } });
  assert.deepEqual([script.exitCode, script.stdout, script.stderr], [4, "out\n", "err\n"]);
  const cwd = await f.sb.runShell("mkdir -p sub && cd sub && pwd");
  const inSub = await f.sb.runCommand("pwd", [], { cwd: "sub" });
  assert.equal(inSub.stdout, cwd.stdout);
  assert.equal(inSub.stdout.trim(), join(f.sb.workdir, "sub"));
  const chunks: string[] = [];
  await f.sb.runShell("echo live", { onStdout: (c) => void chunks.push(c) });
  assert.deepEqual(chunks, ["live\n"]);
  assert.deepEqual(
    f.evidence.map((e) => [e.kind, e.exitCode, e.phase]),
    [["argv", 0, "test"], ["script", 4, "test"], ["script", 0, "test"], ["argv", 0, "test"], [
      "script",
      0,
      "test",
    ]],
  );
  assert.deepEqual(f.evidence[1]!.envNames, ["X"]);
});

Deno.test("runCommandOrThrow() and runShellOrThrow() on local resolve on 0 and reject otherwise", async () => {
  await using f = await localFacade();
  assert.equal((await f.sb.runCommandOrThrow("echo", ["fine"])).stdout, "fine\n");
  assert.equal((await f.sb.runShellOrThrow("echo fine")).exitCode, 0);
  const argvError = await f.sb.runCommandOrThrow("sh", ["-c", "echo bad >&2; exit 3"]).then(
    () => undefined,
    (e) => e,
  ) as SandboxCommandError;
  assert.ok(hasSandboxCode(argvError, "sandbox-command-failed"), String(argvError));
  assert.equal(argvError.result.exitCode, 3);
  assert.match(argvError.message, /^command failed \(exit 3\): sh -c 'echo bad >&2; exit 3'\nbad/);
  const scriptError = await f.sb.runShellOrThrow("echo only-stdout; exit 1").then(
    () => undefined,
    (e) => e,
  ) as SandboxCommandError;
  assert.equal(scriptError.result.exitCode, 1);
  assert.match(scriptError.message, /\nonly-stdout/);
});

Deno.test("readText(), writeText(), readBytes(), writeBytes() and pathExists() on local round-trip", async () => {
  await using f = await localFacade();
  await f.sb.writeText("notes/a.txt", "héllo\n");
  assert.equal(await f.sb.readText("notes/a.txt"), "héllo\n");
  assert.equal(await Deno.readTextFile(join(f.sb.workdir, "notes", "a.txt")), "héllo\n");
  const binary = new Uint8Array([0, 0xff, 0xfe, 10, 0x80, 7]);
  await f.sb.writeBytes(join(f.sb.workdir, "bin", "blob"), binary);
  assert.deepEqual(await f.sb.readBytes("bin/blob"), binary);
  assert.deepEqual(await Deno.readFile(join(f.sb.workdir, "bin", "blob")), binary);
  assert.equal((await Deno.stat(join(f.sb.workdir, "bin", "blob"))).mode! & 0o777, 0o644);
  // What a command wrote is what the file operations read, and the other way round.
  await f.sb.runShellOrThrow("printf 'from the shell' > shell.txt");
  assert.equal(await f.sb.readText("shell.txt"), "from the shell");
  assert.equal((await f.sb.runCommand("cat", ["notes/a.txt"])).stdout, "héllo\n");
  assert.equal(await f.sb.pathExists("notes"), true);
  assert.equal(await f.sb.pathExists("notes/a.txt"), true);
  assert.equal(await f.sb.pathExists("missing.txt"), false);
  await assert.rejects(
    () => f.sb.readText("missing.txt"),
    (e) => hasSandboxCode(e, "sandbox-file-not-found"),
  );
  await assert.rejects(
    () => f.sb.readBytes("notes"),
    (e) => hasSandboxCode(e, "sandbox-path-invalid"),
  );
  await assert.rejects(
    () => f.sb.writeText("../../escape.txt", "x"),
    (e) => hasSandboxCode(e, "sandbox-path-invalid"),
  );
});

Deno.test("uploadFile() and uploadDirectory() on local copy host files with their modes, never the host's outside", async () => {
  await using f = await localFacade();
  const project = join(f.host, "project");
  await Deno.mkdir(join(project, "src"), { recursive: true });
  await Deno.mkdir(join(project, "dist"), { recursive: true });
  await Deno.writeTextFile(join(project, "run.sh"), "#!/bin/sh\necho ran\n");
  await Deno.chmod(join(project, "run.sh"), 0o755);
  await Deno.writeTextFile(join(project, "src", "main.ts"), "main");
  await Deno.writeTextFile(join(project, "dist", "out.js"), "built");
  await Deno.writeTextFile(join(f.host, "secret.txt"), "host secret");
  await Deno.symlink(join(f.host, "secret.txt"), join(project, "leak.txt"));
  await f.sb.uploadFile("project/run.sh", "bin/run.sh");
  assert.equal((await f.sb.runCommand("./bin/run.sh")).stdout, "ran\n");
  await f.sb.uploadDirectory(new URL(`file://${project}`), "copy", { ignore: ["dist/"] });
  const listed = await f.sb.runShell("cd copy && find . | sort");
  assert.deepEqual(listed.stdout.trim().split("\n"), [
    ".",
    "./run.sh",
    "./src",
    "./src/main.ts",
  ]);
  assert.equal(await f.sb.readText("copy/src/main.ts"), "main");
  assert.equal((await Deno.stat(join(f.sb.workdir, "copy", "run.sh"))).mode! & 0o777, 0o755);
  // The host side is only read.
  assert.equal(await Deno.readTextFile(join(project, "src", "main.ts")), "main");
});

Deno.test("downloadFile() and downloadDirectory() on local write host files, creating parents", async () => {
  await using f = await localFacade();
  await f.sb.runShellOrThrow(
    "mkdir -p out/deep out/logs && echo a > out/a.txt && echo b > out/deep/b.txt && echo l > out/logs/x.log",
  );
  await Deno.mkdir(join(f.host, "got"));
  await Deno.writeTextFile(join(f.host, "got", "a.txt"), "old");
  await f.sb.downloadFile("out/a.txt", "got/a.txt");
  assert.equal(await Deno.readTextFile(join(f.host, "got", "a.txt")), "a\n");
  await f.sb.downloadDirectory("out", join(f.host, "tree", "copy"), { ignore: ["logs/"] });
  const files = (await Array.fromAsync(Deno.readDir(join(f.host, "tree", "copy")))).map((e) =>
    e.name
  ).sort();
  assert.deepEqual(files, ["a.txt", "deep"]);
  assert.equal(await Deno.readTextFile(join(f.host, "tree", "copy", "deep", "b.txt")), "b\n");
  await assert.rejects(
    () => f.sb.downloadDirectory("nowhere", "x"),
    (e) => hasSandboxCode(e, "sandbox-file-not-found"),
  );
  assert.deepEqual(f.diagnostics, []);
});

/** Facade results, errors and evidence (sandboxes.md rules 16, 29–31, 80), on fake time. */
import assert from "node:assert/strict";
import {
  createFacadeLease,
  hasSandboxCode,
  type SandboxCommandError,
  SandboxTimeoutError,
} from "../../src/sandbox/mod.ts";
import { facadeBed, utf8 } from "./_facade.ts";

const E_ACUTE = [0xc3, 0xa9]; // "é"

Deno.test("runCommand() decodes a multi-byte character split across live chunks", async () => {
  const { sb } = await facadeBed({
    provider: {
      exec: async (_c, o) => {
        await o.onOutput?.({
          stream: "stdout",
          data: new Uint8Array([0x63, 0x61, 0x66, E_ACUTE[0]!]),
        });
        await o.onOutput?.({ stream: "stdout", data: new Uint8Array([E_ACUTE[1]!, 0x21]) });
        return { stdout: new Uint8Array([0x63, 0x61, 0x66, ...E_ACUTE, 0x21]) };
      },
    },
  });
  const chunks: string[] = [];
  const r = await sb.runCommand("agent", [], { onStdout: (c) => void chunks.push(c) });
  assert.equal(r.stdout, "café!");
  assert.deepEqual(chunks, ["caf", "é!"]);
});

Deno.test("runCommand() replaces invalid UTF-8 with U+FFFD and keeps truncation flags", async () => {
  const { sb } = await facadeBed({
    provider: {
      exec: () => ({ stdout: new Uint8Array([0x61, 0xff, 0x62]), truncated: { stdout: true } }),
    },
  });
  const r = await sb.runCommand("x");
  assert.equal(r.stdout, "a\uFFFDb");
  assert.deepEqual(r.truncated, { stdout: true });
});

Deno.test("runShellOrThrow() rejects with the exit code, summary and last 2000 characters of stderr", async () => {
  const stderr = "x".repeat(3000) + "END";
  const { sb } = await facadeBed({
    provider: { exec: () => ({ exitCode: 2, stderr: utf8(stderr) }) },
  });
  const error = await sb.runShellOrThrow("make   test\n  --verbose").then(
    () => 0,
    (e) => e,
  ) as SandboxCommandError;
  assert.equal(error.code, "sandbox-command-failed");
  assert.equal(error.name, "SandboxCommandError");
  assert.equal(error.result.exitCode, 2);
  assert.equal(error.result.stderr, stderr);
  const [head, tail] = [
    error.message.slice(0, error.message.indexOf("\n")),
    error.message.slice(error.message.indexOf("\n") + 1),
  ];
  assert.equal(head, "command failed (exit 2): make test --verbose");
  assert.equal(tail.length, 2000);
  assert.ok(tail.endsWith("END"));
});

Deno.test("runCommandOrThrow() quotes stdout when stderr is empty and resolves on exit 0", async () => {
  let exitCode = 1;
  const { sb } = await facadeBed({
    provider: { exec: () => ({ exitCode, stdout: utf8("only stdout") }) },
  });
  const error = await sb.runCommandOrThrow("ls", ["a b"]).then(
    () => 0,
    (e) => e,
  ) as SandboxCommandError;
  assert.equal(error.message, "command failed (exit 1): ls 'a b'\nonly stdout");
  exitCode = 0;
  assert.equal((await sb.runCommandOrThrow("ls")).stdout, "only stdout");
});

Deno.test("facade evidence redacts sensitive values and keeps env names only", async () => {
  const { sb, evidence } = await facadeBed({
    facade: { sensitiveValues: ["sk-agent-key"] },
    provider: {
      exec: () => ({ exitCode: 9, stderr: utf8("denied for sk-agent-key and hunter2") }),
    },
  });
  const error = await sb.runCommandOrThrow("login", ["--token", "hunter2", "--key=sk-agent-key"], {
    env: { API_TOKEN: "env-secret-value" },
    sensitiveValues: ["hunter2"],
  }).then(() => 0, (e) => e) as SandboxCommandError;
  assert.equal(
    error.message,
    "command failed (exit 9): login --token *** --key=***\ndenied for *** and ***",
  );
  assert.deepEqual(evidence, [{
    kind: "argv",
    summary: "login --token *** --key=***",
    phase: "test",
    envNames: ["API_TOKEN"],
    exitCode: 9,
    durationMs: 0,
  }]);
  assert.equal(JSON.stringify(evidence).includes("env-secret-value"), false);
});

Deno.test("facade evidence summaries hold at most 200 characters", async () => {
  const { sb, evidence } = await facadeBed();
  await sb.runShell("echo " + "y".repeat(500));
  assert.equal([...evidence[0]!.summary].length, 200);
  assert.ok(evidence[0]!.summary.endsWith("…"));
  assert.equal(evidence[0]!.kind, "script");
});

Deno.test("facade evidence records the code of a rejected command", async () => {
  const { sb, evidence } = await facadeBed({
    provider: { exec: () => Promise.reject(new Error("transport")) },
  });
  await assert.rejects(() => sb.runCommand("x"), /transport/);
  assert.equal(evidence[0]!.error, "sandbox-exec-failed");
});

Deno.test("runCommand() warns once per command when an output callback throws", async () => {
  const { sb, diagnostics } = await facadeBed({
    provider: {
      exec: async (_c, o) => {
        for (const text of ["a", "b", "c"]) {
          await o.onOutput?.({ stream: "stdout", data: utf8(text) });
        }
        return { stdout: utf8("abc") };
      },
    },
  });
  const r = await sb.runCommand("x", [], {
    onStdout: () => {
      throw new Error("callback bug");
    },
  });
  assert.equal(r.stdout, "abc");
  assert.deepEqual(diagnostics.map((d) => d.code), ["sandbox-output-callback-failed"]);
  await sb.runCommand("x", [], {
    onStdout: () => {
      throw new Error("again");
    },
  });
  assert.equal(diagnostics.length, 2);
});

Deno.test("runCommand() rejects user and stdin the handle cannot honour", async () => {
  const { sb, handle } = await facadeBed({
    provider: { capabilities: { user: "root-only", stdin: false } },
  });
  await assert.rejects(
    () => sb.runCommand("x", [], { user: "node" }),
    (e) => hasSandboxCode(e, "sandbox-unsupported"),
  );
  await assert.rejects(
    () => sb.runCommand("x", [], { stdin: "in" }),
    (e) => hasSandboxCode(e, "sandbox-unsupported"),
  );
  await sb.runCommand("x", [], { user: "root" });
  assert.equal(handle.execs.length, 1);
});

Deno.test("runCommand() passes string stdin as UTF-8 bytes", async () => {
  const { sb, handle } = await facadeBed();
  await sb.runCommand("agent", [], { stdin: "héllo" });
  assert.deepEqual(handle.execs[0]!.options.stdin, utf8("héllo"));
});

Deno.test("a facade from an ended lease throws SandboxRetiredError", async () => {
  const lease = createFacadeLease();
  const { sb, handle } = await facadeBed({ facade: { lease } });
  await sb.runCommand("x");
  lease.retire();
  await assert.rejects(() => sb.runCommand("x"), (e) => hasSandboxCode(e, "sandbox-retired"));
  await assert.rejects(() => sb.readText("a"), (e) => hasSandboxCode(e, "sandbox-retired"));
  await assert.rejects(
    () => sb.uploadFile("/etc/hostname", "h"),
    (e) => hasSandboxCode(e, "sandbox-retired"),
  );
  assert.equal(handle.execs.length, 1);
});

Deno.test("runCommand() timeouts say whether the caller or the Attempt deadline set the limit", async () => {
  const deadline = { at: 0 };
  const { sb, clock } = await facadeBed({
    facade: { deadlineAt: () => deadline.at },
    provider: {
      exec: (_c, o) => Promise.reject(new SandboxTimeoutError(o.timeoutMs!, false, "timed out")),
    },
  });
  deadline.at = clock.now() + 9_000;
  const implicit = await sb.runCommand("slow").then(() => 0, (e) => e) as SandboxTimeoutError;
  const explicit = await sb.runCommand("slow", [], { timeoutMs: 50 }).then(
    () => 0,
    (e) => e,
  ) as SandboxTimeoutError;
  assert.deepEqual([implicit.code, implicit.limitMs, implicit.explicit], [
    "sandbox-command-timeout",
    9_000,
    false,
  ]);
  assert.deepEqual([explicit.limitMs, explicit.explicit], [50, true]);
});

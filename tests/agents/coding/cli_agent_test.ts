/**
 * The shared coding-agent machinery (docs/coding_agents.md): option checks, the environment
 * policy, binary resolution and session resume, with a recording sandbox instead of a CLI.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { claudeCodeAgent } from "../../../src/agents/coding/claude_code.ts";
import { createAgentSession, resolveAgent } from "../../../src/agents/mod.ts";
import type { AgentContext, ResolvedAgent } from "../../../src/agents/mod.ts";
import type { CommandOptions, CommandResult, SandboxOps } from "../../../src/sandbox/mod.ts";
import { DefinitionError } from "../../../src/_shared/mod.ts";

const RESULT = JSON.stringify({
  type: "result",
  subtype: "success",
  is_error: false,
  session_id: "sess-1",
  result: "fine",
  usage: { input_tokens: 1, output_tokens: 1 },
});

interface Call {
  readonly cmd: string;
  readonly args: readonly string[];
  readonly o: CommandOptions;
}

function recordingSandbox(provider: string, calls: Call[]): SandboxOps {
  const ok = (stdout: string): CommandResult & { exitCode: 0 } => ({
    exitCode: 0,
    stdout,
    stderr: "",
    durationMs: 1,
  });
  return {
    id: "s1",
    provider,
    workdir: "/box/work",
    shell: "sh",
    runCommand: (cmd, args = [], o = {}) => {
      calls.push({ cmd, args, o });
      return Promise.resolve(ok(`${RESULT}\n`));
    },
    runShellOrThrow: () => Promise.resolve(ok("/box/home/.niceeval-agents/claude-code")),
  } as Partial<SandboxOps> as SandboxOps;
}

function contextOf(sandbox: SandboxOps, env: Record<string, string>): AgentContext {
  return {
    signal: new AbortController().signal,
    session: createAgentSession(),
    model: "ctx-model",
    flags: {},
    experimentId: "e",
    evalId: "v",
    sendTry: 0,
    sandbox,
    progress: () => {},
    diagnostic: () => {},
    log: () => {},
    env: (name: string) => env[name],
  } as AgentContext;
}

Deno.test("claudeCodeAgent: an unknown option is a DefinitionError naming it", () => {
  assert.throws(
    () => claudeCodeAgent({ modle: "x" } as never),
    (e) => e instanceof DefinitionError && /modle/.test(e.message),
  );
  assert.throws(() => claudeCodeAgent({ version: "latest" }), /version must be an exact version/);
  assert.throws(() => claudeCodeAgent({ passEnv: ["BAD NAME"] }), /passEnv\[0\]/);
});

Deno.test("claudeCodeAgent: only the CLI's own credentials and passEnv reach it, redacted; quiet defaults; env wins", async () => {
  const calls: Call[] = [];
  const agent = resolveAgent(
    claudeCodeAgent({
      passEnv: ["EXTRA_TOKEN"],
      env: { DISABLE_TELEMETRY: "0" },
      bin: "/opt/claude",
    }),
  ) as ResolvedAgent;
  const ctx = contextOf(recordingSandbox("local", calls), {
    ANTHROPIC_API_KEY: "sk-ant-secret-value-123",
    OTHER_SECRET: "never-passed-value",
    EXTRA_TOKEN: "extra-token-value",
  });
  const turn = await agent.send({ text: "hi" }, ctx);
  assert.equal(turn.status, "completed");
  const run = calls.at(-1)!;
  assert.equal(run.cmd, "/opt/claude");
  const env = run.o.env!;
  assert.equal(env.ANTHROPIC_API_KEY, "sk-ant-secret-value-123");
  assert.equal(env.EXTRA_TOKEN, "extra-token-value");
  assert.equal(env.OTHER_SECRET, undefined);
  assert.equal(env.DISABLE_TELEMETRY, "0");
  assert.equal(env.CLAUDE_CODE_MAX_RETRIES, "0");
  assert.equal(env.CLAUDE_CONFIG_DIR, "/box/home/.niceeval-agents/claude-code/config");
  assert.deepEqual(
    [...run.o.sensitiveValues!].sort(),
    ["extra-token-value", "sk-ant-secret-value-123"],
  );
  assert.deepEqual(run.args.slice(-2), ["--model", "ctx-model"]);
  // The second send of the line resumes the captured session.
  await agent.send({ text: "again" }, ctx);
  assert.deepEqual(calls.at(-1)!.args.slice(-2), ["--resume", "sess-1"]);
});

Deno.test("claudeCodeAgent: a passEnv variable missing on the host is agent-config-invalid", async () => {
  const agent = resolveAgent(claudeCodeAgent({ passEnv: ["MISSING_TOKEN"] })) as ResolvedAgent;
  await assert.rejects(
    agent.send({ text: "hi" }, contextOf(recordingSandbox("local", []), {})),
    (e: Error & { code?: string }) =>
      e.code === "agent-config-invalid" && /MISSING_TOKEN/.test(e.message),
  );
});

Deno.test("claudeCodeAgent: the baseUrl option wins over the host's endpoint variable", async () => {
  const calls: Call[] = [];
  const agent = resolveAgent(claudeCodeAgent({ baseUrl: "http://127.0.0.1:1" })) as ResolvedAgent;
  await agent.send(
    { text: "hi" },
    contextOf(recordingSandbox("docker", calls), {
      ANTHROPIC_BASE_URL: "http://host.invalid",
    }),
  );
  assert.equal(calls.at(-1)!.o.env!.ANTHROPIC_BASE_URL, "http://127.0.0.1:1");
  // In a docker sandbox the image provides the CLI on its PATH.
  assert.equal(calls.at(-1)!.cmd, "claude");
});

Deno.test("claudeCodeAgent: a local sandbox prefers the project's node_modules/.bin", async () => {
  const project = await Deno.makeTempDir();
  try {
    const bin = join(project, "node_modules", ".bin");
    await Deno.mkdir(bin, { recursive: true });
    await Deno.writeTextFile(join(bin, "claude"), "#!/bin/sh\n");
    const calls: Call[] = [];
    const agent = resolveAgent(claudeCodeAgent({ version: "9.9.9" })) as ResolvedAgent;
    await agent.send({ text: "hi" }, contextOf(recordingSandbox("local", calls), { PWD: project }));
    assert.equal(calls.at(-1)!.cmd, join(bin, "claude"));
  } finally {
    await Deno.remove(project, { recursive: true });
  }
});

Deno.test("claudeCodeAgent: a cached exact version is used without installing", async () => {
  const cache = await Deno.makeTempDir();
  try {
    const bin = join(
      cache,
      "niceeval",
      "agent-clis",
      "_anthropic-ai_claude-code_9.9.9",
      "node_modules",
      ".bin",
    );
    await Deno.mkdir(bin, { recursive: true });
    await Deno.writeTextFile(join(bin, "claude"), "#!/bin/sh\n");
    const calls: Call[] = [];
    const agent = resolveAgent(claudeCodeAgent({ version: "9.9.9" })) as ResolvedAgent;
    await agent.send(
      { text: "hi" },
      contextOf(recordingSandbox("local", calls), { XDG_CACHE_HOME: cache }),
    );
    assert.deepEqual(calls.map((c) => c.cmd), [join(bin, "claude")]);
  } finally {
    await Deno.remove(cache, { recursive: true });
  }
});

/** A local sandbox whose `npm install --prefix <dir>` writes the CLI's bin into `<dir>`. */
function npmSandbox(calls: Call[], exitCode = 0): SandboxOps {
  const sandbox = recordingSandbox("local", calls);
  const run = sandbox.runCommand;
  sandbox.runCommand = async (cmd, args = [], o = {}) => {
    if (cmd !== "npm") return await run(cmd, args, o);
    calls.push({ cmd, args, o });
    const prefix = args[args.indexOf("--prefix") + 1]!;
    if (exitCode !== 0) return { exitCode, stdout: "", stderr: "npm ERR! 404", durationMs: 1 };
    await Deno.mkdir(join(prefix, "node_modules", ".bin"), { recursive: true });
    await Deno.writeTextFile(join(prefix, "node_modules", ".bin", "claude"), "#!/bin/sh\n");
    return { exitCode: 0, stdout: "", stderr: "", durationMs: 1 };
  };
  return sandbox;
}

Deno.test("claudeCodeAgent: concurrent first uses of a version install it into the cache and publish one copy", async () => {
  const cache = await Deno.makeTempDir();
  try {
    const calls: Call[] = [];
    const sends = [0, 1].map(() => {
      const agent = resolveAgent(claudeCodeAgent({ version: "9.9.8" })) as ResolvedAgent;
      return agent.send(
        { text: "hi" },
        contextOf(npmSandbox(calls), { XDG_CACHE_HOME: cache }),
      );
    });
    await Promise.all(sends);
    const dir = join(cache, "niceeval", "agent-clis");
    const entries = [];
    for await (const e of Deno.readDir(dir)) entries.push(e.name);
    assert.deepEqual(entries, ["_anthropic-ai_claude-code_9.9.8"]);
    const bin = join(dir, "_anthropic-ai_claude-code_9.9.8", "node_modules", ".bin", "claude");
    const runs = calls.filter((c) => c.cmd !== "npm");
    assert.deepEqual(runs.map((c) => c.cmd), [bin, bin]);
    assert.ok(
      calls.some((c) => c.cmd === "npm" && c.args.includes("@anthropic-ai/claude-code@9.9.8")),
    );
  } finally {
    await Deno.remove(cache, { recursive: true });
  }
});

Deno.test("claudeCodeAgent: a failed install is agent-config-invalid and leaves no partial copy", async () => {
  const cache = await Deno.makeTempDir();
  try {
    const agent = resolveAgent(claudeCodeAgent({ version: "9.9.7" })) as ResolvedAgent;
    await assert.rejects(
      agent.send({ text: "hi" }, contextOf(npmSandbox([], 1), { XDG_CACHE_HOME: cache })),
      (e: Error & { code?: string }) =>
        e.code === "agent-config-invalid" && /npm ERR! 404/.test(e.message),
    );
    const entries = [];
    for await (const e of Deno.readDir(join(cache, "niceeval", "agent-clis"))) entries.push(e);
    assert.deepEqual(entries, []);
  } finally {
    await Deno.remove(cache, { recursive: true });
  }
});

/**
 * `commandAgent` (authoring.md §8.3) against a real `local` sandbox: argv and stdin input, text,
 * ndjson and function output, `passEnv`, the setup script and the configuration identity.
 */
import assert from "node:assert/strict";
import { realClock } from "../../src/_shared/clock.ts";
import { DefinitionError } from "../../src/_shared/mod.ts";
import {
  type AgentContext,
  commandAgent,
  type CommandAgentOptions,
  createAgentSession,
  resolveAgent,
  type Turn,
} from "../../src/agents/mod.ts";
import { type CommandEvidence, createFacade, type SandboxOps } from "../../src/sandbox/mod.ts";
import { createSeededRandom } from "../_fakes/random.ts";
import { facadeBed } from "../sandbox/_facade.ts";
import { localTestBed } from "../sandbox/_local.ts";

/** A context over a fresh local sandbox, with `env` as the host environment. */
async function contextBed(env: Record<string, string> = {}) {
  const bed = await localTestBed();
  const handle = await bed.create();
  const evidence: CommandEvidence[] = [];
  const sandbox: SandboxOps = createFacade({
    handle,
    shell: "sh",
    clock: realClock,
    random: createSeededRandom(1),
    signal: new AbortController().signal,
    hostDir: bed.tmpDir,
    phase: () => "test",
    onEvidence: (e) => evidence.push(e),
    onDiagnostic: () => {},
  });
  const ctx = {
    signal: new AbortController().signal,
    session: createAgentSession(),
    model: undefined,
    flags: {},
    experimentId: "x",
    evalId: "e",
    sendTry: 0,
    sandbox,
    env: (name: string) => env[name],
    progress: () => {},
    diagnostic: () => {},
    log: () => {},
  } as AgentContext;
  return { bed, sandbox, ctx, evidence, [Symbol.asyncDispose]: () => bed[Symbol.asyncDispose]() };
}

function agentOf(opts: CommandAgentOptions) {
  return resolveAgent(commandAgent(opts))!;
}

Deno.test("commandAgent() replaces {{input}} inside arguments and maps stdout to one message", async () => {
  await using t = await contextBed();
  const agent = agentOf({
    name: "echo",
    command: ["sh", "-c", 'printf "<%s>\\n" "$1"', "sh", "[{{input}}]"],
  });
  assert.equal(agent.kind, "sandbox");
  const turn = await agent.send({ text: "two words" }, t.ctx);
  assert.deepEqual(turn, {
    status: "completed",
    events: [{ type: "message", role: "assistant", text: "<[two words]>" }],
  });
  assert.deepEqual(agent.evidenceCoverage.usage.status, "unavailable");
  assert.deepEqual(agent.evidenceCoverage.events.status, "partial");
  assert.deepEqual(agent.evidenceCoverage.messages.status, "complete");
});

Deno.test("commandAgent() appends the input as the last argument without a placeholder", async () => {
  await using t = await contextBed();
  const agent = agentOf({ name: "args", command: ["sh", "-c", 'echo "$#:$2"', "sh", "first"] });
  const turn = await agent.send({ text: "it's quoted" }, t.ctx);
  assert.deepEqual(turn.events, [{ type: "message", role: "assistant", text: "2:it's quoted" }]);
});

Deno.test("commandAgent() writes the input to stdin in stdin mode and runs in cwd", async () => {
  await using t = await contextBed();
  await t.sandbox.writeText("sub/keep.txt", "");
  const agent = agentOf({
    name: "cat",
    command: ["sh", "-c", "pwd; cat"],
    input: "stdin",
    cwd: "sub",
  });
  const turn = await agent.send({ text: "from stdin" }, t.ctx);
  const text = (turn.events[0] as { text: string }).text;
  assert.equal(text, `${t.sandbox.workdir}/sub\nfrom stdin`);
});

Deno.test("commandAgent() fails a text turn on a non-zero exit with the stderr tail", async () => {
  await using t = await contextBed();
  const agent = agentOf({
    name: "fails",
    command: ["sh", "-c", "echo partial; echo broken >&2; exit 3"],
  });
  const turn = await agent.send({ text: "x" }, t.ctx);
  assert.equal(turn.status, "failed");
  assert.deepEqual(turn.events, [
    { type: "message", role: "assistant", text: "partial" },
    { type: "error", message: "command exited with 3: broken\n" },
  ]);
});

Deno.test("commandAgent() reads ndjson events, usage, session, data and status lines", async () => {
  await using t = await contextBed();
  const lines = [
    {
      type: "operation.started",
      operationId: "1",
      operation: { kind: "tool", name: "ls", input: {} },
    },
    { type: "operation.finished", operationId: "1", kind: "tool", status: "completed" },
    { type: "message", role: "assistant", text: "done" },
    { type: "usage", inputTokens: 3, outputTokens: 2 },
    { type: "session", id: "s-1" },
    { type: "data", data: { files: 2 } },
    { type: "status", status: "failed" },
  ].map((l) => JSON.stringify(l)).join("\n");
  const agent = agentOf({
    name: "nd",
    command: ["sh", "-c", `cat <<'EOF'\n${lines}\n\nEOF`],
    output: "ndjson",
  });
  const turn = await agent.send({ text: "x" }, t.ctx);
  assert.equal(turn.status, "failed");
  assert.equal(turn.events.length, 3);
  assert.deepEqual(turn.usage, { inputTokens: 3, outputTokens: 2 });
  assert.deepEqual(turn.data, { files: 2 });
  assert.equal(t.ctx.session.id, "s-1");
  assert.equal(turn.evidenceCoverage, undefined);
  assert.equal(agent.evidenceCoverage.usage.status, "complete");
});

Deno.test("commandAgent() lowers usage coverage without a usage line and rejects non-JSON lines", async () => {
  await using t = await contextBed();
  const quiet = agentOf({
    name: "quiet",
    command: ["sh", "-c", 'echo \'{"type":"message","role":"assistant","text":"hi"}\''],
    output: "ndjson",
  });
  const turn = await quiet.send({ text: "x" }, t.ctx);
  assert.equal(turn.status, "completed");
  assert.equal(turn.evidenceCoverage?.usage?.status, "unavailable");
  const noisy = agentOf({ name: "noisy", command: ["echo", "not json"], output: "ndjson" });
  const error = await noisy.send({ text: "x" }, t.ctx).then(() => undefined, (e: unknown) => e);
  assert.equal((error as { code?: string }).code, "agent-invalid-turn");
  assert.match(String((error as Error).message), /line 1/);
});

Deno.test("commandAgent() hands a function output the command result", async () => {
  await using t = await contextBed();
  const agent = agentOf({
    name: "fn",
    command: ["sh", "-c", "echo 7; exit 1"],
    output: (r, input): Turn => ({
      status: "completed",
      events: [{
        type: "message",
        role: "assistant",
        text: `${input.text}=${r.stdout.trim()}:${r.exitCode}`,
      }],
    }),
  });
  const turn = await agent.send({ text: "n" }, t.ctx);
  assert.deepEqual(turn.events, [{ type: "message", role: "assistant", text: "n=7:1" }]);
});

Deno.test("commandAgent() copies passEnv from the host, redacts it, and fails setup when it is missing", async () => {
  await using t = await contextBed({ API_TOKEN: "s3cr3t-value" });
  const agent = agentOf({
    name: "secret",
    command: ["sh", "-c", 'echo "token=$API_TOKEN" "$0"', "s3cr3t-value"],
    passEnv: ["API_TOKEN"],
    env: { MODE: "test" },
  });
  await agent.setup!(t.ctx);
  const turn = await agent.send({ text: "x" }, t.ctx);
  assert.match((turn.events[0] as { text: string }).text, /^token=s3cr3t-value/);
  assert.ok(t.evidence.length > 0);
  assert.ok(t.evidence.every((e) => !e.summary.includes("s3cr3t-value")), t.evidence[0]!.summary);
  assert.deepEqual([...(t.evidence[0]!.envNames ?? [])].sort(), ["API_TOKEN", "MODE"]);
  await using bare = await contextBed({});
  const error = await agent.setup!(bare.ctx).then(() => undefined, (e: unknown) => e);
  assert.equal((error as { code?: string }).code, "agent-config-invalid");
  assert.match(String((error as Error).message), /"API_TOKEN"/);
});

Deno.test("commandAgent() runs its setup script once as the agent setup; a failure rejects", async () => {
  await using t = await contextBed();
  const agent = agentOf({
    name: "setup",
    command: ["sh", "-c", "cat ready.txt", "sh"],
    setup: "echo ready > ready.txt",
  });
  await agent.setup!(t.ctx);
  const turn = await agent.send({ text: "x" }, t.ctx);
  assert.deepEqual(turn.events, [{ type: "message", role: "assistant", text: "ready" }]);
  const broken = agentOf({ name: "broken", command: ["true"], setup: "exit 4" });
  await assert.rejects(() => broken.setup!(t.ctx), /exited with 4/);
});

Deno.test("commandAgent() identity covers command, modes, cwd, env, passEnv names and setup", () => {
  const base: CommandAgentOptions = { name: "id", command: ["tool", "{{input}}"] };
  const identity = (o: Partial<CommandAgentOptions>) =>
    JSON.stringify(agentOf({ ...base, ...o }).identity);
  const plain = identity({});
  assert.deepEqual(JSON.parse(plain), {
    command: ["tool", "{{input}}"],
    input: "argv",
    output: "text",
    cwd: null,
    env: {},
    passEnv: [],
    setup: null,
  });
  for (
    const change of [
      { command: ["tool", "--fast"] as const },
      { input: "stdin" as const },
      { output: "ndjson" as const },
      { cwd: "src" },
      { env: { A: "1" } },
      { passEnv: ["KEY"] },
      { setup: "make" },
    ]
  ) {
    assert.notEqual(identity(change), plain, JSON.stringify(change));
  }
  assert.throws(
    () => commandAgent({ ...base, input: "file" as never }),
    (e: unknown) => e instanceof DefinitionError && e.path === "input",
  );
  assert.throws(
    () => commandAgent({ ...base, command: [] as never }),
    (e: unknown) => e instanceof DefinitionError && e.path === "command",
  );
});

Deno.test("commandAgent() in stdin mode rejects with sandbox-unsupported on a provider without stdin", async () => {
  const bed = await facadeBed({ provider: { capabilities: { stdin: false } } });
  const agent = agentOf({ name: "cat", command: ["cat"], input: "stdin" });
  const ctx = {
    signal: bed.attempt.signal,
    session: createAgentSession(),
    model: undefined,
    flags: {},
    experimentId: "x",
    evalId: "e",
    sendTry: 0,
    sandbox: bed.sb,
    progress: () => {},
    diagnostic: () => {},
    log: () => {},
  } as AgentContext;
  const error = await agent.send({ text: "x" }, ctx).then(() => undefined, (e: unknown) => e);
  assert.equal((error as { code?: string }).code, "sandbox-unsupported");
});

/**
 * `examples/coding-agents` end to end, all three experiments in one niceeval run against the
 * fakes, inside one loopback-only network namespace (docs/coding_agents.md "Example"): each
 * pinned CLI is found in niceeval's cache by its `version`, fixes the workspace's failing test
 * through a tool call, and the eval's checks pass. Claude Code talks to the fake Anthropic server;
 * Codex (Responses) and OpenCode (Chat Completions) share one OpenAI base URL, as with real keys.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ndjson, REPO, tempProject } from "../../_helpers/cli.ts";
import {
  AGENT_CLIS_DIR,
  agentCliSkipReason,
  REQUIRE_AGENT_CLIS,
  runInLoopback,
} from "../../_helpers/agent_cli.ts";

const skip = await agentCliSkipReason(["claude", "codex", "opencode"]);
const ANTHROPIC_KEY = "sk-ant-fake-example-0123456789";
const OPENAI_KEY = "sk-openai-fake-example-0123456789";
/** The fix the fakes make every agent run: `calc.sh` adds instead of subtracting. */
const FIX = "sed -i 's/- \\$3/+ $3/' calc.sh && sh test.sh";

// deno-lint-ignore no-explicit-any
type Json = any;

Deno.test({
  name: `coding-agents example: claude-code, codex and opencode each fix the failing test, exit 0${
    skip !== undefined && !REQUIRE_AGENT_CLIS ? ` (skipped: ${skip})` : ""
  }`,
  ignore: skip !== undefined && !REQUIRE_AGENT_CLIS,
  fn: async (t) => {
    assert.equal(skip, undefined, skip);
    await using p = await tempProject(join(REPO, "examples", "coding-agents"));
    // niceeval's CLI cache is the pinned CLIs' directory: `version` resolves without npm.
    const cache = await Deno.makeTempDir({ prefix: "niceeval-cache-" });
    try {
      await Deno.mkdir(join(cache, "niceeval"));
      await Deno.symlink(AGENT_CLIS_DIR, join(cache, "niceeval", "agent-clis"));
      const fakes = new URL("../../_fakes/model_servers/", import.meta.url);
      const r = await runInLoopback({
        fakes: {
          anthropic: {
            module: new URL("anthropic.ts", fakes),
            factory: "anthropicFake",
            args: [{ bash: FIX }],
          },
          openai: {
            module: new URL("openai.ts", fakes),
            factory: "openAiFake",
            args: [{ run: FIX }],
          },
        },
        project: p.dir,
        stateDir: p.stateDir,
        // One run of all three; the local sandbox runs its Attempts one at a time (exclusive).
        args: ["exp", "--json"],
        env: {
          XDG_CACHE_HOME: cache,
          ANTHROPIC_BASE_URL: "{{baseUrl:anthropic}}",
          ANTHROPIC_API_KEY: ANTHROPIC_KEY,
          OPENAI_BASE_URL: "{{baseUrl:openai}}",
          OPENAI_API_KEY: OPENAI_KEY,
        },
      });
      const dump = () => r.stdout.slice(-6000) + r.stderr.slice(-3000);
      const ends = (ndjson(r.stdout) as Json[]).filter((e) => e.type === "attempt_end");
      await t.step("every experiment's attempt passes and niceeval exits 0", () => {
        const verdicts = Object.fromEntries(
          ends.map((e) => [e.experimentId, e.verdict]),
        );
        assert.deepEqual(
          verdicts,
          { "claude-code": "passed", codex: "passed", opencode: "passed" },
          dump(),
        );
        assert.equal(r.code, 0, dump());
        for (const key of [ANTHROPIC_KEY, OPENAI_KEY]) {
          assert.ok(!r.stdout.includes(key) && !r.stderr.includes(key), "a key never leaks");
        }
      });
      await t.step("each CLI reached its fake: one tool call, then the final answer", () => {
        const anthropic = r.requestsOf.anthropic as Json[];
        assert.deepEqual(anthropic.map((q) => q.reply), ["tool_use", "text"]);
        const openai = r.requestsOf.openai as Json[];
        const answers = (suffix: string) =>
          openai.filter((q) => q.path.endsWith(suffix)).map((q) => q.answer);
        assert.deepEqual(answers("/responses"), ["tool", "text"]);
        assert.deepEqual(answers("/chat/completions"), ["tool", "text"]);
        for (const q of openai) assert.equal(q.authorization, `Bearer ${OPENAI_KEY}`);
      });
    } finally {
      await Deno.remove(cache, { recursive: true });
    }
  },
});

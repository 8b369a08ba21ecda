/**
 * `examples/coding-agents` with Claude Code, end to end against the fake Anthropic server: the
 * pinned CLI is found in niceeval's cache by its `version`, fixes the failing test of the
 * workspace through a tool call, and the eval's checks pass (docs/coding_agents.md).
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

const skip = await agentCliSkipReason(["claude"]);

Deno.test({
  name: `claudeCodeAgent: the coding-agents example fixes its failing test exits 0${
    skip !== undefined && !REQUIRE_AGENT_CLIS ? ` (skipped: ${skip})` : ""
  }`,
  ignore: skip !== undefined && !REQUIRE_AGENT_CLIS,
  fn: async () => {
    assert.equal(skip, undefined, skip);
    await using p = await tempProject(join(REPO, "examples", "coding-agents"));
    // niceeval's CLI cache is the pinned CLIs' directory: `version` resolves without npm.
    const cache = await Deno.makeTempDir({ prefix: "niceeval-cache-" });
    try {
      await Deno.mkdir(join(cache, "niceeval"));
      await Deno.symlink(AGENT_CLIS_DIR, join(cache, "niceeval", "agent-clis"));
      const r = await runInLoopback({
        fake: {
          module: new URL("../../_fakes/model_servers/anthropic.ts", import.meta.url),
          factory: "anthropicFake",
          args: [{ bash: "sed -i 's/- \\$3/+ $3/' calc.sh && sh test.sh" }],
        },
        project: p.dir,
        stateDir: p.stateDir,
        args: ["exp", "claude-code", "--json"],
        env: {
          XDG_CACHE_HOME: cache,
          ANTHROPIC_BASE_URL: "{{baseUrl}}",
          ANTHROPIC_API_KEY: "sk-ant-fake-example-0123456789",
        },
      });
      const end = ndjson(r.stdout).find((e) => e.type === "attempt_end");
      assert.equal(end?.verdict, "passed", r.stdout.slice(-4000) + r.stderr.slice(-2000));
      assert.equal(r.code, 0);
      assert.deepEqual(r.requests.map((q) => q.reply), ["tool_use", "text"]);
    } finally {
      await Deno.remove(cache, { recursive: true });
    }
  },
});

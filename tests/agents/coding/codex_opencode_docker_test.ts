/**
 * `codexAgent` and `opencodeAgent` in a docker sandbox whose image provides `codex` and
 * `opencode` (stand-ins that record their calls): the bare command on the image's PATH, the
 * private config directories under the container's home, the credential allow-list and session
 * resume (docs/coding_agents.md).
 */
import assert from "node:assert/strict";
import { ndjson, tempProject } from "../../_helpers/cli.ts";
import { dockerAvailability } from "../../_helpers/docker.ts";
import { removeRun, runIdsOf } from "../../sandbox/_docker.ts";
import { dockerClient } from "../../../src/sandbox/providers/docker/client.ts";

const docker = await dockerAvailability();

Deno.test({
  name: "codexAgent/opencodeAgent: run the image's CLI in a docker sandbox and resume its session",
  ignore: !docker.ok,
  fn: async () => {
    await using p = await tempProject("codex_opencode_docker_project");
    const hostEnv = Deno.env.toObject();
    const client = dockerClient(hostEnv);
    const r = await p.run(["exp", "--json"], {
      env: {
        DOCKER_HOST: hostEnv.DOCKER_HOST || "unix:///var/run/docker.sock",
        OPENAI_API_KEY: "sk-docker-0123456789",
        OTHER_HOST_SECRET: "not-for-the-agent-0123",
        CI: "1",
      },
    });
    try {
      const ends = ndjson(r.stdout).filter((e) => e.type === "attempt_end");
      const dump = r.stdout.slice(-4000) + r.stderr.slice(-2000);
      const codex = ends.find((e) => e.evalId === "codex_turns");
      const opencode = ends.find((e) => e.evalId === "opencode_turns");
      assert.equal(codex?.verdict, "passed", dump);
      assert.equal(opencode?.verdict, "passed", dump);
      // Codex: the resumed run reports the thread total (6/4); each turn counts its share.
      // OUT-J1: every usage key is present, null when the CLI did not report it.
      assert.deepEqual(codex?.usage, {
        inputTokens: 6,
        outputTokens: 4,
        cacheReadTokens: null,
        cacheCreationTokens: null,
        reasoningTokens: null,
        requests: null,
        costUSD: null,
      });
      assert.deepEqual(opencode?.usage, {
        inputTokens: 6,
        outputTokens: 4,
        cacheReadTokens: 0,
        cacheCreationTokens: 0,
        reasoningTokens: 0,
        requests: 2,
        costUSD: null,
      });
    } finally {
      for (const id of runIdsOf(r.stdout)) await removeRun(client, id);
    }
  },
});

/**
 * `claudeCodeAgent` in a docker sandbox whose image provides `claude` (a stand-in that records
 * its calls): the bare command on the image's PATH, the private config directory under the
 * container's home, the credential allow-list and session resume (docs/coding_agents.md).
 */
import assert from "node:assert/strict";
import { ndjson, tempProject } from "../../_helpers/cli.ts";
import { dockerAvailability } from "../../_helpers/docker.ts";
import { removeRun, runIdsOf } from "../../sandbox/_docker.ts";
import { dockerClient } from "../../../src/sandbox/providers/docker/client.ts";

const docker = await dockerAvailability();

Deno.test({
  name: "claudeCodeAgent: runs the image's claude in a docker sandbox and resumes its session",
  ignore: !docker.ok,
  fn: async () => {
    await using p = await tempProject("claude_code_docker_project");
    const hostEnv = Deno.env.toObject();
    const client = dockerClient(hostEnv);
    const r = await p.run(["exp", "docker", "--json"], {
      env: {
        DOCKER_HOST: hostEnv.DOCKER_HOST || "unix:///var/run/docker.sock",
        ANTHROPIC_API_KEY: "sk-ant-docker-0123456789",
        OTHER_HOST_SECRET: "not-for-the-agent-0123",
        CI: "1",
      },
    });
    try {
      const end = ndjson(r.stdout).find((e) => e.type === "attempt_end");
      assert.equal(end?.verdict, "passed", r.stdout.slice(-4000) + r.stderr.slice(-2000));
      assert.deepEqual(end?.usage, {
        inputTokens: 6,
        outputTokens: 4,
        cacheReadTokens: null,
        cacheCreationTokens: null,
        reasoningTokens: null,
        requests: 2,
        costUSD: 0.25,
      });
    } finally {
      for (const id of runIdsOf(r.stdout)) await removeRun(client, id);
    }
  },
});

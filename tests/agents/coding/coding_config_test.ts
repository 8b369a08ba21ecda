/** The private config files of the Codex and OpenCode CLIs and the declared coverage (docs/coding_agents.md). */
import assert from "node:assert/strict";
import { codexConfig } from "../../../src/agents/coding/_codex_config.ts";
import { opencodeConfig } from "../../../src/agents/coding/_opencode_config.ts";
import {
  claudeCodeAgent,
  codexAgent,
  opencodeAgent,
  resolveAgent,
} from "../../../src/agents/mod.ts";

Deno.test("codexConfig() writes one Responses provider with updates, plugins and telemetry off", () => {
  const text = codexConfig({ model: "gpt-5.5", baseUrl: "http://127.0.0.1:9/v1" });
  assert.equal(
    text,
    [
      "# Written by niceeval for one agent run; every key can be overridden with `-c key=value`.",
      'model = "gpt-5.5"',
      'model_provider = "niceeval"',
      "check_for_update_on_startup = false",
      "",
      "[model_providers.niceeval]",
      'name = "niceeval"',
      'base_url = "http://127.0.0.1:9/v1"',
      'env_key = "OPENAI_API_KEY"',
      'wire_api = "responses"',
      "",
      "[features]",
      "plugins = false",
      "",
      "[analytics]",
      "enabled = false",
      "",
      "[otel]",
      'exporter = "none"',
      "",
      "[history]",
      'persistence = "none"',
      "",
    ].join("\n"),
  );
});

Deno.test("codexConfig() escapes strings and falls back to the CLI's model and the public endpoint", () => {
  const text = codexConfig({ model: 'a"b\\c\n\x7f', baseUrl: undefined });
  assert.ok(text.includes('model = "a\\"b\\\\c\\n\\u007F"'), text);
  assert.ok(text.includes('base_url = "https://api.openai.com/v1"'));
  assert.ok(!codexConfig({ model: undefined, baseUrl: undefined }).includes("\nmodel ="));
});

Deno.test("opencodeConfig() writes an OpenAI-compatible provider, no title request, prices when given", () => {
  const config = JSON.parse(opencodeConfig({
    model: "m1",
    baseUrl: "http://127.0.0.1:9/v1",
    pricing: { inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3 },
  }));
  assert.equal(config.model, "niceeval/m1");
  assert.equal(config.autoupdate, false);
  assert.equal(config.share, "disabled");
  assert.equal(config.permission, "allow");
  assert.deepEqual(config.agent, { title: { disable: true } });
  assert.deepEqual(config.provider.niceeval, {
    npm: "@ai-sdk/openai-compatible",
    name: "niceeval",
    options: { baseURL: "http://127.0.0.1:9/v1", apiKey: "{env:OPENAI_API_KEY}" },
    models: { m1: { name: "m1", cost: { input: 3, output: 15, cache_read: 0.3, cache_write: 3 } } },
  });
  const plain = JSON.parse(opencodeConfig({ model: "m1", baseUrl: undefined, pricing: undefined }));
  assert.deepEqual(plain.provider.niceeval.models, { m1: { name: "m1" } });
  assert.equal(plain.provider.niceeval.options.baseURL, "https://api.openai.com/v1");
});

Deno.test("the coding agents declare the same coverage: every channel complete but data", () => {
  for (const agent of [claudeCodeAgent(), codexAgent(), opencodeAgent()]) {
    const declared = resolveAgent(agent)!.evidenceCoverage;
    for (const channel of ["events", "actions", "messages", "usage", "status"] as const) {
      assert.equal(declared[channel].status, "complete", `${agent.name} ${channel}`);
    }
    assert.equal(declared.data.status, "unavailable", agent.name);
  }
});

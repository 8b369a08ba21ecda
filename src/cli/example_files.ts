/** The files of `niceeval init` and `niceeval init --example` (cli.md §11, CMD-3, CMD-4). */

/** The minimal config written by `niceeval init`. */
export const MINIMAL_CONFIG = `import { defineConfig } from "niceeval";

// Experiments live in experiments/**/*.ts (defineExperiment); evals in evals/**/*.eval.ts.
export default defineConfig({});
`;

/** The day-one keyless project, path → content. */
export const EXAMPLE_FILES: Readonly<Record<string, string>> = {
  "niceeval.config.ts": `import { defineConfig } from "niceeval";

// Experiments live in experiments/**/*.ts (defineExperiment); evals in evals/**/*.eval.ts.
export default defineConfig({ maxConcurrency: 4, timeoutMs: 60_000 });
`,
  "agents/scripted.ts": `import { type Agent, scriptedAgent } from "niceeval/adapter";

export function detAgent(name: string): Agent {
  return scriptedAgent({
    name,
    script: [
      { when: "return a failed turn", reply: { status: "failed", error: "deterministic failure" } },
      {
        when: /weather/i,
        reply: {
          tools: [{
            name: "get_weather",
            input: { city: "Brooklyn" },
            output: { city: "Brooklyn", condition: "sunny", temperatureC: 24 },
          }],
          text: "The weather in Brooklyn is sunny.",
          usage: { inputTokens: 12, outputTokens: 9 },
        },
      },
    ],
    fallback: { text: "Hello, niceeval!" },
  });
}
`,
  "evals/greet/hello.eval.ts": `import { defineEval } from "niceeval";
import { pattern } from "niceeval/expect";

export default defineEval({
  description: "greeting round-trip",
  tags: ["smoke"],
  async test(t) {
    const turn = await t.send("Say hello");
    await turn.succeeded().orStop();
    t.check(turn.message, pattern(/hello/i)).label("greets");
  },
});
`,
  "evals/tool/weather.eval.ts": `import { defineEval } from "niceeval";
import { includes, jsonMatch, toolMatch } from "niceeval/expect";

export default defineEval({
  description: "calls get_weather for Brooklyn",
  async test(t) {
    const turn = await t.send("What is the weather in Brooklyn?");
    await turn.succeeded().orStop();
    turn.calledTool(toolMatch("get_weather", { input: jsonMatch({ city: "Brooklyn" }) }), {
      count: 1,
    });
    turn.notCalledTool("delete_file");
    t.check(turn.message, includes("sunny"));
  },
});
`,
  "evals/math.eval.ts": `import { defineEval } from "niceeval";
import { includes } from "niceeval/expect";

export default ["hello there", "hello again"].map((prompt) =>
  defineEval({
    description: prompt,
    async test(t) {
      await t.send(prompt);
      t.check(t.reply, includes("Hello"));
    },
  })
);
`,
  "evals/deliberate-fail/broken.eval.ts": `import { defineEval } from "niceeval";

export default defineEval({
  async test(t) {
    (await t.send("return a failed turn")).succeeded();
  },
});
`,
  "evals/deliberate-score/scored.eval.ts": `import { defineScoreEval } from "niceeval";

export default defineScoreEval({
  test(t) {
    t.score(2).label("fixed two points");
  },
});
`,
  "experiments/local.ts": `import { defineExperiment } from "niceeval";
import { detAgent } from "../agents/scripted.ts";

export default defineExperiment({
  description: "deterministic baseline",
  agent: detAgent("det"),
  model: "det-v1",
  evals: ["greet", "tool", "math"],
});
`,
  "experiments/checks/fail.ts": `import { defineExperiment } from "niceeval";
import { detAgent } from "../../agents/scripted.ts";

export default defineExperiment({ agent: detAgent("det-fail"), evals: ["deliberate-fail"] });
`,
  "experiments/checks/score.ts": `import { defineExperiment } from "niceeval";
import { detAgent } from "../../agents/scripted.ts";

export default defineExperiment({ agent: detAgent("det-score"), evals: ["deliberate-score"] });
`,
};

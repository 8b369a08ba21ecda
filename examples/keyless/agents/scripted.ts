import { type Agent, scriptedAgent } from "niceeval/adapter";

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

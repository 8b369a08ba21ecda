import { defineEval } from "niceeval";
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

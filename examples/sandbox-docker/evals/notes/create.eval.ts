import { defineEval } from "niceeval";
import { equals, isTrue } from "niceeval/expect";

export default defineEval({
  description: "the agent creates a file in its sandbox",
  async test(t) {
    const turn = await t.send("write greeting.txt hello from the sandbox");
    await turn.succeeded().orStop();
    t.check(await t.sandbox.pathExists("greeting.txt"), isTrue()).label("file exists");
    t.check(await t.sandbox.readText("greeting.txt"), equals("hello from the sandbox\n"))
      .label("file content");
  },
});

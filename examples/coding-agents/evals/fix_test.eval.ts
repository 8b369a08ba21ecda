import { defineEval } from "niceeval";
import { commandSucceeded, equals, toolMatch } from "niceeval/expect";

export default defineEval({
  description: "the agent fixes calc.sh so that the failing test passes",
  async test(t) {
    const before = await t.sandbox.readText("test.sh");
    const turn = await t.send(
      "The test `sh test.sh` fails. Fix calc.sh so that it passes. Do not change test.sh.",
    );
    await turn.succeeded().orStop();
    turn.calledTool(toolMatch(/./));
    t.check(await t.sandbox.runCommand("sh", ["test.sh"]), commandSucceeded()).label("tests pass");
    t.check(await t.sandbox.readText("test.sh"), equals(before)).label("test.sh unchanged");
  },
});

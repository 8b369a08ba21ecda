import { defineEval } from "niceeval";
import { equals, includes } from "niceeval/expect";

export default defineEval({
  description: "the agent appends to a file from the fixture",
  async test(t) {
    const turn = await t.send("append notes.md - checked the sandbox");
    await turn.succeeded().orStop();
    t.check(await t.sandbox.readText("notes.md"), includes("- checked the sandbox"))
      .label("note appended");
    const lines = await t.sandbox.runCommand("wc", ["-l", "notes.md"]);
    t.check(lines.stdout.trim().split(/\s+/)[0], equals("2")).label("two lines");
  },
});

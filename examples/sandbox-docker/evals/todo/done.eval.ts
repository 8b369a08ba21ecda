import { defineEval } from "niceeval";
import { commandSucceeded, isFalse, isTrue } from "niceeval/expect";
import { sandboxLayer } from "niceeval/sandbox";

// This eval brings its own files on top of the experiment's workspace.
export default defineEval({
  description: "the agent removes a file the eval's layer provided",
  sandbox: sandboxLayer({ fixture: "./files" }),
  async test(t) {
    t.check(await t.sandbox.pathExists("todo.txt"), isTrue()).label("fixture copied");
    const turn = await t.send("remove todo.txt");
    await turn.succeeded().orStop();
    t.check(await t.sandbox.pathExists("todo.txt"), isFalse()).label("file removed");
    t.check(await t.sandbox.runCommand("test", ["-f", "tools/edit.sh"]), commandSucceeded())
      .label("workspace kept");
  },
});

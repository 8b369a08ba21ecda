import { defineExperiment } from "niceeval";
import { commandAgent } from "niceeval/adapter";
import { localSandbox } from "niceeval/sandbox";

// A command-line "agent" that edits files: tools/edit.sh comes from the workspace fixture and
// runs inside the Attempt's sandbox with the turn's text as its argument.
export default defineExperiment({
  description: "shell editor in a local sandbox",
  agent: commandAgent({ name: "shell-editor", command: ["sh", "tools/edit.sh", "{{input}}"] }),
  sandbox: localSandbox({ fixture: "../workspace" }),
});

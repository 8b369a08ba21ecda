import { defineExperiment } from "niceeval";
import { claudeCodeAgent } from "niceeval/adapter";
import { localSandbox } from "niceeval/sandbox";

// The pinned CLI version is installed into niceeval's cache on first use; its own credential
// variables pass through from the environment.
export default defineExperiment({
  description: "claude-code fixes a failing test",
  agent: claudeCodeAgent({ version: "2.1.332" }),
  model: "claude-sonnet-4-5",
  sandbox: localSandbox({ fixture: "../workspace" }),
});

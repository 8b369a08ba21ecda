import { defineExperiment } from "niceeval";
import { codexAgent } from "niceeval/adapter";
import { localSandbox } from "niceeval/sandbox";

// The pinned CLI version is installed into niceeval's cache on first use; its own credential
// variables pass through from the environment.
export default defineExperiment({
  description: "codex fixes a failing test",
  agent: codexAgent({ version: "0.171.0" }),
  model: "gpt-5.5",
  sandbox: localSandbox({ fixture: "../workspace" }),
});

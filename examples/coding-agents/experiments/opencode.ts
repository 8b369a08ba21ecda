import { defineExperiment } from "niceeval";
import { opencodeAgent } from "niceeval/adapter";
import { localSandbox } from "niceeval/sandbox";

// The pinned CLI version is installed into niceeval's cache on first use; its own credential
// variables pass through from the environment.
export default defineExperiment({
  description: "opencode fixes a failing test",
  agent: opencodeAgent({ version: "1.18.33" }),
  model: "gpt-4.1",
  sandbox: localSandbox({ fixture: "../workspace" }),
});
